# amaranth: UnusedElaboratable=no
"""The fabric in Amaranth's simulator, held against the golden model.

Glasgow style: one shared list of cases (:func:`cases`), a reference run
(:func:`ref_run`, the model) and an RTL run (:func:`rtl_run`, the fabric in
Amaranth's simulator, recorded as a trace record), compared cycle by cycle
by the one judge (:func:`pipegossip.sim.judge.fsm.judge`).
"""

from __future__ import annotations

import numpy as np
import pytest
from amaranth.sim import Simulator
from hypothesis import given, settings
from hypothesis import strategies as st
from paper import CASES as PAPER_CASES
from paper import IDS as PAPER_IDS

from pipegossip.hw.fsm.fabric import Fabric, fabric_ports
from pipegossip.hw.words import WordScheme
from pipegossip.model import RunConfig, RunResult, simulate
from pipegossip.model.runtable import WR, WS
from pipegossip.sim.fsm.amaranth_run import run_fabric
from pipegossip.sim.judge.fsm import judge, judge_watchdog
from pipegossip.sim.record import HwRun


# -- the shared cases ---------------------------------------------------------

def reversed_orders(n: int) -> list[list[int]]:
    """P_i = N-1, ..., 0 without i: every processor serves the highest id first."""
    return [[j for j in reversed(range(n)) if j != i] for i in range(n)]


def backward_orders(n: int) -> list[list[int]]:
    """P_i = i-1, i-2, ... cyclically: the pipelined orders walked backwards."""
    return [[(i - k) % n for k in range(1, n)] for i in range(n)]


def family_cases() -> list[RunConfig]:
    """Every N from 2 to 8, every family, under the default options."""
    out = []
    for n in range(2, 9):
        out.append(RunConfig.family(n, "identity"))
        out.append(RunConfig.family(n, "pipelined"))
        for seed in (1, 2, 3):
            out.append(RunConfig.family(n, "random", seed=seed))
        out.append(RunConfig.explicit(reversed_orders(n)))
        out.append(RunConfig.explicit(backward_orders(n)))
    return out


def feature_cases() -> list[RunConfig]:
    """Every combination of receive x substitute x sessions x channels."""
    out = []
    for receive in ("ordered", "any"):
        for substitute in (False, True):
            for sessions in (1, 3):
                for channels in (None, 1, 2):
                    for n, order, seed in ((6, "random", 4), (7, "random", 5), (8, "pipelined", None)):
                        out.append(RunConfig.family(n, order, seed=seed, receive=receive,
                                                    substitute=substitute, sessions=sessions,
                                                    channels=channels))
    return out


def ref_run(config: RunConfig) -> RunResult:
    return simulate(config, table=True)


def rtl_run(config: RunConfig, width: int = 8) -> HwRun:
    return run_fabric(config, width)


# -- cycle equality -----------------------------------------------------------

def check_against_model(config: RunConfig, width: int = 8) -> None:
    """The judge finds nothing, and could check everything.

    The judge demands (sim/judge/fsm.py): the run lasts exactly L cycles (busy in
    1..L, done from L+1 on, ``cycle`` counting 1..L) and every cycle shows
    the model's step, action AND peer, with ``used`` equal to the model's
    utilisation; ``stall`` never rises; idle outputs before the start (done
    low after reset) and after the run; the model's deliveries, each with
    the source's tagged word of its session, and every word to every other
    processor exactly once per session; session 0's word taken with start,
    session s+1's in the cycle of the processor's last transfer of session
    s, and no other ``ready``.
    """
    rtl = rtl_run(config, width)
    verdict = judge(config, width, rtl)
    assert verdict.match, verdict.report()
    # Nothing was skipped: the Amaranth record holds every port of the table.
    assert rtl.missing == () and verdict.unchecked == []
    assert rtl.ended == "done"
    assert rtl.busy_cycles == ref_run(config).length
    assert rtl.table() == ref_run(config).table
    # The judge saw the idle cycle before and the cycles after the run.
    assert rtl.first_cycle < 0 and rtl.last_cycle >= rtl.busy_cycles + 2


@pytest.mark.parametrize("config", family_cases(), ids=lambda c: c.slug)
def test_every_family_matches_the_model(config):
    check_against_model(config)


@pytest.mark.parametrize("config", feature_cases(), ids=lambda c: c.slug)
def test_every_feature_combination_matches_the_model(config):
    check_against_model(config)


@pytest.mark.parametrize("case", PAPER_CASES, ids=PAPER_IDS)
def test_paper_tables_in_hardware(case):
    rtl = rtl_run(case.config)
    assert rtl.busy_cycles == case.length
    assert tuple(rtl.table().used.tolist()) == case.utilization
    check_against_model(case.config)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 7), seed=st.integers(0, 10_000),
       receive=st.sampled_from(["ordered", "any"]), substitute=st.booleans(),
       sessions=st.integers(1, 3), channels=st.integers(0, 3))
