"""reduce / allreduce generators' parts against their definitions on small graphs:
fast, for `dev.py mutate` (tests/model/test_algorithms_reduce.py holds the bounds per family)."""

import math

import numpy as np
import pytest

from pipegossip.model.algorithms import reduce as rd
from pipegossip.model.algorithms.reduce import allreduce_schedule, bfs_tree, reduce_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import check

TREE = topology("explicit", n=6, edges=[[0, 1], [1, 2], [1, 3], [3, 4], [0, 5]])


def _bfs_by_hand(n, edges, root):
    adj = {v: set() for v in range(n)}
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    depth = {root: 0}
    frontier = [root]
    while frontier:
        nxt = []
        for x in frontier:
            for y in sorted(adj[x]):
                if y not in depth:
                    depth[y] = depth[x] + 1
                    nxt.append(y)
        frontier = nxt
    parent = [-1 if v == root else min(u for u in adj[v] if depth[u] == depth[v] - 1)
              for v in range(n)]
    return parent, [depth[v] for v in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_bfs_tree_by_hand(seed):
    rng = np.random.default_rng(seed)
    n = 9
    edges = {(v, v + 1) for v in range(n - 1)}  # connected
    edges |= {(int(a), int(b)) for a, b in rng.integers(0, n, (8, 2)) if a < b}
    t = topology("explicit", n=n, edges=[list(e) for e in sorted(edges)])
    root = int(rng.integers(0, n))
    parent, depth = bfs_tree(t, root)
    assert (parent.tolist(), depth.tolist()) == _bfs_by_hand(n, edges, root)


def test_bfs_tree_of_the_complete_graph():
    parent, depth = bfs_tree(topology("complete", n=4), 2)
    assert parent.tolist() == [2, 2, -1, 2] and depth.tolist() == [1, 1, 0, 1]


def test_subtrees():
    parent, depth = bfs_tree(TREE, 0)
    assert rd._subtrees(parent, depth) == [[0, 1, 2, 3, 4, 5], [1, 2, 3, 4], [2], [3, 4], [4],
                                           [5]]


def _msgs(s):
    return [sorted((m.src, m.dst[0], m.items) for m in r) for r in s.rounds]


def test_tree_reduce_messages():
    s = reduce_schedule(TREE, 0)
    # a node at depth d sends in round height - d + 1 (height 3), its whole subtree
    assert _msgs(s) == [[(4, 3, (4,))], [(2, 1, (2,)), (3, 1, (3, 4))],
                        [(1, 0, (1, 2, 3, 4)), (5, 0, (5,))]]
    assert (s.model, s.root, s.origin["algorithm"]) == ("Hstar", 0, "reduce-tree")


def test_binomial_reduce_on_the_complete_graph():
    # relative ids (v - root) mod n; round t: x = 2^(t-1) mod 2^t sends [x, x + 2^(t-1))
    n, root = 6, 2
    s = reduce_schedule(topology("complete", n=n), root)
    want = []
    for t in range(1, math.ceil(math.log2(n)) + 1):
        half = 1 << (t - 1)
        want.append(sorted(((x + root) % n, (x - half + root) % n,
                            tuple(sorted((y + root) % n for y in range(x, min(x + half, n)))))
                           for x in range(half, n, 2 * half)))
    assert _msgs(s) == want and len(want) == 3
    assert check(s).R == 3 and s.model == "F1"


def test_binomial_reduce_on_the_hypercube():
    # relative id = v xor root
    s = reduce_schedule(topology("hypercube", k=3), 5)
    assert _msgs(s)[0] == sorted((x ^ 5, x ^ 5 ^ 1, (x ^ 5,)) for x in (1, 3, 5, 7))
    assert _msgs(s)[2] == [(1, 5, (0, 1, 2, 3))]
    assert check(s).R == 3 and s.origin["algorithm"] == "reduce-binomial"


def test_recursive_doubling_messages():
    s = allreduce_schedule(topology("complete", n=4))
    assert _msgs(s) == [[(0, 1, (0,)), (1, 0, (1,)), (2, 3, (2,)), (3, 2, (3,))],
                        [(0, 2, (0, 1)), (1, 3, (0, 1)), (2, 0, (2, 3)), (3, 1, (2, 3))]]
    assert s.origin["algorithm"] == "allreduce-recursive-doubling"
    # not a power of two: the complete graph goes to the tree or the tokens
    assert allreduce_schedule(topology("complete", n=6)).origin["algorithm"] != \
        "allreduce-recursive-doubling"


def test_tree_allreduce_down_phase():
    s = rd._tree_allreduce(TREE)
    # centre 1 (eccentricity 2); up 2 rounds, down 2 rounds: the rest of the nodes
    v = check(s)
    assert v.R == 4
    assert _msgs(s)[2] == [(1, 0, (1, 2, 3, 4)), (1, 2, (0, 1, 3, 4, 5)),
                           (1, 3, (0, 1, 2, 5))]
    assert _msgs(s)[3] == [(0, 5, (0, 1, 2, 3, 4)), (3, 4, (0, 1, 2, 3, 5))]
    assert s.origin["algorithm"] == "allreduce-tree" and "centre 1" in s.origin["source"]


def test_allreduce_choice_of_tokens_or_tree(monkeypatch):
    t = topology("star", k=3)
    tokens, tree = rd._token_forwarding(t), rd._tree_allreduce(t)
    s = allreduce_schedule(t)
    want = tokens if tokens.rounds_total <= tree.rounds_total else tree
    assert s.origin == want.origin
    # a tie goes to the tokens
    monkeypatch.setattr(rd, "_tree_allreduce", lambda topo: tokens.__class__.from_rounds(
        tokens.rounds, topology=topo, model="Fstar", p=1, primitive="allreduce",
        origin={"algorithm": "tie", "source": "x"}))
    assert allreduce_schedule(t).origin["algorithm"] == "allreduce-allport-tokens"
    monkeypatch.setattr(rd, "MAX_TOKEN_FORWARDING", t.n - 1)
    assert allreduce_schedule(t).origin["algorithm"] == "tie"
    monkeypatch.setattr(rd, "MAX_TOKEN_FORWARDING", t.n)
    assert allreduce_schedule(t).origin["algorithm"] == "allreduce-allport-tokens"


def test_dimensionwise_rows_then_columns():
    s = allreduce_schedule(topology("mesh", a=2, b=3))
    m = _msgs(s)
    # rows (paths of 3): 2 rounds; then columns (paths of 2): 1 round of row words
    assert len(m) == 3
    assert m[0] == [(0, 1, (0,)), (1, 0, (1,)), (1, 2, (1,)), (2, 1, (2,)), (3, 4, (3,)),
                    (4, 3, (4,)), (4, 5, (4,)), (5, 4, (5,))]
    assert m[2] == sorted((i * 3 + j, (1 - i) * 3 + j, tuple(range(3 * i, 3 * i + 3)))
                          for i in range(2) for j in range(3))
    c = allreduce_schedule(topology("cycle", n=5))
    assert check(c).R == 2 and c.model == "Fstar"


def test_parallel_unions_rounds():
    assert rd._parallel([[[1], [2]], [[3]], []]) == [[1, 3], [2]]
    assert rd._parallel([]) == []


@pytest.mark.parametrize("root", [True, 1.0, "1", -1, 4])
def test_root_checked(root):
    with pytest.raises(ValueError, match="root must be a node 0..3"):
        reduce_schedule(topology("cycle", n=4), root)


def test_size_limit(monkeypatch):
    monkeypatch.setattr(rd, "MAX_COLLECTIVE_NODES", 8)
    assert check(reduce_schedule(topology("hypercube", k=3), 0)).R == 3
    with pytest.raises(ValueError, match="9 nodes, more than the 8 supported"):
        reduce_schedule(topology("cycle", n=9), 0)


def test_power_of_two():
    assert [n for n in range(1, 20) if rd._power_of_two(n)] == [1, 2, 4, 8, 16]


def test_token_forwarding_is_tried_up_to_256_nodes():
    # the complete graph on 257 nodes (not a power of two): the tokens would take one
    # round, the tree two, but 257 nodes is past MAX_TOKEN_FORWARDING = 256
    s = allreduce_schedule(topology("complete", n=257))
    assert s.origin["algorithm"] == "allreduce-tree" and check(s).R == 2
