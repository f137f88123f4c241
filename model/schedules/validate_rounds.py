"""Validation of a schedule that is never held: its rounds checked as a generator yields them.

A unit-cost gossip on Table 5's ccc_12 (49,152 nodes) carries 2.4 billion item ids,
19 GB as int64: more than the machine. Its rounds come one at a time from a
generator (:func:`~pipegossip.model.algorithms.coloring.sequence_rounds`), and
:func:`validate_rounds` checks each as it comes and lets it go; what stays is the
knowledge bit matrix (``n^2`` bits, 300 MB there) and the metrics.

The rules are :func:`~.validate.validate`'s, by the same code: each round goes
through the static pass (:class:`~.validate_static._Static`, on that round alone)
and then the round-by-round pass (:class:`~.validate._Pass`), which stops at the
round's first static violation just as the whole-schedule path stops at the
schedule's. So the verdict, the error text and every metric are those of
:func:`~.validate.validate` on the schedule the rounds make, with one difference
the caller states: ``h``, the items per node, is declared up front (the whole path
reads it off the largest item id), so an id past ``n h`` is an unknown item here.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .ir import Schedule
from .validate import _MAX_BITS, Validation, _fail, _Pass
from .validate_static import ScheduleError, _Static

__all__ = ["validate_rounds"]


class _RoundView:
    """One round as the static pass reads a schedule: the header's fields and the
    round's arrays as given (int32 item ids stay int32: no copy of a round's
    hundreds of millions of ids)."""

    def __init__(self, header: Schedule, src, dst_ptr, dst, item_ptr, items):
        self.topology, self.model, self.p = header.topology, header.model, header.p
        self.primitive, self.root, self.n = header.primitive, header.root, header.n
        self.src, self.dst_ptr, self.dst = src, dst_ptr, dst
        self.item_ptr, self.items = item_ptr, items


def validate_rounds(header: Schedule, rounds: Iterable, h: int = 1,
                    knowledge: bool = False) -> Validation:
    """Check a schedule given round by round; the schedule is never held.

    Parameters
    ----------
    header : Schedule
        Topology, model, ``p``, primitive and root of the schedule (its own
        rounds are not read: a header with none will do).
    rounds : iterable of tuple
        Per round ``(src, dst_ptr, dst, item_ptr, items)``: the round's senders,
        receiver and item pointers (from 0, one longer than ``src``), receivers
        and item ids (any integer dtype). Each is dropped once checked.
    h : int
        Items per node (node ``v`` owns ``v, v+n, ...``).
    knowledge : bool
        Also record the items held, summed over nodes, after every round.

    Returns
    -------
    Validation
        As :func:`~.validate.validate` gives for the schedule of these rounds
        (the first error stops the generator: later rounds are not asked for).

    Raises
    ------
    ValueError
        ``h`` below 1, or a knowledge matrix over the validator's size limit.
    """
    n = header.n
    if isinstance(h, bool) or not isinstance(h, int) or h < 1:
        raise ValueError(f"h must be an integer >= 1, got {h!r}")
    if n * n * h > _MAX_BITS:
        raise ValueError(f"{n} nodes with {h} items each: {n * n * h} knowledge bits, over "
                         f"the validator's {_MAX_BITS}")
    run = _Pass(header, h, knowledge)
    r = 0
    for r, (src, dst_ptr, dst, item_ptr, items) in enumerate(rounds, 1):
        src, dst_ptr, dst, item_ptr = (np.asarray(x, np.int64) for x in
                                       (src, dst_ptr, dst, item_ptr))
        static = _Static(_RoundView(header, src, dst_ptr, dst, item_ptr, items), h).run()
        stop = len(src) if static is None else static[0]
        if stop:
            error = run.round(r, src[:stop], dst_ptr[:stop + 1], dst[:int(dst_ptr[stop])],
                              item_ptr[:stop + 1], items[:int(item_ptr[stop])])
            if error is not None:
                return _fail(n, error)
        elif static is None:
            run.empty()
        if static is not None:
            return _fail(n, ScheduleError(r, *static))
        del src, dst_ptr, dst, item_ptr, items
    result = run.result(r)
    if isinstance(result, ScheduleError):
        return _fail(n, result)
    return result
