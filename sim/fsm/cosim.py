"""A whole co-simulation: build, run, judge by the golden model, check the dump.

:func:`cosimulate` builds (or reuses) the fabric of a configuration
(:func:`~pipegossip.sim.fsm.runner.build`), simulates a series of runs on it
(:func:`~pipegossip.sim.fsm.runner.run_build`), holds each against the model
(:func:`pipegossip.sim.judge.fsm.judge`) and, with a waveform, writes the
GTKWave files beside it and compares it with the paper's reference
run-table. The dump and those files are placed together at the end
(:func:`~pipegossip.sim.waves.staged_dump`), so an interrupted
co-simulation leaves an earlier good dump untouched.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...model.config import RunConfig
from ...model.errors import ConfigError
from ..judge.fsm import Verdict, judge, model_result
from ..record import HwRun, RunSpec
from .runner import Build, Progress, build, default_runs, run_build
from ..tools.simulators import DEFAULT_RECIPE, Recipe
from ..waves import companion, dump_path, staged_dump

__all__ = ["CosimResult", "cosimulate", "MODE_ENV"]

#: Environment variable naming :func:`cosimulate`'s default mode.
MODE_ENV = "PIPEGOSSIP_COSIM_MODE"


@dataclass
class CosimResult:
    """A co-simulation: its build, one verdict per run, and the waveform.

    With a waveform, ``gtkw`` is its GTKWave save file and, when the
    configuration is one of the paper's tables, ``reference`` is that
    table's reference run-table and ``reference_match`` says whether the
    first run read back from the dump equals it token for token.
    """

    build: Build
    verdicts: list[Verdict]
    waveform: Path | None
    sim_seconds: float
    runs: list[HwRun] = field(default_factory=list)
    gtkw: Path | None = None
    reference: Path | None = None
    reference_match: bool | None = None
    mode: str = "trace"
    #: the :class:`~pipegossip.sim.fast.mode.FastOutcome` of a fast co-simulation
    fast: object | None = None

    @property
    def match(self) -> bool:
        """Every run matches the model, and the dump its reference (if any)."""
        return all(v.match for v in self.verdicts) and self.reference_match is not False

    @property
    def first_failure(self) -> Verdict | None:
        """The first run that does not match, or None."""
        return next((v for v in self.verdicts if not v.match), None)


def cosimulate(config: RunConfig, width: int = 8, *, simulator: str = "verilator",
               waves: str | None = None, word_seeds: Sequence[int] = (0,),
               against: RunConfig | None = None, spurious_start: bool = False,
               waves_file: Path | None = None, root: Path | None = None,
               progress: Progress | None = None,
               recipe: Recipe = DEFAULT_RECIPE, gtkw: bool = True,
               mode: str | None = None) -> CosimResult:
    """Build (or reuse), simulate and check the fabric of ``config``.

    Parameters
    ----------
    mode : {"trace", "fast"}, optional
        Default ``$PIPEGOSSIP_COSIM_MODE``, else ``trace`` (so a whole test
        set can be timed in either mode: ``pipegossip cosim-bench
        --regression``). ``trace``: the testbench samples every port every cycle (the records
        hold every sample). ``fast``: the in-hardware checker
        (:mod:`~pipegossip.sim.fast.mode`); a failing run is repeated in the
        trace mode, so its verdict is as detailed. A waveform needs the
        trace mode (``waves`` set: ``mode`` is ignored).
    waves : {"vcd", "fst", None}
        Dump the simulation to ``waves_file`` (default
        :func:`~pipegossip.sim.waves.dump_path`).
    word_seeds : sequence of int
        One run per seed, back to back in one simulation.
    against : RunConfig, optional
        Judge by this configuration's model instead of ``config``'s (to show
        that a deliberately wrong fabric is caught).
    spurious_start : bool
        Pulse ``start`` again in the middle of the second run; it must be ignored.
    gtkw : bool
        Write the GTKWave save and translate files beside a waveform (off
        when the caller moves the dump afterwards and writes them itself).
    """
    model_config = against or config
    if against is not None and against.n != config.n:
        raise ConfigError(f"cannot judge an N={config.n} fabric by an N={against.n} model")
    if mode is None:
        mode = os.environ.get(MODE_ENV) or "trace"
    if mode not in ("trace", "fast"):
        raise ConfigError(f"mode must be trace or fast, got {mode!r}")
    if mode == "fast" and not waves:
        from ..fast.mode import fast_cosimulate
        out = fast_cosimulate(config, width, word_seeds, simulator=simulator, against=against,
                              spurious_start=spurious_start, root=root, progress=progress,
                              recipe=None if recipe == DEFAULT_RECIPE else recipe)
        return CosimResult(out.build, out.verdicts, None, out.sim_seconds + out.judge_seconds,
                           out.hw, mode="fast", fast=out)
    trace = waves if simulator == "verilator" else None
    b = build(config, width, simulator=simulator, trace=trace, root=root, progress=progress,
              recipe=recipe)
    runs = default_runs(model_config, word_seeds, spurious_start=spurious_start)
    t0 = time.monotonic()
    if progress:
        progress(f"simulating {len(runs)} run(s) on {simulator} ...")
    if not waves:
        hw = run_build(b, runs)
        seconds = time.monotonic() - t0
        return CosimResult(b, _verdicts(model_config, width, hw), None, seconds, hw)
    wf = Path(waves_file or dump_path(config, width, waves))
    with staged_dump(wf) as staged:
        hw = run_build(b, runs, waves=waves, waves_file=staged)
        seconds = time.monotonic() - t0
        result = CosimResult(b, _verdicts(model_config, width, hw), staged, seconds, hw)
        _check_dump(result, model_config, gtkw)
    result.waveform = wf
    if result.gtkw is not None:
        result.gtkw = companion(wf, ".gtkw")
    return result


def _verdicts(model_config: RunConfig, width: int, hw: list[HwRun]) -> list[Verdict]:
    return [judge(model_config, width, r) for r in hw]


def _check_dump(result: CosimResult, model_config: RunConfig, gtkw: bool) -> None:
    """Viewer files beside the dump; the dump against the paper's reference."""
    from ...model.runtable import RunTable
    from ...waveforms.gtkw import write_gtkw
    from ...waveforms.readback import read_dump
    from ...waveforms.reference import reference_for

    if gtkw:
        result.gtkw = write_gtkw(result.waveform, model_config.n)
    result.reference = reference_for(model_config)
    if result.reference is not None:
        hw = read_dump(result.waveform).table
        result.reference_match = hw == RunTable.read(result.reference)
