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
