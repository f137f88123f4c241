"""Interconnection topologies with node ids fixed by construction rules.

A schedule file names its topology as ``{"name": ..., parameters}``; the rules
below fix every node id, so a file means the same thing to every reader:

* ``complete(n)``, ``path(n)`` (edges ``i - i+1``), ``cycle(n)`` (plus
  ``n-1 - 0``), ``explicit(n, edges)``.
* ``hypercube(k)``: ``n = 2^k``, an edge iff the ids differ in one bit.
* ``mesh(a, b)``, ``torus(a, b)``: node ``(i, j)`` has id ``i*b + j``.
* ``star(k)``, ``pancake(k)``: nodes are the permutations of ``0..k-1`` in
  lexicographic order; star swaps entry 0 with entry ``i``, pancake reverses a
  prefix of length at least 2.
* ``ccc(k)``, ``butterfly(k)``: node ``(i, j)``, ``0 <= i < 2^k``,
  ``0 <= j < k``, id ``i*k + j``; cycle edges ``(i, j) - (i, j+1 mod k)``;
  cross edges ``(i, j) - (i xor 2^j, j)`` (ccc) or
  ``(i, j) - (i xor 2^j, j+1 mod k)`` (wrapped butterfly).
* ``shuffle_exchange(k)``, ``debruijn(k)``: ids are k-bit integers; shuffle is
  a cyclic left rotation, exchange flips bit 0; de Bruijn edges ``i - 2i mod n``
  and ``i - 2i+1 mod n``. Both are simple undirected graphs (loops and
  repeated edges dropped).
* ``knodel(n)``: n even, ``d = floor(log2 n)``; node ``(s, j)`` has id
  ``s*n/2 + j``; edges ``(0, j) - (1, (j + 2^t - 1) mod n/2)`` for ``t < d``.

Graph families follow Beier and Sibeyn, "A Powerful Heuristic for Telephone
Gossiping", whose section 2 gives the node and edge counts the tests check
(for star and pancake graphs it prints (k-1) k! edges; a (k-1)-regular graph
on k! nodes has half that, which is what the tests check).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError, json_text

__all__ = ["TOPOLOGIES", "Topology", "topology", "topology_from_json", "MAX_NODES",
           "MAX_BROADCAST_NODES"]

#: Parameters of each topology, in the order a file lists them.
TOPOLOGIES: dict[str, tuple[str, ...]] = {
    "complete": ("n",), "path": ("n",), "cycle": ("n",), "hypercube": ("k",),
    "mesh": ("a", "b"), "torus": ("a", "b"), "star": ("k",), "pancake": ("k",),
    "ccc": ("k",), "butterfly": ("k",), "shuffle_exchange": ("k",), "debruijn": ("k",),
    "knodel": ("n",), "explicit": ("n", "edges"),
}

#: Largest node count a topology may describe (gossip's validator keeps n x n bits).
MAX_NODES = 1 << 16
#: Largest node count of a broadcast topology (``topology(..., max_nodes=...)``):
#: broadcast moves one item, so its state is a few words a node (Table 4's
#: butterfly_14 has 229,376 nodes); only the tables ask for it, every command
#: that reads or writes a schedule keeps :data:`MAX_NODES`.
MAX_BROADCAST_NODES = 1 << 18


@dataclass(frozen=True, eq=False)
class Topology:
    """An undirected simple graph on nodes ``0..n-1``.

    Attributes
    ----------
    name : str
    params : dict
        The parameters as written in a schedule file (``n``, ``k``, ``a``...).
    n : int
    edges : numpy.ndarray or None
        ``(m, 2)`` int64, each row ``u < v``, sorted, no repeats; ``None`` for
        the complete graph (never materialised: it has n(n-1)/2 edges).
    """

    name: str
    params: dict
    n: int
    edges: np.ndarray | None = field(repr=False, default=None)

    @property
    def m(self) -> int:
        """The number of edges."""
        return self.n * (self.n - 1) // 2 if self.edges is None else int(len(self.edges))

    def to_json(self) -> dict:
        out: dict = {"name": self.name}
        for key in TOPOLOGIES[self.name]:
            out[key] = self.params[key]
        return out

    def has_edges(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Vectorised edge test: ``out[i]`` is True iff ``u[i] - v[i]`` is an edge."""
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        if self.edges is None:
            return u != v
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        keys = self.edges[:, 0] * self.n + self.edges[:, 1]
        if len(keys) == 0:
            return np.zeros(len(u), dtype=bool)
        want = lo * self.n + hi
        pos = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
        return keys[pos] == want

    def neighbours(self, v: int) -> list[int]:
        if self.edges is None:
            return [w for w in range(self.n) if w != v]
        e = self.edges
        return sorted(e[e[:, 0] == v, 1].tolist() + e[e[:, 1] == v, 0].tolist())


