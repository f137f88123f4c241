# amaranth: UnusedElaboratable=no
"""The schedule fabric in Amaranth's simulator, judged; its port table, Verilog and lint."""

import copy
import json
import re
import subprocess

import numpy as np
import pytest
from judge_records import fixture, fresh

from pipegossip.hw.ports import ScheduleSize, schedule_ports
from pipegossip.hw.schedule import LATENCY, ScheduleFabric, schedule_fabric_ports
from pipegossip.hw.schedule.export import schedule_verilog_text
from pipegossip.model.algorithms.limits import GENERATORS, cyclic_shift
from pipegossip.model.algorithms.polling import polling_general
from pipegossip.model.config import RunConfig
from pipegossip.model.schedules import Message, Schedule, complete, schedule_of_config
from pipegossip.model.schedules.program import compile_schedule
from pipegossip.sim.judge.schedule import judge_schedule, schedule_verdict_json
from pipegossip.sim.schedule.cosim import run_programs_amaranth
from pipegossip.sim.tools.toolchain import use_verilator

RUNS = [("identity", {}), ("pipelined", {}), ("identity", dict(substitute=True, receive="any"))]


def _schedules(n):
    out = [(name, g(n)) for name, g in sorted(GENERATORS.items())]
    out += [(f"run-{o}{'-any-sub' if kw else ''}", schedule_of_config(RunConfig.family(n, o, **kw)))
            for o, kw in RUNS]
    return out


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
def test_every_schedule_runs_and_matches_on_one_fabric(n):
    named = _schedules(n)
    programs = [compile_schedule(s, depth=64) for _, s in named]
    records = run_programs_amaranth(programs, seed=n, names=[a for a, _ in named])
    assert len({(r.n, r.load_cycles > 0) for r in records}) == 1
    for (name, _), p, r in zip(named, programs, records):
        v = judge_schedule(p, r)
        assert v.match, v.report()
        assert r.busy_cycles == p.cycles + LATENCY
        assert schedule_verdict_json(v)["match"]


@pytest.mark.parametrize("n", [4, 8])
def test_cyclic_shift_reaches_n_minus_1_cycles(n):
    p = compile_schedule(cyclic_shift(n), depth=16)
    (r,) = run_programs_amaranth([p])
    assert int(np.asarray(r.samples["cycle"]).max()) == n - 1
    # every port sends and receives in every exchange cycle
    ex = np.asarray(r.samples["cycle"]) > 0
    assert np.asarray(r.samples["send_valid"])[ex].all()
    assert np.asarray(r.samples["recv_valid"])[ex].all()


def test_gather_and_polling_combine_at_the_root():
    gather = Schedule.from_rounds([[Message(1, (0,), (1,)), Message(3, (2,), (3,))],
                                   [Message(2, (0,), (2, 3))]], topology=complete(4), model="F1",
                                  p=None, primitive="gather", root=0)
    poll = polling_general(8)
    pg = compile_schedule(gather, depth=32, slots=9)
    pp = compile_schedule(poll, depth=32, slots=9)
    ok = [compile_schedule(cyclic_shift(8), depth=32, slots=9)]
    rg, = run_programs_amaranth([pg], seed=1)
    assert judge_schedule(pg, rg).match, judge_schedule(pg, rg).report()
    assert rg.acc[0] == pg.reduction(__import__("pipegossip.hw.schedule.load", fromlist=["x"])
                                     .slot_words(pg, 1))
    records = run_programs_amaranth([pp] + ok, seed=2)
    for p, r in zip([pp] + ok, records):
        assert judge_schedule(p, r).match, judge_schedule(p, r).report()


def test_the_judge_catches_a_wrong_trace_store_and_accumulator():
    p = compile_schedule(cyclic_shift(4), depth=8)
    (r,) = run_programs_amaranth([p])
    assert judge_schedule(p, r).match
    bad = copy.deepcopy(r)
    bad.samples["recv_source"][1 + LATENCY, 2] ^= 1
    assert judge_schedule(p, bad).counts().get("trace")
    bad = copy.deepcopy(r)
    bad.store[3][1] ^= 0x80
    assert "final store" in judge_schedule(p, bad).report()
    bad = copy.deepcopy(r)
    bad.held[2][0] = 0
    v = judge_schedule(p, bad)
    assert any("incomplete gossip" in m.note for m in v.mismatches)
    bad = copy.deepcopy(r)
    bad.acc[1] = 5
    assert any(m.note == "combine" for m in judge_schedule(p, bad).mismatches)
    bad = copy.deepcopy(r)
    bad.samples["busy"][-1] = 1
    assert judge_schedule(p, bad).counts().get("busy")


def test_a_program_too_long_for_the_build_is_refused_before_loading():
    with pytest.raises(ValueError, match="depth=4"):
        compile_schedule(schedule_of_config(RunConfig.family(4, "identity")), depth=4)


@pytest.mark.parametrize("n, width, depth", [(4, 8, 16), (5, 1, 7), (8, 16, 64)])
def test_port_table_signature_and_verilog_agree(n, width, depth):
    size = ScheduleSize(n, width, depth, n)
    ports = schedule_ports(size)
    assert [(p.name, p.direction, p.width) for p in ports] == \
        [(p.name, p.direction, p.width) for p in schedule_fabric_ports(size)]
    text = schedule_verilog_text(n, width, depth, name="sf")
    header = re.search(r"module sf\((.*?)\);", text, re.S).group(1)
    assert {x.strip() for x in header.split(",")} == {p.name for p in ports} | {"clk", "rst"}


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="n must be at least 2"):
        ScheduleFabric(1)
    with pytest.raises(TypeError):
        ScheduleFabric(4, depth="8")


ALLOWED = {"DECLFILENAME", "PROCASSINIT", "UNUSEDSIGNAL"}


@pytest.mark.parametrize("n, width, depth", [(4, 8, 16), (8, 8, 64), (5, 1, 3)])
def test_verilator_lint_reports_only_the_waived_warnings(tmp_path, n, width, depth):
    use_verilator()
    path = tmp_path / "pipegossip_schedule_fabric.v"
    path.write_text(schedule_verilog_text(n, width, depth))
    proc = subprocess.run(["verilator", "--lint-only", "-Wall", str(path)],
                          capture_output=True, text=True)
    found = re.findall(r"^%(Warning-[A-Z_]+|Error[^:]*): (.*)$", proc.stderr, re.M)
    kinds = {k.removeprefix("Warning-") for k, msg in found if not msg.startswith("Exiting")}
    assert kinds <= ALLOWED, [f for f in found if f[0].removeprefix("Warning-") not in ALLOWED]
    ports = {p.name for p in schedule_ports(ScheduleSize(n, width, depth, n))}
    for k, msg in found:
        if k.endswith("UNUSEDSIGNAL"):
            assert re.search(r"not used: '([^']+)'", msg).group(1) not in ports, msg


def test_the_judges_stored_records_are_what_the_fabric_does():
    """tests/sim/test_sim_judge_schedule.py judges stored records: they must be the fabric's."""
    assert fresh("schedule") == json.loads(fixture("schedule").read_text())
