"""Local improvement of a finished telephone (``F1``) schedule: cut ``S`` (and ``R``).

A linear-cost round costs ``1 + tau * s_t`` where ``s_t`` is its largest
message, so every message smaller than ``s_t`` leaves room that costs nothing.
:func:`improve_schedule` keeps the calls of the schedule (who talks to whom in
which round) and moves deliveries earlier into that room:

* an item ``x`` that node ``v`` receives in round ``t`` is delivered instead in
  the earliest round ``t' < t`` in which ``v`` already talks to a partner that
  knows ``x`` by then, if the partner's message to ``v`` in ``t'`` is still
  below that round's largest message. No round's largest message grows, and a
  node learning an item earlier can only forward it earlier, so the schedule
  stays valid and ``S`` can only fall (a round whose largest messages all lose
  an item costs ``tau`` less);
* a round's largest messages each postpone one item to a later round in which
  the receiver's partner knows it and has room, if the receiver forwards it to
  nobody before then; when all of them can, the round costs ``tau`` less;
* a round left with no message is dropped (``R`` falls by one).

Rounds are visited in order, so an item moved earlier to ``v`` can be moved
earlier again on its way from ``v``. The schedule is kept as the arrival round
of every item at every node (``n x h`` integers) plus each round's partners;
the work is ``O(R^2 n h)`` vector operations, which is why callers bound it
(:data:`MAX_CELLS`).
"""

from __future__ import annotations

import numpy as np

from ..schedules.ir import Schedule

__all__ = ["improve_schedule", "MAX_CELLS"]

#: ``n * h`` above which :func:`improve_schedule` returns the schedule unchanged
#: (a 1,024-node gossip is 1 M cells, a few seconds here).
MAX_CELLS = 4_000_000
_NEVER = np.iinfo(np.int32).max


def _arrivals(s: Schedule):
    """Items, the arrival round of each at each node (0: held at the start), and each
    round's partners (``-1``: idle)."""
    n, R = s.n, s.rounds_total
    items = np.arange(n) if s.primitive == "gossip" else np.array([s.root])
    col = np.full(n, -1, np.int64)
    col[items] = np.arange(len(items))
    A = np.full((n, len(items)), _NEVER, np.int32)
    A[items, np.arange(len(items))] = 0
    P = np.full((R + 1, n), -1, np.int64)
    for r in range(1, R + 1):
        a, b = int(s.round_ptr[r - 1]), int(s.round_ptr[r])
        src, dst = s.src[a:b], s.dst[s.dst_ptr[a:b]]
        P[r, src], P[r, dst] = dst, src
        sizes = np.diff(s.item_ptr[a:b + 1])
        rows = np.repeat(dst, sizes)
        A[rows, col[s.items[s.item_ptr[a]:s.item_ptr[b]]]] = r
    return items, A, P


def _first_sends(A: np.ndarray, P: np.ndarray, load: np.ndarray) -> np.ndarray:
    """``F[v, x]``: the first round in which ``v`` sends item ``x`` (never: a large value)."""
    F = np.full(A.shape, _NEVER, np.int32)
    for r in range(1, len(P)):
        rows = np.flatnonzero(load[r])
        senders = P[r, rows]
        F[senders] = np.where(A[rows] == r, np.minimum(F[senders], r), F[senders])
    return F


def _postpone(A: np.ndarray, P: np.ndarray, load: np.ndarray, top: np.ndarray) -> None:
    """Lower rounds' largest messages by postponing one item of each: ``v`` may get ``x``
    in a later round ``t''`` instead of ``t`` when its partner then knows ``x``, has room,
    and ``v`` sends ``x`` to nobody before ``t''``. All or none of a round's largest
    messages shed an item (otherwise the round costs the same and the room is lost)."""
    R = len(P) - 1
    F = _first_sends(A, P, load)
    for t in range(R - 1, 0, -1):
        while top[t] > 1:
            rows = np.flatnonzero(load[t] == top[t])
            done = []  # (later round, rows, item per row, the senders' old first sends)
            left = np.ones(len(rows), bool)
            for later in range(t + 1, R + 1):
                r = rows[left]
                partner = P[later, r]
                # a partner postponing in this same batch might not know the item yet
                ok = (partner >= 0) & (load[later, r] < top[later]) & ~np.isin(partner, r)
                if not ok.any():
                    continue
                r, partner = r[ok], partner[ok]
                movable = (A[r] == t) & (A[partner] < later) & (F[r] > later)
                has = movable.any(axis=1)
                if not has.any():
                    continue
                r, partner = r[has], partner[has]
                x = movable[has].argmax(axis=1)
                done.append((later, r, x, F[partner, x].copy()))
                A[r, x] = later
                load[later, r] += 1
                load[t, r] -= 1
                F[partner, x] = np.minimum(F[partner, x], later)
                left[np.isin(rows, r)] = False
                if not left.any():
                    break
            if left.any():  # some largest message keeps its size: undo the batch
                for later, r, x, old in reversed(done):
                    F[P[later, r], x] = old
                    A[r, x] = t
                    load[later, r] -= 1
                    load[t, r] += 1
                break
            top[t] -= 1


def improve_schedule(s: Schedule) -> Schedule:
    """``s`` with deliveries moved into earlier rounds' spare room and empty rounds
    dropped; never a larger ``R`` or ``S``.

    ``s`` must be a valid ``F1`` gossip or broadcast schedule of one-receiver
    messages with unlimited packets (what the matching and colouring heuristics
    write); anything else, or more than :data:`MAX_CELLS` node-item pairs, is
    returned as it is.
    """
    if (s.model != "F1" or s.p is not None or s.primitive not in ("gossip", "broadcast")
            or len(s.dst) != len(s.src) or s.rounds_total < 2):
        return s
    h = s.n if s.primitive == "gossip" else 1
    if s.n * h > MAX_CELLS:
        return s
    items, A, P = _arrivals(s)
    R = s.rounds_total
    load = np.stack([(A == r).sum(axis=1) for r in range(R + 1)])  # load[r, v]: v receives
    top = load.max(axis=1)
    for t in range(2, R + 1):
        for early in range(1, t):
            rows = np.flatnonzero((load[t] > 0) & (P[early] >= 0) & (load[early] < top[early]))
            if not len(rows):
                continue
            partner = P[early, rows]
            # what v gets in round t that its round-`early` partner already knows
            movable = (A[rows] == t) & (A[partner] < early)
            room = top[early] - load[early, rows]
            take = movable & (np.cumsum(movable, axis=1) <= room[:, None])
            moved = take.sum(axis=1)
            if not moved.any():
                continue
            A[rows] = np.where(take, early, A[rows])
            load[early, rows] += moved
            load[t, rows] -= moved
        top[t] = load[t].max()  # what later rounds may fill this one up to
    _postpone(A, P, load, top)
    keep = [r for r in range(1, R + 1) if load[r].any()]
    rounds = []
    for r in keep:
        dst = np.flatnonzero(load[r])
        rounds.append([{"src": int(P[r, v]), "dst": [int(v)],
                        "items": items[np.flatnonzero(A[v] == r)].tolist()} for v in dst])
    return Schedule.from_rounds(rounds, topology=s.topology, model="F1", p=None,
                                primitive=s.primitive, root=s.root,
                                origin={"algorithm": s.origin["algorithm"],
                                        "source": s.origin["source"] + "; improved (deliveries "
                                        "moved into earlier rounds' spare room)"})
