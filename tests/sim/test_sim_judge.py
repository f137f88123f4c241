"""The judge, words and throughput analysis, without a simulator.

The "hardware" here is a record built from the model's own run, exactly as
the testbench would have sampled a correct fabric; each test then breaks one
thing and checks that the judge names it, with cycle and processor.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipegossip.model import R, RunConfig, S, WS, simulate
from pipegossip.sim.record import HwRun, LANE_FIELDS, RunSpec, SCALAR_FIELDS
from pipegossip.sim.judge.fsm import judge, judge_watchdog, session_ends, show
from pipegossip.sim.throughput import throughput
from pipegossip.hw.words import tagged_words

IDLE_CYCLES, TAIL = 2, 4


def recorded(config: RunConfig, width: int = 8, seed: int = 0) -> HwRun:
    """What a correct fabric shows for ``config``: the model's run as samples."""
    model = simulate(config, table=True)
    n, length, k = config.n, model.length, config.sessions
    words = tagged_words(n, k, width, seed)
    first, last = -IDLE_CYCLES, length + TAIL
    count = last - first + 1
    sm = {f: np.zeros(count, dtype=np.int64) for f in SCALAR_FIELDS}
    sm.update({f: np.zeros((count, n), dtype=np.int64) for f in LANE_FIELDS})
    sm["dword"] = sm["dword"].astype(object)
    sm["payload"] = sm["payload"].astype(object)

    def row(t):
        return t - first

    sm["start"][row(0)] = 1
    for t in range(1, length + 1):
        sm["busy"][row(t)] = 1
        sm["cycle"][row(t)] = t
        sm["used"][row(t)] = model.utilization[t - 1]
        sm["action"][row(t)] = model.table.actions[:, t - 1]
        sm["peer"][row(t)] = model.table.peers[:, t - 1]
    for t in range(length + 1, last + 1):
        sm["done"][row(t)] = 1
    for step, src, dst, sess in model.deliveries.rows():
        sm["dvalid"][row(step), dst] = 1
        sm["dsource"][row(step), dst] = src
        sm["dsession"][row(step), dst] = sess
        sm["dword"][row(step), dst] = words[src][sess]
    ends = session_ends(model.table, k)
    for p in range(n):
        takes = [0] + [int(c) for c in ends[p, :k - 1]]
        for s, t in enumerate(takes):
            sm["ready"][row(t), p] = 1
            upto = takes[s + 1] if s + 1 < len(takes) else t
            sm["valid"][row(t):row(upto) + 1, p] = 1
            sm["payload"][row(t):row(upto) + 1, p] = words[p][s]
    return HwRun(spec=RunSpec(word_seed=seed, idle=IDLE_CYCLES, tail=TAIL), n=n,
                 first_cycle=first, samples=sm, ended="done", extra=dict(after_reset=True))


CONFIGS = [
    RunConfig.family(5, "pipelined"),
    RunConfig.family(6, "random", seed=4, receive="any", substitute=True, sessions=2,
                     channels=2),
    RunConfig.family(5, "pipelined", sessions=3),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.slug)
def test_a_correct_record_matches(config):
    verdict = judge(config, 8, recorded(config))
    assert verdict.match, verdict.report()
    assert verdict.hw_length == simulate(config).length
    assert verdict.hw_table == simulate(config, table=True).table
    assert "MATCH" in verdict.report()


def test_a_wrong_peer_is_named_with_cycle_processor_and_aligned_rows():
    config = CONFIGS[0]
    run = recorded(config)
    model = simulate(config, table=True).table
    # The first processor waiting (WS) waits for another target: only the peer
    # cell changes, the action stays WS, so only the peer comparison sees it.
    p, col = (int(x[0]) for x in np.nonzero(model.actions == WS))
    t = col + 1
    wrong = next(q for q in range(config.n) if q not in (p, int(model.peers[p, col])))
    i = t - run.first_cycle
    assert run.samples["action"][i, p] == WS
    run.samples["peer"][i, p] = wrong
    verdict = judge(config, 8, run)
    assert not verdict.match
    first = verdict.first_mismatch
    assert (first.kind, first.cycle, first.processor) == ("trace", t, p)
    assert first.expected == show(WS, int(model.peers[p, col]))
    assert first.got == f"WS:{wrong}"
    text = verdict.report()
    lines = text.splitlines()
    assert f"cycle {t}, processor p{p}" in lines[1]
    model_row = next(x for x in lines if x.strip().startswith(f"model p{p}"))
    hw_row = next(x for x in lines if x.strip().startswith(f"hw    p{p}"))
    assert f"[{first.expected}]" in model_row and f"[WS:{wrong}]" in hw_row
    # aligned: the marked cells end in the same column
    assert model_row.index("]") == hw_row.index("]")


