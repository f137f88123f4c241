"""Trace against fast mode against a bare loop on the network fabric, side by side.

:func:`bench_network` runs each schedule ``runs`` times back to back in the
trace mode (the cocotb testbench drives every load write and read-back and
samples every port every cycle) and ``fast_runs`` times in the fast mode
(:mod:`.fast`: the hardware loads, checks and reads back, a C++ loop of
ours drives it, :mod:`~pipegossip.sim.fast.native`), on one build per topology and mode (the
co-simulation's own builds, reused from the cache), and reports the clock
cycles simulated per second, in the testbench (each run's own wall time,
from ``go`` (trace: its first load write) to its last read-back) and end to
end (from the jobs to the judged verdicts: the ROM rows and images, the
simulator process with its start-up, reading the results back, the judge).
Every run of these modes is judged: a benchmark of a mismatching run is
refused.

Beside them, whenever the fast mode is timed, the **bare loop**: the same
fabric text alone, built with the same Verilator and C++ options, its clock
and ``start`` toggled from C++ for as many cycles as the fast mode's runs
take (``start`` once per checked span), timed inside its loop and as a whole
process. That is what the simulator allows for this RTL; the fast mode's
share of it is printed. ``fast-cocotb`` (on request) times the fast top
driven by the cocotb testbench instead (:func:`~.fast.run_fast_build`), the
driver the C++ loop replaced.

A run's clock cycles are counted the same way in every mode: its load
writes, its checked cycles (the trace mode's samples of a fault-free run)
and one per store slot read back.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import os

from ...hw.network.fabric import network_size
from ...model.schedules.ir import Schedule
from ...model.schedules.network_program import compile_network
from ..fsm.runner import CosimError
from ..judge.network import judge_network
from ..schedule.cosim import Progress
from .cosim import build_network_fabric, run_network_build
from .fast import (build_bare, build_network_fast, build_network_native, fast_record,
                   judge_fast, rom_depths, rom_rows, run_fast_build, run_fast_native, span_of)
from ..fast.native import run_bare
from .run import network_job

__all__ = ["NetworkBenchRow", "bench_network", "MODES", "load_average"]

#: The modes :func:`bench_network` times (``bare`` comes with ``fast``).
MODES = ("trace", "fast", "fast-cocotb", "bare")


def load_average() -> str:
    """The machine's load averages (1, 5, 15 minutes), as printed beside every figure."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass
class NetworkBenchRow:
    """One schedule in one mode: runs, cycles, the simulator's wall time, cycles per second."""

    schedule: str
    topology: str
    n: int
    ports: int
    mode: str
    runs: int
    cycles_per_run: int
    sim_seconds: float
    testbench_seconds: float
    build_seconds: float
    build_reused: bool

    @property
    def cycles_per_second(self) -> float:
        """In the testbench: the runs' cycles over their own wall times (bare: its loop's)."""
        return self.runs * self.cycles_per_run / self.testbench_seconds \
            if self.testbench_seconds else 0.0

    @property
    def end_to_end(self) -> float:
        """The runs' cycles over the whole wall time: jobs to judged verdicts (bare: the process)."""
        return self.runs * self.cycles_per_run / self.sim_seconds if self.sim_seconds else 0.0

    def to_json(self) -> dict:
        return dict(asdict(self), cycles_per_second=round(self.cycles_per_second, 1),
                    end_to_end_cycles_per_second=round(self.end_to_end, 1))


def bench_network(schedules: Sequence[tuple[str, Schedule]], *, runs: int = 20,
                  fast_runs: int = 1000, width: int = 8, seed: int = 0,
                  modes: Sequence[str] = ("trace", "fast"), root: Path | None = None,
                  progress: Progress | None = None) -> list[NetworkBenchRow]:
    """Time every schedule in every mode of ``modes``; one row per schedule and mode.

    ``fast`` brings the bare loop (mode ``bare``) with it, over the fast runs' cycles.

    Raises
    ------
    ProgramError
        A schedule the network fabric cannot run.
    CosimError
        The toolchain failed, or a run did not match (a benchmark of a wrong run
        would time nothing worth knowing).
    """
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"modes are {', '.join(MODES)}, not {', '.join(unknown)}")
    modes = list(modes) + (["bare"] if "fast" in modes and "bare" not in modes else [])
    rows = []
    # one depth and slot count for all (as cosim does per topology): schedules of one
    # topology share their builds
    firsts = [compile_network(s, width=width) for _, s in schedules]
    depth = 1 << (max(p.cycles for p in firsts) - 1).bit_length()
    slots = max(max(p.slots, p.n) for p in firsts)
    for name, s in schedules:
        p = compile_network(s, width=width, depth=depth, slots=slots)
        size = network_size(p.topology, width, depth, p.slots)
        job = network_job(name, p, seed)
        per_run = len(job["writes"]) + span_of(p) + p.n * p.slots
        depths = rom_depths(rom_rows([p], [job], size)[0])
        for mode in modes:
            count = runs if mode == "trace" else fast_runs
            if mode == "bare":
                b = build_bare(p, size, root=root, progress=progress)
                r = run_bare(b, count * per_run, span_of(p))
                rows.append(NetworkBenchRow(name, p.topology.name, p.n, p.ports, mode, count,
                                            per_run, r.process_seconds, r.loop_seconds,
                                            b.seconds, b.reused))
                continue
            if mode == "trace":
                b = build_network_fabric(p, size, root=root, progress=progress)
                t0 = time.perf_counter()
                records = run_network_build(b, [p] * count, seed=seed, jobs=[job] * count)
                bad = [v for v in (judge_network(p, r) for r in records) if not v.match]
                inside = sum(r.wall_seconds for r in records)
            else:
                if mode == "fast":
                    b = build_network_native(p, size, depths, root=root, progress=progress)
                    run = run_fast_native
                else:
                    b = build_network_fast(p, size, depths, root=root, progress=progress)
                    run = run_fast_build
                t0 = time.perf_counter()
                summaries = run(b, [p] * count, [job] * count)
                bad = [v for v in (judge_fast(p, fast_record(job, p, x, "bench"))
                                   for x in summaries) if not v.match]
                inside = sum(x["wall_seconds"] for x in summaries)
            seconds = time.perf_counter() - t0  # the judge included
            if bad:
                raise CosimError(f"{name} did not match in {mode} mode: "
                                 f"{bad[0].first_mismatch}")
            rows.append(NetworkBenchRow(name, p.topology.name, p.n, p.ports, mode, count,
                                        per_run, seconds, inside, b.seconds, b.reused))
    return rows
