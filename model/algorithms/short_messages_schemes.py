"""Schemes that beat the section-3 protocol of short-messages gossip where it is not optimal.

The protocol of Bermond, Gargano and Perennes (:mod:`.short_messages`) is
within ``p`` of the lower bound but not always on it. Three constructions
close the gap on the cases the exact search settled (docs/literature.md):

* **pairs** (``p = 2``, even ``n >= 4``): the 4-node square (4 calls), then
  two new nodes at a time: they call each other, and each of the ``m`` old
  nodes calls one of them, receiving the two new blocks and sending two old
  ones, ``m + 1`` calls. In all ``n^2/4`` calls, which is lower bound (2)
  for ``p = 2``: optimal for every even ``n`` (the protocol needs one more).
* **hypercube** (``n = 2^d``, ``p >= n/2``): dimension-order exchange,
  ``d n/2`` calls; equals ``2n - 4``, the unlimited optimum, for ``n = 8``
  (``c(8, 4) = 12``).
* **halves** (``4 <= n <= 2p - 1``): the ``2n - 4`` scheme under packets. Two
  halves ``A``, ``B`` (sizes ``ceil(n/2)``, ``floor(n/2)``) gossip along a
  path each (``|A| - 1 + |B| - 1`` calls: the path's last two nodes know
  their half), those two pairs exchange across (2 calls: four nodes know
  everything), then *scatter chains* complete the remaining ``n - 4``
  nodes with one call each: a full node calls ``x``, sending what ``x``'s
  next partner ``y`` cannot give; ``x`` and ``y`` call, ``y`` completes
  ``x`` and ``x`` sends ``y`` its share, and so on. ``2n - 4`` is the
  fewest calls of any gossip (n >= 4), so ``c(n, p) = 2n - 4`` for
  ``4 <= n <= 2p - 1``. At ``n = 2p`` the chain breaks (``c(6, 3) = 9``).

* **solver** (stored, ``(8, 3)``): a call sequence the exact search found,
  replayed and checked (:mod:`.short_messages_found`); ``c(8, 3) = 13``.

Every call is checked by :class:`.short_messages_calls.Calls` as it is made
(sender holds the blocks, at most ``p`` of them).
"""

from __future__ import annotations

from .short_messages_calls import Calls, lowest
from .short_messages_found import found_calls

__all__ = ["pairs_calls", "hypercube_calls", "halves_calls", "SCHEMES"]

def pairs_calls(n: int, p: int) -> Calls | None:
    """``p = 2``, even ``n >= 4``: ``n^2/4`` calls (square, then two new nodes at a time)."""
    if p != 2 or n < 4 or n % 2:
        return None
    c = Calls(n, p)
    for u, v in ((0, 1), (2, 3), (0, 2), (1, 3)):
        c.call(u, v)
    for m in range(4, n, 2):
        x, y = m, m + 1
        c.call(x, y)
        # old node j calls x (j even) or y (j odd): x and y each need the m
        # old blocks, two per call, and every old node knows all of them
        for j in range(m):
            new = x if j % 2 == 0 else y
            c.call(j, new, c.run(j - j % 2, 2))
    return c


def hypercube_calls(n: int, p: int) -> Calls | None:
    """``n = 2^d``, ``p >= n/2``: dimension-order exchange, ``d n/2`` calls."""
    if n < 4 or n & (n - 1) or p < n // 2:
        return None
    c = Calls(n, p)
    bit = 1
    while bit < n:
        for v in range(n):
            if not v & bit:
                c.call(v, v | bit)
        bit <<= 1
    return c


def _paths_and_crossings(n: int, p: int, s: int) -> Calls:
    """The halves' two gathering paths (``0..s-1``, ``s..n-1``) and their two crossings."""
    c = Calls(n, p)
    for lo, hi in ((0, s), (s, n)):
        for v in range(lo, hi - 1):
            c.call(v, v + 1)
    c.call(s - 1, n - 1)
    c.call(s - 2, n - 2)
    return c


def halves_calls(n: int, p: int) -> Calls | None:
    """``4 <= n <= 2p - 1``: ``2n - 4`` calls (two gathering paths, two crossings, one chain)."""
    if not 4 <= n <= 2 * p - 1:
        return None
    s = (n + 1) // 2
    c = _paths_and_crossings(n, p, s)
    plan = _one_chain(c, _zigzag(n, s))
    if plan is None:
        return None
    for u, v, a, b in plan:
        c.call(u, v, a, b)
    return c


def _zigzag(n: int, s: int) -> list[int]:
    """The scatter chain's order (read off depth-first searches on n <= 15; checked to n = 64).

    The incomplete nodes of ``A`` in path order, alternating with those of
    ``B`` from the middle of its path down to its first node, then the
    rest of ``B``: each ``B`` node completes the ``A`` node before it from
    the ``B`` blocks it gathered, and the reverse.
    """
    a = list(range(s - 2))
    t = n - s
    b = [s + j for j in range(t - 4, -1, -1)] + ([s + t - 3] if t >= 3 else [])
    out = []
    for i in range(max(len(a), len(b))):
        out += a[i:i + 1] + b[i:i + 1]
    return out


def _one_chain(c: Calls, order: list[int]) -> list[tuple[int, int, int, int]] | None:
    """Follow one scatter chain in the given order from a full node; None if a call breaks."""
    know, p = list(c.know), c.p
    prev = _a_full_node(know, c.full)
    out = []
    for i, x in enumerate(order):
        nxt = order[i + 1] if i + 1 < len(order) else None
        back = c.full & ~know[prev]
        lack = c.full & ~know[x]
        want = lack & know[prev]
        must = want if nxt is None else want & ~know[nxt]
        left = lack & ~must if nxt is None else lack & ~(must | lowest(want & ~must, p))
        if back & ~know[x] or back.bit_count() > p or must.bit_count() > p:
            return None
        a = must if nxt is None else must | lowest(want & ~must, p - must.bit_count())
        if left & ~(0 if nxt is None else know[nxt]) or (nxt is None and lack & ~a):
            return None
        out.append((prev, x, a, back))
        know[prev] |= back
        know[x] |= a
        prev = x
    return out if all(k == c.full for k in know) else None


def _a_full_node(know: list[int], full: int) -> int | None:
    return next((v for v, k in enumerate(know) if k == full), None)


#: Name -> construction; each returns the checked calls or None where it does not apply.
#: ``solver``: a sequence the exact search found (:mod:`.short_messages_found`).
SCHEMES = {"pairs": pairs_calls, "hypercube": hypercube_calls, "halves": halves_calls,
           "solver": found_calls}
