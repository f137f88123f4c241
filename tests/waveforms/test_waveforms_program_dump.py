"""``sim cosim --fabric network --waves``: the dump, its save file, and the record read back.

One Verilator trace build of cycle(4) runs a gossip and an allreduce with a
dump; the dump read back (``waveforms/program_dump.py``) must give the very
record the testbench wrote, sample for sample, store, held bits and
accumulators; a fault loaded in the live run must be named by the judge at
the same first mismatch from the dump; the GTKWave save file has one group
per node naming only signals the dump holds.
"""

from __future__ import annotations

import json
import re

import pytest

from pipegossip.cli import main
from pipegossip.model.algorithms.allport import allport_gossip
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.network.cosim import cosim_network
from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator
from pipegossip.waveforms.dump import open_dump
from pipegossip.waveforms.program_dump import read_program_dump, write_companions

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

#: What a record read back may differ in: where and how fast it was made.
VOLATILE = ("origin", "wall_seconds", "problems")


@pytest.fixture(scope="module")
def verilator():
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(f"Verilator is not usable: {e}")


def _schedules():
    t = topology("cycle", n=4)
    return [("gossip", allport_gossip(t)), ("allreduce", allreduce_schedule(t))]


@pytest.fixture(scope="module")
def live(tmp_path_factory, verilator):
    dump = tmp_path_factory.mktemp("waves") / "c4" / "c4.vcd"
    report = cosim_network(_schedules(), mode="trace", waves="vcd", dump=dump,
                           companions=write_companions)
    assert report.match and report.waveform == dump.resolve()
    return report, dump


@pytest.fixture(scope="module")
def faulty(tmp_path_factory, verilator):
    dump = tmp_path_factory.mktemp("waves") / "bad" / "bad.vcd"
    report = cosim_network(_schedules(), mode="trace", waves="vcd", dump=dump, fault="drop",
                           companions=write_companions)
    assert not report.match
    return report, dump


def _plain(record) -> dict:
    d = record.to_json()
    for k in VOLATILE:
        d.pop(k, None)
    return d


def test_a_network_dump_reads_back_exactly(live):
    report, dump = live
    back = read_program_dump(dump)
    assert [r.name for r in back] == [r.name for r in report.results]
    for got, want in zip(back, report.results):
        assert _plain(got.record) == _plain(want.record), got.name
        assert got.verdict.match


def test_a_fault_is_named_at_the_same_first_mismatch(faulty):
    report, dump = faulty
    back = read_program_dump(dump)
    for got, want in zip(back, report.results):
        assert not want.verdict.match
        assert got.verdict.first_mismatch == want.verdict.first_mismatch, got.name
        assert _plain(got.record) == _plain(want.record)


def test_waves_read_judges_the_dump(live, faulty, capsys):
    capsys.readouterr()
    assert main(["waves", "read", str(live[1])]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all(": MATCH" in x for x in out)
    assert main(["waves", "read", str(faulty[1]), "--run", "2", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert not doc["match"] and [r["name"] for r in doc["runs"]] == ["allreduce"]


def test_save_file_has_one_group_per_node(live):
    _, dump = live
    text = dump.with_suffix(".gtkw").read_text()
    groups = list(dict.fromkeys(re.findall(r"^-(node\d+)$", text, re.M)))
    assert groups == [f"node{v}" for v in range(4)]
    d = open_dump(dump)
    declared = {f"{v.scope}.{v.raw}" for vs in d.scopes.values() for v in vs.values()}
    traces = [re.sub(r"\[\d+:0\]$", "", re.sub(r"^\+\{[^}]*\}\s*", "", x))
              for x in re.findall(r"^([^@\-\[*#].*)$", text, re.M)]
    assert traces and all(t in declared for t in traces), [t for t in traces if t not in declared]
    # per node: its program entry, its links' words, its stores, its accumulator
    body = text.split("-node1")[0].split("-node0")[1]
    for name in ("prd__data", "tx__0__word", "rx__1__word", "rx__0__valid", "rx__0__slot",
                 "acc__0"):
        assert name in body, name


def test_waves_refused_on_the_fast_mode_of_two_topologies(capsys, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["schedule", "all-port", "--topology", "cycle", "--n", "4", "-o", str(a)]) == 0
    assert main(["schedule", "all-port", "--topology", "path", "--n", "4", "-o", str(b)]) == 0
    capsys.readouterr()
    assert main(["sim", "cosim", "--fabric", "network", "--schedule", str(a), str(b),
                 "--waves"]) == 2
    assert "one topology" in capsys.readouterr().err


def test_a_schedule_fabric_dump_reads_back_exactly(tmp_path, verilator):
    from pipegossip.model.algorithms.limits import cyclic_shift
    from pipegossip.sim.schedule.cosim import cosim_schedules
    dump = tmp_path / "s" / "s.vcd"
    report = cosim_schedules([("cs4", cyclic_shift(4))], waves="vcd", dump=dump,
                             companions=write_companions)
    assert report.match and dump.is_file() and dump.with_suffix(".gtkw").is_file()
    (got,) = read_program_dump(dump)
    assert got.verdict.match and _plain(got.record) == _plain(report.results[0].record)
