"""Algorithm 2's choice of receiver for the general engine (docs/reference.md "Algorithm 2").

Each picker answers, for one sender at a time in id order, "which receiver
does Algorithm 2 give this sender in this step?" for one receive discipline
and order shape; :mod:`.engine` resolves the senders and applies the
transfers. They live apart from the engine only to keep each module short;
:mod:`.fastpath` is the compiled counterpart of :class:`CyclicPicker`.
"""

from __future__ import annotations

from array import array

import numpy as np

__all__ = ["cyclic_starts", "OrderedPicker", "CyclicPicker", "WalkPicker"]

# Phase codes of a processor at the start of a step (used by .engine too).
_DONE, _RECV, _SEND = 0, 1, 2


def cyclic_starts(orders: np.ndarray, block: int = 256) -> list[int] | None:
    """Start ids if every order walks 0..N-1 cyclically from some start
    (skipping its own id), as identity and pipelined orders do; else None.

    Rows are checked ``block`` at a time so that the temporaries stay small
    next to the ``(N, N-1)`` orders themselves (N = 16384: 1 GiB of orders,
    32 MiB of temporaries).
    """
    n = orders.shape[0]
    if n < 3:
        return None
    start = orders[:, 0].astype(np.int64)
    steps = np.arange(n, dtype=np.int64)
    for r0 in range(0, n, block):
        rows = np.arange(r0, min(r0 + block, n))
        walk = (start[rows, None] + steps[None, :]) % n
        keep = walk != rows[:, None]
        if not np.all(keep.sum(axis=1) == n - 1):
            return None
        if not np.array_equal(walk[keep].reshape(len(rows), n - 1), orders[rows]):
            return None
    return start.tolist()


class OrderedPicker:
    """Algorithm 2 under ``ordered``: a receiver waits for exactly one sender,
    so no two senders ever want the same receiver and the candidates of
    sender i are the receivers now waiting for i."""

    def __init__(self, eng):
        self.eng = eng
        n = eng.n
        self.rank = np.argsort(eng.np_P, axis=1).astype(np.int32)  # rank[i][j'] with j' = j - (j > i)
        self.waiting_for: list[set[int]] = [set() for _ in range(n)]
        self.awaits = [-1] * n
        for p in range(n):
            self.changed(p, 0)

    def rank_of(self, i: int, j: int) -> int:
        return int(self.rank[i, j - (j > i)])

    def begin_step(self) -> None:
        pass

    def choose(self, i: int) -> int:
        eng = self.eng
        si = eng.sess[i]
        j = eng.target(i)
        if self.awaits[j] == i and eng.sess[j] == si:
            return j
        best, best_rank = -1, eng.m
        for q in self.waiting_for[i]:
            if eng.sess[q] == si:
                r = self.rank_of(i, q)
                if r < best_rank:
                    best, best_rank = q, r
        return best

    def served(self, i: int, j: int) -> None:
        pass

    def changed(self, p: int, old_session: int) -> None:
        old = self.awaits[p]
        if old >= 0:
            self.waiting_for[old].discard(p)
        eng = self.eng
        if eng.phase(p) == _RECV:
            a = eng.awaited(p)
            self.awaits[p] = a
            self.waiting_for[a].add(p)
        else:
            self.awaits[p] = -1


class CyclicPicker:
    """Algorithm 2 under ``any`` for cyclic orders, with bitsets.

    Bit j of ``receiving[s]`` says j is receiving in session s; bit j of
    ``unserved[i]`` says i has not yet sent to j. The first entry of P_i
    that can take i's word is then the lowest set bit of their AND at or
    above i's start id, else the lowest set bit overall.
    """

    def __init__(self, eng, starts: list[int]):
        self.eng = eng
        n = eng.n
        self.starts = starts
        self.full = ((1 << n) - 1)
        self.unserved = [self.full & ~(1 << i) for i in range(n)]
        self.receiving: dict[int, int] = {}
        self.avail: dict[int, int] = {}
        for p in range(n):
            if eng.phase(p) == _RECV:
                s = eng.sess[p]
                self.receiving[s] = self.receiving.get(s, 0) | (1 << p)

    def begin_step(self) -> None:
        self.avail = dict(self.receiving)

    def choose(self, i: int) -> int:
        si = self.eng.sess[i]
        x = self.avail.get(si, 0) & self.unserved[i]
        if not x:
            return -1
        s = self.starts[i]
        high = x >> s
        if high:
            j = s + (high & -high).bit_length() - 1
        else:
            j = (x & -x).bit_length() - 1
        self.avail[si] = self.avail[si] & ~(1 << j)
        return j

    def served(self, i: int, j: int) -> None:
        self.unserved[i] &= ~(1 << j)

    def changed(self, p: int, old_session: int) -> None:
        eng = self.eng
        bit = 1 << p
        if old_session in self.receiving:
            self.receiving[old_session] &= ~bit
        s = eng.sess[p]
        if s != old_session:
            self.unserved[p] = self.full & ~bit
        if eng.phase(p) == _RECV:
            self.receiving[s] = self.receiving.get(s, 0) | bit


class WalkPicker:
    """Algorithm 2 under ``any`` for arbitrary orders: walk the compact list of
    unserved entries in order; long walks finish with one vector scan."""

    WALK = 24

    def __init__(self, eng):
        self.eng = eng
        n = eng.n
        self.avail_buf = array("i", [-1] * n)  # session if receiving and unclaimed, else -1
        self.np_avail = np.frombuffer(self.avail_buf, dtype=np.int32)
        self.receiving = array("i", [-1] * n)
        self.unserved = [list(eng.config.orders[i].tolist()) for i in range(n)]
        for p in range(n):
            self.changed(p, eng.sess[p])

    def begin_step(self) -> None:
        self.avail_buf[:] = self.receiving

    def choose(self, i: int) -> int:
        eng = self.eng
        si = eng.sess[i]
        avail = self.avail_buf
        uns = self.unserved[i]
        for j in uns[: self.WALK]:
            if avail[j] == si:
                avail[j] = -1
                return j
        if len(uns) <= self.WALK:
            return -1
        rest = np.array(uns[self.WALK:], dtype=np.int32)
        hit = self.np_avail[rest] == si
        k = int(hit.argmax())
        if not hit[k]:
            return -1
        j = int(rest[k])
        avail[j] = -1
        return j

    def served(self, i: int, j: int) -> None:
        self.unserved[i].remove(j)

    def changed(self, p: int, old_session: int) -> None:
        eng = self.eng
        if eng.sess[p] != old_session:
            self.unserved[p] = list(eng.config.orders[p].tolist())
        self.receiving[p] = eng.sess[p] if eng.phase(p) == _RECV else -1
