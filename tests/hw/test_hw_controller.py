# amaranth: UnusedElaboratable=no
"""One processor's controller, driven couple by couple."""

from __future__ import annotations

import pytest
from amaranth.sim import Simulator

from pipegossip.model import compose
from pipegossip.model.composer import Op
from pipegossip.model.runtable import IDLE, R, S, WR, WS
from pipegossip.hw.fsm.controller import Controller


def run(dut: Controller, script) -> None:
    sim = Simulator(dut)
    sim.add_clock(1e-6)

    async def bench(ctx):
        await script(ctx)

    sim.add_testbench(bench)
    sim.run()


async def begin(ctx, dut) -> None:
    ctx.set(dut.start, 1)
    await ctx.tick()
    ctx.set(dut.start, 0)


def one_hot(i: int | None) -> int:
    return 0 if i is None else 1 << i


@pytest.mark.parametrize("receive", ["ordered", "any"])
@pytest.mark.parametrize("sessions", [1, 2])
def test_walks_its_couples_in_order_once_per_session(receive, sessions):
    program = compose(4, 1, (3, 0, 2), receive)
    dut = Controller(program, sessions=sessions)

    async def script(ctx):
        assert ctx.get(dut.action) == IDLE and ctx.get(dut.active) == 0
        await begin(ctx, dut)
        for s in range(sessions):
            for k, couple in enumerate(program.couples):
                last = k == len(program.couples) - 1
                assert ctx.get(dut.session) == s
                assert ctx.get(dut.parity) == s % 2
                assert ctx.get(dut.active) == 1
                if couple.op is Op.SEND:
                    # Waiting: WS with the target, which it requests.
                    assert ctx.get(dut.request) == one_hot(couple.peer)
                    assert ctx.get(dut.accepting) == 0
                    assert (ctx.get(dut.action), ctx.get(dut.peer)) == (WS, couple.peer)
                    await ctx.tick()  # nothing on offer: stays
                    assert (ctx.get(dut.action), ctx.get(dut.peer)) == (WS, couple.peer)
                    assert ctx.get(dut.claim) == 0
                    ctx.set(dut.offer, 0b1111)
                    assert ctx.get(dut.claim) == one_hot(couple.peer)
                    ctx.set(dut.grant, 1)
                    assert (ctx.get(dut.action), ctx.get(dut.peer)) == (S, couple.peer)
                else:
                    assert ctx.get(dut.request) == 0 and ctx.get(dut.accepting) == 1
                    awaited = couple.peer if receive == "ordered" else 0
                    assert ctx.get(dut.awaits) == (one_hot(couple.peer) if receive == "ordered"
                                                   else 0)
                    assert (ctx.get(dut.action), ctx.get(dut.peer)) == (WR, awaited)
                    await ctx.tick()
                    sender = couple.peer if receive == "ordered" else 3 - k % 2
                    ctx.set(dut.source, sender)
                    ctx.set(dut.received, 1)
                    assert (ctx.get(dut.action), ctx.get(dut.peer)) == (R, sender)
                assert ctx.get(dut.next_word) == int(last and s < sessions - 1)
                await ctx.tick()
                for port in (dut.grant, dut.received, dut.offer, dut.source):
                    ctx.set(port, 0)
        assert ctx.get(dut.active) == 0
        assert (ctx.get(dut.action), ctx.get(dut.peer)) == (IDLE, 0)
        assert ctx.get(dut.request) == 0 and ctx.get(dut.accepting) == 0

    run(dut, script)


def test_hold_hides_the_processor_but_keeps_its_trace():
    program = compose(3, 0, (2, 1))
    dut = Controller(program)

    async def script(ctx):
        await begin(ctx, dut)
        ctx.set(dut.hold, 1)
        ctx.set(dut.offer, 0b111)
        assert ctx.get(dut.request) == 0 and ctx.get(dut.claim) == 0
        assert (ctx.get(dut.action), ctx.get(dut.peer)) == (WS, 2)
        ctx.set(dut.hold, 0)
        assert ctx.get(dut.claim) == 0b100

    run(dut, script)


def test_hold_hides_a_receiver():
    dut = Controller(compose(3, 2, (0, 1)))

    async def script(ctx):
        await begin(ctx, dut)
        assert ctx.get(dut.accepting) == 1 and ctx.get(dut.awaits) == 0b001
        ctx.set(dut.hold, 1)
        assert ctx.get(dut.accepting) == 0 and ctx.get(dut.awaits) == 0
        assert (ctx.get(dut.action), ctx.get(dut.peer)) == (WR, 0)

    run(dut, script)


