"""The one schedule validator: rules of the five models, and the metrics.

Two passes keep it fast on million-message schedules:

1. *static* rules that need no state (node and item ids, receivers, packet
   size, edges) are checked on all messages at once with NumPy; the earliest
   violation is remembered;
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

from ..errors import FormatError
from .goal import goal_pairs
from .ir import COMBINING, Q_ID, Schedule

__all__ = ["ScheduleError", "Validation", "validate", "check", "items_per_node"]

_UNICAST = {"H1", "F1", "Hstar", "Fstar"}
#: Largest knowledge matrix the validator allocates (bits).
_MAX_BITS = 1 << 33
#: Item ids handled at once by the passes over them: a gossip on 22,528 nodes carries
#: 507 million (4 GB as int64), and one int64 temporary per id would double that per
#: array; in chunks the temporaries stay near 100 MB each.
_CHUNK = 1 << 24


def _spans(ptr: np.ndarray, a: int, b: int, chunk: int | None = None):
    """Message ranges ``(x, y)`` covering ``a..b`` in order, each with at most ``chunk``
    entries of ``ptr`` (item or receiver pointers), or one message that has more."""
    chunk = _CHUNK if chunk is None else chunk
    x = a
    while x < b:
        y = int(np.searchsorted(ptr, ptr[x] + chunk, side="right")) - 1
        y = min(max(y, x + 1), b)
        yield x, y
        x = y


class ScheduleError(FormatError):
    """A schedule broke a rule; the message names round, message and rule."""

    def __init__(self, round: int, message: int | None, rule: str):
        self.round, self.message, self.rule = round, message, rule
        where = "-" if message is None else str(message)
        super().__init__(f"round {round}, message {where}: {rule}")


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


def _first(bad: np.ndarray) -> int | None:
    idx = np.flatnonzero(bad)
    return int(idx[0]) if len(idx) else None


def _dup_later(keys: np.ndarray, msg: np.ndarray) -> tuple[int, int] | None:
    """Earliest message that repeats a key an earlier message used: (msg, key)."""
    if len(keys) < 2:
        return None
    # one in-place sort of key * M + msg: cheaper in memory than a lexsort
    # and its gathers on million-message schedules
    span = int(msg.max()) + 1
    both = keys * span + msg
    both.sort()
    k, m = np.divmod(both, span)
    del both
    rep = np.flatnonzero(k[1:] == k[:-1]) + 1
    rep = rep[m[rep] != m[rep - 1]]  # a key repeated within one message is another rule
    if not len(rep):
        return None
    j = rep[np.argmin(m[rep])]
    return int(m[j]), int(k[j])


class _Static:
    """Finds the earliest message breaking a rule that needs no knowledge."""

    def __init__(self, s: Schedule, h: int):
        self.s, self.n, self.h = s, s.n, h
        self.best: tuple[int, str] | None = None
        m = len(s.src)
        self.dst_len = np.diff(s.dst_ptr)
        self.item_len = np.diff(s.item_ptr)
        self.dst_msg = np.repeat(np.arange(m, dtype=np.int64), self.dst_len)

    def item_msg(self, j: int) -> int:
        """The message that carries item entry ``j`` (found, not stored: one int64 per
        item would be 4 GB on a 22,528-node gossip)."""
        return int(np.searchsorted(self.s.item_ptr, j, side="right")) - 1

    def first_item(self, bad) -> int | None:
        """The first item entry ``j`` where ``bad(items chunk, its offset)`` holds."""
        items = self.s.items
        for lo in range(0, len(items), _CHUNK):
            j = _first(bad(items[lo:lo + _CHUNK], lo))
            if j is not None:
                return lo + j
        return None

    def note(self, m: int | None, rule) -> None:
        if m is not None and (self.best is None or m < self.best[0]):
            self.best = (m, rule() if callable(rule) else rule)

    def run(self) -> tuple[int, str] | None:
        s, n = self.s, self.n
        src, dst = s.src, s.dst
        m = self.note
        bad = (src < 0) | (src >= n)
        i = _first(bad)
        m(i, lambda: f"unknown node {src[i]} (nodes are 0..{n - 1})")
        bad = (dst < 0) | (dst >= n)
        j = _first(bad)
        if j is not None:
            m(int(self.dst_msg[j]), f"unknown node {dst[j]} (nodes are 0..{n - 1})")
        i = _first(self.dst_len == 0)
        m(i, "message has no receiver")
        if s.model in _UNICAST:
            i = _first(self.dst_len > 1)
            m(i, f"model {s.model} allows one receiver per message (multicast needs model port)")
        j = _first(dst == src[self.dst_msg])
        if j is not None:
            m(int(self.dst_msg[j]), f"node {dst[j]} sends to itself")
        self._duplicates(self.dst_msg, dst, "receiver {} listed twice")
        self._items()
        # combined messages are one word whatever their item count (docs/schedules.md)
        if s.p is not None and s.primitive not in COMBINING:
            i = _first(self.item_len > s.p)
            m(i, lambda: f"message carries {self.item_len[i]} items, more than p={s.p}")
        self._edges()
        return self.best

    def _duplicates(self, msg: np.ndarray, values: np.ndarray, rule: str) -> bool:
        """Note the earliest message listing a value twice; True if there is one."""
        # ``msg`` is non-decreasing: without two equal neighbours every
        # message has at most one entry and nothing can repeat
        if len(values) < 2 or not np.any(msg[1:] == msg[:-1]):
            return False
        keys = msg * (self.n * self.h + 2) + (values + 1)
        order = np.argsort(keys, kind="stable")
        k = keys[order]
        rep = np.flatnonzero(k[1:] == k[:-1]) + 1
        if len(rep):
            j = order[rep[np.argmin(order[rep])]]
            self.note(int(msg[j]), rule.format(_item_text(values[j])))
        return bool(len(rep))

    def _item_duplicates(self) -> None:
        """Items listed twice in a message, message chunk by message chunk (in order:
        the first chunk with one has the earliest). A chunk whose items rise strictly
        within every message (what the generators write) has none: no sort."""
        s = self.s
        ptr, m = s.item_ptr, len(s.src)
        for x, y in _spans(ptr, 0, m):
            i0, i1 = int(ptr[x]), int(ptr[y])
            values = s.items[i0:i1]
            rises = values[1:] > values[:-1]
            starts = ptr[x + 1:y] - i0  # a message's first item follows another's
            rises[starts[(starts > 0) & (starts < len(values))] - 1] = True
            if rises.all():
                continue
            msg = np.repeat(np.arange(x, y, dtype=np.int64), self.item_len[x:y])
            if self._duplicates(msg, values, "item {} listed twice"):
                return

    def _items(self) -> None:
        s, items = self.s, self.s.items
        universe = self.n * self.h
        polling = s.primitive == "polling"
        j = self.first_item(lambda x, _: (x >= universe) | (x < (-1 if polling else 0)))
        if j is not None:
            what = "question 'q' outside polling" if items[j] == Q_ID else f"unknown item {items[j]}"
            self.note(self.item_msg(j), what)
        if polling:
            item_msg = np.repeat(np.arange(len(s.src), dtype=np.int64), self.item_len)
            j = _first((items >= 0) & (items != s.src[item_msg]) & (items >= self.n))
            if j is not None:
                self.note(int(item_msg[j]), f"unknown item {items[j]} (polling has items "
                          f"0..{self.n - 1} and 'q')")
        if s.primitive in ("reduce", "allreduce"):
            j = self.first_item(lambda x, _: x >= self.n)
            if j is not None:
                self.note(self.item_msg(j), f"unknown item {items[j]} ({s.primitive} has "
                          f"one token per node, items 0..{self.n - 1})")
        self._item_duplicates()

    def _edges(self) -> None:
        s = self.s
        if s.topology.edges is None or not len(s.dst):
            return
        ok = s.topology.has_edges(s.src[self.dst_msg], s.dst)
        j = _first(~ok)
        if j is not None:
            u, v = s.src[self.dst_msg[j]], s.dst[j]
            self.note(int(self.dst_msg[j]), f"no edge {u}-{v} in topology {s.topology.name}")


def _round_conflict(s: Schedule, src: np.ndarray, dst: np.ndarray, dst_msg: np.ndarray,
                    first_dst: np.ndarray) -> tuple[int, str] | None:
    """The first message of one round that breaks the model's per-round rule.

    ``dst_msg`` maps each receiver entry to its message (local index);
    ``first_dst`` is each message's first receiver. A cheap count finds out
    whether the round has a conflict at all; only then are keys sorted to
    name the earliest offending message.
    """
    n, model = s.n, s.model
    local = np.arange(len(src), dtype=np.int64)
    if model == "H1":
        nodes = np.concatenate([src, dst])
        if np.bincount(nodes, minlength=n).max(initial=0) <= 1:
            return None
        hit = _dup_later(nodes, np.concatenate([local, dst_msg]))
        return hit and (hit[0], f"node {hit[1]} is in two messages this round (H1)")
    if model in ("port", "F1"):
        found = []
        if np.bincount(src, minlength=n).max(initial=0) > 1:
            hit = _dup_later(src, local)
            found.append((hit[0], f"node {hit[1]} sends twice this round ({model})"))
        if np.bincount(dst, minlength=n).max(initial=0) > 1:
            hit = _dup_later(dst, dst_msg)
            found.append((hit[0], f"node {hit[1]} receives twice this round ({model})"))
        if model == "F1" and not found:
            # a node that sends and receives must talk to one partner
            heard = np.full(n, -1, dtype=np.int64)
            heard[first_dst] = src
            partner = heard[src]
            bad = (partner >= 0) & (partner != first_dst)
            if bad.any():
                who = np.flatnonzero(bad)
                at = np.full(n, -1, dtype=np.int64)
                at[first_dst] = local
                later = np.maximum(who, at[src[who]])
                i = int(np.argmin(later))
                found.append((int(later[i]), f"node {src[who[i]]} is in two calls this round "
                              "(F1: one call per node)"))
        return min(found) if found else None
    u, v = src[dst_msg], dst
    if model == "Hstar":
        u, v = np.minimum(u, v), np.maximum(u, v)
    keys = u * n + v
    if len(np.unique(keys)) == len(keys):
        return None
    hit = _dup_later(keys, dst_msg)
    a, b = divmod(hit[1], n)
    sep = "-" if model == "Hstar" else "->"
    return hit[0], f"edge {a}{sep}{b} carries two messages this round ({model})"


def _item_text(x: int) -> str:
    return "'q'" if x == Q_ID else str(x)


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
