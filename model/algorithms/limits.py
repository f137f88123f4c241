"""Schedules that reach (or come within one round of) the classic lower bounds.

* :func:`one_factor` - H1, ``p = 1``: ``2(n-1)`` rounds (n even), ``2n`` (n odd).
* :func:`cyclic_shift` - port, ``p = 1``: ``n - 1`` rounds.
* :func:`recursive_doubling` - F1 (telephone), unlimited ``p``:
  ``ceil(log2 n)`` rounds for even n, ``ceil(log2 n) + 1`` for odd n.
* :func:`min_calls` - F1, unlimited ``p``: ``2n - 4`` calls for ``n >= 4``.
"""

from __future__ import annotations

import math

import numpy as np

from ..schedules.ir import Message, Schedule, complete
from ..schedules.topologies import topology

__all__ = ["one_factor", "cyclic_shift", "recursive_doubling", "min_calls",
           "knodel_rounds", "call_schedule", "GENERATORS"]


def _check_n(n: int, minimum: int = 2) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < minimum:
        raise ValueError(f"n must be an integer >= {minimum}, got {n!r}")
    return n


def _round_robin(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(a[k, i], b[k, i])`` of the circle-method 1-factorisation.

    Returns arrays of shape ``(rounds, pairs)``; for odd n the node paired
    with the dummy in matching k (node k) sits the matching out.
    """
    even = n + (n % 2)
    m = even - 1  # nodes 0..m-1 rotate on a circle, node m (or the dummy) is fixed
    k = np.arange(m)[:, None]
    i = np.arange(1, even // 2)[None, :]
    a = (k + i) % m
    b = (k - i) % m
    if n % 2 == 0:
        a = np.concatenate([np.arange(m)[:, None], a], axis=1)
        b = np.concatenate([np.full((m, 1), m), b], axis=1)
    return a, b


def one_factor(n: int) -> Schedule:
    """Gossip in H1 with one item per message in the minimum number of rounds.

    Construction: the round-robin (circle-method) 1-factorisation of K_n
    (Lucas 1883, after Kirkman; for odd n a dummy node is added and its
    partner idles). Matching ``k`` becomes rounds ``2k+1`` (``a -> b``) and
    ``2k+2`` (``b -> a``), each message carrying the sender's own item. Every
    node is busy in every round when n is even, giving ``R = 2(n-1)``, the H1
    bound (n(n-1) transfers, n/2 per round); for odd n one node idles per
    matching, ``R = 2n``, again the bound.
    """
    n = _check_n(n)
    a, b = _round_robin(n)
    k = np.broadcast_to(np.arange(a.shape[0])[:, None], a.shape)
    rnd = np.concatenate([2 * k + 1, 2 * k + 2], axis=1).ravel()
    src = np.concatenate([a, b], axis=1).ravel()
    dst = np.concatenate([b, a], axis=1).ravel()
    return Schedule.unicast(rnd, src, dst, src, rounds=2 * a.shape[0], topology=complete(n),
                            model="H1", p=1, origin=_origin(
                                "one-factor", f"n={n}; round-robin 1-factorisation of K_n "
                                "(circle method), each matching as two one-way rounds"))


def cyclic_shift(n: int) -> Schedule:
    """Gossip on crossbar ports in ``n - 1`` rounds.

    Round ``r`` (1..n-1): node ``i`` sends its own item to ``(i + r) mod n``.
    Each node sends one and receives one message per round, so ``R = n - 1``,
    the port bound (every node must receive n-1 items, one per round). This is
    the all-to-all personalised exchange of a crossbar ("shift" or
    "rotation" schedule, e.g. Bokhari 1991).
    """
    n = _check_n(n)
    r = np.repeat(np.arange(1, n), n)
    i = np.tile(np.arange(n), n - 1)
    return Schedule.unicast(r, i, (i + r) % n, i, rounds=n - 1, topology=complete(n),
                            model="port", p=1, origin=_origin(
                                "cyclic-shift", f"n={n}; round r: node i sends to i+r mod n"))


def call_schedule(n: int, rounds: list[list[tuple[int, int]]], *, topo=None, algorithm: str,
                  source: str) -> Schedule:
    """An F1 schedule from rounds of calls; each side sends what the other lacks.

    A call whose both sides have nothing new still appears, as one empty
    message, so that the call count is the number of pairs listed.
    """
    know = [1 << v for v in range(n)]
    out = []
    for pairs in rounds:
        msgs, new = [], {}
        for u, v in pairs:
            uv, vu = know[u] & ~know[v], know[v] & ~know[u]
            if uv:
                msgs.append(Message(u, (v,), _bits(uv)))
            if vu:
                msgs.append(Message(v, (u,), _bits(vu)))
            if not (uv or vu):
                msgs.append(Message(u, (v,), ()))
            new[u] = new[v] = know[u] | know[v]
        for v, k in new.items():
            know[v] = k
        out.append(msgs)
    return Schedule.from_rounds(out, topology=topo or complete(n), model="F1", p=None,
                                origin=_origin(algorithm, source))


def _bits(x: int) -> tuple[int, ...]:
    """The set bits of ``x``, lowest first."""
    raw = np.frombuffer(x.to_bytes((x.bit_length() + 7) // 8, "little"), dtype=np.uint8)
    return tuple(np.flatnonzero(np.unpackbits(raw, bitorder="little")).tolist())


def knodel_rounds(n: int) -> list[list[tuple[int, int]]]:
    """Knodel's gossip scheme for even n: ``ceil(log2 n)`` rounds of calls.

    Round ``t`` uses dimension ``t`` of the Knodel graph (ids of the
    topology ``knodel``): ``j - n/2 + (j + 2^t - 1) mod n/2``. For ``n = 2^k``
    it is the hypercube's recursive doubling up to a relabelling.
    """
    half, d = n // 2, math.ceil(math.log2(n))
    return [[(j, half + (j + (1 << t) - 1) % half) for j in range(half)] for t in range(d)]


def _odd_rounds(n: int) -> list[list[tuple[int, int]]]:
    """Odd n: Knodel's scheme for n+1 nodes without node n, then a repair round.

    Knodel's scheme gossips among n+1 nodes in ``ceil(log2(n+1)) =
    ceil(log2 n)`` rounds (n odd). Dropping node n's calls loses only what
    that node would have relayed, so nodes end short of a few items; one more
    round pairs each of them with a node whose knowledge fills the gap
    (first fit in id order, else a complete node). The result is verified
    by the caller's tests; if the repair round cannot be matched (it always
    can for odd n < 1100, checked) node n-1 instead calls node 0 before and
    after the scheme on n-1 nodes, one round more.
    """
    rounds = [[(u, v) for u, v in r if n not in (u, v)] for r in knodel_rounds(n + 1)]
    know = _knowledge(n, rounds)
    repair = _repair_round(n, know)
    if repair is not None:
        return rounds + [repair]
    m, x = n - 1, n - 1
    inner = knodel_rounds(m) if m > 2 else [[(0, 1)]]
    return [[(x, 0)]] + inner + [[(0, x)]]


def _repair_round(n: int, know: list[int]) -> list[tuple[int, int]] | None:
    """One matching after which every node knows everything, or None.

    Node ``v`` (in id order) takes the first node ``u`` whose knowledge
    completes its own, else a complete node. Nodes with equal gaps are
    interchangeable, so candidates are kept per gap: this is the first-fit
    greedy in id order, without its quadratic scan.
    """
    full = (1 << n) - 1
    need = [v for v in range(n) if know[v] != full]
    complete = [v for v in range(n) if know[v] == full]
    groups: dict[int, list[int]] = {}
    for v in need:
        groups.setdefault(full & ~know[v], []).append(v)
    heads = {gap: 0 for gap in groups}
    used: set[int] = set()
    pairs = []

    def take(gap: int, skip: int) -> int | None:
        members, i = groups[gap], heads[gap]
        while i < len(members) and (members[i] in used or members[i] == skip):
            if members[i] in used:
                heads[gap] = i + 1
            i += 1
        return members[i] if i < len(members) else None

    for v in need:
        if v in used:
            continue
        gap_v = full & ~know[v]
        best = None
        for gap in groups:
            if gap & gap_v:
                continue
            u = take(gap, v)
            if u is not None and (best is None or u < best):
                best = u
        if best is None:
            if not complete:
                return None
            best = complete.pop()
        used.update((v, best))
        pairs.append((v, best))
    return pairs


def _knowledge(n: int, rounds: list[list[tuple[int, int]]]) -> list[int]:
    know = [1 << v for v in range(n)]
    for pairs in rounds:
        for u, v in pairs:
            know[u] = know[v] = know[u] | know[v]
    return know


def recursive_doubling(n: int, topology_name: str = "complete") -> Schedule:
    """Telephone gossip (F1, unlimited packets) in about ``log2 n`` rounds.

    * ``n = 2^k`` (complete graph or hypercube): round ``t`` pairs ``i`` with
      ``i xor 2^t`` and both exchange everything (recursive doubling; the
      classic optimal scheme, Bavelas 1950s / Knodel 1975): ``R = k``.
    * other even n (complete graph): Knodel's scheme (:func:`knodel_rounds`),
      ``R = ceil(log2 n)``, the bound.
    * odd n (complete graph): Knodel's scheme for n+1 nodes with node n
      left out, then one repair round (:func:`_odd_rounds`):
      ``R = ceil(log2 n) + 1``, the bound (checked for every odd n < 1100).
    """
    n = _check_n(n)
    if topology_name == "hypercube":
        if n & (n - 1):
            raise ValueError(f"hypercube needs n = 2^k, got n={n}")
        k = n.bit_length() - 1
        rounds = [[(i, i ^ (1 << t)) for i in range(n) if i < i ^ (1 << t)] for t in range(k)]
        return call_schedule(n, rounds, topo=topology("hypercube", k=k),
                             algorithm="recursive-doubling",
                             source=f"n={n}; hypercube dimension t in round t")
    if topology_name != "complete":
        raise ValueError(f"recursive-doubling runs on complete or hypercube, not {topology_name!r}")
    if n & (n - 1) == 0:
        k = n.bit_length() - 1
        rounds = [[(i, i ^ (1 << t)) for i in range(n) if i < i ^ (1 << t)] for t in range(k)]
        how = "recursive doubling: round t pairs i with i xor 2^t"
    elif n % 2 == 0:
        rounds, how = knodel_rounds(n), "Knodel's scheme: round t uses Knodel dimension t"
    else:
        rounds, how = _odd_rounds(n), ("odd n: Knodel's scheme for n+1 nodes without node n, "
                                       "then one repair round")
    return call_schedule(n, rounds, algorithm="recursive-doubling", source=f"n={n}; {how}")


def min_calls(n: int) -> Schedule:
    """Telephone gossip with the minimum number of calls, ``2n - 4`` (n >= 4).

    The classic construction (Tijdeman 1971; Baker and Shostak 1972; Hajnal,
    Milner and Szemeredi 1972): every node outside a 4-node core {0,1,2,3}
    calls a core node (``n - 4`` calls), the core gossips in 4 calls
    (0-1, 2-3, then 0-2, 1-3), then every outside node calls its core node
    again (``n - 4`` calls). Extra nodes are spread over the core so that each
    round is a matching. ``n = 2`` takes 1 call, ``n = 3`` takes 3.
    """
    n = _check_n(n)
    if n == 2:
        rounds = [[(0, 1)]]
    elif n == 3:
        rounds = [[(0, 1)], [(1, 2)], [(0, 1)]]
    else:
        waves = [[(v, (v - 4) % 4) for v in range(w, min(w + 4, n))] for w in range(4, n, 4)]
        rounds = waves + [[(0, 1), (2, 3)], [(0, 2), (1, 3)]] + waves[::-1]
    return call_schedule(n, rounds, algorithm="min-calls",
                         source=f"n={n}; 4-node core, outside nodes call a core node before "
                         "and after the core gossips")


def _origin(algorithm: str, source: str) -> dict:
    return {"algorithm": algorithm, "source": source}


#: Generator per command-line name.
GENERATORS = {"one-factor": one_factor, "cyclic-shift": cyclic_shift,
              "recursive-doubling": recursive_doubling, "min-calls": min_calls}
