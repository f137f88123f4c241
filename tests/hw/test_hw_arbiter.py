# amaranth: UnusedElaboratable=no
"""The resolver (docs/reference.md "Resolution within a step") on hand-made steps."""

from __future__ import annotations

import pytest
from combinational import settle

from pipegossip.hw.fsm.arbiter import Resolver


def bits(*ids: int) -> int:
    return sum(1 << i for i in ids)


def test_ordered_offers_each_sender_the_receivers_awaiting_it():
    dut = Resolver(4)

    def script(ctx):
        ctx.set(dut.awaits[1], bits(0))
        ctx.set(dut.awaits[2], bits(0))
        ctx.set(dut.awaits[3], bits(2))
        assert [ctx.get(dut.offer[i]) for i in range(4)] == [bits(1, 2), 0, bits(3), 0]

    settle(dut, script)


def test_any_gives_a_receiver_to_the_lowest_sender_aimed_at_it():
    dut = Resolver(5, receive="any")

    def script(ctx):
        ctx.set(dut.accepting, bits(0, 4))
        for i in (1, 2, 3):
            ctx.set(dut.request[i], bits(4))
        offers = [ctx.get(dut.offer[i]) for i in range(5)]
        assert offers[1] & bits(4)
        assert not offers[2] & bits(4) and not offers[3] & bits(4)
        # Receiver 0 is wanted by nobody: still on offer to everyone.
        assert all(o & bits(0) for o in offers)

    settle(dut, script)


def test_any_only_pairs_processors_of_the_same_session():
    dut = Resolver(4, receive="any", sessions=2)

    def script(ctx):
        ctx.set(dut.accepting, bits(3))
        ctx.set(dut.parity, bits(0, 3))  # p0 and p3 in odd sessions, p1 and p2 even
        ctx.set(dut.request[1], bits(3))
        ctx.set(dut.request[2], bits(3))
        assert ctx.get(dut.offer[1]) == 0 and ctx.get(dut.offer[2]) == 0
        assert ctx.get(dut.offer[0]) == bits(3)
        # A lower sender of the wrong session does not take the receiver away.
        ctx.set(dut.parity, bits(0, 2, 3))
        assert ctx.get(dut.offer[2]) == bits(3)

    settle(dut, script)


def test_any_with_substitution_sees_the_claims_of_lower_senders():
    dut = Resolver(4, receive="any", substitute=True)

    def script(ctx):
        ctx.set(dut.accepting, bits(1, 2, 3))
        ctx.set(dut.claim[0], bits(2))
        assert ctx.get(dut.offer[1]) == bits(1, 3)
        assert ctx.get(dut.offer[3]) == bits(1, 3)
        ctx.set(dut.claim[1], bits(3))
        assert ctx.get(dut.offer[3]) == bits(1)
        assert ctx.get(dut.offer[0]) == bits(1, 2, 3)

    settle(dut, script)


@pytest.mark.parametrize("channels, granted", [(None, [0, 2, 3, 5]), (1, [0]), (2, [0, 2]),
                                               (3, [0, 2, 3])])
def test_channel_limit_grants_the_lowest_ids(channels, granted):
    dut = Resolver(8, channels=channels)

    def script(ctx):
        for i in (0, 2, 3, 5):
            ctx.set(dut.claim[i], bits(7 - i))
        assert ctx.get(dut.grant) == bits(*granted)

    settle(dut, script)


def test_channel_limit_counts_only_senders_that_can_send():
    dut = Resolver(6, channels=2)

    def script(ctx):
        ctx.set(dut.claim[4], bits(5))
        ctx.set(dut.claim[5], bits(0))
        assert ctx.get(dut.grant) == bits(4, 5)
        ctx.set(dut.claim[1], bits(2))
        assert ctx.get(dut.grant) == bits(1, 4)

    settle(dut, script)


@pytest.mark.parametrize("args, kwargs, error, text", [
    ((1,), {}, ValueError, "n must be at least 2, not 1"),
    (("4",), {}, TypeError, "n must be an integer, not '4'"),
    ((4,), {"receive": "all"}, ValueError, "'all'"),
    ((4,), {"substitute": "yes"}, TypeError, "'yes'"),
    ((4,), {"sessions": 0}, ValueError, "sessions must be at least 1, not 0"),
    ((4,), {"channels": 3}, ValueError, "channels must be at most 2, not 3"),
    ((4,), {"channels": 0}, ValueError, "channels must be at least 1, not 0"),
])
def test_bad_parameters(args, kwargs, error, text):
    with pytest.raises(error, match=text):
        Resolver(*args, **kwargs)
