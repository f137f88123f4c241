"""The one schedule validator: rules of the five models, and the metrics.

Two passes keep it fast on million-message schedules:

1. *static* rules that need no state (node and item ids, receivers, packet
   size, edges) are checked on all messages at once with NumPy; the earliest
   violation is remembered (:mod:`.validate_static`);
2. a round-by-round pass keeps what every node knows as a bit matrix
   (``n x ceil(items/64)`` uint64) and checks, vectorised per round, that
   every sender holds what it sends and that the round respects the model
   (a bincount per round finds conflicts in linear time; keys are sorted only
   to name the offending message). It stops at the earliest static violation,
   so the reported error is always the first one in schedule order. For
   ``reduce``/``allreduce`` it also refuses a token a receiver would combine
   twice (:func:`_counted_twice`).

Errors read ``round r, message m: rule``; ``r`` is 1-based, ``m`` is the
0-based position of the message in its round (``rounds[r-1][m]`` in the file).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .goal import goal_pairs
from .ir import COMBINING, Q_ID, Schedule
from .validate_static import (ScheduleError, _Static, _dup_later, _first, _item_text,
                              _round_conflict, _spans)

__all__ = ["ScheduleError", "Validation", "validate", "check", "items_per_node"]

#: Largest knowledge matrix the validator allocates (bits).
_MAX_BITS = 1 << 33


@dataclass
class Validation:
    """The outcome of :func:`validate`.

    Attributes
    ----------
    valid : bool
    error : str or None
        ``"round r, message m: rule"`` for an invalid schedule.
    R : int
        Rounds up to the last non-empty one.
    messages, transfers, item_transfers : int
    calls : int or None
        F1 only: talking pairs summed over rounds.
    busy : list[int]
        Per round 1..R, the nodes that send or receive.
    S : int
        Sum over rounds of the largest message (items).
    efficiency : float
        ``sum(busy) / (n * R)``.
    knowledge : list[int]
        Items held summed over nodes, at the start and after each round
        (only when asked for; costs a popcount per round).
    """

    valid: bool
    n: int
    error: str | None = None
    exception: ScheduleError | None = field(default=None, repr=False)
    R: int = 0
    messages: int = 0
    calls: int | None = None
    transfers: int = 0
    item_transfers: int = 0
    busy: list[int] = field(default_factory=list)
    S: int = 0
    efficiency: float = 0.0
    items_per_node: int = 1
    knowledge: list[int] = field(default_factory=list)

    def T(self, tau: float) -> float:
        """Time in the linear-cost model: ``R + tau * S``."""
        return self.R + tau * self.S

    def to_json(self) -> dict:
        return {"valid": self.valid, "error": self.error, "n": self.n, "R": self.R,
                "messages": self.messages, "calls": self.calls, "transfers": self.transfers,
                "item_transfers": self.item_transfers, "S": self.S,
                "efficiency": self.efficiency, "busy": self.busy}


def items_per_node(s: Schedule) -> int:
    """``h``, read off the largest item id (node ``v`` owns ``v, v+n, v+2n, ...``)."""
    # the largest id, or 0 when there is none ('q' is -1): no copy of the ids (4 GB on a
    # 22,528-node gossip)
    top = max(int(s.items.max()), 0) if len(s.items) else 0
    return max(1, top // s.n + 1)


def validate(s: Schedule, knowledge: bool = False) -> Validation:
    """Check every rule and compute the metrics of ``s``.

    Parameters
    ----------
    s : Schedule
    knowledge : bool
        Also record the items held, summed over nodes, after every round.

    Returns
    -------
    Validation
        ``valid`` is False and ``error`` names round, message and rule for
        the first violation in schedule order.
    """
    n = s.n
    h = items_per_node(s)
    ids = _tracked(s, h)
    if n * (n * h if ids is None else len(ids)) > _MAX_BITS:
        top = int(s.items.max())
        m = int(np.searchsorted(s.item_ptr, int(np.argmax(s.items)), side="right")) - 1
        r = int(np.searchsorted(s.round_ptr, m, side="right"))
        return _fail(n, ScheduleError(r, m - int(s.round_ptr[r - 1]),
                                      f"unknown item {top} (too many items per node)"))
    static = _Static(s, h).run()
    stop = static[0] if static else len(s.src)
    result = _simulate(s, h, stop, knowledge, ids)
    if isinstance(result, ScheduleError):
        return _fail(n, result)
    if static is not None:
        m, rule = static
        r = int(np.searchsorted(s.round_ptr, m, side="right"))
        return _fail(n, ScheduleError(r, m - int(s.round_ptr[r - 1]), rule))
    return result


def _fail(n: int, e: ScheduleError) -> Validation:
    return Validation(valid=False, n=n, error=str(e), exception=e)


def check(s: Schedule) -> Validation:
    """Like :func:`validate` but raise :class:`ScheduleError` when invalid."""
    v = validate(s)
    if not v.valid:
        raise v.exception
    return v


def _tracked(s: Schedule, h: int) -> np.ndarray | None:
    """The item ids a broadcast's knowledge pass keeps a bit for, sorted; None: every
    id ``0..n h-1`` (every other primitive, whose goal asks for them all).

    An item that no message carries and the goal does not ask for stays with its
    owner and decides nothing, so a broadcast tracks only the carried items and the
    root's: one, not ``n`` (Table 4's butterfly_14: 229,376 nodes, 6.6 GB of bits
    for every item, 29 KB for the one). The metrics add the untracked items back."""
    if s.primitive != "broadcast" or s.n * h > _MAX_BITS:  # h root items: the goal's
        return None
    _, need = goal_pairs(s, h)
    return np.union1d(s.items[s.items >= 0], need)  # 'q' is the static pass's error


def _simulate(s: Schedule, h: int, stop: int, want_knowledge: bool,
              ids: np.ndarray | None = None):
    """Round-by-round knowledge pass over messages ``0..stop-1``; metrics.

    ``ids``: the tracked items (:func:`_tracked`); bit ``i`` of a row is item ``ids[i]``."""
    n = s.n
    polling = s.primitive == "polling"
    combining = s.primitive in COMBINING
    tokens = s.primitive in ("reduce", "allreduce")
    tracked = n * h if ids is None else len(ids)
    universe = tracked + (1 if polling else 0)
    qbit = tracked  # the question's bit, polling only
    untracked = n * h - tracked  # each held by its owner alone, all along
    words = (universe + 63) // 64
    K = np.zeros((n, words), dtype=np.uint64)
    nodes = np.arange(n, dtype=np.int64)
    if polling:
        _set(K, np.array([s.root, s.root]), np.array([s.root, qbit]))
    else:
        own = np.arange(n * h, dtype=np.int64) if ids is None else ids
        _set(K, own % n, np.arange(len(own)))
    dst_len = np.diff(s.dst_ptr)
    item_len = np.diff(s.item_ptr)
    rp = s.round_ptr
    busy, calls, sizes, know = [], 0, [], []
    if want_knowledge:
        know.append(int(np.bitwise_count(K).sum()) + untracked)
    mark = np.zeros(n, dtype=bool)
    send_to = np.full(n, -1, dtype=np.int64)
    for r in range(1, s.rounds_total + 1):
        a, b = int(rp[r - 1]), min(int(rp[r]), stop)
        if a >= b:
            if a >= stop:
                break
            busy.append(0)
            sizes.append(0)
            if want_knowledge:
                know.append(know[-1])
            continue
        src = s.src[a:b]
        d0, d1 = int(s.dst_ptr[a]), int(s.dst_ptr[b])
        i0, i1 = int(s.item_ptr[a]), int(s.item_ptr[b])
        dst, items = s.dst[d0:d1], s.items[i0:i1]
        dl, il = dst_len[a:b], item_len[a:b]
        local = np.arange(b - a, dtype=np.int64)
        found = []  # (local message, rule): the earliest wins
        if polling:
            speaks = (src != s.root) & ~_has(K, src, np.full(len(src), qbit))
            j = _first(speaks)
            if j is not None:
                found.append((j, f"node {src[j]} speaks before it heard the question 'q'"))
        dfirst = s.dst_ptr[a:b] - d0

        def entries(x: int, y: int):
            """Item entries of the round's messages ``x..y-1``: message, id, bit."""
            j0, j1 = int(s.item_ptr[a + x]) - i0, int(s.item_ptr[a + y]) - i0
            its = items[j0:j1]
            return (np.repeat(local[x:y], il[x:y]), its,
                    np.where(its == Q_ID, qbit, its if ids is None else np.searchsorted(ids, its)))

        def deliveries(item_msg: np.ndarray, bits: np.ndarray):
            """Every (receiver, bit) pair those entries deliver, with its message."""
            per = dl[item_msg]
            rows = np.repeat(item_msg, per)
            offs = np.arange(len(rows)) - np.repeat(np.cumsum(per) - per, per)
            return rows, dst[dfirst[rows] + offs], np.repeat(bits, per)

        # a gossip round can carry half of n^2 items: its messages go in chunks (in
        # order, so the first chunk with a fault has the round's earliest), except
        # where tokens must be compared across the whole round
        spans = [(0, b - a)] if tokens else [(x - a, y - a) for x, y in _spans(s.item_ptr, a, b)]
        for x, y in spans:
            item_msg, its, bits = entries(x, y)
            j = _first(~_has(K, src[item_msg], bits))
            if j is not None:
                m = int(item_msg[j])
                found.append((m, f"node {src[m]} sends item {_item_text(its[j])} it does not hold"))
                break
        firsts = dst[dfirst]
        conflict = _round_conflict(s, src, dst, np.repeat(local, dl), firsts)
        if conflict is not None:
            found.append(conflict)
        if tokens:  # one span, the whole round's entries
            rows, recv, got = deliveries(item_msg, bits)
            found += _counted_twice(K, recv, got, rows, universe)
        if found:
            # ties on one message: the polling rule, then held items, then the model,
            # then tokens counted twice
            m, rule = min(found, key=lambda f: f[0])
            return ScheduleError(r, m, rule)
        # every (receiver, item) pair of the round, applied after all checks:
        # what arrives in round r is usable from round r+1.
        for x, y in spans:
            if len(spans) > 1:
                item_msg, _, bits = entries(x, y)
            _set(K, *deliveries(item_msg, bits)[1:])
        if polling:  # a node's response exists once it holds the question
            asked = nodes[_has(K, nodes, np.full(n, qbit))]
            _set(K, asked, asked)
        mark[src] = True
        mark[dst] = True
        busy.append(int(np.count_nonzero(mark)))
        mark[src] = False
        mark[dst] = False
        if s.model == "F1":
            send_to[src] = firsts
            recip = int(np.count_nonzero(send_to[firsts] == src))
            send_to[src] = -1
            calls += (b - a) - recip // 2
        sizes.append(1 if combining else int(il.max()))
        if want_knowledge:
            know.append(int(np.bitwise_count(K).sum()) + untracked)
    if stop < len(s.src):
        return None
    missing = _missing(s, K, h, ids)
    if missing:
        return ScheduleError(s.rounds_total, None, missing)
    R = max((i + 1 for i, x in enumerate(busy) if x), default=0)
    busy = busy[:R]
    return Validation(valid=True, n=n, R=R, messages=len(s.src),
                      calls=calls if s.model == "F1" else None, transfers=len(s.dst),
                      item_transfers=int((item_len * dst_len).sum()), busy=busy,
                      S=int(sum(sizes[:R])), efficiency=sum(busy) / (n * R) if R else 0.0,
                      items_per_node=h, knowledge=know[:R + 1])


