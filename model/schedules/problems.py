"""Every problem of a schedule at once (up to a limit), for ``check``.

The validator stops at the first broken rule. To list more, the offending
message is left out and the rest checked again, up to ``limit`` problems;
positions stay those of the file. Later problems may follow from earlier
ones (a receiver that missed an item cannot forward it), and an incomplete
result is reported only when it is the one problem (otherwise it may be the
left-out messages' doing). Schedules of more than :data:`MAX_REPEAT_MESSAGES`
messages get their first problem only: each repetition is a full pass.
"""

from __future__ import annotations

import numpy as np

from .ir import Schedule
from .validate import ScheduleError, validate

__all__ = ["problems", "MAX_PROBLEMS", "MAX_REPEAT_MESSAGES"]

#: Problems ``check`` lists by default.
MAX_PROBLEMS = 20
#: Largest schedule checked more than once (a pass over a million messages takes
#: about 1.5 s on the loaded 2-core machine, so 20 passes would keep check busy).
MAX_REPEAT_MESSAGES = 1 << 18


def _without(s: Schedule, m: int) -> Schedule:
    """``s`` with message ``m`` (0-based over the schedule) left out."""
    d0, d1 = int(s.dst_ptr[m]), int(s.dst_ptr[m + 1])
    i0, i1 = int(s.item_ptr[m]), int(s.item_ptr[m + 1])
    round_ptr = s.round_ptr - (s.round_ptr > m)
    dst_ptr = np.delete(s.dst_ptr, m + 1)
    dst_ptr[m + 1:] -= d1 - d0
    item_ptr = np.delete(s.item_ptr, m + 1)
    item_ptr[m + 1:] -= i1 - i0
    return Schedule(topology=s.topology, model=s.model, p=s.p, round_ptr=round_ptr,
                    src=np.delete(s.src, m), dst_ptr=dst_ptr,
                    dst=np.delete(s.dst, np.arange(d0, d1)), item_ptr=item_ptr,
                    items=np.delete(s.items, np.arange(i0, i1)), primitive=s.primitive,
                    root=s.root, origin=s.origin)


def problems(s: Schedule, limit: int = MAX_PROBLEMS) -> tuple[list[ScheduleError], bool]:
    """Up to ``limit`` problems of ``s`` in schedule order, and whether more may follow.

    Every error names the round and the message's position in the file.
    """
    found: list[ScheduleError] = []
    original = np.arange(s.messages)  # file position of every message still in
    current = s
    while len(found) < limit:
        v = validate(current)
        if v.valid:
            return found, False
        e = v.exception
        if e.message is None:  # incomplete
            if not found:
                found.append(e)
            return found, False
        m = int(current.round_ptr[e.round - 1]) + e.message
        at = int(original[m])
        found.append(ScheduleError(e.round, at - int(s.round_ptr[e.round - 1]), e.rule))
        if s.messages > MAX_REPEAT_MESSAGES:
            return found, True
        current = _without(current, m)
        original = np.delete(original, m)
    v = validate(current)
    return found, not v.valid and v.exception.message is not None
