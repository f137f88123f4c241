"""The validator's static pass and the helpers both passes share.

The static rules need no state (node and item ids, receivers, packet size,
edges): :class:`_Static` checks them on all messages at once with NumPy and
remembers the earliest violation; :func:`_round_conflict` finds a round's
model conflicts for the round-by-round pass in :mod:`.validate`. Item ids are
visited in chunks of ``_CHUNK`` (:func:`_spans`), so no temporary grows with a
schedule's hundreds of millions of ids.
"""

from __future__ import annotations

import numpy as np

from ..errors import FormatError
from .chunks import spans
from .ir import COMBINING, Q_ID, Schedule

_UNICAST = {"H1", "F1", "Hstar", "Fstar"}
#: Item ids handled at once by the passes over them: a gossip on 22,528 nodes carries
#: 507 million (4 GB as int64), and one int64 temporary per id would double that per
#: array; in chunks the temporaries stay near 100 MB each.
_CHUNK = 1 << 24


def _spans(ptr: np.ndarray, a: int, b: int, chunk: int | None = None):
    """:func:`.chunks.spans` in chunks of ``_CHUNK`` unless told (read at each call, so
    a test may shrink it)."""
    return spans(ptr, a, b, _CHUNK if chunk is None else chunk)


class ScheduleError(FormatError):
    """A schedule broke a rule; the message names round, message and rule."""

    def __init__(self, round: int, message: int | None, rule: str):
        self.round, self.message, self.rule = round, message, rule
        where = "-" if message is None else str(message)
        super().__init__(f"round {round}, message {where}: {rule}")


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
        i = _first(self.item_len == 0)
        m(i, "message carries no items")
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
