# amaranth: UnusedElaboratable=no
"""The network fabric in Amaranth's simulator, judged; faults caught; ports, Verilog and lint."""

import copy
import json
import re
import subprocess

import numpy as np
import pytest
from judge_records import fixture, fresh

from pipegossip.hw.network import LATENCY, NetworkFabric, network_fabric_ports, network_size
from pipegossip.hw.network.export import network_verilog_text
from pipegossip.hw.ports import network_ports
from pipegossip.model.algorithms.allport import allport_gossip
from pipegossip.model.algorithms.coloring import color_schedule
from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.algorithms.path_cycle import cycle_gossip, path_gossip
from pipegossip.model.algorithms.polling import polling_hypercube
from pipegossip.model.algorithms.reduce import allreduce_schedule, reduce_schedule
from pipegossip.model.algorithms.short_messages import short_messages
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.judge.network import judge_network, network_verdict_json
from pipegossip.sim.network.run import faulty_writes, network_job, run_network_amaranth
from pipegossip.sim.tools.toolchain import use_verilator

SMALL = {
    "path4": lambda: path_gossip(4, 1),
    "cycle8": lambda: cycle_gossip(8, 1),
    "hypercube3": lambda: matching_schedule(topology("hypercube", k=3)),
    "mesh2x3": lambda: matching_schedule(topology("mesh", a=2, b=3)),
    "polling-hypercube3": lambda: polling_hypercube(3),
    "reduce-mesh2x3": lambda: reduce_schedule(topology("mesh", a=2, b=3), 0),
    "allreduce-hypercube3": lambda: allreduce_schedule(topology("hypercube", k=3)),
    "all-port-cycle8": lambda: allport_gossip(topology("cycle", n=8)),
    # forwarded parts of accumulators: stored words sent on from the store
    "allreduce-path5": lambda: allreduce_schedule(topology("path", n=5)),
    "allreduce-cycle6": lambda: allreduce_schedule(topology("cycle", n=6)),
    "allreduce-mesh2x3": lambda: allreduce_schedule(topology("mesh", a=2, b=3)),
    "reduce-cycle6": lambda: reduce_schedule(topology("cycle", n=6), 2),
}
#: The issue's table: (schedule, R, cycles); the 16- and 24-node ones are slow here.
TABLE = {
    "matching-hypercube4": (lambda: matching_schedule(topology("hypercube", k=4)), 4, 15),
    "coloring-star4": (lambda: color_schedule(topology("star", k=4), "010201"), 6, 23),
    "path-gossip-8-2": (lambda: path_gossip(8, 2), 8, 14),
    "short-messages-8-2": (lambda: short_messages(8, 2), 6, 11),
    "polling-hypercube3": (lambda: polling_hypercube(3), 6, 6),
}


def _run(program, seed=0, **kw):
    (r,) = run_network_amaranth([program], seed=seed, **kw)
    return r


@pytest.mark.parametrize("name", sorted(SMALL))
def test_small_topologies_run_and_match_in_cycles_plus_latency(name):
    p = compile_network(SMALL[name]())
    r = _run(p, seed=len(name))
    v = judge_network(p, r)
    assert v.match, v.report()
    assert r.busy_cycles == p.cycles + LATENCY
    j = network_verdict_json(v)
    assert (j["match"], j["R"], j["S"], j["cycles"], j["latency"]) == \
        (True, p.rounds, p.S, p.cycles, LATENCY)


def test_polling_on_q3_takes_6_cycles_and_the_root_sums_every_response():
    p = compile_network(polling_hypercube(3))
    r = _run(p, seed=9)
    assert judge_network(p, r).match
    assert p.cycles == p.rounds == 6
    from pipegossip.hw.network.load import item_words
    assert r.acc[0] == sum(item_words(p, 9)) % 256


def test_allreduce_leaves_every_token_in_every_accumulator_in_k_cycles():
    p = compile_network(allreduce_schedule(topology("hypercube", k=3)), op="xor")
    r = _run(p, seed=6)
    assert judge_network(p, r).match
    from pipegossip.hw.network.load import item_words
    want = 0
    for w in item_words(p, 6):
        want ^= w
    assert p.cycles == 3 and r.acc == [want] * 8


