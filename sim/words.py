"""The words the testbench feeds into the fabric, tagged by source and session.

Every processor broadcasts one word per session. The testbench and the
scoreboard both derive those words from ``(N, sessions, width, seed)`` with
:func:`tagged_words`, so a word that reaches the wrong processor, carries the
wrong session or comes from the wrong source is caught by value, not only by
the fabric's own ``source``/``session`` fields.

When the word width allows it (``N * sessions <= 2**width``) all words of a
run are distinct, so a misrouted word can never look right by accident; with
narrower words they are seeded random values and only the tag fields can
catch a misrouting between equal words.
"""

from __future__ import annotations

import random

__all__ = ["tagged_words", "distinct_words_possible"]


def distinct_words_possible(n: int, sessions: int, width: int) -> bool:
    """Whether ``n * sessions`` words of ``width`` bits can all differ."""
    return n * sessions <= 1 << width


def tagged_words(n: int, sessions: int, width: int, seed: int) -> list[list[int]]:
    """The word of every processor in every session.

    Parameters
    ----------
    n : int
        Number of processors.
    sessions : int
        Number of sessions.
    width : int
        Word width in bits (>= 1).
    seed : int
        Word seed; the same arguments always give the same words.

    Returns
    -------
    list of list of int
        ``words[src][session]``, each in ``0 .. 2**width - 1``.
    """
    if width < 1:
        raise ValueError(f"word width must be at least 1, got {width!r}")
    # A string seed keeps the stream independent of Python's int hashing and
    # of the other parameters' order.
    rng = random.Random(f"pipegossip-words:{n}:{sessions}:{width}:{seed}")
    count = n * sessions
    if not distinct_words_possible(n, sessions, width):
        flat = [rng.getrandbits(width) for _ in range(count)]
    elif width <= 32:
        flat = rng.sample(range(1 << width), count)
    else:
        # range() of 2**width is too long for sample(); redraw the (very
        # rare) repeats instead.
        flat, seen = [], set()
        while len(flat) < count:
            w = rng.getrandbits(width)
            if w not in seen:
                seen.add(w)
                flat.append(w)
    return [flat[src * sessions:(src + 1) * sessions] for src in range(n)]
