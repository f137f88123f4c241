"""Sequential gossiping by short messages: telephone calls (F1) carrying at most p blocks.

The protocol of section 3 of Bermond, Gargano and Perennes, *Optimal
sequential gossiping by short messages* (Discrete Applied Mathematics 86,
1998), whose measure is the number of calls ``c(n, p)``. With
``n = hp + k``, ``2 <= k <= p + 1``:

1. *first phase*, ``n - 1`` calls: a chain of "hubs" ``p-1+d(k-1)`` hands
   windows of ``p`` blocks on, so every node ``i >= p`` knows ``[i-p, i]``
   (type 1) or ``[i-p, i+k-1]`` (type k, the hubs);
2. *second phase*, ``p`` calls: node ``n-1`` calls ``0..p-2`` and the
   nodes ``0..p-2`` are relabelled so that the property holds for all ``n``
   positions (type-k positions: ``i = p-1 (mod k-1)`` and ``n-1``);
3. *third phase*, ``floor((h-1)/2)`` steps of ``n`` calls: position ``i``
   calls ``i+p+1``; each side learns ``p`` new blocks per call;
4. *last phase*: ``h`` odd - the type-k nodes know everything and the
   type-1 nodes pair up (``ceil(m/2)`` calls for ``m`` of them); ``h`` even
   - the type-k nodes pair up, and every type-1 node makes two calls in a
   cycle "``t`` calls ``t+d``" over the type-1 nodes (``m`` calls).

Theorem 3.1: at most ``n^2/(2p) + (1 - k/(2p) - 1/(2(k-1))) n + p`` calls,
less than ``p`` above lower bound (2).

The paper's boundary cases are exact and built separately: ``p = 1`` needs
``n(n-1)/2`` calls (every pair calls once, a round-robin 1-factorisation),
``n <= p + 1`` is the unlimited case, ``2n - 4`` calls (the 4-node core of
:func:`~pipegossip.model.algorithms.limits.min_calls`).

Where the protocol is not optimal, :mod:`.short_messages_schemes` has
constructions with fewer calls (``2n - 4`` for ``4 <= n <= 2p - 1``,
``n^2/4`` for ``p = 2`` and even ``n``, the 3-cube for ``n = 8``, call
sequences the exact search found, such as ``c(8, 3) = 13``);
:func:`short_messages` takes whichever has the fewest calls.

Decisions where the text is loose (see docs/literature.md): a call's payload
is the paper's interval minus what the receiver already holds (never more);
the last phase's partners are chosen by the knowledge the phases actually
left, checking a few pairings (the paper's ``d = p - floor((p+1)/(k-1))``
first) and keeping the first that completes everybody. The protocol is a
*sequence* of calls; for speed and for the validator, calls are packed
into rounds as early as their two nodes allow (a call waits only for the
earlier calls of its own two nodes, so every node sees the same sequence
of calls and learns the same blocks): ``calls`` is the measure, ``R`` is a
by-product.
"""

from __future__ import annotations

import numpy as np

from ..schedules.bounds import packet_split
from ..schedules.ir import Schedule, complete
from .short_messages_calls import Calls, lowest

__all__ = ["short_messages", "protocol_calls", "best_calls", "split", "paper_count", "PAPER"]

PAPER = "Bermond, Gargano, Perennes: Optimal sequential gossiping by short messages (1998)"
_MAX_N = 4096


#: ``n = hp + k`` with ``2 <= k <= p + 1`` (the paper's notation); returns ``(h, k)``.
split = packet_split


def _type_k(n: int, p: int, k: int) -> list[int]:
    """Positions of type k after the second phase: ``i = p-1 (mod k-1)`` and ``n-1``."""
    out = [i for i in range(n) if (i - (p - 1)) % (k - 1) == 0]
    return out if out[-1] == n - 1 else out + [n - 1]