def _counted_twice(K: np.ndarray, recv: np.ndarray, got: np.ndarray, msg: np.ndarray,
                   universe: int) -> list[tuple[int, str]]:
    """Combining rules of reduce/allreduce: a receiver may add a token in only once.

    ``recv[i]`` receives token ``got[i]`` in message ``msg[i]`` (local index).
    A token the receiver already holds, or one that two messages of the
    round bring it, would be folded into its word twice (a sum would be
    wrong), so the message's set must be disjoint from the receiver's and
    from the other sets it receives in the round.
    """
    found = []
    j = _first(_has(K, recv, got))
    if j is not None:
        found.append((int(msg[j]), f"node {recv[j]} already holds token {got[j]}: "
                      "combining it again counts it twice"))
    hit = _dup_later(recv * universe + got, msg)
    if hit is not None:
        node, token = divmod(hit[1], universe)
        found.append((hit[0], f"node {node} receives token {token} twice this round: "
                      "it would be counted twice"))
    return found


def _set(K: np.ndarray, rows: np.ndarray, bits: np.ndarray) -> None:
    bits = np.asarray(bits, dtype=np.int64)
    np.bitwise_or.at(K, (np.asarray(rows, dtype=np.int64), bits >> 6),
                     np.left_shift(np.uint64(1), (bits & 63).astype(np.uint64)))


