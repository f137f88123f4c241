"""Gossip on paths and cycles under ``Hstar`` with packets of ``p`` tokens.

The constructions of *Optimal gossiping in paths and cycles* (half-duplex
all-port model H*, packet size p; Table 1 of the paper). In every round each
edge carries at most one packet in one direction; a node may use all its
edges at once.

============  =====================  ==========================
case          N even                 N odd
============  =====================  ==========================
path, p = 1   3N/2 - 1               3(N-1)/2
cycle, p = 1  N - 1                  N - 1
path, p > 1   N                      N - 1
cycle, p > 1  N/2 + 1                (N+1)/2 + 1
============  =====================  ==========================

The rows for ``p > 1`` are reached with packets of two tokens; the paper's
lower bounds for them (Theorems 3.1, 3.3, 3.4, 3.5) hold for every ``p``, so
larger packets cannot help: for ``p > 2`` (or unlimited) the generators
return the ``p = 2`` schedule, which never carries more than two tokens.

Every schedule is written in closed form (each token's "wire" through the
rounds x edges mesh of the paper), so N = 4096 takes a fraction of a second.
Where the paper's text leaves a choice open, the decision is documented at
the function that makes it.
"""

from __future__ import annotations

import numpy as np

from ..schedules.ir import Schedule
from ..schedules.topologies import topology

__all__ = ["path_gossip", "cycle_gossip", "table1_rounds", "GENERATORS"]



def table1_rounds(shape: str, n: int, p: int | None) -> int:
    """Table 1 of the paper: the optimal number of rounds for ``shape``.

    Parameters
    ----------
    shape : {"path", "cycle"}
    n : int
        Number of nodes, at least 3.
    p : int or None
        Packet size; None is unlimited (the ``p > 1`` row).
    """
    big = p is None or p > 1
    even = n % 2 == 0
    if shape == "path":
        if big:
            return n if even else n - 1
        return 3 * n // 2 - 1 if even else 3 * (n - 1) // 2
    if shape == "cycle":
        if big:
            return n // 2 + 1 if even else (n + 1) // 2 + 1
        return n - 1
    raise ValueError(f"shape must be 'path' or 'cycle', got {shape!r}")


def _check(n: int, p: int | None) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 3:
        raise ValueError(f"n must be an integer >= 3, got {n!r}")
    if p is not None and (isinstance(p, bool) or not isinstance(p, int) or p < 1):
        raise ValueError(f"p must be a positive integer or None (unlimited), got {p!r}")


