"""Calls (short-messages gossip's call sequence with knowledge as bit masks) against
its definition: fast, for `dev.py mutate`."""

import pytest

from pipegossip.model.algorithms.short_messages_calls import Calls, lowest


def _bits(mask):
    return [b for b in range(mask.bit_length()) if mask >> b & 1]


def test_start():
    c = Calls(5, 2)
    assert c.full == 0b11111 and c.know == [1, 2, 4, 8, 16] and c.calls == [] and c.cycle_d is None
    assert [c.missing(v) for v in range(5)] == [0b11111 ^ (1 << v) for v in range(5)]


@pytest.mark.parametrize("n", [1, 4, 7])
def test_run_is_a_cyclic_block_range(n):
    c = Calls(n, None)
    for a in range(-n, 2 * n):
        for length in range(-1, n + 3):
            want = {(a + i) % n for i in range(max(0, min(length, n)))}
            assert set(_bits(c.run(a, length))) == want, (a, length)


def test_call_exchanges_what_the_other_lacks_by_default():
    c = Calls(4, None)
    c.call(0, 1)
    c.call(1, 2)
    assert c.calls == [(0, 1, 0b0001, 0b0010), (1, 2, 0b0011, 0b0100)]
    assert c.know == [0b0011, 0b0111, 0b0111, 0b1000]
    assert c.missing(0) == 0b1100 and c.missing(3) == 0b0111


def test_call_with_wanted_blocks_sends_only_the_new_ones():
    c = Calls(4, 2)
    c.call(0, 1)
    c.call(1, 2, to_v=0b0011, to_u=0)  # 2 gets 0 and 1, 1 gets nothing from 2
    assert c.calls[-1] == (1, 2, 0b0011, 0)
    assert c.know[1] == 0b0011 and c.know[2] == 0b0111
    c.call(0, 2, to_v=0b0011, to_u=0b0100)  # 2 already holds 0 and 1: only 2 -> 0 says something
    assert c.calls[-1] == (0, 2, 0, 0b0100) and c.know[0] == 0b0111


def test_a_call_with_nothing_to_say_is_dropped():
    c = Calls(3, 1)
    c.call(0, 1)
    c.call(0, 1)
    c.call(0, 2, to_v=0, to_u=0)
    assert c.calls == [(0, 1, 1, 2)] and c.know == [3, 3, 4]


def test_payload_checks():
    c = Calls(4, 2)
    with pytest.raises(AssertionError, match="node 0 would send blocks it does not hold"):
        c.call(0, 1, to_v=0b0100)
    with pytest.raises(AssertionError, match="node 1 would send blocks it does not hold"):
        c.call(0, 1, to_v=0, to_u=0b1000)
    c.call(0, 1)
    c.call(2, 3)
    c.call(0, 2)  # 0 and 2 each send 2 blocks: p = 2 allows it
    assert c.know[0] == c.know[2] == 0b1111
    f = Calls(6, 2)
    f.call(0, 1)
    f.call(2, 3)
    f.call(0, 2)
    with pytest.raises(AssertionError, match="node 0 would send 4 > p blocks"):
        f.call(0, 5)
    f.call(0, 5, to_v=0b1010)  # two wanted blocks fit
    assert f.know[5] == 0b101010
    d = Calls(4, 1)
    d.call(0, 1)
    d.call(2, 3)
    with pytest.raises(AssertionError, match="node 2 would send 2 > p blocks"):
        d.call(0, 2, to_v=0b0001, to_u=0b1100)
    assert d.know == [3, 3, 12, 12] and len(d.calls) == 2  # a refused call changes nothing
    e = Calls(8, None)  # p None: no limit
    for v in range(1, 8):
        e.call(0, v)
    assert e.know[0] == e.know[7] == 0xFF and e.calls[-1] == (0, 7, 0x7F, 0x80)


@pytest.mark.parametrize("mask,count", [(0b101101, 0), (0b101101, 1), (0b101101, 2),
                                        (0b101101, 4), (0b101101, 9), (0, 3), (1 << 70 | 1, 2)])
def test_lowest(mask, count):
    want = sum(1 << b for b in _bits(mask)[:count])
    assert lowest(mask, count) == want
