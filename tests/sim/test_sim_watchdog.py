"""The ``stall`` watchdog and the ``hold`` input, co-simulated.

One simulation: a normal run, a run with every processor held (no transfer
can happen, the watchdog must rise and stay up, ``done`` must not), a reset,
a run with one processor held, a reset, and a normal run again, which must
match the model exactly (the watchdog leaves no trace behind a reset).
"""

from __future__ import annotations

from pipegossip.model import RunConfig
from pipegossip.sim.fsm.runner import default_runs
from pipegossip.sim.judge.fsm import judge, judge_watchdog, model_result
from pipegossip.sim.record import RunSpec
from pipegossip.sim.fsm.runner import build, run_build


def test_hold_raises_the_watchdog_and_reset_recovers():
    config = RunConfig.family(5, "pipelined")
    length = model_result(config).length
    normal = default_runs(config, [0])[0]
    everyone = (1 << config.n) - 1
    runs = [
        normal,
        RunSpec(word_seed=1, hold=everyone, max_cycles=4 * length, stop_on_stall=4),
        RunSpec(word_seed=2, reset=True, hold=1 << 2, max_cycles=4 * length, stop_on_stall=4),
        RunSpec(word_seed=3, reset=True, max_cycles=normal.max_cycles),
    ]
    b = build(config, 8)
    first, all_held, one_held, after = run_build(b, runs)

    assert judge(config, 8, first).match
    for run in (all_held, one_held):
        verdict = judge_watchdog(config, run)
        assert verdict.match, verdict.report()
        assert run.ended == "stall"
    # held processors show waits, never transfers
    held = all_held.window("action", 1, int(all_held.cycles[-1]))
    assert set(held.ravel().tolist()) <= {1, 3}
    verdict = judge(config, 8, after)
    assert verdict.match, verdict.report()


def test_a_valid_run_judged_as_a_watchdog_run_fails():
    # The watchdog check is not vacuous: a run where nothing is held has no stall.
    config = RunConfig.family(5, "pipelined")
    (run,) = run_build(build(config, 8), default_runs(config, [4]))
    verdict = judge_watchdog(config, run)
    assert not verdict.match
    assert verdict.first_mismatch.got in ("stall never rose", "done high")
