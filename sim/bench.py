"""Co-simulation cost: Verilator build time and simulated cycles per second.

:func:`bench_one` builds one configuration from scratch (into its own build
root, so the shared cache is neither used nor disturbed) and runs a number of
back-to-back gossip runs on it. Build time is wall time of the whole build
(Verilog generation, Verilator, C++ compile and link), with Verilator's
run-time library already compiled (it is compiled once per machine, see
:mod:`pipegossip.sim.verilator_runtime`); the CPU time of the build's child processes is
given too, since wall time depends on what else the machine is doing.
Simulation speed counts only the cycles the testbench drove, over the wall
time the testbench spent in them, so simulator start-up is not included
(it is reported separately).
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..model.config import RunConfig
from .cosim import default_runs
from .judge import judge
from .paths import build_root
from .runner import build, run_build
from .simulators import DEFAULT_RECIPE, Recipe

__all__ = ["BenchPoint", "bench_one"]


@dataclass
class BenchPoint:
    """One measured configuration."""

    slug: str
    n: int
    recipe: dict
    verilog_lines: int
    build_seconds: float
    build_cpu_seconds: float
    runs: int
    cycles: int
    sim_seconds: float
    process_seconds: float
    match: bool

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.sim_seconds if self.sim_seconds else float("nan")

    def to_json(self) -> dict:
        out = asdict(self)
        out["cycles_per_second"] = self.cycles_per_second
        return out


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def bench_one(config: RunConfig, width: int = 8, runs: int = 20,
              recipe: Recipe = DEFAULT_RECIPE, root: Path | None = None,
              progress=None) -> BenchPoint:
    """Build ``config`` from scratch and simulate ``runs`` runs on it."""
    root = Path(root) if root is not None else build_root().parent / "cosim-bench"
    cpu0 = _children_cpu()
    t0 = time.monotonic()
    b = build(config, width, root=root, force=True, recipe=recipe, progress=progress)
    build_wall = time.monotonic() - t0
    build_cpu = _children_cpu() - cpu0
    specs = default_runs(config, list(range(runs)))
    t1 = time.monotonic()
    hw = run_build(b, specs)
    process = time.monotonic() - t1
    match = all(judge(config, width, r).match for r in hw)
    cycles = sum(len(r.samples["busy"]) for r in hw)
    sim = sum(r.wall_seconds for r in hw)
    lines = b.verilog.read_text(encoding="utf-8").count("\n")
    return BenchPoint(config.slug, config.n, asdict(recipe), lines, build_wall, build_cpu,
                      runs, cycles, sim, process, match)
