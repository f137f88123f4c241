"""Polling with combinable responses (H1) on complete graphs and hypercubes.

The constructions of Czygrinow, Karonski and Sunderam, *The polling
primitive for computer networks*. The root's question ``"q"`` reaches every
node, every node's response reaches the root; a node speaks only after it
heard the question; one message per node per round; responses combine.

* :func:`polling_complete` - ``K_{2^k}``, the algorithm after Proposition 3:
  two broadcasting trees ``B(k-2)`` (question out, responses in) whose leaves
  are joined by paths of four edges, plus ``r = ceil((2^(k-3)+1)/3)`` paths
  through three new vertices; ``2k`` rounds, ``2^k + 2^(k-3) + r - 1``
  messages.
* :func:`polling_general` - ``K_N`` for any N: the same shape, trees
  ``B(s)`` and paths of ``c`` edges with ``2s + c`` equal to Proposition 2's
  round bound, choosing the ``(s, c)`` with fewest messages.
* :func:`polling_hypercube` - ``Q_k``, the algorithm of Proposition 8 (groups
  A, B, C, L, F, G of the paper's Figures 6-7); ``2k`` rounds,
  ``2^k + 3 * 2^(k-4) - 1`` messages.

Every message carries the question and every response its sender holds.
"""

from __future__ import annotations

import math

import numpy as np

from ..schedules.ir import Q, Message, Schedule, complete
from ..schedules.topologies import topology

__all__ = ["polling_complete", "polling_general", "polling_hypercube", "prop2_rounds",
           "prop3_messages", "prop3_stated", "prop8_messages", "cor6_bound", "family_plan",
           "GENERATORS"]

_PAPER = "Czygrinow, Karonski, Sunderam: The polling primitive for computer networks"


def prop2_rounds(n: int) -> int:
    """Proposition 2 (the round lower bound) for polling ``K_N``, ``N = n``.

    With ``k = ceil(log2 N)``: ``2k`` rounds if ``N = 2^k``, ``2k - 1`` if
    ``N >= 3 * 2^(k-2)``, ``2k - 2`` otherwise.
    """
    if n < 2:
        return 0
    k = (n - 1).bit_length()
    if n == 1 << k:
        return 2 * k
    return 2 * k - 1 if 4 * n >= 3 << k else 2 * k - 2


