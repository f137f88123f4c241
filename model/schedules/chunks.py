"""Item ids in pieces: the passes over a schedule's ids that must not copy them.

A unit-cost gossip on 22,528 nodes carries 507 million item ids (4 GB as
int64); one int64 temporary per id would double that. The validator and the
generators therefore visit messages in spans of a bounded number of ids
(:func:`spans`) and build the final id array from per-round int32 pieces,
letting each piece go as it is copied (:func:`join_ids`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["spans", "join_ids"]


def spans(ptr: np.ndarray, a: int, b: int, chunk: int):
    """Message ranges ``(x, y)`` covering ``a..b`` in order, each with at most ``chunk``
    entries of ``ptr`` (item or receiver pointers), or one message that has more."""
    x = a
    while x < b:
        y = int(np.searchsorted(ptr, ptr[x] + chunk, side="right")) - 1
        y = min(max(y, x + 1), b)
        yield x, y
        x = y


def join_ids(pieces: list, total: int, dtype=np.int64) -> np.ndarray:
    """The concatenation of ``pieces`` (``total`` ids, int64 unless ``dtype``), each piece
    dropped from the list (set to None) once copied, so the peak is the result plus one
    piece."""
    ids = np.empty(total, dtype)
    at = 0
    for i, part in enumerate(pieces):
        ids[at:at + len(part)] = part
        at += len(part)
        pieces[i] = None
    return ids
