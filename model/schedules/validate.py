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

The round-by-round pass is :class:`_Pass`, one call a round: the whole-schedule
path here and the streamed path (:func:`~.validate_rounds.validate_rounds`, rounds
checked as a generator yields them) share it and the static pass.

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
    run = _Pass(s, h, want_knowledge, ids)
    rp = s.round_ptr
    for r in range(1, s.rounds_total + 1):
        a, b = int(rp[r - 1]), min(int(rp[r]), stop)
        if a >= b:
            if a >= stop:
                break
            run.empty()
            continue
        d0, i0 = int(s.dst_ptr[a]), int(s.item_ptr[a])
        error = run.round(r, s.src[a:b], s.dst_ptr[a:b + 1] - d0, s.dst[d0:int(s.dst_ptr[b])],
                          s.item_ptr[a:b + 1] - i0, s.items[i0:int(s.item_ptr[b])])
        if error is not None:
            return error
    if stop < len(s.src):
        return None
    return run.result(s.rounds_total)


class _Pass:
    """The round-by-round knowledge pass, one :meth:`round` call per round in order.

    The one implementation of the rules that need state: :func:`validate` feeds it
    the rounds of a whole schedule, :func:`~.validate_rounds.validate_rounds` the
    rounds of a generator as they come (the schedule never held). ``s`` gives n,
    model, primitive and root (its own rounds are not read)."""

    def __init__(self, s: Schedule, h: int, want_knowledge: bool,
                 ids: np.ndarray | None = None):
        n = s.n
        self.s, self.h, self.ids, self.want_knowledge = s, h, ids, want_knowledge
        self.polling = s.primitive == "polling"
        self.combining = s.primitive in COMBINING
        self.tokens = s.primitive in ("reduce", "allreduce")
        tracked = n * h if ids is None else len(ids)
        self.universe = tracked + (1 if self.polling else 0)
        self.qbit = tracked  # the question's bit, polling only
        self.untracked = n * h - tracked  # each held by its owner alone, all along
        self.K = np.zeros((n, (self.universe + 63) // 64), dtype=np.uint64)
        self.nodes = np.arange(n, dtype=np.int64)
        if self.polling:
            _set(self.K, np.array([s.root, s.root]), np.array([s.root, self.qbit]))
        else:
            own = np.arange(n * h, dtype=np.int64) if ids is None else ids
            _set(self.K, own % n, np.arange(len(own)))
        self.busy, self.calls, self.sizes, self.know = [], 0, [], []
        self.messages = self.transfers = self.item_transfers = 0
        if want_knowledge:
            self.know.append(int(np.bitwise_count(self.K).sum()) + self.untracked)
        self.mark = np.zeros(n, dtype=bool)
        self.send_to = np.full(n, -1, dtype=np.int64)

    def empty(self) -> None:
        """A round without messages."""
        self.busy.append(0)
        self.sizes.append(0)
        if self.want_knowledge:
            self.know.append(self.know[-1])

    def round(self, r: int, src: np.ndarray, dst_ptr: np.ndarray, dst: np.ndarray,
              item_ptr: np.ndarray, items: np.ndarray) -> ScheduleError | None:
        """Check round ``r``'s messages, then deliver them; the first error, or None.

        ``src`` has at least one message; ``dst_ptr`` and ``item_ptr`` are the
        round's own pointers (from 0, one longer than ``src``)."""
        s, K, qbit, ids = self.s, self.K, self.qbit, self.ids
        m = len(src)
        dl, il = np.diff(dst_ptr), np.diff(item_ptr)
        local = np.arange(m, dtype=np.int64)
        found = []  # (local message, rule): the earliest wins
        if self.polling:
            speaks = (src != s.root) & ~_has(K, src, np.full(m, qbit))
            j = _first(speaks)
            if j is not None:
                found.append((j, f"node {src[j]} speaks before it heard the question 'q'"))
        dfirst = dst_ptr[:-1]

        def entries(x: int, y: int):
            """Item entries of the round's messages ``x..y-1``: message, id, bit."""
            its = items[int(item_ptr[x]):int(item_ptr[y])]
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
        spans = [(0, m)] if self.tokens else list(_spans(item_ptr, 0, m))
        for x, y in spans:
            item_msg, its, bits = entries(x, y)
            j = _first(~_has(K, src[item_msg], bits))
            if j is not None:
                i = int(item_msg[j])
                found.append((i, f"node {src[i]} sends item {_item_text(its[j])} it does not hold"))
                break
        firsts = dst[dfirst]
        conflict = _round_conflict(s, src, dst, np.repeat(local, dl), firsts)
        if conflict is not None:
            found.append(conflict)
        if self.tokens:  # one span, the whole round's entries
            rows, recv, got = deliveries(item_msg, bits)
            found += _counted_twice(K, recv, got, rows, self.universe)
        if found:
            # ties on one message: the polling rule, then held items, then the model,
            # then tokens counted twice
            i, rule = min(found, key=lambda f: f[0])
            return ScheduleError(r, i, rule)
        # every (receiver, item) pair of the round, applied after all checks:
        # what arrives in round r is usable from round r+1.
        for x, y in spans:
            if len(spans) > 1:
                item_msg, _, bits = entries(x, y)
            _set(K, *deliveries(item_msg, bits)[1:])
        if self.polling:  # a node's response exists once it holds the question
            asked = self.nodes[_has(K, self.nodes, np.full(s.n, qbit))]
            _set(K, asked, asked)
        self.mark[src] = True
        self.mark[dst] = True
        self.busy.append(int(np.count_nonzero(self.mark)))
        self.mark[src] = False
        self.mark[dst] = False
        if s.model == "F1":
            self.send_to[src] = firsts
            recip = int(np.count_nonzero(self.send_to[firsts] == src))
            self.send_to[src] = -1
            self.calls += m - recip // 2
        self.sizes.append(1 if self.combining else int(il.max()))
        self.messages += m
        self.transfers += len(dst)
        self.item_transfers += int((il * dl).sum())
        if self.want_knowledge:
            self.know.append(int(np.bitwise_count(K).sum()) + self.untracked)
        return None

    def result(self, rounds: int) -> Validation | ScheduleError:
        """After the last of ``rounds`` rounds: the goal's check, then the metrics."""
        s, n = self.s, self.s.n
        missing = _missing(s, self.K, self.h, self.ids)
        if missing:
            return ScheduleError(rounds, None, missing)
        busy = self.busy
        R = max((i + 1 for i, x in enumerate(busy) if x), default=0)
        busy = busy[:R]
        return Validation(valid=True, n=n, R=R, messages=self.messages,
                          calls=self.calls if s.model == "F1" else None,
                          transfers=self.transfers, item_transfers=self.item_transfers,
                          busy=busy, S=int(sum(self.sizes[:R])),
                          efficiency=sum(busy) / (n * R) if R else 0.0, items_per_node=self.h,
                          knowledge=self.know[:R + 1])


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
