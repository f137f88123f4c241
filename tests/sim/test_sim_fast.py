# amaranth: UnusedElaboratable=no
"""The fast co-simulation mode (issue 17): in-hardware checker, one judge, per-cycle rerun.

* fault injection (:mod:`pipegossip.sim.fast.faults`): a wrong action, a
  wrong peer, a dropped, misrouted or late word, a delivery with a wrong
  word, source or session, a missing and an extra word handshake, each at a
  chosen cycle and processor, selected per run through ``hold`` (one build
  per mode);
  the fast checker and the per-cycle mode name the same first mismatch;
* both modes agree on a handful of existing cosim configurations;
* the fast record round-trips through JSON and is judged by the one judge.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pipegossip.model.config import RunConfig
from pipegossip.model.runtable import R
from pipegossip.sim.fsm.cosim import cosimulate
from pipegossip.sim.fsm.runner import default_runs
from pipegossip.sim.fsm import amaranth_run
from pipegossip.sim.fast.faults import FAULT_KINDS, Fault, FaultyFabric, faulty_verilog
from pipegossip.sim.fast.mode import expected_hex, fast_cosimulate, fast_record
from pipegossip.sim.fast.build import fabric_build
from pipegossip.sim.judge.fsm import judge, model_result, session_ends
from pipegossip.sim.record import HwRun
from pipegossip.sim.fsm.runner import run_build
from pipegossip.sim.tools.simulators import DEFAULT_RECIPE

#: The tests check logic, not speed: one fixed recipe (the per-cycle mode's),
#: independent of the fast mode's choice (fast_mode.recipe_for).
CHEAP = DEFAULT_RECIPE


def _faults(config: RunConfig) -> tuple[Fault, ...]:
    """One fault of each kind: delivery faults where the victim receives, take
    faults at (and just before) its second word handshake."""
    table = model_result(config).table
    receives = [(t + 1, int(p)) for t in range(table.length)
                for p in np.flatnonzero(table.actions[:, t] == R)]
    at = [receives[len(receives) * k // 8] for k in range(1, 7)]
    take = int(session_ends(table, config.sessions)[2, 0])  # processor 2's second take
    return (Fault("action", 3, 1), Fault("peer", 5, 2), Fault("drop", *at[0]),
            Fault("misroute", *at[1]), Fault("word", *at[2]), Fault("source", *at[3]),
            Fault("session", *at[4]), Fault("late", *at[5]), Fault("miss_take", take, 2),
            Fault("extra_take", take - 1, 2))


#: The first mismatch each fault kind must cause.
FIRST_KIND = dict(action="trace", peer="trace", drop="delivery", misroute="delivery",
                  word="delivery", source="delivery", session="delivery", late="delivery",
                  miss_take="handshake", extra_take="handshake")


def _key(m):
    return None if m is None else (m.cycle, m.processor, m.kind)


def test_fault_stand_in_parameters_are_refused_with_the_limit():
    config = RunConfig.family(5, "pipelined", sessions=2)
    FaultyFabric(config, 8, (Fault("word", 1, 0),) * 31)  # hold values 1..31
    with pytest.raises(ValueError, match="at most 31 faults"):
        FaultyFabric(config, 8, (Fault("word", 1, 0),) * 32)
    with pytest.raises(ValueError, match="fault kind must be one of"):
        FaultyFabric(config, 8, (Fault("bitflip", 1, 0),))


@pytest.mark.parametrize("k", range(len(FAULT_KINDS) + 1))
def test_each_fault_in_amaranths_simulator_is_the_first_mismatch_named(k, monkeypatch):
    """The stand-in itself, without a Verilator build: fault k (hold k + 1) is the
    judge's first mismatch, at its cycle and processor; hold 0 runs clean."""
    config = RunConfig.family(5, "pipelined", sessions=2)
    faults = _faults(config)
    monkeypatch.setattr(amaranth_run, "Fabric",
                        lambda config, width: FaultyFabric(config, width, faults))
    run = amaranth_run.run_fabric(config, 8, hold=(k + 1) % 11)
    verdict = judge(config, 8, run)
    if k == len(faults):
        assert verdict.match, verdict.report()
    else:
        fault = faults[k]
        assert _key(verdict.first_mismatch) == (fault.cycle, fault.processor,
                                                FIRST_KIND[fault.kind]), verdict.report()
        # where the word went: to the next processor (misroute), a cycle later (late)
        moved = {"misroute": (fault.cycle, (fault.processor + 1) % config.n),
                 "late": (fault.cycle + 1, fault.processor)}.get(fault.kind)
        if moved:
            assert moved + ("delivery",) in {_key(m) for m in verdict.mismatches}, \
                verdict.report()
        if fault.kind in ("drop", "misroute", "late"):  # and none where it was due
            assert run.samples["dvalid"][fault.cycle - run.first_cycle, fault.processor] == 0


