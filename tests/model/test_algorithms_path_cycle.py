"""Gossip on paths and cycles under H* meets Table 1 of the H* paper exactly."""

import pytest

from pipegossip.model.algorithms.path_cycle import cycle_gossip, path_gossip, table1_rounds
from pipegossip.model.schedules.validate import validate

GENERATORS = {"path": path_gossip, "cycle": cycle_gossip}


def _rounds(shape, n, p):
    s = GENERATORS[shape](n, p)
    v = validate(s)
    assert v.valid, v.error
    assert s.model == "Hstar" and s.topology.name == shape and s.p == p
    return v


@pytest.mark.parametrize("shape", ["path", "cycle"])
@pytest.mark.parametrize("p", [1, 2])
def test_table1_exact_for_every_n_up_to_128(shape, p):
    for n in range(3, 129):
        assert _rounds(shape, n, p).R == _optimum(shape, n, p), n


def _optimum(shape, n, p):
    """Table 1, except the triangle with p > 1: 2 rounds (Theorem 3.5 needs N > 3)."""
    return 2 if (shape, n) == ("cycle", 3) and p != 1 else table1_rounds(shape, n, p)


@pytest.mark.parametrize("shape", ["path", "cycle"])
@pytest.mark.parametrize("p", [3, 8, None])
def test_larger_packets_do_not_beat_p2(shape, p):
    # Table 1's p > 1 row is a lower bound for every p; the p = 2 schedule meets it.
    for n in range(3, 21):
        v = _rounds(shape, n, p)
        assert v.R == _rounds(shape, n, 2).R == _optimum(shape, n, None)
        assert v.S <= 2 * v.R  # never more than two tokens per packet


@pytest.mark.parametrize("shape", ["path", "cycle"])
def test_p1_sends_each_token_over_each_link_once(shape):
    n = 17
    v = _rounds(shape, n, 1)
    assert v.messages == v.item_transfers == n * (n - 1)


def test_formulas_of_table1():
    assert [table1_rounds("path", n, 1) for n in (6, 7)] == [8, 9]
    assert [table1_rounds("path", n, 2) for n in (8, 9)] == [8, 8]
    assert [table1_rounds("cycle", n, 1) for n in (6, 7)] == [5, 6]
    assert [table1_rounds("cycle", n, 2) for n in (6, 7)] == [4, 5]


def test_triangle_beats_table1_p_gt_1_row():
    # Theorem 3.5 needs N > 3: with p = 2 the p = 1 schedule gossips C_3 in 2 rounds.
    for p in (2, 5, None):
        s = cycle_gossip(3, p)
        assert validate(s).R == 2 < table1_rounds("cycle", 3, p) == 3
        assert "optimal 2 rounds, Table 1 says 3" in s.origin["source"]


@pytest.mark.parametrize("n,p", [(2, 1), (3, 0), (True, 1), (5, 1.5), (5, True), (3.0, 1)])
@pytest.mark.parametrize("make", [path_gossip, cycle_gossip])
def test_bad_arguments(make, n, p):
    with pytest.raises(ValueError):
        make(n, p)


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["path", "cycle"])
@pytest.mark.parametrize("p", [1, 2])
def test_table1_large_n(shape, p):
    for n in (255, 256, 511, 512, 1024, 1025):
        assert _rounds(shape, n, p).R == table1_rounds(shape, n, p)


@pytest.mark.parametrize("p", [2, None])
def test_two_token_packets_carry_no_redundant_token(p):
    # Every token reaches every other node exactly once on paths and even
    # cycles. Odd cycles use the even construction on N+1 nodes with v_0
    # playing the imaginary v_N (Fig. 10): when (N+1)/2 is even, v_0 forwards
    # two tokens a neighbour already got, never more. (The triangle has a
    # construction of its own, without: test_triangle_* below.)
    for n in range(3, 41):
        need = n * (n - 1)
        assert _rounds("path", n, p).item_transfers == need, n
        got = _rounds("cycle", n, p).item_transfers
        extra = 2 if n > 3 and n % 2 and (n + 1) // 2 % 2 == 0 else 0
        assert got == need + extra, n
