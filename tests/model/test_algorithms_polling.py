"""Polling (H1, combinable responses): rounds and messages against the polling paper."""

import pytest

from pipegossip.model.algorithms.polling import (cor6_bound, family_plan, polling_complete,
                                                 polling_general, polling_hypercube,
                                                 prop2_rounds, prop3_messages, prop3_stated,
                                                 prop8_messages)
from pipegossip.model.schedules.validate import validate


def _check(s):
    v = validate(s)
    assert v.valid, v.error
    assert s.primitive == "polling" and s.model == "H1" and s.root == 0
    return v


@pytest.mark.parametrize("k", range(3, 11))
def test_complete_graph_2k_rounds_and_proposition3_count(k):
    v = _check(polling_complete(k))
    assert v.R == 2 * k == prop2_rounds(1 << k)
    assert v.messages == prop3_messages(k) == prop3_stated(k) + 1


@pytest.mark.parametrize("k", range(4, 11))
def test_hypercube_2k_rounds_and_proposition8_count(k):
    s = polling_hypercube(k)
    assert s.topology.name == "hypercube"
    v = _check(s)
    assert v.R == 2 * k
    assert v.messages == prop8_messages(k)


def test_corollary6_fails_for_k4_and_k6():
    # validated schedules with fewer messages than the printed lower bound
    for k in (4, 6):
        assert _check(polling_hypercube(k)).messages == cor6_bound(k) - 1
    for k in (8, 10, 12):
        assert prop8_messages(k) >= cor6_bound(k)


def test_q3_is_optimal_nine():
    v = _check(polling_hypercube(3))
    assert (v.R, v.messages) == (6, 9)


def test_general_n_meets_proposition2_rounds():
    for n in range(2, 200):
        v = _check(polling_general(n))
        assert v.R == prop2_rounds(n), n
        assert v.messages == family_plan(n)[2]


def test_proposition2_values():
    assert [prop2_rounds(n) for n in (2, 3, 4, 5, 6, 7, 8, 9, 12, 16)] == \
        [2, 3, 4, 4, 5, 5, 6, 6, 7, 8]


def test_general_equals_paper_on_powers_of_two():
    for k in range(3, 9):
        assert validate(polling_general(1 << k)).messages == prop3_messages(k)


@pytest.mark.parametrize("k", [2, 17, True])
def test_bad_k(k):
    with pytest.raises(ValueError):
        polling_complete(k)


@pytest.mark.slow
@pytest.mark.parametrize("graph,k,optimum", [("complete", 3, 9), ("hypercube", 3, 9),
                                             ("hypercube", 4, 18)])
def test_exact_search(graph, k, optimum):
    pytest.importorskip("pysat")
    from pipegossip.model.algorithms.polling_search import min_polling_messages
    r = min_polling_messages(graph, k, optimum)
    assert r.optimum == optimum and r.steps[-1] == (optimum - 1, "UNSAT", r.steps[-1][2])


@pytest.mark.slow
def test_large_k():
    for k in (13, 14):
        assert validate(polling_hypercube(k)).messages == prop8_messages(k)
        assert validate(polling_complete(k)).messages == prop3_messages(k)


@pytest.mark.parametrize("n, rounds, plan", [
    (2, None, (0, 2, 2)),    # question out, response back
    (3, None, (0, 3, 3)),    # the triangle 0 -> 1 -> 2 -> 0 (s = 1 ties at 3: the first wins)
    (5, None, (1, 2, 6)),    # s = 0 would need 2 paths from one leaf
    (8, None, (1, 4, 9)),    # Proposition 3's shape; s = 2, c = 2 ties at 9: the first wins
    (12, None, (2, 3, 14)),  # s = 1 would need 3 paths from 2 nodes
    (8, 8, (0, 8, 8)),       # enough rounds for one path through every node
    (8, 3, None),            # below Proposition 2: no member of the family fits
    (3, 4, (0, 4, 3))])      # s = 1, c = 2 ties at 3: the first wins
def test_family_plan_worked_by_hand(n, rounds, plan):
    # cost 2(2^s - 1) + E + paths, E = n - 2^(s+1) + 1 new nodes, paths of c - 1 of them
    assert family_plan(n, rounds) == plan


@pytest.mark.parametrize("n, messages", [(2, 2), (3, 3), (5, 6), (12, 14)])
def test_general_small_n_messages(n, messages):
    v = _check(polling_general(n))
    assert (v.R, v.messages) == (prop2_rounds(n), messages)


def test_proposition2_below_two_nodes_is_zero():
    assert prop2_rounds(1) == 0 and prop2_rounds(0) == 0


@pytest.mark.parametrize("n", [1, 0, 65537, True, 2.0])
def test_general_bad_n(n):
    with pytest.raises(ValueError, match="2..65536"):
        polling_general(n)


def test_k_range_ends_at_16():
    # building K_65536 is out of a unit test's reach: the range check alone
    from pipegossip.model.algorithms.polling import _check_k
    assert _check_k(16, 3) == 16 and _check_k(3, 3) == 3
    for bad in (17, 2, True):
        with pytest.raises(ValueError):
            _check_k(bad, 3)
