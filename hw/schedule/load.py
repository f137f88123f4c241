"""What a driver writes through the schedule fabric's load port, and the words it loads.

Both producers of a schedule-fabric trace (the Amaranth-simulator run and the
cocotb testbench) load a program with :func:`load_writes`; the judge derives
the expected words from :func:`slot_words`, so driver and judge agree on the
words by construction (the one tagged-word scheme, :mod:`pipegossip.hw.words`).
"""

from __future__ import annotations

from ...model.schedules.program import Program, question_word
from ...model.schedules.stream import VIA_ITEM, VIA_LOAD, StreamProgram, load_timetable
from ..words import seeded_word
from .fabric import LoadKind

__all__ = ["slot_words", "load_writes", "Write", "TimedWrite", "stream_writes", "VIA_CODES"]

#: One load-port write: ``(kind, node, addr, data)``.
Write = tuple[int, int, int, int]
#: One store write while running: ``(clock cycle, via, node, slot, word)``; cycle 0 = the
#: start cycle, ``via`` a :data:`VIA_CODES` value.
TimedWrite = tuple[int, int, int, int, int]
#: ``via`` codes of a :data:`TimedWrite`: 0 the shared ``load`` port (kind ITEM), 1 the
#: node's own ``item`` port.
VIA_CODES = {VIA_LOAD: 0, VIA_ITEM: 1}


def slot_words(program: Program, seed: int = 0) -> list[int]:
    """The word of every store slot: item ``s*n + v`` is node v's tagged word of session s.

    The question slot of a polling program holds :func:`question_word`;
    spare slots hold 0.
    """
    h = program.items
    out = [0] * program.slots
    for slot in range(program.slots):
        owner = program.slot_owner(slot)
        if owner is not None:
            out[slot] = seeded_word(seed, owner[0], owner[1], h, program.width)
    q = program.question_slot()
    if q is not None:
        out[q] = question_word(program.width)
    return out


def load_writes(program, seed: int = 0, words: list[int] | None = None,
                accs: list[int | None] | None = None) -> list[Write]:
    """The writes that load ``program``: the header, every node's items, every entry.

    ``program`` is a :class:`Program` or a network program (anything with
    ``n``, ``slots``, ``cycles``, ``initial`` held bits and ``entries()``
    indexed ``[node][cycle]``). ``words`` (default :func:`slot_words`) are
    the slot words; ``accs`` every node's initial accumulator (an ACC write
    for each node whose entry is not None; default, for a :class:`Program`,
    its :meth:`~Program.initial_accs`: the own token of a forwarding program).
    One write per clock cycle; ``len(result)`` cycles in all.
    """
    words = slot_words(program, seed) if words is None else words
    if accs is None and isinstance(program, Program):
        accs = program.initial_accs(words)
    out: list[Write] = [(int(LoadKind.HEADER), 0, 0, program.cycles)]
    for v in range(program.n):
        out += [(int(LoadKind.ITEM), v, x, words[x])
                for x in range(program.slots) if program.initial[v, x]]
    if accs is not None:
        out += [(int(LoadKind.ACC), v, 0, a) for v, a in enumerate(accs) if a is not None]
    entries = program.entries()
    for v in range(program.n):
        out += [(int(LoadKind.PROGRAM), v, c, int(entries[v][c])) for c in range(program.cycles)]
    return out


def stream_writes(sp: StreamProgram, seed: int = 0, via: str = VIA_ITEM
                  ) -> tuple[list[Write], list[TimedWrite]]:
    """The writes of a streaming program: those before the start, and those while it runs.

    The first list loads the physical program (header, gossips
    ``0 .. banks-1``, entries) as :func:`load_writes`; the second writes
    every later gossip's words at the cycles of
    :func:`~pipegossip.model.schedules.stream.load_timetable`, through
    ``via``. Item ``g*n + v`` carries node v's tagged word of session g.
    """
    words = slot_words(sp.logical, seed)
    timed = [(k, VIA_CODES[via], ld.node, ld.slot, words[ld.item])
             for k, ld in load_timetable(sp, via)]
    return load_writes(sp.program, seed), timed
