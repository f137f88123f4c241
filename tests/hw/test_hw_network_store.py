# amaranth: UnusedElaboratable=no
"""The network fabric's two item stores: the single flip-flop store runs what the banks run.

``store="single"`` (iCE40's default in ``hw fpga``) must not change what the
fabric computes: the same samples at every port in every cycle and the same
held slots read back, on programs that fill several links at once, forward
a word in the cycle after it arrived, combine, and follow one another on one
build; and a loaded fault is still caught.
"""

import subprocess
import sys

import numpy as np
import pytest

from pipegossip.hw.fpga.flow import prepare_network
from pipegossip.hw.network import NetworkFabric, network_size
from pipegossip.hw.network.node import NetworkNode
from pipegossip.model.algorithms.allport import allport_gossip
from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.algorithms.path_cycle import cycle_gossip
from pipegossip.model.algorithms.polling import polling_hypercube
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.judge.network import judge_network
from pipegossip.sim.network.run import faulty_writes, network_job, run_network_amaranth

HC3 = topology("hypercube", k=3)


def _programs():
    """Gossip (one link's bank takes 4 words), all-port gossip (three links written in
    one cycle), polling (drain, question slot) and allreduce on the cycle (parts of an
    accumulator forwarded from store slots), then gossip again on the same build."""
    return [compile_network(matching_schedule(HC3), depth=8),
            compile_network(allport_gossip(HC3), depth=8),
            compile_network(polling_hypercube(3), depth=8, slots=8),
            compile_network(matching_schedule(HC3), depth=8)]


@pytest.fixture(scope="module")
def runs():
    progs = _programs()
    return progs, {store: run_network_amaranth(progs, seed=5, store=store)
                   for store in ("banks", "single")}


def test_the_single_store_runs_every_program_and_the_judge_agrees(runs):
    progs, by_store = runs
    for p, r in zip(progs, by_store["single"]):
        v = judge_network(p, r)
        assert v.match, v.report()
        assert r.busy_cycles == p.cycles + r.latency


def test_both_stores_give_the_same_samples_and_the_same_held_words(runs):
    progs, by_store = runs
    for p, a, b in zip(progs, by_store["banks"], by_store["single"]):
        assert a.samples.keys() == b.samples.keys()
        for key in a.samples:
            assert np.array_equal(a.samples[key], b.samples[key]), (p.slug, key)
        assert np.array_equal(a.held, b.held), p.slug
        held = np.asarray(a.held, bool)
        # unheld slots read back whatever the store holds: only held words are results
        assert np.array_equal(np.asarray(a.store, object)[held],
                              np.asarray(b.store, object)[held]), p.slug
        assert np.array_equal(np.asarray(a.acc, object), np.asarray(b.acc, object)), p.slug


def test_a_second_program_finds_no_slot_held_from_the_first(runs):
    progs, by_store = runs
    # polling (third) follows two gossips: it holds only the question slot where it is heard
    polling = by_store["single"][2]
    assert np.array_equal(np.asarray(polling.held, bool), progs[2].final)
    assert np.asarray(polling.held, bool).sum() < np.asarray(by_store["single"][1].held).sum()


def test_allreduce_forwarding_parts_from_the_store_runs_on_the_single_store():
    p = compile_network(allreduce_schedule(topology("cycle", n=8)))
    assert any(x is not None for x in p.slot_sets)  # it sends parts from store slots
    (r,) = run_network_amaranth([p], seed=2, store="single")
    v = judge_network(p, r)
    assert v.match, v.report()


@pytest.mark.parametrize("fault", ["drop", "misroute", "combine"])
def test_a_loaded_fault_is_caught_on_the_single_store(fault):
    p = compile_network(polling_hypercube(3) if fault == "combine" else cycle_gossip(8, 1))
    job = network_job("faulty", p, 2, faulty_writes(p, fault, 2))
    (r,) = run_network_amaranth([p], jobs=[job], store="single")
    v = judge_network(p, r)
    assert not v.match
    assert v.first_mismatch.kind == "trace" and "port" in v.first_mismatch.note
    if fault == "drop":  # the lost word is never written: its slot reads back empty
        assert any(m.note == "final store" and m.got == "empty" for m in v.mismatches)


