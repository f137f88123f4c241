"""The schemes that beat the short-messages protocol, each against its stated count (seconds).

Every sequence is replayed here on its own terms: the sender holds each block
it sends, at most ``p`` per direction, only blocks the receiver lacks, never
an empty call, and every node knows every block at the end.
"""

import pytest

from pipegossip.model.algorithms.short_messages_schemes import (
    SCHEMES, _a_full_node, _one_chain, _paths_and_crossings, _zigzag, halves_calls, hypercube_calls, pairs_calls)
from pipegossip.model.algorithms.short_messages_found import found_calls


def replay(n, p, calls):
    know = [1 << v for v in range(n)]
    for u, v, a, b in calls:
        assert a or b, (u, v)
        for sender, receiver, blocks in ((u, v, a), (v, u, b)):
            assert blocks & ~know[sender] == 0, (u, v)
            assert blocks & know[receiver] == 0, (u, v)
            assert blocks.bit_count() <= p, (u, v)
        know[u], know[v] = know[u] | b, know[v] | a
    assert know == [(1 << n) - 1] * n
    return len(calls)


@pytest.mark.parametrize("n", range(4, 22, 2))
def test_pairs_n_squared_over_four(n):
    c = pairs_calls(n, 2)
    assert replay(n, 2, c.calls) == n * n // 4
    assert [(u, v) for u, v, _, _ in c.calls[:5]] == [(0, 1), (2, 3), (0, 2), (1, 3)] + \
        ([(4, 5)] if n > 4 else [])
    if n > 4:  # old node j calls 4 (j even) or 5 (j odd), sending blocks j - j%2, +1
        assert [(u, v, a) for u, v, a, _ in c.calls[5:9]] == [
            (0, 4, 0b11), (1, 5, 0b11), (2, 4, 0b1100), (3, 5, 0b1100)]


@pytest.mark.parametrize("n,p", [(5, 2), (7, 2), (4, 3), (6, 3), (3, 2), (2, 2)])
def test_pairs_only_for_p2_and_even_n_from_4(n, p):
    assert pairs_calls(n, p) is None or (p == 2 and n >= 4 and n % 2 == 0)
    assert pairs_calls(n, p) is None


@pytest.mark.parametrize("n", [4, 8, 16, 32])
def test_hypercube_d_n_over_2_from_p_n_over_2(n):
    d = n.bit_length() - 1
    for p in (n // 2, n // 2 + 1, n):
        c = hypercube_calls(n, p)
        assert replay(n, p, c.calls) == d * n // 2
        # dimension order: bit 1 first, low nodes call up
        assert [(u, v) for u, v, _, _ in c.calls[:n // 2]] == [(v, v + 1) for v in range(0, n, 2)]
    assert hypercube_calls(n, n // 2 - 1) is None


@pytest.mark.parametrize("n,p", [(2, 4), (3, 4), (6, 8), (12, 8)])
def test_hypercube_only_on_powers_of_two_from_4(n, p):
    assert hypercube_calls(n, p) is None


@pytest.mark.parametrize("p", range(3, 13))
def test_halves_two_n_minus_four_up_to_2p_minus_1(p):
    for n in range(4, 2 * p):
        c = halves_calls(n, p)
        assert replay(n, p, c.calls) == 2 * n - 4, (n, p)
        s = (n + 1) // 2  # two paths gather their halves, then two crossings
        paths = [(v, v + 1) for v in range(s - 1)] + [(v, v + 1) for v in range(s, n - 1)]
        assert [(u, v) for u, v, _, _ in c.calls[:n]] == paths + [(s - 1, n - 1), (s - 2, n - 2)]
    assert halves_calls(2 * p, p) is None and halves_calls(3, p) is None


def test_halves_at_p2_only_n3_and_the_chain_breaks_at_6_3():
    assert halves_calls(4, 2) is None  # 4 > 2p - 1 = 3
    assert halves_calls(6, 3) is None  # c(6, 3) = 9 > 2n - 4


@pytest.mark.parametrize("p", range(3, 8))
def test_the_chain_breaks_at_n_2p(p):
    # the halves' paths and crossings fit n = 2p, but a scatter call would then have
    # to send more than p blocks: the chain must say so (None), not plan it
    n, s = 2 * p, p
    assert _one_chain(_paths_and_crossings(n, p, s), _zigzag(n, s)) is None


@pytest.mark.parametrize("n,s,order", [
    (4, 2, []), (5, 3, [0]), (6, 3, [0, 3]), (7, 4, [0, 4, 1]), (8, 4, [0, 4, 1, 5]),
    (9, 5, [0, 5, 1, 6, 2]), (12, 6, [0, 8, 1, 7, 2, 6, 3, 9])])
def test_zigzag_alternates_the_halves(n, s, order):
    assert _zigzag(n, s) == order


def test_a_full_node():
    assert _a_full_node([1, 7, 7], 7) == 1 and _a_full_node([1, 2], 3) is None


def test_scheme_table_and_solver_entry():
    assert SCHEMES == {"pairs": pairs_calls, "hypercube": hypercube_calls,
                       "halves": halves_calls, "solver": found_calls}
    assert replay(8, 3, found_calls(8, 3).calls) == 13