def _spans(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``(i, x)`` with ``lo[i] <= x <= hi[i]`` (empty spans skipped)."""
    lengths = np.maximum(hi - lo + 1, 0)
    idx = np.repeat(np.arange(len(lo)), lengths)
    starts = np.cumsum(lengths) - lengths
    x = lo[idx] + np.arange(int(lengths.sum())) - starts[idx]
    return idx, x


def _schedule(n: int, shape: str, p: int | None, parts: list, algorithm: str,
              source: str) -> Schedule:
    """Assemble ``parts`` of ``(round, src, dst, first item, second item or -2)``."""
    rnd, src, dst, a, b = (np.concatenate([np.asarray(q[i], dtype=np.int64) for q in parts])
                           for i in range(5))
    # a stable sort on the round alone keeps the construction's order within
    # a round (deterministic); 16-bit keys let NumPy use its radix sort.
    order = np.argsort(rnd.astype(np.uint16 if rnd.max() < 1 << 16 else np.int64), kind="stable")
    rnd, src, dst, a, b = rnd[order], src[order], dst[order], a[order], b[order]
    two = b != -2
    item_len = 1 + two
    item_ptr = np.zeros(len(rnd) + 1, dtype=np.int64)
    np.cumsum(item_len, out=item_ptr[1:])
    items = np.empty(int(item_ptr[-1]), dtype=np.int64)
    items[item_ptr[:-1]] = a
    items[item_ptr[:-1][two] + 1] = b[two]
    rounds = int(rnd.max())
    round_ptr = np.zeros(rounds + 1, dtype=np.int64)
    np.cumsum(np.bincount(rnd, minlength=rounds + 1)[1:], out=round_ptr[1:])
    return Schedule(topology=topology(shape, n=n), model="Hstar", p=p, round_ptr=round_ptr,
                    src=src, dst_ptr=np.arange(len(rnd) + 1, dtype=np.int64), dst=dst,
                    item_ptr=item_ptr, items=items,
                    origin={"algorithm": algorithm, "source": f"n={n}, p={p}; {source}"})


def _one(r, s, d, item) -> tuple:
    return r, s, d, item, np.full(len(r), -2)


def _path_small(n: int) -> list:
    """Algorithm SmallPacket-OddPath (section 2.2), for odd and even N.

    Centre ``m = N // 2`` (the paper's choice for both parities). Edge ``x``
    joins ``x`` and ``x+1``. The wires, with ``R = N - 1 - m`` right-hand nodes:

    * towards the centre: left token ``j`` crosses edge ``x`` (``j <= x < m``)
      in round ``x - j + 1``; right token ``j`` crosses edge ``x``
      (``m <= x < j``) in round ``j - x`` -- the nodes with a non-empty R
      (L) set send first, as the paper's rule says;
    * away from home: left token ``j`` crosses edge ``x < j`` leftwards in
      round ``2j - x``, right token ``j`` edge ``x >= j`` rightwards in round
      ``N - 2j + x`` (the edges free up one round apart, so the tokens
      travel with gaps but never collide);
    * through the centre: the centre forwards the left tokens rightwards in
      arrival order from round ``R + 1`` (token ``j`` at ``R + m - j``) and the
      right tokens leftwards from round ``m + 1`` (token ``j`` at round ``j``);
    * the centre's own token goes last, in round ``N`` on both sides, as in
      the proof of Theorem 2.3 ("finally ... v_m broadcasts its token").

    The paper leaves open what the centre does and in which order it relays;
    the choices above keep both centre edges busy in every round 1..N, which
    Theorem 2.2's proof shows is necessary, and give ``3(N-1)/2`` (odd) and
    ``3N/2 - 1`` (even) rounds.
    """
    m = n // 2
    right = n - 1 - m
    left_j = np.arange(m)
    right_j = np.arange(m + 1, n)
    parts = []
    j, x = _spans(left_j, np.full(m, m - 1))                       # left -> centre
    parts.append(_one(x - j + 1, x, x + 1, j))
    i, x = _spans(np.full(right, m), right_j - 1)                   # right -> centre
    j = right_j[i]
    parts.append(_one(j - x, x + 1, x, j))
    j, x = _spans(np.full(m, m), np.full(m, n - 2))                 # left tokens past centre
    parts.append(_one(right - j + x, x, x + 1, j))
    i, x = _spans(np.zeros(right, dtype=np.int64), np.full(right, m - 1))
    j = right_j[i]                                                   # right tokens past centre
    parts.append(_one(j + m - 1 - x, x + 1, x, j))
    j, x = _spans(np.zeros(m, dtype=np.int64), left_j - 1)           # left tokens leftwards
    parts.append(_one(2 * j - x, x + 1, x, j))
    i, x = _spans(right_j, np.full(right, n - 2))                    # right tokens rightwards
    j = right_j[i]
    parts.append(_one(n - 2 * j + x, x, x + 1, j))
    x = np.arange(m)                                                 # the centre's token
    parts.append(_one(n + m - 1 - x, x + 1, x, np.full(m, m)))
    x = np.arange(m, n - 1)
    parts.append(_one(n + x - m, x, x + 1, np.full(len(x), m)))
    return parts


def _path_large(n: int) -> list:
    """Algorithm LargePacket-OddPath (section 3) and its even-N extension.

    Round 1: every even node sends its token to both neighbours. From round 2
    every odd node ``i`` sends ``{i-1, i}`` rightwards and ``{i, i+1}``
    leftwards, and these two-token packets are forwarded one edge per round to
    the ends of the path. Two such packets never meet on an edge (their
    senders are both odd, so they would have to meet at a half-integer
    edge). For even N the paper pretends a node ``v_N`` beyond the end; we
    drop its token and every packet to it, so ``v_{N-1}`` (odd) starts in
    round 2 with ``{N-1}`` alone -- the paper's "v_{N-1} delays sending out
    the contents of L_{N-1} until the second round".
    """
    parts = []
    even = np.arange(0, n, 2)
    e = even[even > 0]
    parts.append(_one(np.ones(len(e)), e, e - 1, e))
    e = even[even < n - 1]
    parts.append(_one(np.ones(len(e)), e, e + 1, e))
    odd = np.arange(1, n, 2)
    i, x = _spans(odd, np.full(len(odd), n - 2))                     # {i-1, i} rightwards
    s = odd[i]
    parts.append((2 + x - s, x, x + 1, s - 1, s))
    i, x = _spans(np.zeros(len(odd), dtype=np.int64), odd - 1)      # {i, i+1} leftwards
    s = odd[i]
    partner = np.where(s + 1 < n, s + 1, -2)
    parts.append((2 + s - 1 - x, x + 1, x, s, partner))
    return parts


def path_gossip(n: int, p: int | None = 1) -> Schedule:
    """Gossip on the path ``v_0 - ... - v_{N-1}`` under H* with packet size ``p``.

    ``p = 1``: Algorithm SmallPacket-OddPath (section 2.2 of *Optimal
    gossiping in paths and cycles*), ``3(N-1)/2`` rounds for odd N and
    ``3N/2 - 1`` for even N (Theorems 2.2, 2.3). ``p >= 2``: Algorithm
    LargePacket-OddPath (section 3), ``N - 1`` rounds for odd N, ``N`` for
    even N (Theorems 3.1-3.3); its packets hold at most two tokens.

    Parameters
    ----------
    n : int
        Number of nodes, at least 3.
    p : int or None
        Packet size; None is unlimited.
    """
    _check(n, p)
    if p == 1:
        return _schedule(n, "path", p, _path_small(n), "path-gossip",
                         "SmallPacket path algorithm, centre N//2 relays last (section 2.2)")
    return _schedule(n, "path", p, _path_large(n), "path-gossip",
                     "LargePacket path algorithm, two-token packets (section 3)")


def _cycle_even_large(n: int) -> list:
    """Even cycle, ``p >= 2`` (Fig. 8 of the paper), ``N/2 + 1`` rounds.

    With ``m = N/2``: round 1 every even node sends its token both ways; from
    round 2 odd node ``i`` sends ``{i-1, i}`` rightwards (``i-1`` drops out
    after reaching ``i+m-2``, ``i`` goes on alone to ``i+m``) and ``{i, i+1}``
    leftwards for ``m - 1`` edges. Even nodes thus use a left wire of length
    m and a right wire of length m-1, odd nodes the reverse (the paper's
    description of Fig. 8, generalised from N = 6).
    """
    m = n // 2
    parts = []
    even = np.arange(0, n, 2)
    parts.append(_one(np.ones(len(even)), even, (even - 1) % n, even))
    parts.append(_one(np.ones(len(even)), even, (even + 1) % n, even))
    odd = np.arange(1, n, 2)
    i, d = _spans(np.zeros(len(odd), dtype=np.int64), np.full(len(odd), m - 1))
    s = odd[i]
    partner = np.where(d <= m - 3, (s - 1) % n, -2)
    parts.append((2 + d, (s + d) % n, (s + d + 1) % n, s, partner))
    i, d = _spans(np.zeros(len(odd), dtype=np.int64), np.full(len(odd), m - 2))
    s = odd[i]
    parts.append((2 + d, (s - d) % n, (s - d - 1) % n, s, (s + 1) % n))
    return parts


def _cycle_odd_large(n: int) -> list:
    """Odd cycle, ``p >= 2`` (Fig. 10): the even cycle on ``N + 1`` nodes, ``v_0`` plays ``v_N``.

    The imaginary node ``v_N`` sits between ``v_{N-1}`` and ``v_0``; ``v_0``
    plays it, so what ``v_N`` would send to ``v_{N-1}`` leaves ``v_0`` on the
    real edge in the same round (one round later than ``v_0``'s own packets:
    the paper's "v_0 delays all tokens to be sent to the left by one round"),
    packets between ``v_N`` and ``v_0`` stay inside ``v_0`` and token ``N`` does
    not exist. ``v_0`` knows at least what ``v_N`` would, so every send is
    legal, and the rounds are those of the even cycle: ``(N+1)/2 + 1``.
    """
    merged = []
    for r, s, d, a, b in _cycle_even_large(n + 1):
        r, s, d, a, b = (np.asarray(v, dtype=np.int64) for v in (r, s, d, a, b))
        s, d = s % n, d % n                           # v_N -> v_0
        a, b = np.where(a == n, b, a), np.where((a == n) | (b == n), -2, b)
        keep = (s != d) & (a != -2)
        merged.append((r[keep], s[keep], d[keep], a[keep], b[keep]))
    return merged


def cycle_gossip(n: int, p: int | None = 1) -> Schedule:
    """Gossip on the cycle ``v_0 ... v_{N-1} v_0`` under H* with packet size ``p``.

    ``p = 1``: every node sends to its left neighbour in every round the
    token it received in the previous round (its own first): ``N - 1``
    rounds (Theorem 2.1). ``p >= 2``: the paper's Fig. 8 (even N, ``N/2 + 1``
    rounds, Theorem 3.4) and Fig. 10 (odd N via an imaginary ``(N+1)``-th
    node, ``(N+1)/2 + 1`` rounds, Theorem 3.5); packets hold at most two
    tokens. For N = 3 the ``p >= 2`` algorithm takes Table 1's 3 rounds, but
    Theorem 3.5 needs N > 3: the triangle gets the ``p = 1`` schedule, 2
    rounds, optimal (every node must receive 2 tokens on 2 in-edges, and
    nobody knows another's token before round 2), with Table 1's 3 named in
    its source. The parameters are those of :func:`path_gossip`.
    """
    _check(n, p)
    if p == 1 or n == 3:
        r = np.repeat(np.arange(1, n), n)
        i = np.tile(np.arange(n), n - 1)
        note = "" if p == 1 else (f"; optimal {n - 1} rounds, Table 1 says "
                                  f"{table1_rounds('cycle', n, p)} (Theorem 3.5 needs N > 3)")
        return _schedule(n, "cycle", p, [_one(r, i, (i - 1) % n, (i + r - 1) % n)],
                         "cycle-gossip", "every node forwards to its left neighbour "
                         f"(Theorem 2.1){note}")
    parts = _cycle_even_large(n) if n % 2 == 0 else _cycle_odd_large(n)
    how = ("two-token packets, even nodes start in round 1, odd in round 2 (Fig. 8)"
           if n % 2 == 0 else "even cycle on N+1 nodes, v_0 plays the imaginary v_N (Fig. 10)")
    return _schedule(n, "cycle", p, parts, "cycle-gossip", how)


#: Generator per command-line name: ``f(n, p)``.
GENERATORS = {"path-gossip": path_gossip, "cycle-gossip": cycle_gossip}
