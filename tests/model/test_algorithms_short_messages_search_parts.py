"""The short-messages SAT search's method text names exactly the clauses it used (fast)."""

from pipegossip.model.algorithms.short_messages_search import _method


def test_the_method_names_the_clauses_used():
    base = "SAT (cadical153 via python-sat): one call per step, first call {0,1}, " \
           "disjoint adjacent calls in pair order"
    assert _method() == base + ("; every call carries a block; no message short of "
                                "capacity by more than the slack; M raised from the lower bound")
    assert _method(counting=False) == base + "; M raised from the lower bound"
    assert _method(minimal=False) == base + ("; no message short of capacity by more than "
                                             "the slack; one M asked")
    assert _method(counting=False, minimal=False) == base + "; one M asked"
    assert _method("glucose4", "first-calls").startswith(
        "SAT (glucose4 via python-sat): one call per step, nodes make their first calls in "
        "id order, disjoint adjacent calls of nodes that all called before in pair order; ")


def test_called_means_called_up_to_the_last_steps():
    # c(4, 2) = 4 at zero slack, so the counting clauses are in; with the 4 calls of
    # the square forced, "node v has called by step t" must follow for every t
    import pytest
    pytest.importorskip("pysat")
    from pysat.solvers import Solver
    from pipegossip.model.algorithms.short_messages_search import _cnf
    cnf, c, pool = _cnf(4, 2, 4)
    calls = [c[1, (0, 1)], c[2, (2, 3)], c[3, (0, 2)], c[4, (1, 3)]]
    first = {0: 1, 1: 1, 2: 2, 3: 2}
    with Solver(name="cadical153", bootstrap_with=cnf) as s:
        assert s.solve(assumptions=calls)
        for t in range(1, 5):
            for v in range(4):
                called = pool.id(("called", t, v))
                assert s.solve(assumptions=calls + [called if t < first[v] else -called]) \
                    is False, (t, v)


def test_one_call_variable_per_step_and_pair():
    # min_calls_sat reads the calls off these: a variable of a step past M (which no
    # clause constrains) could come back true and add a call
    import itertools
    import pytest
    pytest.importorskip("pysat")
    from pipegossip.model.algorithms.short_messages_search import _cnf
    for symmetry in ("pair-order", "first-calls"):
        _, c, _ = _cnf(5, 2, 7, symmetry)
        assert sorted(c) == [(t, e) for t in range(1, 8)
                             for e in itertools.combinations(range(5), 2)]
