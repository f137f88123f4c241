"""Co-simulation cost: Verilator build time and simulated cycles per second.

:func:`bench_one` builds one configuration from scratch (into its own build
root, so the shared cache is neither used nor disturbed) and runs a number of
back-to-back gossip runs on it. Build time is wall time of the whole build
(Verilog generation, Verilator, C++ compile and link), with Verilator's
run-time library already compiled (it is compiled once per machine, see
:mod:`pipegossip.sim.verilator_runtime`); the CPU time of the build's child processes is
given too, since wall time depends on what else the machine is doing.
Simulation speed counts only the cycles the testbench drove, over the wall
time the testbench spent in them plus the judge's time on the records (the
fast mode's expected trace included), so simulator start-up is not included
(it is reported separately). ``mode`` is ``trace`` (every port sampled every
cycle) or ``fast`` (:mod:`pipegossip.sim.fast_mode`).
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
    mode: str = "trace"

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
              progress=None, mode: str = "trace") -> BenchPoint:
    """Build ``config`` from scratch and simulate ``runs`` runs on it in ``mode``.

    ``sim_seconds`` is the wall time the testbench spent in the runs' cycles
    plus the judge's time on the records (end to end but for the simulator's
    start-up, which is in ``process_seconds``). The fabric's Verilog is
    generated afresh for each build (the in-process cache is cleared).
    """
    from .fast_build import fabric_text
    from .fast_mode import build_fast, expected_hex, run_fast

    root = Path(root) if root is not None else build_root().parent / "cosim-bench"
    fabric_text.cache_clear()
    expected_hex.cache_clear()
    cpu0 = _children_cpu()
    t0 = time.monotonic()
    if mode == "fast":
        from .fast_mode import recipe_for
        recipe = recipe_for(config) if recipe == DEFAULT_RECIPE else recipe
        b = build_fast(config, width, root=root, force=True, recipe=recipe, progress=progress)
    else:
        b = build(config, width, root=root, force=True, recipe=recipe, progress=progress)
    build_wall = time.monotonic() - t0
    build_cpu = _children_cpu() - cpu0
    specs = default_runs(config, list(range(runs)))
    t1 = time.monotonic()
    if mode == "fast":
        t_hex = time.monotonic()
        expected_hex(config)  # part of the run's cost: the expected trace is made per run
        hex_s = time.monotonic() - t_hex
        hw = run_fast(b, config, width, specs)
        cycles = sum(r.summary["cycles"] for r in hw)
    else:
        hex_s = 0.0
        hw = run_build(b, specs)
        cycles = sum(len(r.samples["busy"]) for r in hw)
    process = time.monotonic() - t1
    t2 = time.monotonic()
    match = all(judge(config, width, r).match for r in hw)
    judged = time.monotonic() - t2
    sim = sum(r.wall_seconds for r in hw) + judged + hex_s
    lines = b.verilog.read_text(encoding="utf-8").count("\n")
    return BenchPoint(config.slug, config.n, asdict(recipe), lines, build_wall, build_cpu,
                      runs, cycles, sim, process, match, mode)
