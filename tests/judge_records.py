"""Correct records of the program-driven fabrics, stored: the judges' tests need no simulator.

Each entry of ``fixtures/<fabric>_records.json`` is one program (made by
:func:`programs`) and the record Amaranth's simulator gave for it, so the
judges' tests (and every mutant of a judge, ``dev.py mutate``) run in
seconds. ``tests/hw/test_hw_schedule_fabric.py`` and ``tests/hw/test_hw_network.py``
check that the stored records are still what the fabrics do;
``python3 tests/judge_records.py`` rewrites both files when a fabric changes
on purpose.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FABRICS = ("schedule", "network")


def fixture(fabric: str) -> Path:
    return Path(__file__).resolve().parent / "fixtures" / f"{fabric}_records.json"


def _complete4(primitive: str, rounds: list, root: int, model: str = "F1"):
    from pipegossip.model.schedules import Message, Schedule
    from pipegossip.model.schedules.ir import complete
    return Schedule.from_rounds([[Message(*m) for m in r] for r in rounds], topology=complete(4),
                                model=model, p=None, primitive=primitive, root=root)


def _path4(primitive: str, rounds: list, root: int, model: str):
    from pipegossip.model.schedules import Message, Schedule
    from pipegossip.model.schedules.topologies import topology
    return Schedule.from_rounds([[Message(*m) for m in r] for r in rounds],
                                topology=topology("path", n=4), model=model, p=None,
                                primitive=primitive, root=root)


def programs(fabric: str) -> dict:
    """Name -> (program, word seed): the programs whose records are stored."""
    from pipegossip.model.algorithms.limits import cyclic_shift
    from pipegossip.model.algorithms.path_cycle import path_gossip
    from pipegossip.model.algorithms.polling import polling_hypercube
    from pipegossip.model.algorithms.reduce import allreduce_schedule, reduce_schedule
    from pipegossip.model.schedules.network_program import compile_network
    from pipegossip.model.schedules.program import compile_schedule
    from pipegossip.model.schedules.stream import compile_stream
    from pipegossip.model.schedules.topologies import topology
    if fabric == "schedule":
        gather = _complete4("gather", [[(1, (0,), (1,)), (3, (2,), (3,))], [(2, (0,), (2, 3))]], 0)
        # two items each (node v's in slots v and v + 4), in a store of 12 slots
        broadcast = _complete4("broadcast", [[(2, (0,), (2,))], [(2, (1,), (2,)), (0, (3,), (2,))],
                                             [(2, (0, 1), (6,))], [(0, (3,), (6,))]], 2, "port")
        return {
            "shift4": (compile_schedule(cyclic_shift(4), depth=8), 3),
            # one bank: every timed load has a window of one cycle
            "stream5": (compile_stream(cyclic_shift(5), 3, banks=1), 0),
            "allreduce4": (compile_schedule(allreduce_schedule(topology("hypercube", k=2))), 5),
            "gather4": (compile_schedule(gather, depth=8, slots=4), 1),
            "broadcast4": (compile_schedule(broadcast, depth=8, slots=12), 0),
        }
    # the network fabric: a path of 4 nodes (links 0-1, 1-2, 2-3) and two hypercubes
    gather = _path4("gather", [[(0, (1,), (0,)), (3, (2,), (3,))], [(2, (1,), (2, 3))]], 1, "F1")
    # two items each (node v's in slots v and v + 4)
    broadcast = _path4("broadcast", [[(1, (0,), (1,)), (1, (2,), (1,))],
                                     [(1, (0,), (5,)), (1, (2,), (5,)), (2, (3,), (1,))],
                                     [(2, (3,), (5,))]], 1, "Fstar")
    return {
        "gossip-path4": (compile_network(path_gossip(4, 1)), 0),
        "gather-path4": (compile_network(gather), 1),
        "broadcast-path4": (compile_network(broadcast), 2),
        "reduce-path4": (compile_network(reduce_schedule(topology("path", n=4), 0)), 5),
        "allreduce-q2": (compile_network(allreduce_schedule(topology("hypercube", k=2))), 6),
        "polling-q3": (compile_network(polling_hypercube(3)), 4),
    }


def fresh(fabric: str) -> dict:
    """Name -> the record's JSON, from Amaranth's simulator now (wall time left out)."""
    from pipegossip.sim.network.run import run_network_amaranth
    from pipegossip.sim.schedule.cosim import run_programs_amaranth
    run = run_programs_amaranth if fabric == "schedule" else run_network_amaranth
    out = {}
    for name, (program, seed) in programs(fabric).items():
        (record,) = run([program], seed=seed, names=[name])
        data = record.to_json()
        data.pop("wall_seconds")
        out[name] = data
    return out


def stored(fabric: str) -> dict:
    """Name -> (program, the stored record)."""
    from pipegossip.sim.network.run import NetworkRun
    from pipegossip.sim.record import ScheduleRun
    cls = ScheduleRun if fabric == "schedule" else NetworkRun
    data = json.loads(fixture(fabric).read_text())
    return {name: (program, cls.from_json(data[name]))
            for name, (program, _) in programs(fabric).items()}


if __name__ == "__main__":
    for fabric in sys.argv[1:] or FABRICS:
        fixture(fabric).write_text(json.dumps(fresh(fabric), separators=(",", ":")) + "\n")
        print(f"wrote {fixture(fabric)}", file=sys.stderr)