def test_xor_fabric_and_several_programs_on_one_build():
    hc = topology("hypercube", k=3)
    progs = [compile_network(matching_schedule(hc), op="xor", depth=8),
             compile_network(polling_hypercube(3), op="xor", depth=8, slots=8)]
    records = run_network_amaranth(progs, seed=5)
    for p, r in zip(progs, records):
        assert judge_network(p, r).match, judge_network(p, r).report()


@pytest.mark.parametrize("name", [pytest.param(x, marks=pytest.mark.slow)
                                  if x in ("matching-hypercube4", "coloring-star4") else x
                                  for x in sorted(TABLE)])
def test_the_issue_table_runs_in_R_or_S_cycles(name):
    make, R, cycles = TABLE[name]
    p = compile_network(make())
    assert (p.rounds, p.cycles) == (R, cycles)
    r = _run(p, seed=1)
    v = judge_network(p, r)
    assert v.match, v.report()
    assert r.busy_cycles == cycles + LATENCY


@pytest.mark.parametrize("fault, kind", [("drop", "trace"), ("misroute", "trace"),
                                         ("combine", "trace")])
def test_loaded_faults_are_caught_with_the_first_mismatch_named(fault, kind):
    p = compile_network(polling_hypercube(3) if fault == "combine" else cycle_gossip(8, 1))
    job = network_job("faulty", p, 2, faulty_writes(p, fault, 2))
    (r,) = run_network_amaranth([p], jobs=[job])
    v = judge_network(p, r)
    assert not v.match
    first = v.first_mismatch
    assert first.kind == kind and first.cycle is not None and "port" in first.note
    later = {m.kind for m in v.mismatches}
    assert "delivery" in later  # the lost/misrouted/miscombined word shows at the end too


def test_a_misroute_never_swaps_two_links_that_send_the_same_word():
    # node 1 of the path first sends its accumulator on both links: swapping them is no
    # fault, so the misroute moves a later send whose links differ, and the judge sees it
    from pipegossip.hw.network.load import network_writes
    p = compile_network(allreduce_schedule(topology("path", n=4)))
    good, bad = network_writes(p, 4), faulty_writes(p, "misroute", 4)
    (k,) = [i for i, (w, x) in enumerate(zip(good, bad)) if w != x]
    kind, v, c, data = bad[k]
    f, g = p.layout(v).decode(data), p.layout(v).decode(good[k][3])
    lane = [tuple(x[f"{name}{j}"] for name in ("tx", "txacc", "txslot"))
            for x in (f, g) for j in (0, 1)]
    assert lane[0] == lane[3] and lane[1] == lane[2] and lane[2] != lane[3] and c > 0
    (r,) = run_network_amaranth([p], jobs=[network_job("faulty", p, 4, bad)])
    first = judge_network(p, r).first_mismatch
    assert first.kind == "trace" and first.cycle == c + 1 + LATENCY and first.processor == v


