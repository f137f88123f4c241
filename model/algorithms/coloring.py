"""The colouring heuristic: gossip schedules as strings over a few matchings.

Beier and Sibeyn, "A Powerful Heuristic for Telephone Gossiping" (MPI-I-2000-1-002),
sections 6 and 8. A family of perfect (or maximal) matchings ``M_0, M_1, ...``
is fixed per graph; a colour string ``c_1 c_2 ... c_R`` is the schedule whose
round ``t`` is ``M_{c_t}``, every matched pair exchanging everything new
(telephone model ``F1``, unit cost). The matchings are the paper's section 8:

* ``star(k)``: ``M_c`` swaps entries 0 and ``c+1``; ``pancake(k)``: ``M_c``
  reverses the first ``c+2`` entries (``0 <= c <= k-2``);
* ``ccc(k)``: ``M_0``, ``M_1`` the even and odd cycle edges, ``M_2`` the cross
  edges; for odd k, ``M_0`` adds the cross edges at level ``k-1``, ``M_1`` those
  at level 0, and ``M_2`` takes the other cross edges plus the cycle edges
  ``(i, 0) - (i, k-1)``;
* ``butterfly(k)``: ``M_0``, ``M_1`` as for ccc, ``M_2``/``M_3`` the cross edges
  leaving even/odd levels; for odd k the cycle halves swap between the lower and
  upper half of the ``i`` range, with the wrap cross edges, and the remaining
  2-regular rest is 2-coloured from the cycle edges ``(i, k-1) - (i, 0)``
  (``M_2`` for ``i`` with bit ``k-2`` set), which fixes the cross edges;
* ``hypercube(k)``: ``M_c`` is dimension ``c``; any other topology: a greedy
  edge colouring, each class completed to a maximal matching.

:func:`color_schedule` expands a string (repeated periodically until the
primitive completes); :func:`search_colors` is the section 6 search: depth
``R`` nested loops with consecutive repeats pruned (``c_j != c_{j-1}``;
``c_j != c_{j-2}`` optionally), matchings moving fewer than ``f`` times the best round's
items filtered out, the survivors tried in order of items moved, and ``R``
raised from the telephone lower bound until a string completes.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import json_text
from ..schedules.chunks import join_ids
from ..schedules.ir import Schedule
from ..schedules.topologies import Topology
from . import matching

__all__ = ["matchings", "color_schedule", "color_rounds", "search_colors", "parse_colors",
           "sequence_schedule", "sequence_rounds"]


def _pairs_to_mate(n: int, pairs) -> np.ndarray:
    mate = np.full(n, -1, np.int64)
    for a, b in pairs:
        if mate[a] >= 0 or mate[b] >= 0 or a == b:
            raise AssertionError(f"not a matching at edge {a}-{b}")
        mate[a], mate[b] = b, a
    return mate


def _perm_matchings(k: int, pancake: bool) -> list[np.ndarray]:
    perms = list(itertools.permutations(range(k)))
    index = {p: i for i, p in enumerate(perms)}
    out = []
    for c in range(k - 1):
        mate = np.empty(len(perms), np.int64)
        for i, p in enumerate(perms):
            if pancake:
                q = tuple(reversed(p[:c + 2])) + p[c + 2:]
            else:
                q = list(p)
                q[0], q[c + 1] = q[c + 1], q[0]
                q = tuple(q)
            mate[i] = index[q]
        out.append(mate)
    return out


def _cube_matchings(k: int, butterfly: bool) -> list[np.ndarray]:
    n, top = k << k, 1 << k
    node = (lambda i, j: i * k + j)
    cross = (lambda i, j: (node(i, j), node(i ^ (1 << j), (j + 1) % k if butterfly else j)))
    cyc = (lambda i, j: (node(i, j), node(i, (j + 1) % k)))
    if k % 2 == 0:
        m0 = [cyc(i, j) for i in range(top) for j in range(0, k, 2)]
        m1 = [cyc(i, j) for i in range(top) for j in range(1, k, 2)]
        if not butterfly:
            return [_pairs_to_mate(n, m) for m in
                    (m0, m1, [cross(i, j) for i in range(top) for j in range(k) if i >> j & 1 == 0])]
        m2 = [cross(i, j) for i in range(top) for j in range(0, k, 2)]
        m3 = [cross(i, j) for i in range(top) for j in range(1, k, 2)]
        return [_pairs_to_mate(n, m) for m in (m0, m1, m2, m3)]
    half = 1 << (k - 1)
    low = [cyc(i, j) for j in range(0, k - 2, 2) for i in range(top)]   # (2j, 2j+1)
    high = [cyc(i, j) for j in range(1, k - 1, 2) for i in range(top)]  # (2j-1, 2j)
    if not butterfly:
        m0 = low + [cross(i, k - 1) for i in range(half)]
        m1 = high + [cross(i, 0) for i in range(top) if i & 1 == 0]
        m2 = ([cross(i, j) for j in range(1, k - 1) for i in range(top) if i >> j & 1 == 0]
              + [cyc(i, k - 1) for i in range(top)])
        return [_pairs_to_mate(n, m) for m in (m0, m1, m2)]
    m0 = ([e for e in low if e[0] // k < half] + [e for e in high if e[0] // k >= half]
          + [cross(i, k - 1) for i in range(half)])
    m1 = ([e for e in high if e[0] // k < half] + [e for e in low if e[0] // k >= half]
          + [cross(i, k - 1) for i in range(half, top)])
    rest = [cross(i, j) for i in range(top) for j in range(k - 1)]
    fixed = {cyc(i, k - 1): 2 if i >> (k - 2) & 1 else 3 for i in range(top)}
    m2, m3 = _two_colour(n, rest + list(fixed), fixed)
    return [_pairs_to_mate(n, m) for m in (m0, m1, m2, m3)]


def _two_colour(n: int, edges: list, fixed: dict) -> tuple[list, list]:
    """Split a 2-regular edge set into two perfect matchings, ``fixed`` edges given."""
    at: list[list[int]] = [[] for _ in range(n)]
    for e, (a, b) in enumerate(edges):
        at[a].append(e)
        at[b].append(e)
    colour = [fixed.get(e, 0) for e in edges]
    stack = [e for e in range(len(edges)) if colour[e]]
    while stack:  # alternate colours along every cycle of the rest
        e = stack.pop()
        for v in edges[e]:
            for f in at[v]:
                if f != e and not colour[f]:
                    colour[f] = 5 - colour[e]
                    stack.append(f)
    return ([edges[e] for e in range(len(edges)) if colour[e] == 2],
            [edges[e] for e in range(len(edges)) if colour[e] == 3])


def _greedy_colouring(topo: Topology) -> list[np.ndarray]:
    n, mates = topo.n, []
    rest = [tuple(e) for e in topo.edges.tolist()]
    while rest:
        mate, left = np.full(n, -1, np.int64), []
        for a, b in rest:
            if mate[a] < 0 and mate[b] < 0:
                mate[a], mate[b] = b, a
            else:
                left.append((a, b))
        for a, b in left:  # complete the class to a maximal matching
            if mate[a] < 0 and mate[b] < 0:
                mate[a], mate[b] = b, a
        mates.append(mate)
        rest = [(a, b) for a, b in left if mate[a] != b]
    return mates


def matchings(topo: Topology) -> list[np.ndarray]:
    """The matchings ``M_0, M_1, ...`` of ``topo`` as mate arrays (-1: unmatched)."""
    k = topo.params.get("k")
    if topo.name in ("star", "pancake"):
        return _perm_matchings(k, topo.name == "pancake")
    if topo.name in ("ccc", "butterfly") and k >= 3:
        return _cube_matchings(k, topo.name == "butterfly")
    if topo.name == "hypercube":
        v = np.arange(topo.n)
        return [v ^ (1 << c) for c in range(k)]
    if topo.edges is None:
        raise ValueError("the colouring heuristic needs an explicit edge set, not complete(n)")
    return _greedy_colouring(topo)


def parse_colors(text: str, count: int) -> list[int]:
    """Digits of a colour string, each below ``count`` (the paper's Table 6 notation)."""
    if not text or not text.isdigit():
        raise ValueError(f"colour string must be digits, got {json_text(text, 60)}")
    colours = [int(c) for c in text]
    if max(colours) >= count:
        raise ValueError(f"colour {max(colours)} is not a matching here (0..{count - 1})")
    return colours


def _popcount_rows(K: np.ndarray) -> np.ndarray:
    return np.bitwise_count(K).sum(axis=1)


def color_schedule(topo: Topology, colors: str, *, max_rounds: int | None = None) -> Schedule:
    """Expand a colour string into a unit-cost ``F1`` gossip schedule.

    The string is repeated periodically until every node knows every item;
    Table 6 strings complete within one period.

    Raises
    ------
    ValueError
        A bad string, or no completion within ``max_rounds`` (default
        ``4 * len(colors) + n``) rounds.
    """
    mates = matchings(topo)
    seq = parse_colors(colors, len(mates))
    return sequence_schedule(topo, [mates[c] for c in seq], max_rounds=max_rounds,
                             what=f"colours {json_text(colors, 60)}",
                             origin={"algorithm": "coloring", "source": "Beier and Sibeyn "
                                     f"colouring heuristic: colours {colors}"})


def sequence_schedule(topo: Topology, period: list[np.ndarray], *, origin: dict,
                      max_rounds: int | None = None, what: str = "the sequence") -> Schedule:
    """Unit-cost ``F1`` gossip: round ``t`` is the matching ``period[t mod len(period)]``
    (mate arrays), every matched pair exchanging everything new, until done: the rounds
    of :func:`sequence_rounds`, held.

    Raises
    ------
    ValueError
        No completion within ``max_rounds`` (default ``4 * len(period) + n``) rounds.
    """
    src, dst, sizes, items, round_ptr = [], [], [], [], [0]
    for s, _, d, ptr, ids in sequence_rounds(topo, period, max_rounds=max_rounds, what=what):
        src.append(s)
        dst.append(d)
        sizes.append(np.diff(ptr))
        items.append(ids)
        round_ptr.append(round_ptr[-1] + len(s))
        del s, d, ptr, ids
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, np.int64))
    size = cat(sizes)
    item_ptr = np.zeros(len(size) + 1, np.int64)
    np.cumsum(size, out=item_ptr[1:])
    ids = join_ids(items, int(item_ptr[-1]))  # filled as the int32 rounds are let go
    return Schedule(topology=topo, model="F1", p=None, round_ptr=np.array(round_ptr),
                    src=cat(src), dst_ptr=np.arange(len(size) + 1), dst=cat(dst),
                    item_ptr=item_ptr, items=ids, origin=origin)