def _int_param(name: str, key: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"topology {name}: {key} must be an integer, got {json_text(value)}")
    if value < minimum:
        raise FormatError(f"topology {name}: {key} must be at least {minimum}, got {value}")
    return value


def _simple(n: int, pairs) -> np.ndarray:
    """Undirected simple edge list: loops dropped, ``u < v``, sorted, unique."""
    a = np.asarray(list(pairs) if not isinstance(pairs, np.ndarray) else pairs, dtype=np.int64)
    if a.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    a = a.reshape(-1, 2)
    a = a[a[:, 0] != a[:, 1]]
    a = np.sort(a, axis=1)
    keys = np.unique(a[:, 0] * n + a[:, 1])
    return np.stack([keys // n, keys % n], axis=1)


def _grid(a: int, b: int, wrap: bool) -> list[tuple[int, int]]:
    out = []
    for i in range(a):
        for j in range(b):
            v = i * b + j
            if j + 1 < b or (wrap and b > 1):
                out.append((v, i * b + (j + 1) % b))
            if i + 1 < a or (wrap and a > 1):
                out.append((v, ((i + 1) % a) * b + j))
    return out


def _permutation_graph(k: int, move) -> tuple[int, list[tuple[int, int]]]:
    perms = list(itertools.permutations(range(k)))
    index = {p: i for i, p in enumerate(perms)}
    out = []
    for i, p in enumerate(perms):
        for t in range(1, k):
            out.append((i, index[move(p, t)]))
    return len(perms), out


def _star_move(p: tuple, t: int) -> tuple:
    q = list(p)
    q[0], q[t] = q[t], q[0]
    return tuple(q)


def _pancake_move(p: tuple, t: int) -> tuple:
    return tuple(reversed(p[:t + 1])) + p[t + 1:]


def _cube_cycles(k: int, butterfly: bool) -> tuple[int, list[tuple[int, int]]]:
    out = []
    for i in range(1 << k):
        for j in range(k):
            out.append((i * k + j, i * k + (j + 1) % k))
            jj = (j + 1) % k if butterfly else j
            out.append((i * k + j, (i ^ (1 << j)) * k + jj))
    return k << k, out


def _build(name: str, p: dict) -> tuple[int, np.ndarray | None]:
    if name == "complete":
        return p["n"], None
    if name == "path":
        n = p["n"]
        return n, _simple(n, [(i, i + 1) for i in range(n - 1)])
    if name == "cycle":
        n = p["n"]
        return n, _simple(n, [(i, (i + 1) % n) for i in range(n)])
    if name == "hypercube":
        n = 1 << p["k"]
        return n, _simple(n, [(v, v ^ (1 << t)) for v in range(n) for t in range(p["k"])])
    if name in ("mesh", "torus"):
        n = p["a"] * p["b"]
        return n, _simple(n, _grid(p["a"], p["b"], name == "torus"))
    if name in ("star", "pancake"):
        n, pairs = _permutation_graph(p["k"], _star_move if name == "star" else _pancake_move)
        return n, _simple(n, pairs)
    if name in ("ccc", "butterfly"):
        n, pairs = _cube_cycles(p["k"], name == "butterfly")
        return n, _simple(n, pairs)
    if name == "shuffle_exchange":
        k = p["k"]
        n = 1 << k
        rot = [((v << 1) | (v >> (k - 1))) & (n - 1) for v in range(n)]
        return n, _simple(n, [(v, rot[v]) for v in range(n)] + [(v, v ^ 1) for v in range(n)])
    if name == "debruijn":
        n = 1 << p["k"]
        return n, _simple(n, [(v, (2 * v + c) % n) for v in range(n) for c in (0, 1)])
    if name == "knodel":
        n = p["n"]
        half, d = n // 2, int(math.floor(math.log2(n)))
        return n, _simple(n, [(j, half + (j + (1 << t) - 1) % half)
                              for j in range(half) for t in range(d)])
    raise AssertionError(name)


def topology(name: str, *, max_nodes: int | None = None, **params) -> Topology:
    """Build a topology by name, e.g. ``topology("mesh", a=3, b=4)``.

    ``max_nodes`` is the largest node count accepted: :data:`MAX_NODES` by default,
    up to :data:`MAX_BROADCAST_NODES` for a broadcast.

    Raises
    ------
    FormatError
        For an unknown name, a missing, extra or out-of-range parameter.
    """
    if name not in TOPOLOGIES:
        raise FormatError(f"unknown topology {json_text(name)} (expected one of {', '.join(TOPOLOGIES)})")
    want = TOPOLOGIES[name]
    extra = sorted(set(params) - set(want))
    if extra:
        raise FormatError(f"topology {name}: unknown key {json_text(extra[0])} (expected {', '.join(want)})")
    missing = [key for key in want if key not in params]
    if missing:
        raise FormatError(f"topology {name}: missing key {missing[0]!r}")
    clean: dict = {}
    for key in want:
        if key == "edges":
            continue
        minimum = 2 if key == "n" else 1
        clean[key] = _int_param(name, key, params[key], minimum)
    if name == "knodel" and clean["n"] % 2:
        raise FormatError(f"topology knodel: n must be even, got {clean['n']}")
    if name in ("star", "pancake") and clean["k"] > 8:
        raise FormatError(f"topology {name}: k must be at most 8 (k! nodes), got {clean['k']}")
    max_nodes = MAX_NODES if max_nodes is None else max_nodes
    if max_nodes > MAX_BROADCAST_NODES:
        raise ValueError(f"max_nodes must be at most {MAX_BROADCAST_NODES}, got {max_nodes}")
    size = _size(name, clean)
    if size > max_nodes:
        count = f"{size} nodes" if size < 1 << 41 else "too many nodes"
        raise FormatError(f"topology {name}: {count}, more than the {max_nodes} supported"
                          + (" for broadcast" if max_nodes > MAX_NODES else ""))
    if name == "explicit":
        clean["edges"] = _explicit_edges(clean["n"], params["edges"])
        return Topology(name, clean, clean["n"], _simple(clean["n"], clean["edges"]))
    n, edges = _build(name, clean)
    return Topology(name, clean, n, edges)


def _size(name: str, p: dict) -> int:
    if "n" in p:
        return p["n"]
    if name in ("mesh", "torus"):
        return p["a"] * p["b"]
    k = p["k"]
    if k > 40:  # far beyond the limit; do not build a huge integer
        return 1 << 41
    if name in ("star", "pancake"):
        return math.factorial(k)
    if name in ("ccc", "butterfly"):
        return k << k
    return 1 << k


def _explicit_edges(n: int, edges: object) -> list[list[int]]:
    if not isinstance(edges, list):
        raise FormatError("topology explicit: edges must be a list of [u, v] pairs")
    # An edge may be listed once each way ([u, v] and [v, u] are one undirected
    # edge), so a list longer than n(n-1) repeats one: refused before anything is
    # built for it (3 million copies of one edge).
    if len(edges) > n * (n - 1):
        raise FormatError(f"topology explicit: {len(edges):,} edges, more than the "
                          f"{n * (n - 1):,} [u, v] pairs of {n} nodes (an edge is listed twice)")
    out, seen = [], set()
    for e in edges:
        if (not isinstance(e, list) or len(e) != 2
                or any(isinstance(x, bool) or not isinstance(x, int) for x in e)):
            raise FormatError(f"topology explicit: bad edge {json_text(e)} (expected [u, v])")
        if not (0 <= e[0] < n and 0 <= e[1] < n) or e[0] == e[1]:
            raise FormatError(f"topology explicit: edge {json_text(e)} is not a pair of distinct nodes "
                              f"0..{n - 1}")
        key = (e[0], e[1])
        if key in seen:
            raise FormatError(f"topology explicit: edge {json_text(e)} is listed twice "
                              f"(entries {out.index([e[0], e[1]])} and {len(out)})")
        seen.add(key)
        out.append([e[0], e[1]])
    return out


def topology_from_json(data: object) -> Topology:
    """Read the ``topology`` object of a schedule file."""
    if not isinstance(data, dict) or "name" not in data:
        raise FormatError("topology must be an object with a 'name'")
    params = {k: v for k, v in data.items() if k != "name"}
    if not isinstance(data["name"], str):
        raise FormatError(f"topology name must be a string, got {json_text(data['name'])}")
    return topology(data["name"], **params)
