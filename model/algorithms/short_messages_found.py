"""Call sequences the exact search found where no construction of ours is as short.

Each entry is what ``pipegossip short-messages-search --n N --p P --calls M``
printed (a SAT solver's model, CaDiCaL 1.5.3 through python-sat, encoding of
:mod:`.short_messages_search`): the certificate that ``c(N, P) <= M``. The
entry also names the command that proves ``M - 1`` impossible, when one
has been run to the end (docs/literature.md has the times). The (9, 3)
and (10, 3) sequences were found before the encoding gained its "a
reception is real" clause (commit after 7262c66); the command may now
return another sequence of the same length. Nothing here
is trusted: :func:`found_calls` replays every call through
:class:`.short_messages_calls.Calls` (the sender holds each block it sends, at
most ``p`` of them), :func:`.short_messages.best_calls` refuses an
incomplete gossip, and the tests put the schedule through the validator.

A stored sequence is a fact about one ``(n, p)``; it is used only where it
has fewer calls than the section-3 protocol and the schemes of
:mod:`.short_messages_schemes`.
"""

from __future__ import annotations

from .short_messages_calls import Calls

__all__ = ["FOUND", "found_calls"]

#: ``(n, p) -> {"calls": [(u, v, blocks u->v, blocks v->u)], "found_by", "optimal_by"}``.
FOUND: dict[tuple[int, int], dict] = {
    (8, 3): {
        "calls": [(0, 1, [0], [1]), (2, 3, [2], [3]), (4, 5, [4], [5]), (2, 6, [2, 3], [6]),
                  (4, 7, [4, 5], [7]), (1, 4, [0, 1], [4, 5, 7]), (4, 6, [4, 5, 7], [2, 3, 6]),
                  (0, 6, [0, 1], [3, 4, 6]), (1, 2, [0, 1, 7], [2, 3, 6]),
                  (3, 7, [2, 3], [4, 5, 7]), (0, 7, [0, 1, 6], [2, 5, 7]),
                  (2, 5, [0, 1, 6], [4, 5]), (3, 5, [2, 3, 7], [0, 1, 6])],
        "found_by": "pipegossip short-messages-search --n 8 --p 3 --calls 13",
        "optimal_by": "pipegossip short-messages-search --n 8 --p 3 (12 calls UNSAT)",
    },
    (9, 3): {
        "calls": [(0, 1, [0], [1]), (2, 3, [2], [3]), (2, 4, [2, 3], [4]), (3, 5, [2], [5]),
                  (5, 6, [2, 5], [6]), (6, 7, [2, 5, 6], [7]), (0, 7, [0, 1], [5, 6, 7]),
                  (0, 4, [5, 6, 7], [3, 4]), (1, 8, [0, 1], [8]), (0, 5, [3, 4, 7], []),
                  (1, 4, [0, 1, 8], [3, 4, 7]), (1, 6, [0, 1, 8], [2, 5, 6]),
                  (2, 6, [3, 4], [0, 7, 8]), (0, 2, [1, 5, 6], [2, 8]),
                  (5, 8, [4, 6, 7], [0, 1, 8]), (3, 8, [2, 3, 5], [0, 4, 8]),
                  (3, 7, [3, 4, 8], [1, 6, 7])],
        "found_by": "pipegossip short-messages-search --n 9 --p 3 --calls 17",
        "optimal_by": None,
    },
    (10, 3): {
        "calls": [(0, 1, [0], [1]), (0, 2, [0, 1], [2]), (0, 3, [0, 1, 2], [3]),
                  (3, 4, [0, 2, 3], [4]), (3, 5, [1, 3, 4], [5]), (3, 6, [3, 4, 5], [6]),
                  (5, 7, [3, 4, 5], [7]), (2, 6, [0, 1, 2], [3, 5, 6]), (2, 8, [0, 2, 6], [8]),
                  (5, 8, [1, 4, 7], [2, 6, 8]), (5, 9, [3, 5, 6], [9]),
                  (8, 9, [4, 7, 8], [3, 5, 9]), (0, 9, [0, 1, 2], [6, 8, 9]),
                  (0, 7, [2, 8, 9], [4, 5, 7]), (1, 5, [0], [7, 8, 9]),
                  (1, 4, [7, 8, 9], [2, 4]), (1, 3, [7, 8, 9], [3, 5, 6]),
                  (2, 7, [0, 1, 6], [4, 7, 9]), (4, 6, [7, 8, 9], [1, 5, 6])],
        "found_by": "pipegossip short-messages-search --n 10 --p 3 --calls 19",
        "optimal_by": "lower bound (2): 19 calls",
    },
}


def _mask(blocks) -> int:
    out = 0
    for b in blocks:
        out |= 1 << b
    return out


def found_calls(n: int, p: int) -> Calls | None:
    """The stored sequence for ``(n, p)`` replayed and checked call by call, or None."""
    entry = FOUND.get((n, p))
    if entry is None:
        return None
    c = Calls(n, p)
    for u, v, a, b in entry["calls"]:
        c.call(u, v, _mask(a), _mask(b))
    if len(c.calls) != len(entry["calls"]):
        raise AssertionError(f"found n={n} p={p}: a stored call carries nothing new")
    return c