def color_rounds(topo: Topology, colors: str, *, max_rounds: int | None = None):
    """The rounds of :func:`color_schedule` one at a time (:func:`sequence_rounds`)."""
    mates = matchings(topo)
    seq = parse_colors(colors, len(mates))
    return sequence_rounds(topo, [mates[c] for c in seq], max_rounds=max_rounds,
                           what=f"colours {json_text(colors, 60)}")


def sequence_rounds(topo: Topology, period: list[np.ndarray], *,
                    max_rounds: int | None = None, what: str = "the sequence"):
    """The rounds of :func:`sequence_schedule` as they are made, none kept.

    Yields per round ``(src, dst_ptr, dst, item_ptr, items)``: the messages' senders,
    receiver pointers (one receiver each), receivers, item pointers (all int64, from
    0) and item ids (int32, sorted within each message). What stays between rounds is the knowledge, ``n^2`` bits (300 MB
    on Table 5's ccc_12), so a 2.4-billion-id gossip can be validated round by
    round (:func:`~pipegossip.model.schedules.validate_rounds.validate_rounds`)
    without ever being held.

    Raises
    ------
    ValueError
        No completion within ``max_rounds`` (default ``4 * len(period) + n``) rounds.
    """
    n = topo.n
    # Knowledge as packed bits: Table 1's graphs have up to 10,240 nodes, and
    # each round reads every row twice.
    K = np.packbits(np.eye(n, dtype=bool), axis=1)
    known, limit = n, 4 * len(period) + n if max_rounds is None else max_rounds
    t = 0
    while known < n * n:
        if t >= limit:
            raise ValueError(f"{what} do not complete gossip within {limit} rounds")
        mate = period[t % len(period)]
        a = np.flatnonzero(mate > np.arange(n))
        s, d = np.concatenate([a, mate[a]]), np.concatenate([mate[a], a])
        # pairs in blocks of about BLOCK knowledge bits, ids int32: a late round
        # of a 22,528-node gossip moves ~n^2/2 items (int64 temporaries of GBs each);
        # counted first, so the round's ids are written in place (no second copy)
        step = max(1, matching.BLOCK // max(1, 8 * K.shape[1]))
        blocks = range(0, len(s), step)
        new = np.empty((len(s), K.shape[1]), np.uint8)
        size = np.zeros(len(s), np.int64)
        for i in blocks:
            blk = new[i:i + step]
            np.bitwise_and(K[s[i:i + step]], ~K[d[i:i + step]], out=blk)
            size[i:i + step] = np.bitwise_count(blk).sum(axis=1)
        keep = size > 0
        ptr = np.zeros(int(keep.sum()) + 1, np.int64)
        np.cumsum(size[keep], out=ptr[1:])
        ids = np.empty(int(ptr[-1]), np.int32)
        at = 0
        for i in blocks:
            blk = new[i:i + step]
            row, byte = np.nonzero(blk)  # row-major: items come out sorted per message
            row_bit, bit = np.nonzero(np.unpackbits(blk[row, byte][:, None], axis=1))
            got = len(bit)
            ids[at:at + got] = byte[row_bit].astype(np.int32) * 8 + bit.astype(np.int32)
            at += got
        K[d] |= new
        del new
        known += int(size.sum())
        t += 1
        yield s[keep], np.arange(len(ptr)), d[keep], ptr, ids
        del ids  # the consumer's: this frame must not hold it while the next is made


def search_colors(topo: Topology, *, max_rounds: int = 40, f: float = 0.5,
                  budget: int = 200_000, min_rounds: int | None = None,
                  skip_two_back: bool = False) -> str | None:
    """The shortest colour string the pruned search finds (section 6), or None.

    Parameters
    ----------
    max_rounds : int
        Largest ``R`` tried.
    f : float
        Only matchings moving at least ``f`` times the items of the best one
        are tried (the paper's most effective filter).
    budget : int
        Search nodes (matchings applied) per value of ``R``; the search is a
        heuristic, exhaustive only when the budget is not reached.
    min_rounds : int, optional
        First ``R`` tried (default: the telephone bound ``ceil(log2 n)``).
    skip_two_back : bool
        Also prune ``c_j == c_{j-2}``; the paper found it effective "for most
        classes", but Table 6's own strings for star, pancake and ccc break it.
    """
    mates = matchings(topo)
    n = topo.n
    words = (n + 63) // 64
    K0 = np.zeros((n, words), np.uint64)
    K0[np.arange(n), np.arange(n) // 64] = np.uint64(1) << (np.arange(n) % 64).astype(np.uint64)
    start = max(1, (n - 1).bit_length()) if min_rounds is None else min_rounds
    partner = [np.where(m >= 0, m, np.arange(n)) for m in mates]
    for R in range(start, max_rounds + 1):
        left = [budget]
        found = _dfs(K0, partner, R, [], f, left, n, skip_two_back)
        if found is not None:
            return "".join(map(str, found))
    return None


def _dfs(K, partner, R, prefix, f, left, n, two):
    depth = len(prefix)
    options = []
    for c, mate in enumerate(partner):
        if (depth and prefix[-1] == c) or (two and depth > 1 and prefix[-2] == c):
            continue
        new = K | K[mate]
        options.append((int(np.bitwise_count(new ^ K).sum()), c, new))
    if not options:
        return None
    best = max(o[0] for o in options)
    if best == 0:
        return None
    for moved, c, new in sorted(options, key=lambda o: (-o[0], o[1])):
        if moved < f * best or left[0] <= 0:
            continue
        left[0] -= 1
        counts = _popcount_rows(new)
        rest = R - depth - 1
        if int(counts.min()) == n:
            return prefix + [c]
        # No node knows more than twice the most any node knows a round before (its own
        # plus its partner's). The least-informed node may learn many items at once
        # from a well-informed partner, so its count is no bound.
        if rest == 0 or int(counts.max()) << rest < n:
            continue
        found = _dfs(new, partner, R, prefix + [c], f, left, n, two)
        if found is not None:
            return found
    return None
