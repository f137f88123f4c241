"""Item ids in pieces (model/schedules/chunks.py): spans bounded by a chunk, and the
int64 join that lets each int32 piece go."""

import numpy as np
import pytest

from pipegossip.model.schedules.chunks import join_ids, spans


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 100])
def test_spans_cover_the_range_in_order_within_the_chunk(chunk):
    sizes = np.array([2, 0, 1, 4, 1, 1, 0, 3])
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    for a, b in ((0, len(sizes)), (2, 6), (3, 3)):
        got = list(spans(ptr, a, b, chunk))
        flat = [m for x, y in got for m in range(x, y)]
        assert flat == list(range(a, b))
        for x, y in got:  # at most chunk ids, or a single message that has more
            assert ptr[y] - ptr[x] <= chunk or y == x + 1


def test_join_ids_concatenates_as_int64_and_lets_every_piece_go():
    pieces = [np.array([3, 1], np.int32), np.zeros(0, np.int32), np.array([7], np.int32)]
    ids = join_ids(pieces, 3)
    assert ids.dtype == np.int64 and ids.tolist() == [3, 1, 7]
    assert pieces == [None, None, None]