def test_a_misrouted_word_is_caught_by_value():
    config = CONFIGS[0]
    run = recorded(config)
    step, src, dst, sess = simulate(config).deliveries.rows()[5]
    i = step - run.first_cycle
    run.samples["dword"][i, dst] ^= 1
    verdict = judge(config, 8, run)
    kinds = {(m.kind, m.cycle, m.processor) for m in verdict.mismatches}
    assert kinds == {("delivery", step, dst)}


def test_a_wrong_source_id_and_a_duplicate_are_caught():
    config = CONFIGS[0]
    run = recorded(config)
    step, src, dst, sess = simulate(config).deliveries.rows()[0]
    other = next(q for q in range(config.n) if q not in (src, dst))
    run.samples["dsource"][step - run.first_cycle, dst] = other
    verdict = judge(config, 8, run)
    assert verdict.first_mismatch.kind == "delivery"
    assert verdict.first_mismatch.cycle == step
    # the exactly-once check sees one word missing and another twice
    once = [m for m in verdict.mismatches if m.cycle is None]
    assert {m.got for m in once} == {"0 deliveries", "2 deliveries"}


def test_a_delivery_after_done_is_caught():
    config = CONFIGS[0]
    run = recorded(config)
    length = simulate(config).length
    run.samples["dvalid"][length + 2 - run.first_cycle, 0] = 1
    verdict = judge(config, 8, run)
    m = verdict.first_mismatch
    assert (m.kind, m.cycle, m.processor, m.note) == ("delivery", length + 2, 0, "after done")


def test_late_done_and_a_longer_run_are_caught():
    config = CONFIGS[0]
    run = recorded(config)
    length = simulate(config).length
    i = length + 1 - run.first_cycle
    run.samples["done"][i] = 0
    run.samples["busy"][i] = 1
    verdict = judge(config, 8, run)
    assert {m.kind for m in verdict.mismatches} == {"busy", "done"}
    assert verdict.first_mismatch.cycle == length + 1
    assert verdict.hw_length == length + 1


def test_stall_and_used_are_checked():
    config = CONFIGS[0]
    run = recorded(config)
    run.samples["stall"][3 - run.first_cycle] = 1
    run.samples["used"][5 - run.first_cycle] += 2
    verdict = judge(config, 8, run)
    assert [(m.kind, m.cycle) for m in verdict.mismatches] == [("stall", 3), ("used", 5)]


def test_a_word_taken_at_the_wrong_time_is_caught():
    config = CONFIGS[2]
    run = recorded(config)
    p = 1
    col = run.samples["ready"][:, p]
    taken = np.flatnonzero(col & run.samples["valid"][:, p])
    col[taken[1]] = 0
    col[taken[1] + 1] = 1
    run.samples["valid"][taken[1] + 1, p] = 1
    verdict = judge(config, 8, run)
    m = verdict.first_mismatch
    assert (m.kind, m.processor, m.cycle) == ("handshake", p, taken[1] + run.first_cycle)


def test_the_start_cycle_is_checked():
    config = CONFIGS[0]
    run = recorded(config)
    i = 0 - run.first_cycle
    run.samples["action"][i, 2] = S
    run.samples["peer"][i, 2] = 3
    run.samples["busy"][i] = 1
    verdict = judge(config, 8, run)
    got = [(m.kind, m.cycle, m.processor, m.expected, m.got, m.note) for m in verdict.mismatches]
    assert got == [("trace", 0, 2, "-", "S3", "start cycle"), ("busy", 0, None, "0", "1", "")]


