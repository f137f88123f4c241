"""What a driver writes through the network fabric's load port, and the words it loads.

The network fabric uses the schedule fabric's load scheme
(:func:`pipegossip.hw.schedule.load.load_writes`) plus one ACC write per node
whose accumulator starts with its own token (polling, reduce, allreduce) and
a DIRECTORY write per node and slot (where the node keeps it, for the
read-back). The
judge derives the expected words from :func:`item_words`, so driver and judge
agree on the words by construction (the tagged-word scheme of
:mod:`pipegossip.hw.words`).
"""

from __future__ import annotations

from ...model.schedules.network_program import NetworkProgram
from ..schedule.load import Write, load_writes
from ..words import seeded_word
from .fabric import DIRECTORY

__all__ = ["item_words", "network_writes"]


def item_words(program: NetworkProgram, seed: int = 0) -> list[int]:
    """The word of every item (item ``s*n + v``: node v's tagged word of session s).

    Tokens of polling, reduce and allreduce are items ``0 .. n-1``; the store
    slots' words follow from these (:meth:`NetworkProgram.slot_words`).
    """
    n, h = program.n, program.items
    return [seeded_word(seed, i % n, i // n, h, program.width) for i in range(n * h)]


def network_writes(program: NetworkProgram, seed: int = 0) -> list[Write]:
    """The writes that load ``program``: header, directory, items, initial accumulators, entries.

    Every slot of every node gets a DIRECTORY write (an empty entry where the
    node stores nothing), so no entry of an earlier program survives; items
    come in ascending slot order, the order the own bank is filled in.
    """
    words = item_words(program, seed)
    accs = [a if program.acc_sets[0][v] else None
            for v, a in enumerate(program.initial_acc(words))]
    out = load_writes(program, seed, words=program.slot_words(words), accs=accs)
    table = program.directory_words()
    return [out[0], *[(DIRECTORY, v, x, e) for v, row in enumerate(table)
                      for x, e in enumerate(row)], *out[1:]]
