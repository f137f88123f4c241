"""reduce and allreduce generators: valid on every family, meeting their round
bounds, whole sets where promised (what a whole-accumulator fabric can run)."""

import math

import pytest

from pipegossip.model.algorithms.limits import one_factor
from pipegossip.model.algorithms.reduce import allreduce_schedule, bfs_tree, reduce_schedule
from pipegossip.model.schedules.accumulate import first_partial_send
from pipegossip.model.schedules.distances import diameter, eccentricity, radius
from pipegossip.model.schedules.ir import Message, Schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import check

FAMILIES = [("path", {"n": 2}), ("path", {"n": 7}), ("path", {"n": 8}), ("cycle", {"n": 3}),
            ("cycle", {"n": 8}), ("cycle", {"n": 9}), ("mesh", {"a": 3, "b": 5}),
            ("mesh", {"a": 1, "b": 4}), ("torus", {"a": 4, "b": 5}), ("torus", {"a": 2, "b": 3}),
            ("hypercube", {"k": 1}), ("hypercube", {"k": 3}), ("hypercube", {"k": 6}),
            ("complete", {"n": 5}), ("complete", {"n": 8}), ("star", {"k": 4}),
            ("pancake", {"k": 4}), ("ccc", {"k": 3}), ("butterfly", {"k": 3}),
            ("debruijn", {"k": 4}), ("shuffle_exchange", {"k": 4}), ("knodel", {"n": 10}),
            ("explicit", {"n": 5, "edges": [[0, 1], [1, 2], [1, 3], [3, 4]]})]


def _whole_sets(s) -> bool:
    return first_partial_send(s) is None


@pytest.mark.parametrize("name,params", FAMILIES)
def test_reduce_meets_its_bound_with_whole_sets(name, params):
    t = topology(name, **params)
    for root in sorted({0, t.n - 1, t.n // 2}):
        s = reduce_schedule(t, root)
        v = check(s)
        assert s.primitive == "reduce" and s.root == root and s.p == 1
        want = eccentricity(t, root)
        if s.model == "F1":  # one message received per round: the largest set at most doubles
            want = max(want, math.ceil(math.log2(t.n)))
        assert v.R == want, (name, root, s.origin)
        assert v.S == v.R  # one word per round
        assert _whole_sets(s)


@pytest.mark.parametrize("name,params", FAMILIES)
def test_allreduce_meets_its_bound(name, params):
    t = topology(name, **params)
    s = allreduce_schedule(t)
    v = check(s)
    assert s.primitive == "allreduce" and s.root is None and s.p == 1
    algo = s.origin["algorithm"]
    if algo == "allreduce-recursive-doubling":
        assert s.model == "F1" and v.R == t.n.bit_length() - 1 and _whole_sets(s)
    elif algo == "allreduce-dimensionwise":
        assert s.model == "Fstar" and v.R == diameter(t)
    elif algo == "allreduce-allport-tokens":
        # chosen over the tree only when it takes no more rounds; every message one token
        assert s.model == "Fstar" and diameter(t) <= v.R <= 2 * radius(t)
        assert all(len(m.items) == 1 for rnd in s.rounds for m in rnd)
        from pipegossip.model.schedules.network_program import compile_network
        assert compile_network(s).cycles == v.R  # the network fabric runs it
    else:
        assert algo == "allreduce-tree" and s.model == "Hstar" and v.R == 2 * radius(t)
        # the down phase sends a part of the parent's set, from round radius + 1
        r, m, rule = first_partial_send(s)
        assert r == radius(t) + 1 and "a part of its accumulator" in rule
    assert v.S == v.R


def test_recursive_doubling_is_k_one_word_rounds():
    s = allreduce_schedule(topology("hypercube", k=6))
    v = check(s)
    assert (v.R, v.S, v.messages, s.model) == (6, 6, 6 * 64, "F1")
    assert s.rounds[5][0].items == tuple(range(32))  # node 0 sends its 5-subcube whole


def test_generators_refuse_bad_input():
    with pytest.raises(ValueError, match="root must be a node 0..7"):
        reduce_schedule(topology("hypercube", k=3), 8)
    cut = topology("explicit", n=4, edges=[[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="disconnected"):
        reduce_schedule(cut, 0)
    with pytest.raises(ValueError, match="disconnected"):
        allreduce_schedule(cut)
    with pytest.raises(ValueError, match="more than the 4096"):
        allreduce_schedule(topology("hypercube", k=13))


def test_bfs_parent_is_smallest_neighbour_one_level_up():
    parent, depth = bfs_tree(topology("cycle", n=6), 0)
    assert parent.tolist() == [-1, 0, 1, 2, 5, 0] and depth.tolist() == [0, 1, 2, 3, 2, 1]


def test_first_partial_send():
    path = topology("path", n=3)
    rounds = [[Message(0, (1,), (0,)), Message(2, (1,), (2,))],
              [Message(1, (0,), (1, 2)), Message(1, (2,), (0, 1))]]
    s = Schedule.from_rounds(rounds, topology=path, model="Hstar", p=1, primitive="allreduce")
    assert check(s).R == 2
    assert first_partial_send(s) == (2, 0, "node 1 sends 2 of the 3 tokens it holds: a part "
                                     "of its accumulator")
    with pytest.raises(ValueError, match="not gossip"):
        first_partial_send(one_factor(4))
