"""Calls of short-messages gossip, knowledge as bit masks, checked as they are made.

Shared by the section-3 protocol (:mod:`.short_messages`) and the schemes that
beat it (:mod:`.short_messages_schemes`), which both build sequences of calls.
"""

from __future__ import annotations

__all__ = ["Calls", "lowest"]


class Calls:
    """A sequence of calls with knowledge as bit masks; payloads are checked as they are made."""

    def __init__(self, n: int, p: int | None):
        self.n, self.p = n, p
        self.full = (1 << n) - 1
        self.know = [1 << v for v in range(n)]
        self.calls: list[tuple[int, int, int, int]] = []  # (u, v, blocks u->v, blocks v->u)
        self.cycle_d: int | None = None  # the last phase's type-1 cycle step (h even)

    def run(self, a: int, length: int) -> int:
        """Blocks ``a, a+1, ..., a+length-1`` (mod n) as a mask."""
        if length <= 0:
            return 0
        a %= self.n
        mask = ((1 << min(length, self.n)) - 1) << a
        return (mask | (mask >> self.n)) & self.full

    def call(self, u: int, v: int, to_v: int | None = None, to_u: int | None = None) -> None:
        """``u`` and ``v`` talk; each sends the wanted blocks (default: all) the other lacks."""
        ku, kv = self.know[u], self.know[v]
        to_v = (ku if to_v is None else to_v) & ~kv
        to_u = (kv if to_u is None else to_u) & ~ku
        for sender, mask, k in ((u, to_v, ku), (v, to_u, kv)):
            if mask & ~k:
                raise AssertionError(f"node {sender} would send blocks it does not hold")
            if self.p is not None and mask.bit_count() > self.p:
                raise AssertionError(f"node {sender} would send {mask.bit_count()} > p blocks")
        if to_v or to_u:  # a call with nothing to say is dropped, not counted
            self.calls.append((u, v, to_v, to_u))
            self.know[u], self.know[v] = ku | to_u, kv | to_v

    def missing(self, v: int) -> int:
        return self.full & ~self.know[v]


def lowest(mask: int, count: int) -> int:
    """The ``count`` lowest set bits of ``mask`` (all of them when it has fewer)."""
    out = 0
    for _ in range(count):
        low = mask & -mask
        out |= low
        mask ^= low
    return out
