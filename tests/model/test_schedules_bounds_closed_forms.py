"""Bounds pinned to the closed forms of their papers, at the edges of their cases."""

from __future__ import annotations

import math

import pytest

from pipegossip.model.schedules import bounds as b


@pytest.mark.parametrize("n", range(2, 13))
def test_packet_calls_upper_for_p_at_least_n_minus_1_is_the_unlimited_case(n):
    # n <= p + 1: gossip by unlimited calls, 1 call for n=2, 3 for n=3 and
    # 2n-4 from n=4 on (the classic minimum; Bermond, Gargano, Perennes)
    unlimited = {2: 1, 3: 3}.get(n, 2 * n - 4)
    for p in (n - 1, n, n + 5):
        if p >= 2:
            assert b.packet_calls_upper(n, p).value == unlimited, (n, p)
            assert b.packet_calls_lower(n, p).value == unlimited, (n, p)


@pytest.mark.parametrize("n", range(2, 10))
def test_packet_calls_for_p_1_are_every_pair_once(n):
    assert b.packet_calls_upper(n, 1).value == n * (n - 1) // 2


@pytest.mark.parametrize("n, p", [(10, 3), (11, 3), (12, 2), (20, 4), (9, 2)])
def test_packet_calls_upper_is_theorem_3_1(n, p):
    # n = hp + k, 2 <= k <= p+1: n^2/(2p) + (1 - k/(2p) - 1/(2(k-1))) n + p
    k = next(k for k in range(2, p + 2) if (n - k) % p == 0)
    value = n * n / (2 * p) + (1 - k / (2 * p) - 1 / (2 * (k - 1))) * n + p
    assert b.packet_split(n, p) == ((n - k) // p, k)
    assert b.packet_calls_upper(n, p).value == math.floor(value + 1e-9)


def test_polling_messages_are_proposition_3_plus_r_minus_1():
    # 2^k + 2^(k-3) + r - 1 with r = ceil((2^(k-3) + 1) / 3), worked by hand:
    # k=3: 8+1+1-1, k=4: 16+2+1-1, k=5: 32+4+2-1, k=6: 64+8+3-1
    assert [b.polling_messages(2 ** k).value for k in (3, 4, 5, 6)] == [9, 18, 37, 74]
    assert b.polling_messages(4) is None and b.polling_messages(12) is None