def test_the_judge_catches_each_planted_difference():
    p = compile_network(polling_hypercube(3))
    r = _run(p, seed=4)
    assert judge_network(p, r).match
    k = 1 + LATENCY  # program cycle 1

    def caught(mutate, kind, note=None):
        bad = copy.deepcopy(r)
        mutate(bad)
        v = judge_network(p, bad)
        assert v.counts().get(kind), (kind, v.report())
        if note:
            assert any(note in m.note for m in v.mismatches), v.report()

    port = int(np.flatnonzero(p.tx[0] != -1)[0])
    peer = p.peer(port)
    caught(lambda b: b.samples["tx_word"].__setitem__((k, port), 0x5a), "delivery")
    caught(lambda b: b.samples["rx_word"].__setitem__((k, peer), 0x5a), "delivery")
    # a wrong word carried faithfully by the link: the sender is named
    bad = copy.deepcopy(r)
    bad.samples["tx_word"][k, port] = bad.samples["rx_word"][k, peer] = 0x5a
    v = judge_network(p, bad)
    assert any(m.processor == p.node_of(port) and m.expected.startswith("sends")
               for m in v.mismatches), v.report()
    assert any(m.processor == p.node_of(peer) and m.expected.startswith("receives")
               for m in v.mismatches), v.report()
    caught(lambda b: b.samples["tx_valid"].__setitem__((k, port), 0), "trace")
    caught(lambda b: b.samples["rx_comb"].__setitem__((k, peer), 0), "trace")
    caught(lambda b: b.samples["tx_acc"].__setitem__((k, port), 0), "trace")
    caught(lambda b: b.samples["acc"].__setitem__((k + 1, 3), 1), "delivery", "combine")
    caught(lambda b: b.acc.__setitem__(0, 1), "delivery", "incomplete polling")
    caught(lambda b: b.acc.__setitem__(3, 1), "delivery", "final accumulator")
    caught(lambda b: b.held[0].__setitem__(0, 0), "delivery", "final store")
    caught(lambda b: b.samples["busy"].__setitem__(-1, 1), "busy")
    g = compile_network(cycle_gossip(8, 1))
    rg = _run(g)
    bad = copy.deepcopy(rg)
    bad.held[2][5] = 0
    v = judge_network(g, bad)
    assert any("incomplete gossip" in m.note for m in v.mismatches)
    bad = copy.deepcopy(rg)
    bad.store[2][5] ^= 1
    assert any("final store" in m.note for m in judge_network(g, bad).mismatches)
    bad = copy.deepcopy(rg)
    q = int(np.flatnonzero(g.rx[0] != -1)[0])
    bad.samples["rx_slot"][k, q] ^= 1
    assert judge_network(g, bad).first_mismatch.kind == "trace"


@pytest.mark.parametrize("topo, width, depth", [(topology("path", n=4), 8, 16),
                                                (topology("hypercube", k=2), 1, 3),
                                                (topology("mesh", a=2, b=3), 16, 8)])
def test_port_table_signature_and_verilog_agree(topo, width, depth):
    size = network_size(topo, width, depth)
    ports = network_ports(size)
    assert [(x.name, x.direction, x.width) for x in ports] == \
        [(x.name, x.direction, x.width) for x in network_fabric_ports(size)]
    assert size.ports == 2 * topo.m
    text = network_verilog_text(topo, width, depth, name="nf")
    header = re.search(r"module nf\((.*?)\);", text, re.S).group(1)
    assert {x.strip() for x in header.split(",")} == {x.name for x in ports} | {"clk", "rst"}


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="op must be one of"):
        NetworkFabric(topology("path", n=4), op="max")
    with pytest.raises(TypeError, match="must be a Topology"):
        NetworkFabric("path4")
    with pytest.raises(ValueError, match="node 3 of explicit has no link"):
        NetworkFabric(topology("explicit", n=4, edges=[[0, 1], [1, 2]]))
    with pytest.raises(TypeError):
        NetworkFabric(topology("path", n=4), depth="8")


ALLOWED = {"DECLFILENAME", "PROCASSINIT", "UNUSEDSIGNAL"}


@pytest.mark.parametrize("topo, store", [(topology("path", n=4), "banks"),
                                         (topology("hypercube", k=3), "banks"),
                                         (topology("hypercube", k=3), "single")])
def test_verilator_lint_reports_only_the_waived_warnings(tmp_path, topo, store):
    use_verilator()
    path = tmp_path / "pipegossip_network_fabric.v"
    path.write_text(network_verilog_text(topo, 8, 16, store=store))
    proc = subprocess.run(["verilator", "--lint-only", "-Wall", str(path)],
                          capture_output=True, text=True)
    found = re.findall(r"^%(Warning-[A-Z_]+|Error[^:]*): (.*)$", proc.stderr, re.M)
    kinds = {k.removeprefix("Warning-") for k, msg in found if not msg.startswith("Exiting")}
    assert kinds <= ALLOWED, [f for f in found if f[0].removeprefix("Warning-") not in ALLOWED]


def test_the_judges_stored_records_are_what_the_fabric_does():
    """tests/sim/test_sim_judge_network.py judges stored records: they must be the fabric's."""
    assert fresh("network") == json.loads(fixture("network").read_text())
