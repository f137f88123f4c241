"""Distances on topologies: BFS, eccentricity, radius, diameter, degrees.

The bounds (:mod:`.bounds`) and the collective generators need them. The
named families have closed forms for their diameter (and, being
vertex-transitive or grids, their radius), so a bound on a 65536-node
hypercube costs nothing; other graphs take one vectorised BFS per node, up
to :data:`MAX_ALL_PAIRS` nodes.
"""

from __future__ import annotations

import numpy as np

from .topologies import Topology

__all__ = ["adjacency", "distances", "eccentricity", "radius", "diameter", "degrees",
           "center", "MAX_ALL_PAIRS"]

#: Largest node count for which radius/diameter run a BFS from every node.
MAX_ALL_PAIRS = 4096

#: Families on which every node has the same eccentricity (vertex-transitive).
_TRANSITIVE = ("complete", "cycle", "hypercube", "torus", "star", "pancake", "ccc",
               "butterfly")


def adjacency(t: Topology) -> tuple[np.ndarray, np.ndarray]:
    """CSR adjacency: the neighbours of ``v`` are ``nbr[ptr[v]:ptr[v+1]]``, ascending."""
    if t.edges is None:
        n = t.n
        nbr = np.array([w for v in range(n) for w in range(n) if w != v], dtype=np.int64)
        return np.arange(0, n * (n - 1) + 1, n - 1, dtype=np.int64), nbr
    e = t.edges
    both = np.concatenate([e, e[:, ::-1]])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    ptr = np.zeros(t.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(both[:, 0], minlength=t.n), out=ptr[1:])
    return ptr, both[:, 1].copy()


def degrees(t: Topology) -> np.ndarray:
    """Degree of every node."""
    if t.edges is None:
        return np.full(t.n, t.n - 1, dtype=np.int64)
    return np.bincount(t.edges.ravel(), minlength=t.n)


def distances(t: Topology, source: int, adj=None) -> np.ndarray:
    """Hop distance from ``source`` to every node; -1 where unreachable."""
    if t.edges is None:
        d = np.ones(t.n, dtype=np.int64)
        d[source] = 0
        return d
    ptr, nbr = adj if adj is not None else adjacency(t)
    dist = np.full(t.n, -1, dtype=np.int64)
    dist[source] = 0
    frontier = np.array([source], dtype=np.int64)
    level = 0
    while len(frontier):
        level += 1
        counts = ptr[frontier + 1] - ptr[frontier]
        starts = np.repeat(ptr[frontier] - np.cumsum(counts) + counts, counts)
        nxt = nbr[starts + np.arange(int(counts.sum()))]
        nxt = np.unique(nxt[dist[nxt] < 0])
        dist[nxt] = level
        frontier = nxt
    return dist


def eccentricity(t: Topology, v: int) -> int | None:
    """Largest distance from ``v``; None if the graph is disconnected."""
    d = distances(t, v)
    return None if (d < 0).any() else int(d.max())


def _closed_diameter(t: Topology) -> int | None:
    p = t.params
    return {"complete": lambda: 1, "path": lambda: p.get("n", 0) - 1,
            "cycle": lambda: p.get("n", 0) // 2, "hypercube": lambda: p.get("k", 0),
            "mesh": lambda: p.get("a", 1) + p.get("b", 1) - 2,
            "torus": lambda: p.get("a", 1) // 2 + p.get("b", 1) // 2}.get(t.name, lambda: None)()


def _eccentricities(t: Topology) -> np.ndarray | None:
    if t.n > MAX_ALL_PAIRS:
        return None
    adj = adjacency(t)
    ecc = np.empty(t.n, dtype=np.int64)
    for v in range(t.n):
        d = distances(t, v, adj)
        if (d < 0).any():
            return None
        ecc[v] = d.max()
    return ecc


def diameter(t: Topology) -> int | None:
    """The diameter; None if disconnected or too large to compute here."""
    closed = _closed_diameter(t)
    if closed is not None:
        return closed
    if t.name in _TRANSITIVE:
        return eccentricity(t, 0)
    ecc = _eccentricities(t)
    return None if ecc is None else int(ecc.max())


def radius(t: Topology) -> int | None:
    """The radius (smallest eccentricity); None if disconnected or too large."""
    if t.name in _TRANSITIVE:
        return diameter(t)
    c = center(t)
    return None if c is None else eccentricity(t, c)


def center(t: Topology) -> int | None:
    """The smallest-id node of least eccentricity; None if disconnected or too large."""
    p = t.params
    if t.name in _TRANSITIVE:
        return 0 if eccentricity(t, 0) is not None else None
    if t.name == "path":
        return (p["n"] - 1) // 2
    if t.name == "mesh":
        return ((p["a"] - 1) // 2) * p["b"] + (p["b"] - 1) // 2
    ecc = _eccentricities(t)
    return None if ecc is None else int(np.argmin(ecc))