def test_bad_store_parameters_are_refused():
    with pytest.raises(ValueError, match="store must be one of banks, single, not 'ram'"):
        NetworkFabric(HC3, store="ram")
    with pytest.raises(ValueError, match="bank depth applies to the banked store only"):
        network_size(HC3, bank_depth=4, store="single")
    with pytest.raises(ValueError, match="store must be one of"):
        NetworkNode(3, 8, 8, 8, store="")
    with pytest.raises(ValueError, match="bank_depth applies to the banked store only"):
        NetworkNode(3, 8, 8, 8, bank_depth=2, store="single")


def test_the_fpga_build_picks_the_device_s_store():
    assert prepare_network(HC3, depth=8, device="ice40-up5k").config.store == "single"
    assert prepare_network(HC3, depth=8, device="ecp5-25k").config.store == "banks"
    job = prepare_network(HC3, depth=8, device="ice40-up5k", store="banks", bank_depth=4)
    assert job.config.store == "banks" and job.slug.endswith("-b4")
    assert prepare_network(HC3, depth=8, device="ice40-up5k").slug.endswith("-d8-single")


def test_fpga_bank_depth_asks_for_banks_on_ice40_too():
    from pipegossip.cli import build_parser
    from pipegossip.cli.fpga import _prepare_job

    def store(*extra):
        argv = ["hw", "fpga", "--fabric", "network", "--topology", "hypercube", "--k", "3",
                "--depth", "8", "-o", "f", *extra]
        job, _ = _prepare_job(build_parser(argv).parse_args(argv))
        return job.config.store, job.config.bank_depth

    assert store("--bank-depth", "4") == ("banks", 4)
    assert store() == ("single", None)
    assert store("--device", "ecp5-25k") == ("banks", None)
    assert store("--device", "ecp5-25k", "--store", "single") == ("single", None)


def pg(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_verilog_names_the_single_store_and_the_banked_header_is_unchanged(tmp_path):
    single, banks = tmp_path / "s.v", tmp_path / "b.v"
    base = ["hw", "verilog", "--fabric", "network", "--topology", "hypercube", "--k", "2",
            "--depth", "4"]
    r = pg(*base, "--store", "single", "-o", str(single))
    assert r.returncode == 0, r.stderr
    assert "slots=4 op=sum store=single\n" in single.read_text() and "store=single" in r.stderr
    assert pg(*base, "-o", str(banks)).returncode == 0
    assert "slots=4 bank_depth=4 op=sum\n" in banks.read_text()


@pytest.mark.parametrize("argv, words", [
    (["hw", "verilog", "--fabric", "network", "--topology", "path", "--n", "4", "--store",
      "single", "--bank-depth", "2", "-o", "x.v"], "--bank-depth applies to --store banks only"),
    (["hw", "fpga", "--fabric", "network", "--topology", "path", "--n", "4", "--store",
      "single", "--bank-depth", "2", "-o", "f"], "--bank-depth applies to --store banks only"),
    (["hw", "verilog", "--fabric", "schedule", "--n", "4", "--store", "single", "-o", "x.v"],
     "--store applies only to --fabric network"),
    (["sim", "cosim", "--schedule", "s.json", "--store", "single"],
     "--store applies only to --fabric network"),
    (["hw", "verilog", "--fabric", "network", "--topology", "path", "--n", "4", "--store",
      "ram", "-o", "x.v"], "--store"),
])
def test_bad_store_options_are_refused_with_nothing_written(tmp_path, argv, words):
    (tmp_path / "s.json").write_text("{}")
    r = pg(*argv, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
