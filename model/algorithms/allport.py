"""All-port (``Fstar``, ``p = 1``) gossip: one word per directed edge per round.

The bound is ``R >= max(diameter, ceil((n-1)/delta))`` (``delta``: the least
degree; each node takes at most ``deg`` new items per round and the farthest
token needs ``diameter`` hops), see :func:`..schedules.bounds.allport_gossip_rounds`.

* :func:`line_pipeline` - cycles and paths: every node forwards to its
  right neighbour what it got from the left in the previous round, and the
  other way round. A cycle gossips in ``ceil((n-1)/2)`` rounds, a path in
  ``n-1``: both the bound. The same pipeline, run on the rows and then on the
  columns of a mesh or torus, is the dimension-wise allreduce
  (:mod:`.reduce`).
* :func:`greedy_allport` - any connected topology. Every round, each node
  ``v`` picks for each neighbour ``u`` one item ``u`` holds and ``v`` lacks,
  a different item per neighbour, as many as a maximum matching allows
  (:func:`_match`). Each neighbour's preference: first the item fewest of
  ``v``'s neighbours can supply (a scarce item must come from its one
  supplier), then the item fewest nodes hold (rare items spread first),
  then the item after ``v`` in cyclic id order (so neighbours ask for
  different items). Receivers choose independently because under ``Fstar``
  a sender may send a different word on each of its edges. Measured (tests
  and docs/schedules.md): the bound on hypercubes k = 2..8 and on the tori
  tried, but for 2 x 5 (one round above).

No node ever receives an item twice, so every schedule here is also a valid
``allreduce`` (each message one token).
"""

from __future__ import annotations

import numpy as np

from ..schedules.distances import adjacency, distances
from ..schedules.ir import Message, Schedule
from ..schedules.topologies import Topology

__all__ = ["line_pipeline", "allport_gossip", "greedy_allport", "topology_text",
           "MAX_ALLPORT_NODES"]

#: Largest n of the greedy (its work grows as n^2 times the rounds).
MAX_ALLPORT_NODES = 1024


def line_pipeline(line: list[int], units: list[tuple[int, ...]], wrap: bool) -> list[list[Message]]:
    """Forward ``units`` both ways along ``line`` (a path, or a cycle if ``wrap``).

    ``units[q]`` is what ``line[q]`` starts with (its token, or a set of
    tokens it holds as one word). In round ``t`` the node at position ``q``
    sends to ``q+1`` the unit of ``q-t+1`` and to ``q-1`` the unit of
    ``q+t-1``: the unit it received from that side in round ``t-1``. On a
    cycle of ``L`` nodes units travel ``ceil((L-1)/2)`` hops rightwards and
    ``floor((L-1)/2)`` leftwards, so every node gets every unit exactly once
    in ``ceil((L-1)/2)`` rounds; on a path ``L-1`` rounds.
    """
    size = len(line)
    right = size // 2 if wrap else size - 1
    left = (size - 1) // 2 if wrap else size - 1
    rounds = []
    for t in range(1, max(right, left) + 1):
        msgs = []
        for q in range(size):
            if t <= right and (wrap or (q - t + 1 >= 0 and q + 1 < size)):
                msgs.append(Message(line[q], (line[(q + 1) % size],), units[(q - t + 1) % size]))
            if t <= left and (wrap or (q + t - 1 < size and q - 1 >= 0)):
                msgs.append(Message(line[q], (line[(q - 1) % size],), units[(q + t - 1) % size]))
        rounds.append(msgs)
    return rounds


def greedy_allport(topo: Topology) -> Schedule:
    """All-port gossip on any connected topology by the greedy of the module text."""
    n = topo.n
    if n > MAX_ALLPORT_NODES:
        raise ValueError(f"{n} nodes, more than the {MAX_ALLPORT_NODES} the greedy supports")
    if (distances(topo, 0) < 0).any():
        raise ValueError(f"topology {topo.name} is disconnected: gossip is impossible")
    ptr, nbr = adjacency(topo)
    K = np.eye(n, dtype=bool)
    rnd, src, dst, item = [], [], [], []
    r = 0
    while not K.all():
        r += 1
        holders = K.sum(axis=0)
        new = K.copy()
        for v in np.flatnonzero(~K.all(axis=1)).tolist():
            nb = nbr[ptr[v]:ptr[v + 1]]
            cand = K[nb] & ~K[v]
            suppliers = cand.sum(axis=0)
            prefs = []
            for i in range(len(nb)):
                idx = np.flatnonzero(cand[i])
                key = np.lexsort(((idx - v) % n, holders[idx], suppliers[idx]))
                prefs.append(idx[key].tolist())
            for i, x in enumerate(_match(prefs)):
                if x is not None:
                    new[v, x] = True
                    rnd.append(r)
                    src.append(int(nb[i]))
                    dst.append(v)
                    item.append(x)
        K = new
    order = np.lexsort((np.asarray(dst), np.asarray(src), np.asarray(rnd)))
    pick = lambda a: np.asarray(a, dtype=np.int64)[order]  # noqa: E731
    return Schedule.unicast(pick(rnd), pick(src), pick(dst), pick(item), rounds=r,
                            topology=topo, model="Fstar", p=1,
                            origin={"algorithm": "all-port-greedy",
                                    "source": f"{topology_text(topo)}; every node takes from "
                                    "each neighbour one item it lacks, a different one per "
                                    "neighbour, by maximum matching; preferring the scarcest "
                                    "supplier, then the rarest item, then the next in cyclic "
                                    "id order"})


def _match(prefs: list[list[int]]) -> list[int | None]:
    """A maximum matching of neighbours to distinct items, preferences first.

    Neighbours with fewest choices go first and take their most preferred
    free item; one whose choices are all taken re-routes earlier neighbours
    along an augmenting path (Kuhn), so the receiver gets as many new items
    as any assignment could give it.
    """
    owner: dict[int, int] = {}
    got: list[int | None] = [None] * len(prefs)

    def augment(i: int, seen: set) -> bool:
        for x in prefs[i]:
            if x not in seen:
                seen.add(x)
                if x not in owner or augment(owner[x], seen):
                    owner[x], got[i] = i, x
                    return True
        return False

    for i in sorted(range(len(prefs)), key=lambda i: len(prefs[i])):
        free = next((x for x in prefs[i] if x not in owner), None)
        if free is not None:
            owner[free], got[i] = i, free
        else:
            augment(i, set())
    return got


def allport_gossip(topo: Topology) -> Schedule:
    """All-port gossip: the pipeline on cycles and paths, the greedy elsewhere."""
    n = topo.n
    if topo.name in ("cycle", "path") and n >= 2:
        line = list(range(n))
        rounds = line_pipeline(line, [(v,) for v in line], wrap=topo.name == "cycle")
        return Schedule.from_rounds(rounds, topology=topo, model="Fstar", p=1,
                                    origin={"algorithm": "all-port-pipeline",
                                            "source": f"{topology_text(topo)}; every node forwards "
                                            "left and right what it got from the other side "
                                            "the round before"})
    return greedy_allport(topo)


def topology_text(topo: Topology) -> str:
    """``name(key=value, ...)`` for an origin's source text."""
    return f"{topo.name}(" + ", ".join(f"{k}={v}" for k, v in topo.params.items()
                                       if k != "edges") + ")"
