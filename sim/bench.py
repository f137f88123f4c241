"""Co-simulation cost: build time, simulated cycles per second, long runs, the regression.

:func:`bench_one` builds one configuration from scratch (into its own build
root, so the shared cache is neither used nor disturbed) and runs a number of
back-to-back gossip runs on it. Build time is wall time of the whole build
(Verilog generation, Verilator, C++ compile and link), with Verilator's
run-time library already compiled (it is compiled once per machine, see
:mod:`pipegossip.sim.tools.verilator_runtime`); the CPU time of the build's child
processes is given too, since wall time depends on what else the machine is
doing, and the generation's own wall time (Amaranth elaboration and Verilog
export, in this process) is split out.

Two speeds are reported, both including the judge's time on the records
and (fast mode) making the expected trace:

* ``cycles_per_second``: the cycles the testbench drove over the wall time
  it spent in them (simulator start-up excluded);
* ``e2e_cycles_per_second``: the same cycles over the wall time of the whole
  simulation call (start-up of the simulator and cocotb, writing the job,
  reading the results back) plus the judge: what a user waits for once the
  build exists.

``mode`` is ``trace`` (every port sampled every cycle) or ``fast``
(:mod:`pipegossip.sim.fast.mode`; its runs are batched in the hardware,
:mod:`pipegossip.sim.fast.batch`, unless ``batch`` is off).

:func:`bench_workload` times one long run from nothing to the verdict, build
included (N=64 identity: L=3 071 cycles; pipelined with 100 sessions: L=12 797).
:func:`bench_regression` times the co-simulation regression
(``tests/sim/test_sim_regression.py``) in either mode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..model.config import RunConfig
from ..model.errors import ConfigError
from .tools import build_cache
from .judge.fsm import judge
from .paths import build_root
from .fsm.runner import build, default_runs, run_build
from .tools.simulators import DEFAULT_RECIPE, Recipe, sized

__all__ = ["BenchPoint", "bench_one", "bench_workload", "bench_regression", "WORKLOADS",
           "REGRESSION_TESTS", "RegressionPoint"]

#: Long single runs :func:`bench_workload` knows, as configurations of N.
WORKLOADS = {
    "identity": lambda n: RunConfig.family(n, "identity"),
    "stream": lambda n: RunConfig.family(n, "pipelined", sessions=100),
}
#: The co-simulation regression :func:`bench_regression` times, and the tests
#: it leaves out in both modes: the paper tables compare the hardware's
#: sampled ``used`` row, which only the trace mode records (the fast mode's
#: checker compares ``used`` with the model in hardware every cycle instead).
REGRESSION_TESTS = ("tests/sim/test_sim_regression.py", "not test_paper_table")


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
    generate_seconds: float = 0.0
    e2e_seconds: float = 0.0
    workload: str = "runs"

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.sim_seconds if self.sim_seconds else float("nan")

    @property
    def e2e_cycles_per_second(self) -> float:
        return self.cycles / self.e2e_seconds if self.e2e_seconds else float("nan")

    @property
    def total_seconds(self) -> float:
        """Build plus the whole simulation and the judge: nothing to a verdict."""
        return self.build_seconds + self.e2e_seconds

    def to_json(self) -> dict:
        out = asdict(self)
        out.update(cycles_per_second=self.cycles_per_second,
                   e2e_cycles_per_second=self.e2e_cycles_per_second,
                   total_seconds=self.total_seconds)
        return out


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _generate(config: RunConfig, width: int, mode: str) -> float:
    """Generate (and keep in the process's cache) the Verilog a build needs; its wall time."""
    from .fast.build import fabric_text
    from .fast.mode import expected_hex, top_text

    fabric_text.cache_clear()
    expected_hex.cache_clear()
    top_text.cache_clear()
    t0 = time.monotonic()
    with build_cache.fresh_texts():  # generated afresh, not read from the text cache
        fabric_text(config, width)
        if mode == "fast":
            top_text(config, width)
    return time.monotonic() - t0


def bench_one(config: RunConfig, width: int = 8, runs: int = 20,
              recipe: Recipe = DEFAULT_RECIPE, root: Path | None = None,
              progress=None, mode: str = "trace", batch: bool = True,
              workload: str = "runs") -> BenchPoint:
    """Build ``config`` from scratch and simulate ``runs`` runs on it in ``mode``.

    ``sim_seconds`` is the wall time the testbench spent in the runs' cycles
    plus the judge's time on the records; ``e2e_seconds`` the wall time of
    the whole simulation call plus the judge. The fabric's Verilog is
    generated afresh for each build (the in-process caches are cleared); its
    generation is part of ``build_seconds`` and also given alone
    (``generate_seconds``).
    """
    from .fast.build import fabric_text
    from .fast.mode import build_fast, expected_hex, recipe_for, run_cycles, run_fast

    root = Path(root) if root is not None else build_root().parent / "cosim-bench"
    cpu0 = _children_cpu()
    t0 = time.monotonic()
    generate = _generate(config, width, mode)
    specs = default_runs(config, list(range(runs)))
    if mode == "fast":
        if recipe == DEFAULT_RECIPE:
            recipe = recipe_for(config, run_cycles(config, specs))
        b = build_fast(config, width, root=root, force=True, recipe=recipe, progress=progress)
    else:
        if recipe == DEFAULT_RECIPE:
            recipe = sized(recipe, config.n)  # as build() would, and recorded so
        b = build(config, width, root=root, force=True, recipe=recipe, progress=progress,
                  verilog=fabric_text(config, width))
    build_wall = time.monotonic() - t0
    build_cpu = _children_cpu() - cpu0
    t1 = time.monotonic()
    if mode == "fast":
        t_hex = time.monotonic()
        expected_hex(config)  # part of the run's cost: the expected trace is made per run
        hex_s = time.monotonic() - t_hex
        hw = run_fast(b, config, width, specs, batch=batch)
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
                      runs, cycles, sim, process, match, mode, generate, process + judged,
                      workload)


