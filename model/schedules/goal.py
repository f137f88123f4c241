"""What each primitive must reach, and how far a schedule has got.

The goal is a set of (node, item) pairs: gossip, every node holds every
item (allreduce: every token); broadcast, every node holds the root's items;
gather, the root holds every item (reduce: every token); polling, the root
holds every node's response. The validator
refuses a schedule whose end misses a pair of :func:`goal_pairs`;
:func:`goal_progress` counts the pairs reached round by round (for
pictures: the count a schedule must climb to, whatever the primitive).
"""

from __future__ import annotations

import numpy as np

from .ir import Q_ID, Schedule

__all__ = ["GOAL_TEXT", "goal_pairs", "goal_progress"]

#: The goal of each primitive, in words.
GOAL_TEXT = {
    "gossip": "every node holds every item",
    "broadcast": "every node holds the root's items",
    "gather": "the root holds every item",
    "polling": "the root holds every node's response",
    "reduce": "the root holds the combination of every token",
    "allreduce": "every node holds the combination of every token",
}


def goal_pairs(s: Schedule, h: int) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, items)``: every node of ``rows`` must end holding every item of ``items``.

    ``h`` is the number of items per node (node ``v`` owns ``v, v+n, ...``);
    a polling response of node ``v`` is item ``v``.
    """
    n = s.n
    if s.primitive == "polling":
        return np.array([s.root]), np.arange(n)
    if s.primitive in ("gather", "reduce"):
        return np.array([s.root]), np.arange(n * h)
    if s.primitive == "broadcast":
        return np.arange(n), s.root + n * np.arange(h)
    return np.arange(n), np.arange(n * h)


def goal_progress(s: Schedule, h: int) -> list[int]:
    """Goal pairs held at the start and after each round, ``rounds_total + 1`` counts.

    Counted from what the messages deliver; for a schedule the validator
    accepts (every sender holds what it sends) that is what the nodes hold.
    """
    n, rounds = s.n, s.rounds_total
    rows, need = goal_pairs(s, h)
    row_at = np.full(n, -1, dtype=np.int64)
    row_at[rows] = np.arange(len(rows))
    item_at = np.full(n * h + 1, -1, dtype=np.int64)  # the last slot: the question 'q'
    item_at[need] = np.arange(len(need))
    # Round (1-based) in which each goal pair is first held; rounds + 1: never.
    first = np.full(len(rows) * len(need), rounds + 1, dtype=np.int64)
    if s.primitive == "polling":  # the root starts with the question and its own response
        owners, owned = np.array([s.root]), np.array([s.root])
    else:
        owned = np.arange(n * h)
        owners = owned % n
    # every (receiver, item) pair of every message, with the message's round
    dst_len, item_len = np.diff(s.dst_ptr), np.diff(s.item_ptr)
    item_msg = np.repeat(np.arange(len(s.src)), item_len)
    per = dst_len[item_msg]
    pair_msg = np.repeat(item_msg, per)
    offs = np.arange(len(pair_msg)) - np.repeat(np.cumsum(per) - per, per)
    recv = np.concatenate([owners, s.dst[s.dst_ptr[pair_msg] + offs]])
    item = np.concatenate([owned, np.where(s.items == Q_ID, n * h, s.items)[
        np.repeat(np.arange(len(s.items)), per)]])
    msg_round = np.repeat(np.arange(1, rounds + 1), np.diff(s.round_ptr))
    when = np.concatenate([np.zeros(len(owners), dtype=np.int64), msg_round[pair_msg]])
    keep = (row_at[recv] >= 0) & (item_at[np.clip(item, 0, n * h)] >= 0)
    np.minimum.at(first, row_at[recv[keep]] * len(need) + item_at[item[keep]], when[keep])
    return np.cumsum(np.bincount(first, minlength=rounds + 2)[:rounds + 1]).tolist()