@pytest.fixture(scope="module")
def faulty():
    config = RunConfig.family(5, "pipelined", sessions=2)
    faults = _faults(config)
    text = faulty_verilog(config, 8, faults)
    base = default_runs(config, (0,))[0]
    runs = [replace(base, hold=k + 1, reset=True) for k in range(len(faults))]
    return config, faults, text, runs


def test_fault_injection_both_modes_name_the_same_first_mismatch(faulty):
    config, faults, text, runs = faulty
    assert [f.kind for f in faults] == list(FAULT_KINDS)
    fast = fast_cosimulate(config, 8, runs=runs, fabric=text, name="n5-k2-fault-injection",
                           recipe=CHEAP)
    assert fast.reruns == list(range(len(faults)))
    # Trace mode on its own, every run from the start.
    tb = fabric_build(config, 8, text, "n5-k2-fault-injection-trace")
    trace = [judge(config, 8, r) for r in run_build(tb, runs)]
    for fault, f, rerun, t in zip(faults, fast.fast_verdicts, fast.verdicts, trace):
        assert not f.match and not t.match, fault
        # The in-hardware checker and the per-cycle mode: same cycle, processor, kind.
        assert _key(f.first_mismatch) == _key(t.first_mismatch), fault
        assert _key(t.first_mismatch) == (fault.cycle, fault.processor,
                                          FIRST_KIND[fault.kind]), fault
        # The reported verdict is the per-cycle rerun's: expected and got in full.
        assert str(rerun.first_mismatch) == str(t.first_mismatch)
        assert "fast-mode" not in rerun.report()


def test_fault_free_runs_of_the_faulty_build_match(faulty):
    config, _, text, runs = faulty
    clean = [replace(r, hold=0) for r in runs[:2]]
    fast = fast_cosimulate(config, 8, runs=clean, fabric=text, name="n5-k2-fault-injection",
                           recipe=CHEAP)
    assert [v.match for v in fast.verdicts] == [True, True] and fast.reruns == []


AGREE = [
    pytest.param(RunConfig.family(4, "identity"), marks=pytest.mark.slow),
    RunConfig.family(5, "pipelined", sessions=2),
    pytest.param(RunConfig.family(8, "pipelined"), marks=pytest.mark.slow),
    RunConfig.family(6, "pipelined", receive="any", substitute=True),
]


@pytest.mark.parametrize("config", AGREE, ids=lambda c: c.slug)
def test_both_modes_agree(config):
    fast = cosimulate(config, 8, word_seeds=(0, 1), spurious_start=True, mode="fast",
                      recipe=CHEAP)
    trace = cosimulate(config, 8, word_seeds=(0, 1), spurious_start=True, mode="trace")
    assert fast.mode == "fast" and fast.fast.reruns == []
    assert [v.match for v in fast.verdicts] == [v.match for v in trace.verdicts] == [True, True]
    for v, t in zip(fast.verdicts, trace.verdicts):
        s = v.run.summary
        assert s["busy_cycles"] == t.hw_length == model_result(config).length
        assert s["deliveries"] == int(t.run.window("dvalid", 1, t.hw_length).sum())
        assert s["used_sum"] == int(t.hw_utilization.sum())


@pytest.mark.slow
def test_a_wrong_model_is_caught_in_fast_mode_and_reported_per_cycle():
    good = RunConfig.family(5, "pipelined")
    bad = RunConfig.family(5, "identity")
    out = fast_cosimulate(bad, 8, against=good, recipe=CHEAP)
    assert out.reruns == [0]
    assert _key(out.fast_verdicts[0].first_mismatch) == _key(out.verdicts[0].first_mismatch)


def test_fast_record_round_trips_and_is_judged():
    config = RunConfig.family(5, "pipelined")
    model = model_result(config)
    spec = default_runs(config)[0]
    s = dict(finished=1, bad=0, bad_cycle=0, bad_proc=0, bad_kinds=0,
             deliveries=len(model.deliveries), used_sum=int(model.utilization.sum()),
             busy_cycles=model.length, done_at=model.length + 1, idle_bad=0, busy=0, done=1,
             stall=0, wall_seconds=0.0, waited=model.length + 5, wakes=1)
    run = fast_record(spec, config.n, s, True, False, "test")
    again = HwRun.from_json(run.to_json())
    assert again.summary == run.summary and "used" in again.missing
    assert judge(config, 8, again).match
    wrong = fast_record(spec, config.n, dict(s, deliveries=s["deliveries"] - 1, bad=1,
                                             bad_cycle=4, bad_proc=2, bad_kinds=1 << 6),
                        True, False, "test")
    v = judge(config, 8, wrong)
    assert _key(v.first_mismatch) == (4, 2, "delivery")
    assert {m.kind for m in v.mismatches} == {"delivery"}
    assert "MISMATCH" in v.report()


def test_expected_trace_rows():
    config = RunConfig.family(4, "identity")
    rows = expected_hex(config).split()
    assert len(rows) == model_result(config).length + 4 + 1
    assert len({len(r) for r in rows}) == 1
    assert int(rows[-1], 16) == 0  # idle after L