def bench_workload(name: str, n: int, width: int = 8, mode: str = "fast",
                   root: Path | None = None, progress=None) -> BenchPoint:
    """One run of workload ``name`` (:data:`WORKLOADS`) at ``n``: build, simulate, judge.

    :attr:`BenchPoint.total_seconds` is the time from nothing to the verdict.
    """
    if name not in WORKLOADS:
        raise ConfigError(f"workload must be one of {', '.join(WORKLOADS)}, got {name!r}")
    return bench_one(WORKLOADS[name](n), width, 1, root=root, progress=progress, mode=mode,
                     workload=name)


@dataclass
class RegressionPoint:
    """Wall time of the co-simulation regression in one mode."""

    mode: str
    cold_seconds: float
    warm_seconds: float
    passed: bool
    summary: str
    tests: list[str] = field(default_factory=lambda: list(REGRESSION_TESTS))

    def to_json(self) -> dict:
        return asdict(self)


def _pytest(checkout: Path, env: dict) -> tuple[float, bool, str]:
    path, select = REGRESSION_TESTS
    cmd = [sys.executable, "-m", "pytest", path, "-k", select, "-q", "-n", "0",
           "-p", "no:cacheprovider"]
    t0 = time.monotonic()
    done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    lines = [x for x in done.stdout.splitlines() if x.strip()]
    return seconds, done.returncode == 0, lines[-1] if lines else done.stderr.strip()[-200:]


def bench_regression(mode: str, checkout: Path, root: Path) -> RegressionPoint:
    """Run the regression (:data:`REGRESSION_TESTS`) in ``mode`` twice: cold, then warm.

    Cold: an empty build cache at ``root`` (the shared Verilator run-time
    library stays cached); warm: the same again, every build reused. The mode
    reaches the tests through ``$PIPEGOSSIP_COSIM_MODE``
    (:func:`~pipegossip.sim.fsm.cosim.cosimulate`'s default).

    Raises
    ------
    ConfigError
        ``checkout`` has no regression tests (an installed copy).
    """
    if not (checkout / REGRESSION_TESTS[0]).is_file():
        raise ConfigError(f"--regression needs the checkout's {REGRESSION_TESTS[0]}")
    from .scratch import remove
    remove(root)
    runtime = build_root() / "_runtime"  # compiled once per machine, not per test run
    if runtime.is_dir():
        shutil.copytree(runtime, Path(root) / "_runtime")
    env = dict(os.environ, PIPEGOSSIP_COSIM_MODE=mode, PIPEGOSSIP_BUILD_DIR=str(root))
    env.pop("PIPEGOSSIP_WAVES", None)
    cold, ok_cold, _ = _pytest(checkout, env)
    warm, ok_warm, summary = _pytest(checkout, env)
    return RegressionPoint(mode, cold, warm, ok_cold and ok_warm, summary)
