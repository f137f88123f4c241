"""``reduce`` and ``allreduce`` schedules: every message is one combined word.

A message's items are the set of tokens its word stands for; the validator
refuses a token counted twice (docs/schedules.md). Every generator but the
tree allreduce sends, in every message, the sender's *whole* current set, so
a fabric that can only send its accumulator runs it unchanged.

* :func:`reduce_schedule`:
  - hypercube: binomial tree (``F1``), ``k`` rounds;
  - complete graph: binomial tree (``F1``), ``ceil(log2 n)`` rounds;
  - any other connected topology: up a BFS tree of the root by level
    (``Hstar``), ``ecc(root)`` rounds.
  Each meets its bound (``bounds.reduce_rounds``).
* :func:`allreduce_schedule`:
  - hypercube, or the complete graph with ``n = 2^k``: recursive doubling
    (``F1``), ``k`` rounds, the bound ``ceil(log2 n)``;
  - cycle, path, torus, mesh: dimension-wise pipeline (``Fstar``): tokens
    are forwarded both ways along every row (:func:`.allport.line_pipeline`),
    then every row's combined word both ways along every column; the
    diameter in rounds, the bound. Each message forwards one word the sender
    received (or its own token), not its whole set;
  - any other connected topology: the fewer rounds of two (a tie goes to the
    first). (a) Up to :data:`MAX_TOKEN_FORWARDING` nodes, the all-port
    gossip's rounds with every message one token (``Fstar``): each message
    forwards a word its sender received, so the network fabric runs it.
    (b) Reduce to a centre ``c`` up its BFS tree, then each parent sends
    each child everything outside the child's subtree (``Hstar``),
    ``2 * radius`` rounds (the bound is the diameter). The down messages
    send *part* of the parent's set (all but the child's subtree), a word no
    node holds: both fabrics refuse them. With whole sets alone allreduce is
    impossible on, for example, the 3-node path (node 1 would have to hold
    both {0, 1} and {1, 2} at some time).
"""

from __future__ import annotations

import math

import numpy as np

from ..schedules.distances import adjacency, center, distances
from ..schedules.ir import Message, Schedule
from ..schedules.topologies import Topology
from .allport import allport_gossip, line_pipeline, topology_text

__all__ = ["reduce_schedule", "allreduce_schedule", "bfs_tree", "MAX_COLLECTIVE_NODES"]

#: Largest n of the generators: a schedule holds up to n^2 token entries.
MAX_COLLECTIVE_NODES = 4096


def _power_of_two(n: int) -> bool:
    return n & (n - 1) == 0


def _check(topo: Topology, root: int | None = None) -> None:
    if topo.n > MAX_COLLECTIVE_NODES:
        raise ValueError(f"{topo.n} nodes, more than the {MAX_COLLECTIVE_NODES} supported")
    if root is not None and (isinstance(root, bool) or not isinstance(root, int)
                             or not 0 <= root < topo.n):
        raise ValueError(f"root must be a node 0..{topo.n - 1}, got {root!r}")


def bfs_tree(topo: Topology, root: int) -> tuple[np.ndarray, np.ndarray]:
    """``(parent, depth)`` of the BFS tree of ``root``; each parent is the
    smallest-id neighbour one level up (so the tree is deterministic).

    Raises ValueError when the topology is disconnected.
    """
    depth = distances(topo, root)
    if (depth < 0).any():
        raise ValueError(f"topology {topo.name} is disconnected: node "
                         f"{int(np.argmin(depth))} cannot reach root {root}")
    parent = np.full(topo.n, -1, dtype=np.int64)
    if topo.edges is None:
        parent[:] = root
        parent[root] = -1
        return parent, depth
    ptr, nbr = adjacency(topo)
    for v in range(topo.n):
        if v != root:
            nb = nbr[ptr[v]:ptr[v + 1]]
            parent[v] = int(nb[depth[nb] == depth[v] - 1][0])
    return parent, depth