def prop3_messages(k: int) -> int:
    """Messages of the algorithm after Proposition 3 (and the proof's bound): ``... + r - 1``."""
    return 2 ** k + 2 ** (k - 3) + -(-(2 ** (k - 3) + 1) // 3) - 1


def prop3_stated(k: int) -> int:
    """Proposition 3 and the abstract as printed: ``... + ceil((2^(k-3)+1)/3) - 2``."""
    return prop3_messages(k) - 1


def prop8_messages(k: int) -> int:
    """Proposition 8: the hypercube algorithm sends ``2^k + 3 * 2^(k-4) - 1`` messages (k >= 4)."""
    if k < 4:
        raise ValueError(f"Proposition 8's algorithm needs k >= 4, got {k}")
    return 2 ** k + 3 * 2 ** k // 16 - 1


def cor6_bound(k: int) -> int:
    """Corollary 6 (stated for even k): ``ceil(2^k + 2^(k-1)/3 + sqrt(2^k)/4 - 4/3)``."""
    return math.ceil(2 ** k + 2 ** (k - 1) / 3 + math.sqrt(2 ** k) / 4 - 4 / 3 - 1e-9)


def _check_k(k: int, minimum: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not minimum <= k <= 16:
        raise ValueError(f"k must be an integer in {minimum}..16, got {k!r}")
    return k


def _schedule(n: int, topo, calls: list[tuple[int, int, int]], algorithm: str,
              source: str) -> Schedule:
    """Messages ``(round, src, dst)`` -> a polling schedule carrying all a sender holds.

    Knowledge is tracked as sets of responses, snapshot at the start of each
    round, because what arrives in round r is usable from round r+1.
    """
    rounds = max(r for r, _, _ in calls)
    by_round: list[list[tuple[int, int]]] = [[] for _ in range(rounds)]
    for r, s, d in calls:
        by_round[r - 1].append((s, d))
    held: dict[int, set[int]] = {0: {0}}
    out = []
    for pairs in by_round:
        msgs = [Message(s, (d,), (Q, *sorted(held[s]))) for s, d in sorted(pairs)]
        for m in msgs:
            d = m.dst[0]
            held.setdefault(d, {d}).update(m.items[1:])
        out.append(msgs)
    return Schedule.from_rounds(out, topology=topo, model="H1", p=None, primitive="polling",
                                root=0, origin={"algorithm": algorithm, "source": source})


def family_plan(n: int, rounds: int | None = None) -> tuple[int, int, int] | None:
    """The cheapest ``(s, c, messages)`` polling ``K_n`` in ``rounds`` rounds, or None.

    The family: a broadcasting tree ``B(s)`` (``2^s`` nodes, question out in
    rounds ``1..s``), its mirror image for the responses (rounds
    ``s+c+1..2s+c``, sharing the root), and paths of at most ``c`` edges in
    rounds ``s+1..s+c`` from a node of the first tree to its twin in the
    second, through at most ``c - 1`` new nodes. Every leaf needs a path; a
    path through ``j`` new nodes costs ``j + 1`` messages, so the count is
    ``2(2^s - 1) + E + paths`` with ``E = n - 2^(s+1) + 1`` new nodes.
    ``rounds`` defaults to Proposition 2's bound.
    """
    rounds = prop2_rounds(n) if rounds is None else rounds
    best = None
    for s in range((rounds - 1) // 2 + 1):
        c = rounds - 2 * s
        extra = n - (1 << (s + 1)) + 1
        leaves = 1 << max(s - 1, 0)
        if extra < 0 or c < 1 or (extra and c == 1):
            continue
        paths = max(leaves, -(-extra // (c - 1)) if extra else 0)
        if paths > 1 << s:
            continue
        cost = 2 * ((1 << s) - 1) + extra + paths
        if best is None or cost < best[2]:
            best = (s, c, cost)
    return best


def _family_calls(n: int, s: int, c: int) -> list[tuple[int, int, int]]:
    """The messages of :func:`family_plan`'s shape with trees ``B(s)`` and paths of ``c`` edges."""
    rounds = 2 * s + c
    calls, born, nxt = [], {0: 0}, 1
    for t in range(1, s + 1):                        # B(s): every holder of q tells a new node
        for u in sorted(born):
            calls.append((t, u, nxt))
            born[nxt] = t
            nxt += 1
    tree = list(calls)
    twin = {0: 0}
    for u in sorted(born):
        if u:
            twin[u] = nxt
            nxt += 1
    for t, u, v in tree:                             # the mirror tree gathers the responses
        calls.append((rounds + 1 - t, twin[v], twin[u]))
    leaves = [u for u in sorted(born) if born[u] == s]
    others = [u for u in sorted(born) if born[u] != s]
    extra = n - nxt
    paths = max(len(leaves), -(-extra // (c - 1)) if extra else 0)
    if extra < 0 or paths > len(born) or (extra and c == 1):
        raise ValueError(f"K_{n} cannot be polled by trees B({s}) and paths of {c} edges")
    for u in (leaves + others)[:paths]:              # leaves must start a path
        j = min(c - 1, extra)
        extra -= j
        hops = [u] + list(range(nxt, nxt + j)) + [twin[u]]
        nxt += j
        calls += [(s + 1 + i, a, b) for i, (a, b) in enumerate(zip(hops, hops[1:]))]
    return calls


def polling_complete(k: int) -> Schedule:
    """Polling ``K_{2^k}`` in ``2k`` rounds: the algorithm after Proposition 3.

    Two copies of ``B(k-2)`` share the root; the leaves of the first are
    joined to the corresponding leaves of the second by paths of four edges
    (rounds ``k-1..k+2``), and the remaining ``2^(k-3) + 1`` nodes lie on
    ``r = ceil((2^(k-3)+1)/3)`` paths through three new nodes each (the last
    one through fewer when 3 does not divide) that start at non-leaf nodes of
    the first tree (the paper's "level smaller than n-1") and end at their
    twins. Messages: ``2^k + 2^(k-3) + r - 1`` (:func:`prop3_messages`).
    """
    k = _check_k(k, 3)
    n = 1 << k
    return _schedule(n, complete(n), _family_calls(n, k - 2, 4), "polling-complete",
                     f"k={k}, N={n}; {_PAPER}, algorithm after Proposition 3: two B(k-2), "
                     "leaf paths of four edges, paths of three new vertices")


def polling_general(n: int) -> Schedule:
    """Polling ``K_N`` for any ``N >= 2`` in Proposition 2's number of rounds.

    The shape of :func:`polling_complete` with trees ``B(s)`` and paths of
    ``c`` edges, ``2s + c`` = :func:`prop2_rounds`; :func:`family_plan` picks
    the ``(s, c)`` with fewest messages. For ``N = 2^k`` it sends as many
    messages as the paper's algorithm.
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 1 << 16:
        raise ValueError(f"n must be an integer in 2..65536, got {n!r}")
    s, c, _ = family_plan(n)
    return _schedule(n, complete(n), _family_calls(n, s, c), "polling-general",
                     f"N={n}; trees B({s}) out and back, paths of up to {c} edges "
                     f"(the shape of the algorithm after Proposition 3 of {_PAPER})")


def _cube_tree(root: int, dims: list[int], first: int) -> list[tuple[int, int, int]]:
    """Broadcasting tree in a subcube: round ``first + t`` every holder flips ``dims[t]``."""
    calls, have = [], np.array([root])
    for t, d in enumerate(dims):
        new = have ^ (1 << d)
        calls += [(first + t, int(u), int(v)) for u, v in zip(have, new)]
        have = np.concatenate([have, new])
    return calls


def _mirror(calls: list[tuple[int, int, int]], total: int) -> list[tuple[int, int, int]]:
    """The same tree run backwards: round ``t`` becomes ``total + 1 - t``, edges reversed."""
    return [(total + 1 - t, v, u) for t, u, v in calls]


# Q_3 is below the paper's construction (it needs four low bits); this
# 9-message schedule, found by the exact search of polling_search, is optimal.
_Q3 = [(1, 0, 4), (2, 0, 1), (2, 4, 5), (3, 1, 3), (3, 5, 7), (4, 3, 2), (4, 7, 6), (5, 6, 2),
       (6, 2, 0)]


def polling_hypercube(k: int) -> Schedule:
    """Polling the hypercube ``Q_k`` (root 0) in ``2k`` rounds: Proposition 8's algorithm.

    Bits are numbered from 0 (least significant); ``x`` is any high part.

    * A: the root tells ``...0001`` in round 1, which broadcasts over
      ``x0?1`` (dimensions 3..k-1, then 1) in rounds 2..k-1; leaves ``x011``.
    * B: each A leaf tells ``x111`` in round k, which tells the C leaf
      ``x101`` in round k+1.
    * C: the mirror tree over ``x10?`` gathers into ``...0100`` in rounds
      k+2..2k-1 (dimension 0 first); ``...0100`` answers the root in round 2k.
    * L: the root tells ``...0010`` in round 2, which broadcasts over
      ``x0?10`` (dimensions 4..k-1, then 2) in rounds 3..k-1; leaves ``x0110``.
    * F: each L leaf tells ``x1110`` (F1) in round k, then ``x1010`` (F2) in
      k+1, which tells the G leaf ``x1000`` in round k+2.
    * G: the mirror tree over ``x?000`` gathers into the root in rounds
      k+3..2k-1 (dimension 3 first).

    The paper gives the groups, not the dimension orders or rounds; the
    choices above make every group a subcube and keep the root's four
    messages in rounds 1, 2, 2k-1 and 2k. Messages:
    ``2(2^(k-2) - 1) + 2 * 2^(k-3) + 2(2^(k-3) - 1) + 3 * 2^(k-4)`` tree,
    path and F edges plus the three root edges, ``2^k + 3 * 2^(k-4) - 1``
    (:func:`prop8_messages`; the paper's sum omits the three root edges but
    states the same total). ``k = 3`` uses an optimal 9-message schedule.
    """
    k = _check_k(k, 3)
    if k == 3:
        return _schedule(8, topology("hypercube", k=3), _Q3, "polling-hypercube",
                         "k=3; optimal 9-message schedule found by exact search (the "
                         f"construction of Proposition 8 of {_PAPER} needs k >= 4)")
    high = list(range(3, k))
    calls = [(1, 0, 0b1), (2, 0, 0b10), (2 * k, 0b100, 0)]
    a = _cube_tree(0b1, high + [1], 2)
    leaves_a = sorted({v for _, _, v in a if v & 0b111 == 0b011})
    calls += a
    for v in leaves_a:
        calls += [(k, v, v | 0b100), (k + 1, v | 0b100, v ^ 0b110)]
    calls += _mirror(_cube_tree(0b100, high + [0], 1), 2 * k - 1)
    higher = list(range(4, k))
    ell = _cube_tree(0b10, higher + [2], 3)
    calls += ell
    for v in sorted({v for _, _, v in ell if v & 0b1111 == 0b0110}):
        calls += [(k, v, v | 0b1000), (k + 1, v | 0b1000, v ^ 0b1100), (k + 2, v ^ 0b1100, v ^ 0b1110)]
    calls += _mirror(_cube_tree(0, higher + [3], 1), 2 * k - 1)
    return _schedule(1 << k, topology("hypercube", k=k), calls, "polling-hypercube",
                     f"k={k}; {_PAPER}, Proposition 8: groups A, B, C, L, F, G as subcubes")


#: Generator per command-line name.
GENERATORS = {"polling-complete": polling_complete, "polling-hypercube": polling_hypercube,
              "polling-general": polling_general}