@pytest.mark.parametrize("change", ["missing", "extra"])
def test_a_missing_or_extra_word_handshake_is_caught(change):
    config = CONFIGS[2]
    run = recorded(config)
    p = 3
    taken = np.flatnonzero(run.samples["ready"][:, p] & run.samples["valid"][:, p])
    assert len(taken) == config.sessions
    if change == "missing":
        run.samples["ready"][taken[-1], p] = 0
        want = (int(taken[-1]) + run.first_cycle, f"word {config.sessions - 1} taken in "
                f"cycle {int(taken[-1]) + run.first_cycle}", "not taken")
    else:
        extra = int(taken[-1]) + 3
        run.samples["ready"][extra, p] = run.samples["valid"][extra, p] = 1
        want = (extra + run.first_cycle, f"no word {config.sessions} taken",
                f"taken in cycle {extra + run.first_cycle}")
    verdict = judge(config, 8, run)
    assert [(m.kind, m.processor, m.cycle, m.expected, m.got) for m in verdict.mismatches] \
        == [("handshake", p, *want)]


def test_idle_outputs_before_start_are_checked():
    config = CONFIGS[0]
    run = recorded(config)
    run.samples["action"][0, 2] = 1
    verdict = judge(config, 8, run)
    m = verdict.first_mismatch
    assert (m.kind, m.cycle, m.processor) == ("idle", -2, 2)


def test_a_timeout_is_reported():
    config = CONFIGS[0]
    run = recorded(config)
    run.ended = "timeout"
    verdict = judge(config, 8, run)
    assert [m.kind for m in verdict.mismatches] == ["timeout"]


def test_watchdog_verdicts():
    config = CONFIGS[0]
    run = recorded(config)
    run.spec.hold = (1 << config.n) - 1
    verdict = judge_watchdog(config, run)
    kinds = [m.got for m in verdict.mismatches]
    assert "stall never rose" in kinds and "done high" in kinds
    run.samples["stall"][3 - run.first_cycle:] = 1
    run.samples["done"][:] = 0
    run.samples["busy"][3 - run.first_cycle:] = 1
    run.samples["used"][:] = 0
    run.samples["dvalid"][:] = 0
    verdict = judge_watchdog(config, run)
    assert verdict.match, verdict.report()


def test_words_are_tagged_distinct_and_reproducible():
    w = tagged_words(16, 4, 8, seed=3)
    flat = [x for row in w for x in row]
    assert len(flat) == 64 and len(set(flat)) == 64
    assert all(0 <= x < 256 for x in flat)
    assert tagged_words(16, 4, 8, seed=3) == w
    assert tagged_words(16, 4, 8, seed=4) != w
    narrow = tagged_words(5, 2, 1, seed=0)
    assert all(x in (0, 1) for row in narrow for x in row)
    wide = tagged_words(3, 1, 100, seed=0)
    assert any(x >= 1 << 64 for row in wide for x in row)
    with pytest.raises(ValueError):
        tagged_words(3, 1, 0, seed=0)


@pytest.mark.parametrize("n", [5, 8])
def test_throughput_of_a_streaming_record(n):
    config = RunConfig.family(n, "pipelined", sessions=3)
    tp = throughput(recorded(config), n, 3)
    assert tp.gaps and set(tp.gaps) == {2}
    assert tp.steady_mu == n - 1
    assert tp.length == simulate(config).length


def test_throughput_reports_a_broadcast_that_never_completes():
    config = RunConfig.family(5, "pipelined", sessions=2)
    run = recorded(config)
    run.samples["dvalid"][run.samples["dsource"] == 3] = 0
    with pytest.raises(ValueError, match="p3"):
        throughput(run, 5, 2)


def test_show_names_waits_with_their_peer():
    assert show(S, 3) == "S3" and show(R, 0) == "R0" and show(WS, 2) == "WS:2"


# -- one test per behaviour a mutation of judge.py changed unnoticed -----------

def test_session_ends_are_every_2n_minus_2_th_used_slot():
    config = RunConfig.family(5, "pipelined", sessions=3)
    table = simulate(config, table=True).table
    ends = session_ends(table, 3)
    for p in range(config.n):
        used = [t + 1 for t in range(table.length) if table.actions[p, t] in (S, R)]
        assert len(used) == 3 * 8
        assert ends[p].tolist() == [used[7], used[15], used[23]]