def _subtrees(parent: np.ndarray, depth: np.ndarray) -> list[list[int]]:
    """Every node's subtree (sorted ids), children before parents."""
    sub = [[v] for v in range(len(parent))]
    for v in np.argsort(-depth, kind="stable").tolist():
        if parent[v] >= 0:
            sub[int(parent[v])] += sub[v]
    return [sorted(s) for s in sub]


def _tree_up(parent: np.ndarray, depth: np.ndarray) -> tuple[list[list[Message]], list]:
    """Rounds of the reduce up the tree (a node at depth d sends in round
    ``height - d + 1``, once all its children have), and the subtrees."""
    height = int(depth.max())
    sub = _subtrees(parent, depth)
    rounds: list[list[Message]] = [[] for _ in range(height)]
    for v in np.argsort(-depth, kind="stable").tolist():
        if parent[v] >= 0:
            rounds[height - int(depth[v])].append(
                Message(v, (int(parent[v]),), tuple(sub[v])))
    return rounds, sub


def _binomial(n: int, from_rel) -> list[list[Message]]:
    """Binomial-tree reduce to relative id 0: in round t every relative id
    ``x = 2^(t-1) mod 2^t`` sends its block ``[x, x + 2^(t-1))`` (its whole
    set) to ``x - 2^(t-1)``; ``from_rel`` maps relative ids to node ids."""
    rounds = []
    for t in range(1, math.ceil(math.log2(n)) + 1):
        half = 1 << (t - 1)
        msgs = []
        for x in range(half, n, 1 << t):
            block = sorted(from_rel(y) for y in range(x, min(x + half, n)))
            msgs.append(Message(from_rel(x), (from_rel(x - half),), tuple(block)))
        rounds.append(sorted(msgs, key=lambda m: m.src))
    return rounds


def reduce_schedule(topo: Topology, root: int) -> Schedule:
    """A ``reduce`` to ``root`` meeting its round bound; whole sets only."""
    _check(topo, root)
    n = topo.n
    if topo.name == "hypercube":
        rounds = _binomial(n, lambda x: x ^ root)
        return _schedule(topo, "F1", rounds, "reduce", root, "reduce-binomial",
                         f"k={topo.params['k']}, root={root}; binomial tree in ids xor root: "
                         "round t, every node whose relative id has lowest set bit t-1 sends "
                         "its whole set across dimension t-1; k rounds")
    if topo.name == "complete":
        rounds = _binomial(n, lambda x: (x + root) % n)
        return _schedule(topo, "F1", rounds, "reduce", root, "reduce-binomial",
                         f"n={n}, root={root}; binomial tree in ids (v - root) mod n: round t, "
                         "x = 2^(t-1) mod 2^t sends its whole set to x - 2^(t-1); "
                         "ceil(log2 n) rounds")
    parent, depth = bfs_tree(topo, root)
    rounds, _ = _tree_up(parent, depth)
    return _schedule(topo, "Hstar", rounds, "reduce", root, "reduce-tree",
                     f"{topology_text(topo)}, root={root}; up the BFS tree of the root by level "
                     "(parent: smallest-id neighbour one level up), each node sending its "
                     "whole set once all its children have: ecc(root) rounds")


def allreduce_schedule(topo: Topology) -> Schedule:
    """An ``allreduce``: recursive doubling or the dimension-wise pipeline where they
    exist, else the fewer rounds of the token forwarding and the tree."""
    _check(topo)
    n = topo.n
    if topo.name == "hypercube" or (topo.name == "complete" and _power_of_two(n)):
        k = n.bit_length() - 1
        rounds = []
        for t in range(k):
            rounds.append([Message(v, (v ^ (1 << t),),
                                   tuple(range((v >> t) << t, ((v >> t) + 1) << t)))
                           for v in range(n)])
        return _schedule(topo, "F1", rounds, "allreduce", None, "allreduce-recursive-doubling",
                         f"{topology_text(topo)}; round t pairs v with v xor 2^(t-1), each "
                         "sending its whole set (its (t-1)-subcube); k one-word rounds")
    if topo.name in ("cycle", "path", "mesh", "torus"):
        return _dimensionwise(topo)
    tree = _tree_allreduce(topo)
    if n > MAX_TOKEN_FORWARDING:
        return tree
    tokens = _token_forwarding(topo)
    # rounds first; on a tie the token forwarding, which the network fabric runs
    return tokens if tokens.rounds_total <= tree.rounds_total else tree


