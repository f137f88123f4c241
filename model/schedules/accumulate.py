"""Which messages a whole-accumulator fabric can send.

A fabric whose nodes keep one accumulator per node (the combination of the
tokens they hold) can send that accumulator and nothing else: a ``reduce``
or ``allreduce`` message whose set is a *part* of what its sender holds
needs another word the node does not have (docs/schedules.md, section
Primitives). A compiler for such a fabric refuses the schedule at the first
such message, which :func:`first_partial_send` names.
"""

from __future__ import annotations

from .ir import Schedule

__all__ = ["first_partial_send"]


def first_partial_send(s: Schedule) -> tuple[int, int, str] | None:
    """``(round, message, rule)`` of the first message that does not send its
    sender's whole set, or None when every message does.

    ``round`` is 1-based and ``message`` the 0-based position in the round,
    as in validator errors. Only meaningful for a valid ``reduce`` or
    ``allreduce`` schedule (what a node holds is the union of what it
    received, from the start of each round).
    """
    if s.primitive not in ("reduce", "allreduce"):
        raise ValueError(f"whole-accumulator sends concern reduce and allreduce, "
                         f"not {s.primitive}")
    held = [1 << v for v in range(s.n)]
    src, dst, items = s.src.tolist(), s.dst.tolist(), s.items.tolist()
    dp, ip, rp = s.dst_ptr.tolist(), s.item_ptr.tolist(), s.round_ptr.tolist()
    for r in range(1, len(rp)):
        got = []
        for m in range(rp[r - 1], rp[r]):
            word = 0
            for x in items[ip[m]:ip[m + 1]]:
                word |= 1 << x
            if word != held[src[m]]:
                return r, m - rp[r - 1], (f"node {src[m]} sends {bin(word).count('1')} of the "
                                          f"{bin(held[src[m]]).count('1')} tokens it holds: a "
                                          "part of its accumulator")
            got += [(d, word) for d in dst[dp[m]:dp[m + 1]]]
        for d, word in got:
            held[d] |= word
    return None
