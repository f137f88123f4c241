"""Schedule-fabric proofs: which program to load, and how SymbiYosys reads the design.

A schedule-fabric proof loads one compiled schedule: a generator of
:data:`~.catalog.SCHEDULE_FAMILIES` at size N, or any schedule file. The
fabric's program and item stores are memories; SymbiYosys would hand them
to the solver as SMT arrays, which z3 handles slowly over the load and run
(an N=4 one-factor check did not finish in 10 minutes), so
their jobs run :data:`MAP_MEMORIES` after ``prep``: Yosys maps them to
flip-flops (``memory_map``) before the model is written, the same circuit
bit for bit.
"""

from __future__ import annotations

from pathlib import Path

from ...model.schedules.program import Program, compile_schedule
from .catalog import SCHEDULE_FAMILIES

__all__ = ["schedule_program", "file_program", "MAP_MEMORIES"]

#: Yosys commands run after ``prep`` for a schedule-fabric proof.
MAP_MEMORIES = "memory_map\nopt -fast\n"


def schedule_program(family: str, n: int, width: int) -> Program:
    """The compiled program of generator ``family`` at size ``n`` (exact depth and slots).

    Raises
    ------
    ValueError
        An unknown family, or a size the generator refuses.
    """
    from ...model.algorithms.limits import GENERATORS

    if family not in SCHEDULE_FAMILIES:
        raise ValueError(f"unknown schedule family {family!r} "
                         f"(expected one of {', '.join(SCHEDULE_FAMILIES)})")
    return compile_schedule(GENERATORS[family](n), width=width)


def file_program(path: str | Path, width: int) -> Program:
    """The compiled program of a schedule file (validated; refused if invalid).

    Raises
    ------
    FormatError, ScheduleError, ProgramError
        An unreadable file, an invalid schedule, one the fabric cannot run.
    """
    from ...model.schedules.read_rounds import load

    return compile_schedule(load(str(path)), width=width)