def _has(K: np.ndarray, rows: np.ndarray, bits: np.ndarray) -> np.ndarray:
    bits = np.asarray(bits, dtype=np.int64)
    w = K[rows, bits >> 6]
    return ((w >> (bits & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)


def _missing(s: Schedule, K: np.ndarray, h: int, ids: np.ndarray | None) -> str | None:
    """Why the result is incomplete, or None."""
    rows, asked = goal_pairs(s, h)
    need = asked if ids is None else np.searchsorted(ids, asked)
    mask = np.zeros(K.shape[1], dtype=np.uint64)
    np.bitwise_or.at(mask, need >> 6, np.left_shift(np.uint64(1), (need & 63).astype(np.uint64)))
    lack = (K[rows] & mask) != mask  # (rows, words)
    bad_rows = np.flatnonzero(lack.any(axis=1))
    if not len(bad_rows):
        return None
    v = int(rows[bad_rows[0]])
    held = _has(K, np.full(len(need), v), need)
    item = int(asked[np.argmin(held)])
    total = int(np.bitwise_count(mask).sum()) * len(rows) - int(
        np.bitwise_count(K[rows] & mask).sum())
    return (f"incomplete {s.primitive}: node {v} lacks item {item} at the end "
            f"({total} node-item pairs missing)")
