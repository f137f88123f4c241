"""The network fabric on Verilator: one build per topology, faults caught as in Amaranth."""

import json
import subprocess
import sys

import pytest

from pipegossip.model.algorithms.path_cycle import path_gossip
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules import Message, Schedule, save
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.network.cosim import cosim_network
from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator

PATH4 = topology("path", n=4)


def _verilator():
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(str(e))


def polling_path4() -> Schedule:
    """The question down the path, the responses back, combined on the way."""
    rounds = [[Message(0, (1,), ("q",))], [Message(1, (2,), ("q",))],
              [Message(2, (3,), ("q",))], [Message(3, (2,), ("q", 3))],
              [Message(2, (1,), ("q", 2, 3))], [Message(1, (0,), ("q", 1, 2, 3))]]
    return Schedule.from_rounds(rounds, topology=PATH4, model="H1", p=None,
                                primitive="polling", root=0)


def broadcast_path4() -> Schedule:
    """Node 1's item to both neighbours in one cycle (the same word on two links), then on."""
    rounds = [[Message(1, (0, 2), (1,))], [Message(2, (3,), (1,))]]
    return Schedule.from_rounds(rounds, topology=PATH4, model="port", p=1,
                                primitive="broadcast", root=1)


def test_one_build_runs_gossip_broadcast_and_polling_on_path4():
    _verilator()
    # the allreduce forwards single tokens (parts of accumulators) from store slots
    named = [("gossip", path_gossip(4, 1)), ("broadcast", broadcast_path4()),
             ("polling", polling_path4()), ("allreduce", allreduce_schedule(PATH4))]
    report = cosim_network(named, seed=7)
    bad = [f"{r.name}: {r.verdict.report()}" for r in report.results if not r.verdict.match]
    assert not bad, "\n".join(bad)
    assert len(report.builds) == 1
    cycles = {r.name: (r.program.rounds, r.program.cycles, r.record.busy_cycles)
              for r in report.results}
    assert cycles == {"gossip": (5, 5, 6), "broadcast": (2, 2, 3), "polling": (6, 6, 7),
                      "allreduce": (3, 3, 4)}


@pytest.mark.parametrize("fault", ["drop", "misroute", "combine"])
def test_a_fault_shows_the_same_first_mismatch_in_both_simulators(fault):
    _verilator()
    named = [("polling", polling_path4())] if fault == "combine" else \
        [("gossip", path_gossip(4, 1))]
    firsts = []
    for simulator in ("amaranth", "verilator"):
        report = cosim_network(named, seed=3, fault=fault, simulator=simulator, depth=8)
        (r,) = report.results
        assert not r.verdict.match
        firsts.append(r.verdict.first_mismatch.to_json())
    assert firsts[0] == firsts[1]
    assert firsts[0]["kind"] == "trace" and "port" in firsts[0]["note"]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True, timeout=600)


def test_a_schedule_on_a_non_edge_is_refused_before_any_build(tmp_path):
    """The validator's verdict INVALID: exit 1 as from `schedule check` (docs/reference.md)."""
    bad = Schedule.from_rounds([[Message(0, (2,), (0,))]], topology=PATH4, model="H1", p=1,
                               primitive="broadcast", root=0)
    f = tmp_path / "bad.json"
    save(bad, f)
    proc = _cli("cosim", "--fabric", "network", "--schedule", str(f))
    assert proc.returncode == 1, proc.stderr
    assert "pipegossip cosim: invalid: " in proc.stderr and "no edge 0-2" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_cli_json_puts_match_R_S_cycles_and_latency_side_by_side(tmp_path):
    _verilator()
    f = tmp_path / "path4.json"
    save(path_gossip(4, 1), f)
    proc = _cli("cosim", "--fabric", "network", "--schedule", str(f), "--format", "json",
                "--quiet")
    assert proc.returncode == 0, proc.stderr
    (res,) = json.loads(proc.stdout)["results"]
    assert {k: res[k] for k in ("match", "R", "S", "cycles", "latency")} == \
        dict(match=True, R=5, S=5, cycles=5, latency=1)
    proc = _cli("cosim", "--fabric", "network", "--schedule", str(f), "--fault", "drop",
                "--quiet")
    assert proc.returncode == 1 and "MISMATCH" in proc.stdout