def test_what_a_record_lacks_is_named_unchecked():
    config = CONFIGS[0]
    run = recorded(config)
    del run.samples["dword"], run.samples["stall"]
    verdict = judge(config, 8, run)
    assert verdict.match
    assert verdict.unchecked == ["stall (no stall)", "delivery words (no dword)"]
    run = recorded(config)
    for name in ("dvalid", "dsource", "dsession", "dword"):
        del run.samples[name]
    # without dvalid, "delivery words" is not named again beside "delivery"
    assert judge(config, 8, run).unchecked == ["delivery (no dvalid, dsource, dsession)"]


@pytest.mark.parametrize("ended, got", [("timeout", "no done within 40 cycles"),
                                        ("watchdog", "stopped by the watchdog")])
def test_how_a_run_ended_early_is_told(ended, got):
    config = CONFIGS[0]
    run = recorded(config)
    run.ended, run.spec.max_cycles = ended, 40
    (m,) = judge(config, 8, run).mismatches
    assert (m.kind, m.got) == ("timeout", got)


def test_a_trace_mismatch_after_done_says_so():
    config = CONFIGS[0]
    run = recorded(config)
    length = simulate(config).length
    run.samples["action"][length + 1 - run.first_cycle, 4] = R
    (m,) = judge(config, 8, run).mismatches
    assert (m.kind, m.cycle, m.processor, m.note) == ("trace", length + 1, 4, "after done")


def test_the_record_s_own_problems_are_mismatches():
    config = CONFIGS[0]
    run = recorded(config)
    run.problems = ["x on dword_3 in cycle 4"]
    assert [(m.kind, m.got) for m in judge(config, 8, run).mismatches] == [
        ("record", "x on dword_3 in cycle 4")]


def test_without_a_seed_the_words_taken_are_the_words_expected():
    config = CONFIGS[2]
    run = recorded(config, seed=5)
    run.spec.word_seed = None
    assert judge(config, 8, run).match
    step, src, dst, sess = simulate(config).deliveries.rows()[7]
    run.samples["dword"][step - run.first_cycle, dst] ^= 4
    word = tagged_words(config.n, config.sessions, 8, 5)[src][sess]
    (m,) = judge(config, 8, run).mismatches
    assert (m.kind, m.cycle, m.processor) == ("delivery", step, dst)
    assert m.expected == f"word {word:#x} from p{src} session {sess}"
    # ... and with neither a seed nor the handshake, only source and session count
    for name in ("ready", "valid", "payload"):
        del run.samples[name]
    verdict = judge(config, 8, run)
    assert verdict.match
    assert "delivery words (unknown seed and no ready, valid, payload)" in verdict.unchecked


def _wordless(config: RunConfig) -> HwRun:
    """A record whose words are unknown: no seed, and no handshake to read them at."""
    run = recorded(config)
    run.spec.word_seed = None
    for name in ("ready", "valid", "payload"):
        del run.samples[name]
    return run


def test_a_wrong_source_is_told_without_a_word_when_none_is_known():
    config = CONFIGS[0]
    run = _wordless(config)
    step, src, dst, sess = simulate(config).deliveries.rows()[2]
    run.samples["dsource"][step - run.first_cycle, dst] = (src + 1) % config.n
    first = judge(config, 8, run).first_mismatch
    assert (first.expected, first.got) == (f"from p{src} session {sess}",
                                           f"from p{(src + 1) % config.n} session {sess}")


def test_done_before_start_is_what_the_previous_run_left():
    config = CONFIGS[0]
    run = recorded(config)
    run.extra["after_reset"] = False
    verdict = judge(config, 8, run)
    assert {(m.kind, m.expected, m.note) for m in verdict.mismatches} == {
        ("idle", "done=1", "after the previous run")}
    assert [m.cycle for m in verdict.mismatches] == [-2, -1]
    run.samples["done"][:0 - run.first_cycle] = 1
    assert judge(config, 8, run).match
    run = recorded(config)
    run.samples["done"][0] = 1
    (m,) = judge(config, 8, run).mismatches
    assert (m.kind, m.cycle, m.expected, m.note) == ("idle", -2, "done=0", "after reset")