#: Largest n for which the all-port token forwarding is tried beside the tree
#: (the greedy's work grows as n^2 times its rounds).
MAX_TOKEN_FORWARDING = 256


def _token_forwarding(topo: Topology) -> Schedule:
    """The all-port gossip's rounds as an allreduce: every message one token the
    sender holds and the receiver lacks (no node receives a token twice)."""
    g = allport_gossip(topo)
    return _schedule(topo, "Fstar", g.rounds, "allreduce", None, "allreduce-allport-tokens",
                     f"{topology_text(topo)}; the all-port gossip's rounds, each message one "
                     "token (a word the sender received, or its own), combined by every "
                     "receiver; chosen over the tree when it takes no more rounds")


def _tree_allreduce(topo: Topology) -> Schedule:
    """Reduce up a centre's BFS tree, then every parent sends each child the rest."""
    n = topo.n
    c = center(topo)
    if c is None:
        raise ValueError(f"topology {topo.name}: disconnected, or too large to find a centre")
    parent, depth = bfs_tree(topo, c)
    up, sub = _tree_up(parent, depth)
    everyone = set(range(n))
    down: list[list[Message]] = [[] for _ in range(len(up))]
    for v in np.argsort(depth, kind="stable").tolist():
        if parent[v] >= 0:
            down[int(depth[v]) - 1].append(
                Message(int(parent[v]), (v,), tuple(sorted(everyone - set(sub[v])))))
    return _schedule(topo, "Hstar", up + down, "allreduce", None, "allreduce-tree",
                     f"{topology_text(topo)}, centre {c}; reduce up the centre's BFS tree (radius "
                     "rounds, whole sets), then each parent sends each child every token "
                     "outside the child's subtree (radius rounds; part of the parent's set, "
                     "so a whole-accumulator fabric refuses it)")


def _dimensionwise(topo: Topology) -> Schedule:
    """Rows, then columns, by the line pipeline (a cycle or path is one row)."""
    a, b = (topo.params["a"], topo.params["b"]) if "a" in topo.params else (1, topo.n)
    wrap = topo.name in ("cycle", "torus")
    rows = [[i * b + j for j in range(b)] for i in range(a)]
    phase1 = _parallel([line_pipeline(r, [(v,) for v in r], wrap) for r in rows])
    phase2 = _parallel([line_pipeline([i * b + j for i in range(a)],
                                      [tuple(r) for r in rows], wrap) for j in range(b)])
    return _schedule(topo, "Fstar", phase1 + phase2, "allreduce", None,
                     "allreduce-dimensionwise",
                     f"{topology_text(topo)}; every row forwards its tokens both ways "
                     "(each node passes on what it got from the other side the round "
                     "before), then every column forwards the rows' combined words the same "
                     "way: the diameter in rounds")


def _parallel(parts: list[list[list[Message]]]) -> list[list[Message]]:
    """Run schedules side by side: round r is the union of their rounds r."""
    longest = max((len(p) for p in parts), default=0)
    return [[m for p in parts if r < len(p) for m in p[r]] for r in range(longest)]


def _schedule(topo, model, rounds, primitive, root, algorithm, source) -> Schedule:
    return Schedule.from_rounds(rounds, topology=topo, model=model, p=1, primitive=primitive,
                                root=root, origin={"algorithm": algorithm, "source": source})