def test_random_configurations_match_the_model(n, seed, receive, substitute, sessions, channels):
    check_against_model(RunConfig.family(
        n, "random", seed=seed, receive=receive, substitute=substitute, sessions=sessions,
        channels=min(channels, n // 2) or None))


@pytest.mark.parametrize("width", [1, 3, 16])
def test_word_width(width):
    check_against_model(RunConfig.family(5, "random", seed=7, receive="any", sessions=2),
                        width)


@pytest.mark.slow
@pytest.mark.parametrize("n", range(9, 17))
@pytest.mark.parametrize("options", [{}, {"receive": "any"}, {"receive": "any", "substitute": True},
                                     {"substitute": True, "sessions": 2, "channels": 3}],
                         ids=["ordered", "any", "any-sub", "sub-k2-c3"])
def test_larger_fabrics_match_the_model(n, options):
    for seed in (11, 12):
        check_against_model(RunConfig.family(n, "random", seed=seed, **options))


# -- watchdog and hold ----------------------------------------------------------

def test_watchdog_rises_when_the_first_sender_is_held():
    config = RunConfig.family(5, "identity")
    rtl = run_fabric(config, hold=0b00001, max_cycles=6)
    assert rtl.ended != "done"
    assert judge_watchdog(config, rtl).match, judge_watchdog(config, rtl).report()
    table = rtl.table(6)
    # Nothing can move while p0 (everyone's first sender) is held.
    assert table.used.tolist() == [0] * 6
    assert table.actions[0].tolist() == [WS] * 6
    assert table.peers[0].tolist() == [1] * 6
    assert table.actions[1].tolist() == [WR] * 6
    assert table.peers[1].tolist() == [0] * 6
    # The watchdog registers who acted, then looks: high from two cycles
    # after the first transfer-free busy cycle.
    assert rtl.window("stall", 1, 6).tolist() == [0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("config", [
    RunConfig.family(6, "pipelined"),
    RunConfig.family(6, "random", seed=3, receive="any"),
    RunConfig.family(6, "random", seed=3, receive="any", substitute=True, sessions=2),
    RunConfig.family(6, "pipelined", substitute=True, channels=1),
], ids=lambda c: c.slug)
@pytest.mark.parametrize("held", [0, 3, 5])
def test_watchdog_rises_after_the_first_cycle_without_a_transfer(config, held):
    ref = ref_run(config)
    cycles = ref.length + 4
    rtl = run_fabric(config, hold=1 << held, max_cycles=cycles)
    # A held processor never finishes, so the run cannot end ...
    assert rtl.ended != "done"
    verdict = judge_watchdog(config, rtl)
    assert verdict.match, verdict.report()
    table = rtl.table(cycles)
    # ... it shows only waits ...
    assert set(table.actions[held].tolist()) <= {WS, WR}
    # ... and the watchdog is exactly "some busy cycle at least two cycles
    # ago fired nothing" (it registers who acted, then looks).
    idle = table.used == 0
    assert idle.any()
    expected = np.concatenate([[False, False], np.cumsum(idle)[:-2] > 0])
    np.testing.assert_array_equal(rtl.window("stall", 1, cycles).astype(bool), expected)


def _drive(config: RunConfig, script):
    """Run ``script(ctx, dut)`` as a testbench against a fresh fabric."""
    dut = Fabric(config, 8)
    sim = Simulator(dut)
    sim.add_clock(1e-6)

    async def bench(ctx):
        await script(ctx, dut)

    sim.add_testbench(bench)
    sim.run()


def test_start_is_ignored_while_busy_and_restarts_from_done():
    config = RunConfig.family(4, "pipelined")
    length = ref_run(config).length

    async def script(ctx, dut):
        for i in range(config.n):
            ctx.set(dut.words[i].valid, 1)
            ctx.set(dut.words[i].payload, 0x40 + i)
        ctx.set(dut.start, 1)  # held high for two whole runs
        await ctx.tick()
        for run in range(2):
            for t in range(1, length + 1):
                assert ctx.get(dut.busy) == 1 and ctx.get(dut.cycle) == t
                assert all(ctx.get(dut.words[i].ready) == 0 for i in range(config.n))
                await ctx.tick()
            # Not busy for one cycle: done, and `start` is taken right here.
            assert ctx.get(dut.busy) == 0 and ctx.get(dut.done) == 1
            assert all(ctx.get(dut.words[i].ready) == 1 for i in range(config.n))
            await ctx.tick()
        assert ctx.get(dut.done) == 0 and ctx.get(dut.cycle) == 1

    _drive(config, script)


def test_stall_stays_high_until_the_next_start():
    config = RunConfig.family(4, "identity")
    length = ref_run(config).length

    async def script(ctx, dut):
        for i in range(config.n):
            ctx.set(dut.words[i].valid, 1)
        ctx.set(dut.hold, 0b0001)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        await ctx.tick()
        assert ctx.get(dut.stall) == 0  # cycle 2: cycle 1 fired nothing, not seen yet
        await ctx.tick()
        assert ctx.get(dut.stall) == 1
        ctx.set(dut.hold, 0)  # released: the run now completes, late
        cycles = 0
        while ctx.get(dut.busy):
            assert ctx.get(dut.stall) == 1
            await ctx.tick()
            cycles += 1
        assert cycles == length
        assert ctx.get(dut.done) == 1 and ctx.get(dut.stall) == 1
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        assert ctx.get(dut.stall) == 0 and ctx.get(dut.busy) == 1

    _drive(config, script)


def test_missing_word_keeps_the_previous_one():
    config = RunConfig.family(3, "pipelined", sessions=2)

    async def script(ctx, dut):
        for i in range(config.n):
            ctx.set(dut.words[i].valid, 1)
            ctx.set(dut.words[i].payload, 0x10 + i)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        for i in range(config.n):
            ctx.set(dut.words[i].valid, 0)  # no word for session 1
            ctx.set(dut.words[i].payload, 0xEE)
        seen = []
        while ctx.get(dut.busy):
            for j in range(config.n):
                if ctx.get(dut.delivery[j].valid):
                    seen.append((ctx.get(dut.delivery[j].source),
                                 ctx.get(dut.delivery[j].session),
                                 ctx.get(dut.delivery[j].word)))
            await ctx.tick()
        assert len(seen) == 2 * 3 * 2
        assert all(word == 0x10 + src for src, _, word in seen)
        assert {s for _, s, _ in seen} == {0, 1}

    _drive(config, script)


# -- parameters -------------------------------------------------------------------

@pytest.mark.parametrize("config, width, error, text", [
    ("n8", 8, TypeError, "'n8'"),
    (None, 8, TypeError, "None"),
    (RunConfig.family(3, "identity"), 0, ValueError, "0"),
    (RunConfig.family(3, "identity"), -4, ValueError, "-4"),
    (RunConfig.family(3, "identity"), 8.0, TypeError, "8.0"),
    (RunConfig.family(3, "identity"), True, TypeError, "True"),
    (RunConfig.family(3, "identity"), "8", TypeError, "'8'"),
])
def test_bad_parameters_are_refused_before_elaboration(config, width, error, text):
    with pytest.raises(error, match=text.replace("(", r"\(").replace(".", r"\.")):
        Fabric(config, width)


def test_port_names_and_widths_follow_the_pinned_interface():
    config = RunConfig.family(5, "identity", sessions=3)
    ports = {p.name: (p.direction, p.width) for p in fabric_ports(config, 12)}
    expected = {"start": ("in", 1), "busy": ("out", 1), "done": ("out", 1),
                "cycle": ("out", (3 * 5 * 4).bit_length()), "used": ("out", 3),
                "stall": ("out", 1), "hold": ("in", 5)}
    for i in range(5):
        expected.update({
            f"words__{i}__payload": ("in", 12), f"words__{i}__valid": ("in", 1),
            f"words__{i}__ready": ("out", 1), f"action__{i}": ("out", 3),
            f"peer__{i}": ("out", 3), f"delivery__{i}__valid": ("out", 1),
            f"delivery__{i}__source": ("out", 3), f"delivery__{i}__session": ("out", 2),
            f"delivery__{i}__word": ("out", 12),
        })
    assert ports == expected


@pytest.mark.parametrize("n, pw", [(2, 1), (3, 2), (4, 2), (5, 3), (8, 3), (9, 4)])
def test_peer_width(n, pw):
    ports = {p.name: p.width for p in fabric_ports(RunConfig.family(n, "identity"))}
    assert ports["peer__0"] == pw and ports["delivery__1__source"] == pw
    assert ports["delivery__0__session"] == 1
    assert ports["used"] == n.bit_length()


@pytest.mark.parametrize("n, sessions, width", [(8, 3, 8), (16, 16, 8), (5, 1, 3), (2, 1, 1)])
def test_tagged_words_tell_every_processor_and_session_apart(n, sessions, width):
    scheme = WordScheme(n, sessions, width)
    words = {scheme.word(i, s) for i in range(n) for s in range(sessions)}
    assert len(words) == n * sessions
    assert all(0 <= w < 1 << width for w in words)
    tagged = scheme.tagged(n - 1, sessions - 1)
    assert (tagged.source, tagged.session) == (n - 1, sessions - 1)
    assert tagged.word == scheme.word(n - 1, sessions - 1)