def _held(config):
    run = recorded(config)
    run.spec.hold = (1 << config.n) - 1
    run.samples["stall"][3 - run.first_cycle:] = 1
    run.samples["done"][:] = 0
    run.samples["busy"][1 - run.first_cycle:] = 1
    run.samples["used"][:] = 0
    run.samples["dvalid"][:] = 0
    return run


def test_watchdog_stall_must_stay_high_to_the_last_sample():
    config = CONFIGS[0]
    run = _held(config)
    assert judge_watchdog(config, run).match
    run.samples["stall"][-1] = 0
    (m,) = judge_watchdog(config, run).mismatches
    assert (m.cycle, m.expected, m.got) == (run.last_cycle, "stall stays high", "stall low")


def test_watchdog_busy_when_stall_rises():
    config = CONFIGS[0]
    run = _held(config)
    run.samples["busy"][3 - run.first_cycle] = 0
    (m,) = judge_watchdog(config, run).mismatches
    assert (m.cycle, m.got) == (3, "busy low")


@pytest.mark.parametrize("field", ["used", "dvalid"])
def test_watchdog_all_held_means_no_transfer_to_the_last_sample(field):
    config = CONFIGS[0]
    run = _held(config)
    if field == "used":
        run.samples["used"][-1] = 2
    else:
        run.samples["dvalid"][-1, 1] = 1
    (m,) = judge_watchdog(config, run).mismatches
    assert (m.cycle, m.expected) == (run.last_cycle, "no transfer (all held)")
    run.spec.hold = 1  # one held processor: the others may transfer
    assert judge_watchdog(config, run).match


def test_idle_delivery_is_checked_without_a_peer_field():
    config = CONFIGS[0]
    run = _held(config)
    del run.samples["peer"]
    run.samples["dvalid"][1, 3] = 1
    assert [(m.kind, m.cycle, m.processor, m.got)
            for m in judge_watchdog(config, run).mismatches] == [("idle", -1, 3, "dvalid=1")]


def test_watchdog_names_the_first_done_only():
    config = CONFIGS[0]
    run = _held(config)
    run.samples["done"][5 - run.first_cycle:] = 1
    assert [(m.cycle, m.got) for m in judge_watchdog(config, run).mismatches] == [(5, "done high")]


# -- the fast mode's summary record (sim/fast/mode.fast_record) ---------------

def _summary(config, **change):
    from pipegossip.sim.fast.mode import fast_record

    model = simulate(config)
    s = dict(finished=1, bad=0, bad_cycle=0, bad_proc=0, bad_kinds=0,
             deliveries=len(model.deliveries), used_sum=int(model.utilization.sum()),
             busy_cycles=model.length, done_at=model.length + 1, idle_bad=0, busy=0, done=1,
             stall=0, wall_seconds=0.0, waited=model.length + 5, wakes=1)
    idle_rose = change.pop("idle_rose", False)
    s.update(change)
    return fast_record(RunSpec(word_seed=0), config.n, s, True, idle_rose, "test")


def _told(config, **change):
    return [(m.kind, m.cycle, m.processor, m.expected, m.got, m.note)
            for m in judge(config, 8, _summary(config, **change)).mismatches]


def test_a_clean_summary_matches():
    assert _told(CONFIGS[0]) == []


def test_the_checker_s_first_mismatch_and_its_other_kinds():
    config = CONFIGS[0]
    one = _told(config, bad=1, bad_cycle=4, bad_proc=2, bad_kinds=1 << 6)
    assert one == [("delivery", 4, 2, "the model's slot", "a different value (fast-mode checker)",
                    "")]
    two = _told(config, bad=1, bad_cycle=4, bad_proc=2, bad_kinds=(1 << 6) | (1 << 7))
    assert two[0][0] == "delivery" and two[0][5] == "also handshake"