def paper_count(n: int, p: int) -> int:
    """The calls of the section-3 protocol as the paper counts them (``p >= 2``, ``n >= p+2``).

    ``n - 1 + p + h'n`` plus ``ceil((n - K)/2)`` (h odd) or
    ``ceil(K/2) + n - K`` (h even), ``K`` the number of type-k nodes.
    """
    h, k = split(n, p)
    big = len(_type_k(n, p, k))
    last = -(-(n - big) // 2) if h % 2 else -(-big // 2) + n - big
    return n - 1 + p + (h - 1) // 2 * n + last


def _p1_calls(n: int) -> Calls:
    """``p = 1``: every pair calls once (circle-method 1-factorisation)."""
    c = Calls(n, 1)
    even = n + n % 2
    m = even - 1
    for r in range(m):
        pairs = [(r, m)] + [((r + i) % m, (r - i) % m) for i in range(1, even // 2)]
        for u, v in pairs:
            if v < n:  # own blocks only: a pair's call must not relay a third block
                c.call(u, v, 1 << u, 1 << v)
    return c


def _small_calls(n: int, p: int | None) -> Calls:
    """``n <= p + 1``: the ``2n - 4`` calls of the unlimited case (4-node core)."""
    c = Calls(n, p)
    if n == 2:
        c.call(0, 1)
    elif n == 3:
        for u, v in ((0, 1), (1, 2), (0, 1)):
            c.call(u, v)
    else:
        outside = [(v, (v - 4) % 4) for v in range(4, n)]
        for u, v in outside + [(0, 1), (2, 3), (0, 2), (1, 3)] + outside[::-1]:
            c.call(u, v)
    return c


def _phases_1_to_3(n: int, p: int) -> tuple[Calls, list[int], int]:
    """Run the first three phases; return the calls, ``node[position]`` and ``h``."""
    h, k = split(n, p)
    c = Calls(n, p)
    # First phase. Calls 1..p-1: t-1 and t exchange everything (t-1 holds [0, t-1]).
    for t in range(1, p):
        c.call(t - 1, t)
    big_delta = (n - 1 - p) // (k - 1)
    for d in range(big_delta + 1):
        hub = p - 1 + d * (k - 1)
        for lam in range(k - 1):
            leaf = p + d * (k - 1) + lam
            if leaf > n - 1:
                break
            # the leaf learns the window [leaf - p, leaf - 1]; the hub its block
            c.call(hub, leaf, c.run(leaf - p, p), 1 << leaf)
    # Second phase. p-1 and the last hub become type k ...
    last_hub = p - 1 + big_delta * (k - 1)
    c.call(p - 1, last_hub, c.run(0, p - 1 + (big_delta + 1) * (k - 1) - n + 1), 1 << (n - 1))
    # ... then n-1 calls 0..p-2: it extends their windows to the left and
    # learns [0, k-2], which makes it type k.
    node = list(range(n))  # node[position]; positions 0..p-2 are relabelled below
    for i in range(p - 1):
        if (i - (p - 2)) % (k - 1):                     # case 1 -> position i+1
            give, pos = c.run(i - p + 1, p - i - 1), i + 1
        elif i >= k - 2:                                 # case 2 -> position i+1-(k-1)
            give, pos = c.run(i - (k + p - 2), k + p - 2 - i), i + 1 - (k - 1)
        else:                                            # case 3 -> position 0
            give, pos = c.run(-p, p), 0
        c.call(n - 1, i, give, c.run(0, k - 1) & c.know[i])
        node[pos] = i
    # Third phase: floor((h-1)/2) steps; position i calls i+p+1, type-1 callers first.
    kind_k = set(_type_k(n, p, k))
    # Within each group the paper allows any order (what is sent was known at
    # the group's start); matchings first keep the packed rounds few.
    order = (_matchings([i for i in range(n) if i not in kind_k], n, p)
             + _matchings(sorted(kind_k), n, p))
    for s in range((h - 1) // 2):
        for i in order:
            j = (i + p + 1) % n
            back = c.run(i - (s + 1) * p + 1, p)
            ahead = c.run(i + s * p + (k if i in kind_k else 1), p)
            c.call(node[i], node[j], back, ahead)
    return c, node, h


def _matchings(callers: list[int], n: int, p: int) -> list[int]:
    """Callers ``i`` (calling ``i+p+1``) reordered as a sequence of matchings (greedy)."""
    out, rest = [], callers
    while rest:
        used, later = set(), []
        for i in rest:
            j = (i + p + 1) % n
            if i in used or j in used:
                later.append(i)
            else:
                used.update((i, j))
                out.append(i)
        rest = later
    return out


def _pairs_disjoint(c: Calls, nodes: list[int]) -> list[tuple[int, int]] | None:
    """Pair nodes ``t`` and ``t + ceil(m/2)`` whose gaps the other covers, or None."""
    m = len(nodes)
    half = (m + 1) // 2
    pairs = [(nodes[t], nodes[t + half]) for t in range(m - half)]
    for u, v in pairs:
        mu, mv = c.missing(u), c.missing(v)
        if mu & mv or mu.bit_count() > c.p or mv.bit_count() > c.p:
            return None
    return pairs


def _cycle_try(c: Calls, nodes: list[int], d: int) -> list[tuple[int, int, int, int]] | None:
    """Type-1 nodes of an even ``h``: ``t`` calls ``t+d``; payloads or None if someone stays short.

    Each node's gap is an interval of ``p + k - 1`` blocks; the partner ahead
    knows its front, the one behind its back. A sender gives first what the
    receiver's other partner lacks (so that partner can give the rest).
    """
    m = len(nodes)
    if m < 3 or (2 * d) % m == 0:
        return None
    know = {v: c.know[v] for v in nodes}
    other = {}
    for t in range(m):
        other[(nodes[t], nodes[(t + d) % m])] = nodes[(t - d) % m]
        other[(nodes[(t + d) % m], nodes[t])] = nodes[(t + 2 * d) % m]
    out = []

    def pick(src: int, dst: int) -> int:
        want = know[src] & ~know[dst]
        first = want & ~know[other[(dst, src)]]
        mask = first if first.bit_count() <= c.p else lowest(first, c.p)
        rest = want & ~mask
        if mask.bit_count() < c.p and rest:
            mask |= lowest(rest, c.p - mask.bit_count())
        return mask

    for t in range(m):
        u, v = nodes[t], nodes[(t + d) % m]
        a, b = pick(u, v), pick(v, u)
        know[u] |= b
        know[v] |= a
        out.append((u, v, a, b))
    return out if all(know[v] == c.full for v in nodes) else None


def _last_phase(c: Calls, node: list[int], h: int, n: int, p: int) -> None:
    _, k = split(n, p)
    kind_k = _type_k(n, p, k)
    ks = set(kind_k)
    ones = [node[i] for i in range(n) if i not in ks]
    bigs = [node[i] for i in kind_k]
    if h % 2 == 0:  # type-k nodes lack p blocks each: pair them up
        pairs = _pairs_disjoint(c, bigs) or []
        _finish(c, bigs, pairs)
        d0 = p - (p + 1) // (k - 1)  # the paper's partner distance, tried first
        for d in [d0] + [d for d in range(1, len(ones)) if d != d0]:
            calls = _cycle_try(c, ones, d)
            if calls is not None:
                for u, v, a, b in calls:
                    c.call(u, v, a, b)
                c.cycle_d = d
                break
    else:           # type-k nodes know everything; type-1 nodes lack k-1 blocks
        _finish(c, ones, _pairs_disjoint(c, ones) or [])


def _finish(c: Calls, nodes: list[int], pairs: list[tuple[int, int]]) -> None:
    """Make the given pair calls, then let each still incomplete node call a helper.

    The helper is a node whose knowledge covers the gap (at most p blocks),
    incomplete ones first so that one call completes two nodes.
    """
    for u, v in pairs:
        c.call(u, v)
    for v in nodes:
        gap = c.missing(v)
        if not gap:
            continue
        helpers = [u for u in nodes if u != v and c.missing(u) and not gap & c.missing(u)
                   and c.missing(u).bit_count() <= c.p]
        helpers += [u for u in range(c.n) if not c.missing(u)]
        for u in helpers:
            if gap.bit_count() <= c.p and not gap & ~c.know[u]:
                c.call(u, v)
                break
        else:  # no single helper: take up to p blocks at a time from anyone
            while c.missing(v):
                u = max((w for w in range(c.n) if w != v),
                        key=lambda w: (c.know[w] & c.missing(v)).bit_count())
                c.call(u, v, lowest(c.know[u] & c.missing(v), c.p), 0)


def best_calls(n: int, p: int) -> tuple[list[tuple[int, int, int, int]], str]:
    """The fewest calls of the protocol and of :mod:`.short_messages_schemes`, and the winner's name.

    Ties go to the paper's protocol, so a scheme is used only where it saves calls.
    """
    from .short_messages_schemes import SCHEMES
    best, name = protocol_calls(n, p), "protocol"
    if p >= 2 and n >= p + 2:  # the exact boundary cases need no help
        for scheme, build in SCHEMES.items():
            c = build(n, p)
            if c is not None and len(c.calls) < len(best):
                if any(c.missing(v) for v in range(n)):
                    raise AssertionError(f"{scheme} n={n} p={p}: gossip incomplete")
                best, name = c.calls, scheme
    return best, name


def protocol_calls(n: int, p: int) -> list[tuple[int, int, int, int]]:
    """The protocol's calls in sequence: ``(u, v, blocks u->v, blocks v->u)`` as bit masks."""
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= _MAX_N:
        raise ValueError(f"n must be an integer in 2..{_MAX_N}, got {n!r}")
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise ValueError(f"p must be a positive integer, got {p!r}")
    if p == 1:
        c = _p1_calls(n)
    elif n <= p + 1:
        c = _small_calls(n, p)
    else:
        c, node, h = _phases_1_to_3(n, p)
        _last_phase(c, node, h, n, p)
    if any(c.missing(v) for v in range(n)):
        raise AssertionError(f"short-messages n={n} p={p}: gossip incomplete")
    return c.calls


def _items(mask: int) -> list[int]:
    """The set bits of ``mask``, lowest first (at most p of them: a loop is cheapest)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


#: How the schedule's source names a scheme (default: "<name> scheme").
_SCHEME_TEXT = {"solver": "call sequence found by the exact search (SAT; "
                "model/algorithms/short_messages_found.py)"}


def short_messages(n: int, p: int) -> Schedule:
    """Gossip among ``n`` nodes by telephone calls of at most ``p`` blocks each way (F1).

    Parameters
    ----------
    n : int
        Nodes, 2..4096 (complete graph).
    p : int
        Packet size: blocks per message.

    Returns
    -------
    Schedule
        Model F1, packet size ``p``. Calls are the paper's sequence, or a
        scheme of :mod:`.short_messages_schemes` where that has fewer
        (``2n - 4`` for ``4 <= n <= 2p - 1``, ``n^2/4`` for ``p = 2`` and
        even ``n``, ``12`` for ``n = 8, p = 4``, the solver's 13 calls for
        ``n = 8, p = 3``), packed into rounds as
        early as their nodes allow; ``calls`` in the validator's metrics is
        at most the count of Theorem 3.1 (``n(n-1)/2`` for ``p = 1``).
    """
    calls, scheme = best_calls(n, p)
    last = [0] * n
    rnd = []
    for u, v, _, _ in calls:  # a call waits only for the earlier calls of its two nodes
        r = max(last[u], last[v]) + 1
        last[u] = last[v] = r
        rnd.append(r)
    order = sorted(range(len(calls)), key=rnd.__getitem__)
    src, dst, counts, chunks = [], [], [], []
    per_round = np.zeros(max(rnd, default=0) + 1, dtype=np.int64)
    for c in order:
        u, v, a, b = calls[c]
        for s, d, mask in ((u, v, a), (v, u, b)):
            if mask:
                src.append(s)
                dst.append(d)
                items = _items(mask)
                chunks.extend(items)
                counts.append(len(items))
                per_round[rnd[c]] += 1
    round_ptr = np.cumsum(per_round)
    round_ptr[0] = 0
    m = len(src)
    items = np.asarray(chunks, dtype=np.int64)
    item_ptr = np.concatenate([[0], np.cumsum(counts)])
    h, k = split(n, p)
    how = ("every pair calls once" if p == 1 else "n <= p+1: 4-node core, 2n-4 calls"
           if n <= p + 1 else f"n = {h}*{p} + {k}: four phases of section 3"
           if scheme == "protocol" else f"{_SCHEME_TEXT.get(scheme, scheme + ' scheme')}, "
           f"{len(calls)} calls (fewer than the section-3 protocol's {paper_count(n, p)})")
    return Schedule(topology=complete(n), model="F1", p=p, round_ptr=round_ptr, src=src,
                    dst_ptr=np.arange(m + 1), dst=dst, item_ptr=item_ptr, items=items,
                    origin={"algorithm": "short-messages",
                            "source": f"n={n} p={p}; {how}; {PAPER}"})
