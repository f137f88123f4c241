"""All-port (Fstar, p=1) gossip: valid, within one round of
max(diameter, ceil((n-1)/min degree)), never an item received twice."""

import math

import pytest

from pipegossip.model.algorithms.allport import allport_gossip, greedy_allport, line_pipeline
from pipegossip.model.schedules.distances import degrees, diameter
from pipegossip.model.schedules.ir import Schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import check


def _bound(t) -> int:
    return max(diameter(t), math.ceil((t.n - 1) / int(degrees(t).min())))


@pytest.mark.parametrize("name,params", [("cycle", {"n": n}) for n in (2, 3, 4, 7, 8, 13, 16)]
                         + [("path", {"n": n}) for n in (2, 5, 8)])
def test_pipeline_meets_the_bound(name, params):
    t = topology(name, **params)
    s = allport_gossip(t)
    v = check(s)
    assert (s.model, s.p, s.origin["algorithm"]) == ("Fstar", 1, "all-port-pipeline")
    assert v.R == _bound(t) and v.item_transfers == t.n * (t.n - 1)


#: Measured rounds of the greedy; the bound is in the comment.
GREEDY = [("hypercube", {"k": 2}, 2), ("hypercube", {"k": 3}, 3), ("hypercube", {"k": 4}, 4),
          ("hypercube", {"k": 5}, 7), ("hypercube", {"k": 6}, 11),
          ("torus", {"a": 3, "b": 3}, 2), ("torus", {"a": 4, "b": 4}, 4),
          ("torus", {"a": 4, "b": 8}, 8), ("torus", {"a": 5, "b": 5}, 6),
          ("torus", {"a": 2, "b": 5}, 4), ("torus", {"a": 3, "b": 7}, 5),
          ("mesh", {"a": 3, "b": 4}, 6), ("star", {"k": 4}, 8), ("debruijn", {"k": 4}, 8)]


@pytest.mark.parametrize("name,params,rounds", GREEDY)
def test_greedy_within_one_round_of_the_bound(name, params, rounds):
    t = topology(name, **params)
    s = allport_gossip(t)
    v = check(s)
    assert (s.model, s.p, s.origin["algorithm"]) == ("Fstar", 1, "all-port-greedy")
    assert v.R == rounds and _bound(t) <= v.R <= _bound(t) + 1
    # no item arrives twice: exactly n(n-1) deliveries, so it is an allreduce too
    assert v.item_transfers == t.n * (t.n - 1)
    as_allreduce = Schedule(topology=t, model="Fstar", p=1, round_ptr=s.round_ptr, src=s.src,
                            dst_ptr=s.dst_ptr, dst=s.dst, item_ptr=s.item_ptr, items=s.items,
                            primitive="allreduce")
    assert check(as_allreduce).R == v.R


@pytest.mark.slow
def test_greedy_hypercube_k7_k8_meet_the_bound():
    for k, bound in ((7, 19), (8, 32)):
        t = topology("hypercube", k=k)
        assert _bound(t) == bound and check(greedy_allport(t)).R == bound


def test_line_pipeline_forwards_units_once():
    rounds = line_pipeline([4, 5, 6], [("a",), ("b",), ("c",)], wrap=False)
    got = [[(m.src, m.dst[0], m.items) for m in r] for r in rounds]
    assert got == [[(4, 5, ("a",)), (5, 6, ("b",)), (5, 4, ("b",)), (6, 5, ("c",))],
                   [(5, 6, ("a",)), (5, 4, ("c",))]]


def test_greedy_refuses_disconnected_and_large():
    with pytest.raises(ValueError, match="disconnected"):
        greedy_allport(topology("explicit", n=4, edges=[[0, 1], [2, 3]]))
    with pytest.raises(ValueError, match="more than the 1024"):
        greedy_allport(topology("hypercube", k=11))