def test_every_total_of_the_summary_is_held_against_the_model():
    config = CONFIGS[0]
    model = simulate(config)
    length = model.length
    assert _told(config, done_at=length + 2) == [
        ("done", length + 2, None, f"done from cycle {length + 1}",
         f"done from cycle {length + 2}", "")]
    assert _told(config, done_at=0) == [
        ("done", None, None, f"done from cycle {length + 1}", "no done", "")]
    assert [x[:2] for x in _told(config, busy_cycles=length - 1)] == [("busy", None)]
    assert [x[:2] for x in _told(config, deliveries=len(model.deliveries) + 1)] \
        == [("delivery", None)]
    assert [x[:2] for x in _told(config, used_sum=int(model.utilization.sum()) - 2)] \
        == [("used", None)]
    assert [x[:2] for x in _told(config, finished=0)] == [("timeout", None)]
    for final in (dict(busy=1), dict(stall=1), dict(done=0)):
        assert [x[:2] for x in _told(config, **final)] == [("done", None)], final
    assert [x[:2] for x in _told(config, idle_rose=True)] == [("idle", None)]


def test_a_summary_record_s_problems_are_mismatches():
    config = CONFIGS[0]
    run = _summary(config)
    run.problems = ["the checker never finished"]
    assert [m.kind for m in judge(config, 8, run).mismatches] == ["record"]


def test_the_start_cycle_s_done_is_not_judged_but_cycle_1_s_is():
    config = CONFIGS[0]
    run = recorded(config)
    run.extra["after_reset"] = False
    run.samples["done"][:1 - run.first_cycle] = 1  # the previous run's done, to cycle 0
    assert judge(config, 8, run).match
    run.samples["done"][1 - run.first_cycle] = 1
    assert [(m.kind, m.cycle) for m in judge(config, 8, run).mismatches] == [("done", 1)]


def test_a_wrong_session_is_caught_without_a_word():
    config = CONFIGS[2]
    run = _wordless(config)
    step, src, dst, sess = simulate(config).deliveries.rows()[4]
    run.samples["dsession"][step - run.first_cycle, dst] = (sess + 1) % config.sessions
    first = judge(config, 8, run).first_mismatch
    assert (first.kind, first.cycle, first.processor) == ("delivery", step, dst)


def test_watchdog_names_the_first_stall_drop_and_the_first_transfer_only():
    config = CONFIGS[0]
    run = _held(config)
    run.samples["stall"][-3:-1] = 0
    run.samples["used"][-2:] = 2
    got = [(m.cycle, m.got) for m in judge_watchdog(config, run).mismatches]
    last = run.last_cycle
    assert got == [(last - 2, "stall low"), (last - 1, "used=2")]


def test_a_missing_field_does_not_stop_the_others_being_checked():
    config = CONFIGS[0]
    run = recorded(config)
    del run.samples["used"]
    run.samples["busy"][3 - run.first_cycle] = 0
    assert [(m.kind, m.cycle) for m in judge(config, 8, run).mismatches] == [("busy", 3)]


def test_the_last_sampled_cycle_and_the_idle_fields_before_start_are_checked():
    config = CONFIGS[0]
    run = recorded(config)
    run.samples["stall"][-1] = 1
    run.samples["busy"][0] = 1
    got = [(m.kind, m.cycle, m.got) for m in judge(config, 8, run).mismatches]
    assert got == [("idle", -2, "busy=1"), ("stall", run.last_cycle, "1")]


def test_a_word_nobody_was_seen_taking_is_not_judged_but_its_delivery_is():
    # No seed: the words are those taken at the handshakes. Processor 1's last
    # take is missing, so its last word is unknown: its deliveries are
    # judged by source and session alone, and a dropped one is still named.
    config = CONFIGS[2]
    run = recorded(config)
    run.spec.word_seed = None
    p, last = 1, config.sessions - 1
    taken = np.flatnonzero(run.samples["ready"][:, p] & run.samples["valid"][:, p])
    run.samples["ready"][taken[-1], p] = 0
    rows = [r for r in simulate(config).deliveries.rows() if r[1] == p and r[3] == last]
    step, _, dst, _ = rows[0]
    run.samples["dvalid"][step - run.first_cycle, dst] = 0
    got = [(m.kind, m.cycle, m.processor, m.got) for m in judge(config, 8, run).mismatches]
    t = int(taken[-1]) + run.first_cycle
    assert sorted(got, key=str) == sorted([("delivery", None, dst, "0 deliveries"),
                                           ("delivery", step, dst, "no delivery"),
                                           ("handshake", t, p, "not taken")], key=str)
