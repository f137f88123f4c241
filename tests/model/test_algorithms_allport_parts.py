"""All-port gossip's parts against their definitions or a brute force: fast, for
`dev.py mutate` (tests/model/test_algorithms_allport.py holds the rounds per family)."""

import itertools

import numpy as np
import pytest

from pipegossip.model.algorithms import allport as ap
from pipegossip.model.algorithms.allport import (allport_gossip, greedy_allport, line_pipeline,
                                                 topology_text)
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import check


def _pipeline_by_definition(size, wrap):
    """Round t: position q sends right the unit of q-t+1, left the unit of q+t-1,
    each unit travelling until it has reached every node once."""
    right = size // 2 if wrap else size - 1
    left = (size - 1) // 2 if wrap else size - 1
    rounds = []
    for t in range(1, max(right, left) + 1):
        msgs = set()
        for q in range(size):
            if t <= right:
                u = q - t + 1
                if wrap or (0 <= u and q + 1 < size):
                    msgs.add((q, (q + 1) % size, u % size))
            if t <= left:
                u = q + t - 1
                if wrap or (u < size and q >= 1):
                    msgs.add((q, (q - 1) % size, u % size))
        rounds.append(msgs)
    return rounds


@pytest.mark.parametrize("size,wrap", [(2, False), (3, False), (5, False), (2, True), (3, True),
                                       (4, True), (5, True), (6, True)])
def test_line_pipeline_by_definition(size, wrap):
    line = [10 + v for v in range(size)]
    got = line_pipeline(line, [(v,) for v in range(size)], wrap)
    want = _pipeline_by_definition(size, wrap)
    assert [{(m.src - 10, m.dst[0] - 10, m.items[0]) for m in r} for r in got] == want
    # every position gets every other unit exactly once
    heard = [[] for _ in range(size)]
    for r in got:
        for m in r:
            heard[m.dst[0] - 10] += list(m.items)
    assert all(sorted(h) == [u for u in range(size) if u != q] for q, h in enumerate(heard))


def _max_assignment(prefs):
    """Largest number of neighbours given distinct items (brute force)."""
    best = 0
    choices = [p + [None] for p in prefs]
    for pick in itertools.product(*choices):
        got = [x for x in pick if x is not None]
        if len(got) == len(set(got)):
            best = max(best, len(got))
    return best


@pytest.mark.parametrize("prefs", [
    [[1, 2], [1], [2, 3]],
    [[5], [5, 6], [6, 7], [7]],
    [[1, 2, 3], [1], [2], [3]],
    [[], [4], [4]],
    [[0, 1], [1, 2], [2, 0], [0]],
])
def test_match_is_maximum_and_distinct(prefs):
    got = ap._match(prefs)
    taken = [x for x in got if x is not None]
    assert len(taken) == len(set(taken)) == _max_assignment(prefs)
    assert all(x is None or x in prefs[i] for i, x in enumerate(got))


def test_match_without_conflicts_gives_first_preferences():
    assert ap._match([[3, 1], [2, 1], [1]]) == [3, 2, 1]
    # the neighbour with fewest choices goes first: [1] takes 1, so [1, 2] gets 2
    assert ap._match([[1, 2], [1]]) == [2, 1]


def test_match_reroutes_along_an_augmenting_path():
    # 0 takes its first choice 1, then 1 (only 1 or 2) ... 2 only wants 1: 0 must move
    got = ap._match([[1, 2], [2, 3], [1]])
    assert got[2] == 1 and sorted(x for x in got if x is not None) == [1, 2, 3]


def _knowledge_after(s, n):
    K = np.eye(n, dtype=bool)
    per_round = []
    for r in s.rounds:
        new = K.copy()
        for m in r:
            for x in m.items:
                assert K[m.src, x] and not K[m.dst[0], x]  # holds it, and it is new
                new[m.dst[0], x] = True
        per_round.append(new.sum())
        K = new
    return K, per_round


@pytest.mark.parametrize("name,params", [("explicit", {"n": 6, "edges": [[0, 1], [1, 2], [2, 3],
                                                                        [3, 4], [4, 5], [1, 4]]}),
                                         ("star", {"k": 3}), ("hypercube", {"k": 3})])
def test_greedy_moves_one_new_item_per_edge_and_round(name, params):
    t = topology(name, **params)
    s = greedy_allport(t)
    K, _ = _knowledge_after(s, t.n)
    assert K.all() and check(s).item_transfers == t.n * (t.n - 1)
    for r in s.rounds:
        edges = [(m.src, m.dst[0]) for m in r]
        assert len(edges) == len(set(edges)) and all(len(m.items) == 1 for m in r)
        assert t.has_edges(np.array([e[0] for e in edges]), np.array([e[1] for e in edges])).all()