def test_substitution_takes_the_first_later_unserved_entry_on_offer():
    # p0 of N=5 with order 3, 1, 4, 2: no pre-phase, it starts sending.
    dut = Controller(compose(5, 0, (3, 1, 4, 2), "any"), substitute=True)

    async def script(ctx):
        await begin(ctx, dut)
        assert ctx.get(dut.request) == one_hot(3)
        ctx.set(dut.offer, one_hot(4) | one_hot(2))  # target 3 busy: 4 comes before 2
        assert ctx.get(dut.claim) == one_hot(4)
        ctx.set(dut.grant, 1)
        assert (ctx.get(dut.action), ctx.get(dut.peer)) == (S, 4)
        await ctx.tick()
        ctx.set(dut.grant, 0)
        # The original target stays first in line; 4 is served and skipped.
        ctx.set(dut.offer, 0)
        assert ctx.get(dut.request) == one_hot(3)
        assert (ctx.get(dut.action), ctx.get(dut.peer)) == (WS, 3)
        ctx.set(dut.offer, one_hot(4) | one_hot(1))
        assert ctx.get(dut.claim) == one_hot(1)
        ctx.set(dut.grant, 1)
        await ctx.tick()
        ctx.set(dut.offer, one_hot(3) | one_hot(2))
        assert ctx.get(dut.claim) == one_hot(3)
        await ctx.tick()
        assert ctx.get(dut.request) == one_hot(2)
        ctx.set(dut.offer, one_hot(2))
        await ctx.tick()
        ctx.set(dut.grant, 0)
        # All four sent: the post-phase receives follow.
        assert ctx.get(dut.accepting) == 1 and ctx.get(dut.request) == 0

    run(dut, script)


def test_a_granted_claim_is_what_the_trace_shows_under_substitution():
    dut = Controller(compose(4, 0, (1, 2, 3)), substitute=True)

    async def script(ctx):
        await begin(ctx, dut)
        ctx.set(dut.offer, one_hot(2))
        assert ctx.get(dut.claim) == one_hot(2)
        # Claimed but refused a channel: WS with the original target.
        assert (ctx.get(dut.action), ctx.get(dut.peer)) == (WS, 1)
        ctx.set(dut.grant, 1)
        assert (ctx.get(dut.action), ctx.get(dut.peer)) == (S, 2)

    run(dut, script)


@pytest.mark.parametrize("kwargs, error, text", [
    ({"program": "p0"}, TypeError, "'p0'"),
    ({"sessions": 0}, ValueError, "sessions must be at least 1, not 0"),
    ({"sessions": 1.5}, TypeError, "sessions must be an integer, not 1.5"),
    ({"substitute": 1}, TypeError, "substitute must be a bool, not 1"),
])
def test_bad_parameters(kwargs, error, text):
    args = {"program": compose(3, 0, (1, 2)), **kwargs}
    program = args.pop("program")
    with pytest.raises(error, match=text):
        Controller(program, **args)


def test_local_controller_decides_its_own_transfers():
    # p1 of N=3 (ordered): R0, then S2, S0, then R2. In local mode a couple
    # fires when its partner's flag is up: `offer` bit j for a send to j,
    # `wanted` bit j for a receive from j. Nothing else moves it.
    program = compose(3, 1, (2, 0))
    dut = Controller(program, local=True)

    async def script(ctx):
        await begin(ctx, dut)
        steps = [("wanted", 0, R, 0), ("offer", 2, S, 2), ("offer", 0, S, 0),
                 ("wanted", 2, R, 2)]
        for port, j, act, peer in steps:
            assert ctx.get(dut.active) == 1 and ctx.get(dut.acts) == 0
            # The wrong partner does not move it.
            ctx.set(getattr(dut, port), 0b111 & ~(1 << j))
            assert ctx.get(dut.acts) == 0
            await ctx.tick()
            ctx.set(getattr(dut, port), 1 << j)
            assert ctx.get(dut.acts) == 1
            assert (ctx.get(dut.action), ctx.get(dut.peer)) == (act, peer)
            await ctx.tick()
            ctx.set(getattr(dut, port), 0)
        assert ctx.get(dut.active) == 0 and ctx.get(dut.action) == IDLE

    run(dut, script)


def test_local_mode_refuses_configurations_that_need_arbitration():
    with pytest.raises(ValueError, match="local=True needs the ordered discipline"):
        Controller(compose(3, 1, (2, 0), "any"), local=True)
    with pytest.raises(ValueError, match="local=True needs the ordered discipline"):
        Controller(compose(3, 1, (2, 0)), substitute=True, local=True)
