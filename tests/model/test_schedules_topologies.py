"""Topologies: node and edge counts against the formulas of the gossiping-heuristics paper."""

import math

import pytest

from pipegossip.model.errors import FormatError
from pipegossip.model.schedules.topologies import topology, topology_from_json


@pytest.mark.parametrize("a,b", [(2, 2), (3, 4), (5, 7), (1, 6)])
def test_mesh(a, b):
    t = topology("mesh", a=a, b=b)
    assert (t.n, t.m) == (a * b, 2 * a * b - a - b)


@pytest.mark.parametrize("a,b", [(3, 3), (3, 5), (4, 6)])
def test_torus(a, b):
    t = topology("torus", a=a, b=b)
    assert (t.n, t.m) == (a * b, 2 * a * b)


@pytest.mark.parametrize("k", range(1, 9))
def test_hypercube(k):
    t = topology("hypercube", k=k)
    assert (t.n, t.m) == (2 ** k, k * 2 ** k // 2)


@pytest.mark.parametrize("n", [4, 6, 8, 10, 16, 22, 32])
def test_knodel(n):
    d = int(math.floor(math.log2(n)))
    t = topology("knodel", n=n)
    assert (t.n, t.m) == (n, n * d // 2)


@pytest.mark.parametrize("k", range(3, 8))
def test_ccc(k):
    t = topology("ccc", k=k)
    assert (t.n, t.m) == (k * 2 ** k, 3 * k * 2 ** k // 2)


@pytest.mark.parametrize("k", range(2, 11))
def test_shuffle_exchange(k):
    t = topology("shuffle_exchange", k=k)
    extra = 3 if k % 2 == 0 else 2
    assert (t.n, t.m) == (2 ** k, 3 * 2 ** k // 2 - extra)


@pytest.mark.parametrize("k", range(3, 8))
def test_butterfly(k):
    t = topology("butterfly", k=k)
    assert (t.n, t.m) == (k * 2 ** k, 2 * k * 2 ** k)


@pytest.mark.parametrize("k", range(2, 11))
def test_debruijn(k):
    t = topology("debruijn", k=k)
    assert (t.n, t.m) == (2 ** k, 2 * 2 ** k - 3)


@pytest.mark.parametrize("name", ["star", "pancake"])
@pytest.mark.parametrize("k", range(2, 6))
def test_star_pancake(name, k):
    t = topology(name, k=k)
    assert (t.n, t.m) == (math.factorial(k), (k - 1) * math.factorial(k) // 2)


def test_star_pancake_ids():
    # lexicographic permutations: id 0 = (0,1,2), id 1 = (0,2,1), id 2 = (1,0,2)
    assert topology("star", k=3).has_edges([0], [2])[0]      # swap entries 0 and 1
    assert topology("pancake", k=3).has_edges([0], [2])[0]   # reverse prefix of 2
    assert not topology("star", k=3).has_edges([0], [1])[0]  # (0,2,1) swaps 1 and 2


def test_simple_graphs():
    assert topology("path", n=5).m == 4
    assert topology("cycle", n=5).m == 5
    assert topology("complete", n=7).m == 21
    assert topology("explicit", n=3, edges=[[0, 1], [1, 0], [1, 2]]).m == 2


def test_ids_of_two_level_graphs():
    ccc = topology("ccc", k=3)  # (i, j) has id i*k + j
    assert ccc.has_edges([0 * 3 + 1], [2 * 3 + 1])[0]       # cross edge flips bit j=1
    bf = topology("butterfly", k=3)
    assert bf.has_edges([0 * 3 + 1], [2 * 3 + 2])[0]        # cross edge to j+1
    kn = topology("knodel", n=8)                            # (0,j)-(1,(j+2^t-1) mod 4)
    assert kn.has_edges([0, 0, 0], [4, 5, 7]).all()
    assert not kn.has_edges([0], [6])[0]


@pytest.mark.parametrize("data,text", [
    ({"name": "ring", "n": 4}, "unknown topology"),
    ({"name": "mesh", "a": 2}, "missing key 'b'"),
    ({"name": "complete", "n": 4, "k": 2}, 'unknown key "k"'),
    ({"name": "knodel", "n": 5}, "even"),
    ({"name": "path", "n": True}, "integer"),
    ({"name": "explicit", "n": 3, "edges": [[0, 3]]}, "distinct nodes"),
])
def test_refusals(data, text):
    with pytest.raises(FormatError, match=text):
        topology_from_json(data)
