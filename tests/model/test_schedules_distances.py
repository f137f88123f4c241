"""Distances on topologies against networkx: eccentricity, radius, diameter, centre."""

import networkx as nx
import pytest

from pipegossip.model.schedules.distances import (center, degrees, diameter, distances,
                                                  eccentricity, radius)
from pipegossip.model.schedules.topologies import topology


def _graph(t):
    if t.edges is None:
        return nx.complete_graph(t.n)
    g = nx.Graph()
    g.add_nodes_from(range(t.n))
    g.add_edges_from(t.edges.tolist())
    return g


@pytest.mark.parametrize("name,params", [
    ("path", {"n": 7}), ("cycle", {"n": 8}), ("cycle", {"n": 9}), ("mesh", {"a": 3, "b": 5}),
    ("mesh", {"a": 1, "b": 4}), ("torus", {"a": 4, "b": 5}), ("torus", {"a": 2, "b": 3}),
    ("hypercube", {"k": 4}), ("star", {"k": 4}), ("pancake", {"k": 4}), ("ccc", {"k": 3}),
    ("butterfly", {"k": 3}), ("debruijn", {"k": 5}), ("shuffle_exchange", {"k": 5}),
    ("knodel", {"n": 14}), ("complete", {"n": 5}),
    ("explicit", {"n": 5, "edges": [[0, 1], [1, 2], [1, 3], [3, 4]]}),
])
def test_against_networkx(name, params):
    t = topology(name, **params)
    g = _graph(t)
    ecc = nx.eccentricity(g)
    assert diameter(t) == nx.diameter(g) and radius(t) == nx.radius(g)
    assert ecc[center(t)] == nx.radius(g)
    assert all(eccentricity(t, v) == ecc[v] for v in range(t.n))
    assert degrees(t).tolist() == [g.degree(v) for v in range(t.n)]


def test_disconnected():
    t = topology("explicit", n=5, edges=[[0, 1], [1, 2], [3, 4]])
    assert distances(t, 0).tolist() == [0, 1, 2, -1, -1]
    assert eccentricity(t, 0) is None
    assert diameter(t) is None and radius(t) is None and center(t) is None
