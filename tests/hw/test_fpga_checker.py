# amaranth: UnusedElaboratable=no
"""The on-chip delivery checker in Amaranth's simulator: good sequences pass,
every kind of bad delivery raises its flag."""

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from pipegossip.hw.fpga.checker import (ERROR_BITS, DeliveryChecker, next_run_value, source_key,
                                        word_expr, word_value)
from pipegossip.model import RunConfig

RUN = 0x1234_5678
FLAG = {name: 1 << k for k, name in enumerate(ERROR_BITS)}


def good_deliveries(n, pid, sessions, width, run=RUN, order=None):
    """Every other processor's word once per session, in any source order."""
    sources = order or [s for s in range(n) if s != pid]
    return [(s, k, word_value(s, k, run, width, sessions))
            for k in range(sessions) for s in sources]


def run_checker(config, pid, deliveries, width=8, run=RUN):
    """Feed one delivery per cycle (None = idle cycle); return (error, complete, session)."""
    dut = DeliveryChecker(config, pid, width)
    result = {}

    async def bench(ctx):
        ctx.set(dut.run_value, run)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        for item in deliveries:
            if item is None:
                ctx.set(dut.delivery.valid, 0)
            else:
                source, session, word = item
                ctx.set(dut.delivery.valid, 1)
                ctx.set(dut.delivery.source, source)
                ctx.set(dut.delivery.session, session)
                ctx.set(dut.delivery.word, word)
            await ctx.tick()
        ctx.set(dut.delivery.valid, 0)
        await ctx.tick()
        result.update(error=ctx.get(dut.error), complete=ctx.get(dut.complete),
                      session=ctx.get(dut.session))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return result["error"], result["complete"], result["session"]


@pytest.mark.parametrize("n,pid,sessions", [(2, 0, 1), (4, 2, 1), (5, 4, 3), (8, 0, 2)])
def test_every_word_once_per_session_passes(n, pid, sessions):
    config = RunConfig.family(n, "pipelined", sessions=sessions)
    error, complete, session = run_checker(config, pid, good_deliveries(n, pid, sessions, 8))
    assert error == 0
    assert complete == 1
    assert session == sessions - 1


def test_source_order_within_a_session_does_not_matter():
    config = RunConfig.family(5, "identity", sessions=2)
    deliveries = good_deliveries(5, 1, 2, 8, order=[4, 0, 3, 2])
    deliveries.insert(2, None)
    assert run_checker(config, 1, deliveries)[:2] == (0, 1)


def test_a_missing_delivery_leaves_the_run_incomplete():
    config = RunConfig.family(4, "pipelined", sessions=2)
    deliveries = good_deliveries(4, 0, 2, 8)
    del deliveries[-1]
    error, complete, _ = run_checker(config, 0, deliveries)
    assert error == 0 and complete == 0


def bad_cases():
    """(name, deliveries, flags that must rise, flags that may rise with them)."""
    n, pid, width = 5, 2, 8
    good = good_deliveries(n, pid, 2, width)
    first = good[0]
    word, session, source, duplicate = (FLAG[k] for k in ERROR_BITS)
    yield "duplicate", good[:1] + [first] + good[1:], duplicate, 0
    yield "own id as source", [(pid, 0, word_value(pid, 0, RUN, width, 2))] + good, source, 0
    yield "source beyond N", [(7, 0, 0)] + good, source, word
    # Session field says 1 while this receiver is still in session 0.
    yield "wrong session field", [(first[0], 1, first[2])] + good[1:], session, 0
    # Session 1's word arriving in session 0 (right session field, wrong word).
    yield ("word of another session",
           [(first[0], 0, word_value(first[0], 1, RUN, width, 2))] + good[1:], word, 0)
    yield ("word of another source",
           [(first[0], 0, word_value(4, 0, RUN, width, 2))] + good[1:], word, 0)
    yield ("word of an earlier run",
           [(first[0], 0, word_value(first[0], 0, RUN ^ 0x10, width, 2))] + good[1:], word, 0)
    yield "one flipped bit", [(first[0], 0, first[2] ^ 0x80)] + good[1:], word, 0
    yield "delivery after the last session", good + [first], session, word


@pytest.mark.parametrize("name,deliveries,flags,extra", list(bad_cases()),
                         ids=[c[0] for c in bad_cases()])
def test_bad_deliveries_raise_their_flag(name, deliveries, flags, extra):
    config = RunConfig.family(5, "identity", sessions=2)
    error, _, _ = run_checker(config, 2, deliveries)
    assert error & flags == flags, f"{name}: error flags {error:04b}"
    assert error & ~(flags | extra) == 0, f"{name}: error flags {error:04b}"


def test_errors_are_sticky_across_clear():
    config = RunConfig.family(3, "pipelined")
    dut = DeliveryChecker(config, 0, 8)
    seen = []

    async def bench(ctx):
        ctx.set(dut.run_value, RUN)
        ctx.set(dut.delivery.valid, 1)
        ctx.set(dut.delivery.source, 0)       # own id: a source error
        await ctx.tick()
        seen.append(ctx.get(dut.error))
        ctx.set(dut.delivery.valid, 0)
        ctx.set(dut.clear, 1)
        await ctx.tick().repeat(2)
        seen.append(ctx.get(dut.error))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert seen[0] & FLAG["source"] and seen[1] == seen[0]


@pytest.mark.parametrize("width", [1, 3, 8, 32, 40, 64])
def test_word_expression_matches_the_reference(width):
    n = 6
    source = Signal(range(n))
    session = Signal(4)
    run = Signal(32)
    sessions = 6
    expr = word_expr(source, session, run, n, width, sessions)
    cases = [(s, k, r) for s in range(n) for k in (0, 1, 5) for r in (1, 0xDEADBEEF)]
    got = []

    async def bench(ctx):
        for s, k, r in cases:
            ctx.set(source, s)
            ctx.set(session, k)
            ctx.set(run, r)
            got.append(ctx.get(expr))

    sim = Simulator(Module())  # only combinational evaluation is needed
    sim.add_testbench(bench)
    sim.run()
    assert got == [word_value(s, k, r, width, sessions) for s, k, r in cases]


@pytest.mark.parametrize("width", [1, 2, 5, 8, 32, 100])
def test_source_keys_tell_sources_apart(width):
    count = min(256, 1 << width)
    keys = [source_key(s, width) for s in range(count)]
    assert len(set(keys)) == count
    assert all(0 <= k < 1 << width for k in keys)
    if width >= 8:
        # Neighbouring ids differ in many bits, not just one.
        flips = [bin(a ^ b).count("1") for a, b in zip(keys, keys[1:])]
        assert sum(flips) / len(flips) > width / 4


def test_run_values_do_not_repeat_soon():
    values, v = set(), 1
    for _ in range(10_000):
        values.add(v)
        v = next_run_value(v)
    assert len(values) == 10_000 and 0 not in values


def test_bad_parameters_are_refused():
    config = RunConfig.family(4, "pipelined")
    with pytest.raises(ValueError, match="4"):
        DeliveryChecker(config, 4)
    with pytest.raises(ValueError, match="0"):
        DeliveryChecker(config, 0, width=0)
    with pytest.raises(TypeError, match="RunConfig"):
        DeliveryChecker("n4", 0)
