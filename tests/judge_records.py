"""Correct schedule-fabric records, stored: the judge's tests read them, no simulator needed.

Each entry of ``fixtures/schedule_records.json`` is one program (made by
:data:`CASES`) and the record Amaranth's simulator gave for it, so the
judge's tests (and every mutant of the judge, ``dev.py mutate``) run in
seconds. ``tests/test_sim_judge_schedule.py`` checks that the stored records
are still what the fabric does; ``python3 tests/schedule_records.py``
rewrites the file when the fabric changes on purpose.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "schedule_records.json"


def _gather():
    from pipegossip.model.schedules import Message, Schedule
    from pipegossip.model.schedules.ir import complete
    return Schedule.from_rounds([[Message(1, (0,), (1,)), Message(3, (2,), (3,))],
                                 [Message(2, (0,), (2, 3))]], topology=complete(4), model="F1",
                                p=None, primitive="gather", root=0)


def _broadcast():
    from pipegossip.model.schedules import Message, Schedule
    from pipegossip.model.schedules.ir import complete
    return Schedule.from_rounds([[Message(2, (0,), (2,))],
                                 [Message(2, (1,), (2,)), Message(0, (3,), (2,))]],
                                topology=complete(4), model="F1", p=1, primitive="broadcast",
                                root=2)


def programs() -> dict:
    """Name -> (program, word seed): the programs whose records are stored."""
    from pipegossip.model.algorithms.limits import cyclic_shift
    from pipegossip.model.algorithms.reduce import allreduce_schedule
    from pipegossip.model.schedules.program import compile_schedule
    from pipegossip.model.schedules.stream import compile_stream
    from pipegossip.model.schedules.topologies import topology
    return {
        "shift4": (compile_schedule(cyclic_shift(4), depth=8), 3),
        # one bank: every timed load has a window of one cycle
        "stream5": (compile_stream(cyclic_shift(5), 3, banks=1), 3),
        "allreduce4": (compile_schedule(allreduce_schedule(topology("hypercube", k=2))), 5),
        "gather4": (compile_schedule(_gather(), depth=8, slots=4), 1),
        "broadcast4": (compile_schedule(_broadcast(), depth=8, slots=4), 2),
    }


def fresh() -> dict:
    """Name -> the record's JSON, from Amaranth's simulator now (wall time left out)."""
    from pipegossip.sim.schedule.cosim import run_programs_amaranth
    out = {}
    for name, (program, seed) in programs().items():
        (record,) = run_programs_amaranth([program], seed=seed, names=[name])
        data = record.to_json()
        data.pop("wall_seconds")
        out[name] = data
    return out


def stored() -> dict:
    """Name -> (program, the stored ScheduleRun)."""
    from pipegossip.sim.record import ScheduleRun
    data = json.loads(FIXTURE.read_text())
    return {name: (program, ScheduleRun.from_json(data[name]))
            for name, (program, _) in programs().items()}


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(fresh(), separators=(",", ":")) + "\n")
    print(f"wrote {FIXTURE}", file=sys.stderr)