def test_greedy_takes_the_scarce_item_first():
    # path 0-1-2: round 1, node 1 takes 0's and 2's items, node 0 and 2 take 1's;
    # round 2: node 0 needs item 2, which only node 1 supplies
    s = greedy_allport(topology("explicit", n=3, edges=[[0, 1], [1, 2]]))
    got = [sorted((m.src, m.dst[0], m.items[0]) for m in r) for r in s.rounds]
    assert got == [[(0, 1, 0), (1, 0, 1), (1, 2, 1), (2, 1, 2)], [(1, 0, 2), (1, 2, 0)]]


def test_greedy_prefers_the_next_item_in_cyclic_order():
    # complete graph K4, round 1: each neighbour u of v offers only its own item u,
    # so v gets every item in round 1; K5 minus nothing: the same
    s = greedy_allport(topology("explicit", n=4, edges=[[0, 1], [0, 2], [0, 3], [1, 2], [1, 3],
                                                        [2, 3]]))
    assert check(s).R == 1
    # star(1 centre): the centre hears 3 leaves in round 1 and must pass each leaf the
    # two others, one per round: the leaf (v) asks first for v+1 (mod n), the
    # rarest tie broken by cyclic id order
    st = greedy_allport(topology("explicit", n=4, edges=[[0, 1], [0, 2], [0, 3]]))
    second = sorted((m.src, m.dst[0], m.items[0]) for m in st.rounds[1])
    assert second == [(0, 1, 2), (0, 2, 3), (0, 3, 1)]


def test_greedy_limits(monkeypatch):
    monkeypatch.setattr(ap, "MAX_ALLPORT_NODES", 8)
    assert check(greedy_allport(topology("hypercube", k=3))).R == 3  # 8 nodes: allowed
    with pytest.raises(ValueError, match="9 nodes, more than the 8"):
        greedy_allport(topology("cycle", n=9))
    with pytest.raises(ValueError, match="explicit is disconnected"):
        greedy_allport(topology("explicit", n=3, edges=[[1, 2]]))


def test_allport_gossip_dispatch():
    assert allport_gossip(topology("cycle", n=5)).origin["algorithm"] == "all-port-pipeline"
    assert allport_gossip(topology("path", n=2)).origin["algorithm"] == "all-port-pipeline"
    assert allport_gossip(topology("mesh", a=2, b=2)).origin["algorithm"] == "all-port-greedy"
    s = allport_gossip(topology("path", n=4))
    assert check(s).R == 3 and "path(n=4)" in s.origin["source"]


def test_topology_text_leaves_out_edges():
    assert topology_text(topology("mesh", a=2, b=3)) == "mesh(a=2, b=3)"
    assert topology_text(topology("explicit", n=3, edges=[[0, 1], [1, 2]])) == "explicit(n=3)"


@pytest.mark.parametrize("edges", [
    [[0, 1], [1, 2], [1, 3], [3, 4], [3, 5], [5, 6], [0, 7]],
    [[0, 1], [0, 2], [0, 3], [3, 4], [4, 5], [4, 6], [6, 7], [6, 8]],
    [[0, 1], [1, 2], [2, 3], [3, 4], [2, 5], [5, 6], [6, 7], [1, 8], [8, 9]],
])
def test_a_leaf_takes_the_rarest_item_then_the_next_in_cyclic_order(edges):
    # a leaf has one neighbour, so its choice is its first preference: the item
    # fewest nodes hold (at the round's start), ties to the next id after it (mod n)
    t = topology("explicit", n=1 + max(max(e) for e in edges), edges=edges)
    n = t.n
    degree = np.bincount(np.array(edges).ravel(), minlength=n)
    nb = {v: [b if a == v else a for a, b in edges if v in (a, b)][0] for v in range(n)
          if degree[v] == 1}
    s = greedy_allport(t)
    K = np.eye(n, dtype=bool)
    checked = 0
    for r in s.rounds:
        holders = K.sum(axis=0)
        for v, u in nb.items():
            cand = [x for x in range(n) if K[u, x] and not K[v, x]]
            got = [m.items[0] for m in r if m.dst[0] == v]
            if cand:
                assert got == [min(cand, key=lambda x: (holders[x], (x - v) % n))], (v, cand)
                checked += len(cand) > 1
        for m in r:
            K[m.dst[0], m.items[0]] = True
    assert checked >= 3  # leaves had a real choice
