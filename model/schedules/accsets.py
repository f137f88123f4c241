"""Accumulator bookkeeping shared by the two program-driven fabrics' compilers.

Both the schedule fabric (a crossbar, :mod:`.program`) and the network
fabric (:mod:`.network_program`) give every node one accumulator that a
message may carry instead of a store word and that a receive may combine
into. What a combined message may carry, how the token sets grow cycle by
cycle, and which accumulators must end complete are the same rules on both;
they live here so that both compilers refuse the same schedules with the
same words (only the fabric's name differs).

A *token* is an item id: node ``v``'s token in ``reduce``/``allreduce`` and
its response in ``polling`` is item ``v``; a store word that is combined
(gather and polling at the root) is the token of its item.
"""

from __future__ import annotations

from ..errors import ConfigError
from .ir import COMBINING, Q_ID, Schedule

__all__ = ["ProgramError", "ACC", "combine_words", "message_words", "step_sets", "check_complete"]

class ProgramError(ConfigError):
    """A schedule a program-driven fabric cannot run as asked (depth, slots, ports, sends)."""


#: "The node's accumulator" where a program names a word sent (else a store slot or NONE).
ACC = -2


def combine_words(op: str, words, width: int) -> int:
    """The combination of ``words`` under ``op`` (identity 0), as ``width`` bits."""
    out = 0
    for w in words:
        out = (out + int(w)) if op == "sum" else (out ^ int(w))
    return out & ((1 << width) - 1)


def message_words(s: Schedule, items: tuple, u: int, dsts: tuple, acc: list[set], r: int,
                  question_slot: int, fabric: str) -> list:
    """The words of one message: store slots, or :data:`ACC` (combining primitives).

    ``acc[u]`` is the token set of the sender's accumulator when it sends;
    ``question_slot`` the store slot of polling's question; ``fabric`` names
    the fabric in the refusals (``"the network fabric"``).
    """
    if s.primitive not in COMBINING:
        return [int(i) for i in items]
    tokens = {int(i) for i in items if i != "q" and i != Q_ID}
    if s.primitive == "polling":
        if not tokens:
            return [question_slot]
        if not acc[u] <= tokens:
            raise ProgramError(f"round {r}: node {u}'s accumulator holds responses "
                               f"{sorted(acc[u] - tokens)} its message does not list; {fabric} "
                               f"sends the whole accumulator")
        if acc[u] and len(dsts) > 1:
            raise ProgramError(f"round {r}: node {u} sends its responses to {len(dsts)} nodes; "
                               f"a drained accumulator reaches one receiver")
        return [ACC]
    if tokens != acc[u]:
        raise ProgramError(f"round {r}: node {u} sends tokens {sorted(tokens)} but its "
                           f"accumulator holds {sorted(acc[u])}: {fabric} sends only "
                           f"the whole accumulator, never a part of it")
    return [ACC]


def step_sets(acc: list[set], drained, arrivals, r: int) -> list[set]:
    """The accumulators' token sets after one cycle.

    ``drained[u]``: node ``u``'s accumulator restarts empty (before this
    cycle's arrivals); ``arrivals``: ``(node, token set)`` combined into it
    this cycle. A token combined twice into one accumulator is refused.
    """
    new = [set() if drained[u] else set(acc[u]) for u in range(len(acc))]
    for d, got in arrivals:
        if got & new[d]:
            raise ProgramError(f"round {r}: node {d} would count {sorted(got & new[d])} twice "
                               f"in its accumulator")
        new[d] |= got
    return new


def check_complete(s: Schedule, acc: list[set], fabric: str) -> None:
    """Refuse a polling/reduce/allreduce whose accumulators would not end complete."""
    everyone = frozenset(range(s.n))
    want = {"polling": [s.root], "reduce": [s.root], "allreduce": list(range(s.n))}
    for u in want.get(s.primitive, []):
        if acc[u] != everyone:
            raise ProgramError(f"node {u}'s accumulator would end without "
                               f"{sorted(everyone - acc[u])[:8]}: the schedule does not combine "
                               f"every {'response' if s.primitive == 'polling' else 'token'} "
                               f"on {fabric}")
