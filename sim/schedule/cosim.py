"""Run schedules on the schedule fabric: one build per size, many schedules per build.

* :func:`run_programs_amaranth` loads and runs programs in Amaranth's simulator
  (no Verilog; the unit tests' producer);
* :func:`build_schedule_fabric` compiles the fabric's Verilog for Verilator into
  the content-addressed build cache (:mod:`~pipegossip.sim.tools.build_cache`, the same cache,
  locks, scratch folders and run-time library as :mod:`~pipegossip.sim.fsm.runner`), keyed by
  the Verilog text, so one size is built once and then reused;
* :func:`run_schedule_build` runs the cocotb testbench
  (:mod:`.testbench`) on one build with a list of programs, loading
  each through the load port in turn: one simulator process, one build,
  any number of schedules;
* :func:`cosim_schedules` groups schedules by size, builds each size once,
  runs and judges (:func:`pipegossip.sim.judge.schedule.judge_schedule`) them all, and
  reports how many builds it made.

Every producer loads with :func:`pipegossip.hw.schedule.load.load_writes`
and samples every output of :data:`~pipegossip.hw.ports.SCHEDULE_PORTS`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ...infra.files import atomic_write
from ...hw.ports import SCHEDULE_PORTS, ScheduleSize, schedule_ports
from ...hw.schedule.fabric import LATENCY, LoadKind, ScheduleFabric
from ...hw.schedule.load import load_writes, stream_writes
from ...model.schedules.ir import Schedule
from ...model.schedules.program import Program, ProgramError, compile_schedule
from ...model.schedules.stream import VIA_ITEM, StreamProgram, compile_stream, load_timetable
from ..tools import build_cache
from ..tools import verilator_runtime
from ..paths import build_root
from ..record import (SCHEDULE_LANE_FIELDS, SCHEDULE_SCALAR_FIELDS, RunSpec, ScheduleRun,
                      schedule_record_field)
from ..fsm.runner import CosimError, _cached_build
from ..scratch import run_folder
from ..tools.simulators import DEFAULT_RECIPE, Recipe, build_verilator, run_simulator, table_vlt
from ..tools.toolchain import ToolchainError, use_verilator
from ..judge.verdict import Verdict

__all__ = ["JOB_ENV", "ScheduleJob", "job_for", "loaded", "timed_by_cycle", "ScheduleBuild",
           "ScheduleResult", "size_for",
           "run_programs_amaranth", "build_schedule_fabric", "run_schedule_build",
           "cosim_schedules", "TOP", "amaranth_runs", "build_program_fabric", "run_build_jobs",
           "run_in_build"]

#: The testbench finds its job file through this variable.
JOB_ENV = "PIPEGOSSIP_SCHEDULE_JOB"
#: The Verilog top module of a schedule-fabric build.
TOP = "pipegossip_schedule_fabric"
#: Cycles sampled after ``done`` rose.
TAIL = 2

Progress = Callable[[str], None]


def _run_end(done: list, k: int, done_at: int | None, run: dict) -> tuple[int | None, str | None]:
    """After sampling cycle ``k`` of a run: its ``done`` cycle so far, and why it ends.

    ``done`` is the run's sampled ``done`` output up to cycle ``k``. The run
    ends ``"done"`` ``run["tail"]`` cycles after ``done`` first rose (after
    the start cycle 0), or ``"timeout"`` at cycle ``run["max_cycles"]``; None
    means sample another cycle. Shared by the Amaranth and cocotb benches.
    """
    if done_at is None and k > 0 and done[-1]:
        done_at = k
    if done_at is not None and k - done_at + 1 >= run["tail"]:
        return done_at, "done"
    if k >= run["max_cycles"]:
        return done_at, "timeout"
    return done_at, None


@dataclass
class ScheduleJob:
    """What the cocotb testbench runs: a size and, per schedule, its load writes."""

    size: dict
    runs: list[dict]
    result_path: str
    #: ``"schedule"`` or ``"network"``: which port table the testbench drives and samples.
    fabric: str = "schedule"

    def write(self, path: Path) -> None:
        atomic_write(path, json.dumps(asdict(self)))

    @classmethod
    def read(cls, path) -> ScheduleJob:
        return cls(**json.loads(Path(path).read_text(encoding="utf-8")))


def job_for(name: str, program: Program | StreamProgram, seed: int, via: str = VIA_ITEM
             ) -> dict:
    """One testbench job: the writes before the start and, streaming, the timed writes."""
    if isinstance(program, StreamProgram):
        writes, timed = stream_writes(program, seed, via)
    else:
        writes, timed = load_writes(program, seed), []
    return dict(name=name, writes=writes, timed=timed, word_seed=seed,
                max_cycles=program.cycles + LATENCY + 8, tail=TAIL)


def loaded(p: Program | StreamProgram) -> Program:
    """The program the fabric holds (a streaming program's physical one)."""
    return p.program if isinstance(p, StreamProgram) else p


def _check_fits(programs: Sequence[Program | StreamProgram], size: ScheduleSize) -> None:
    """Refuse a program whose entry layout or length is not the build's."""
    for p in map(loaded, programs):
        if (p.n != size.n or p.slots > size.slots or p.cycles > size.depth
                or p.layout.slot_bits != size.slot_bits):
            raise ProgramError(f"{p.slug} was compiled for n={p.n}, {p.slots} slots, "
                               f"{p.cycles} cycles; the fabric has n={size.n}, {size.slots} "
                               f"slots, depth {size.depth}: compile with slots={size.slots}")


def size_for(programs: Sequence[Program | StreamProgram]) -> ScheduleSize:
    """The fabric size that runs every one of ``programs`` (same n and width)."""
    ps = [loaded(p) for p in programs]
    return ScheduleSize(ps[0].n, ps[0].width, max(p.depth for p in ps), max(p.slots for p in ps))


def timed_by_cycle(job: dict) -> dict[int, list]:
    """A job's timed writes grouped by the clock cycle that drives them."""
    out: dict[int, list] = {}
    for w in job.get("timed", []):
        out.setdefault(int(w[0]), []).append(w)
    return out


# ------------------------------------------------------------------ Amaranth simulator
def run_programs_amaranth(programs: Sequence[Program | StreamProgram],
                          size: ScheduleSize | None = None, seed: int = 0,
                          names: Sequence[str] | None = None, via: str = VIA_ITEM,
                          jobs: Sequence[dict] | None = None) -> list[ScheduleRun]:
    """Load and run ``programs`` one after another on one simulated fabric.

    Parameters
    ----------
    size : ScheduleSize, optional
        Default :func:`size_for` the programs.
    via : {"item", "load"}
        The path of a streaming program's timed loads.
    jobs : sequence of dict, optional
        The jobs to drive instead of the programs' own (a fault test alters
        a timed write); as made by :func:`job_for`.
    """
    size = size or size_for(programs)
    _check_fits(programs, size)
    if jobs is None:  # (a timetable the path cannot meet is refused before elaborating)
        jobs = [job_for(names[i] if names else p.slug, p, seed, via)
                for i, p in enumerate(programs)]
    dut = ScheduleFabric(size.n, size.width, size.depth, size.slots)

    def record(job, rows, store, held, acc, ended, wall):
        return _record(job, size, rows, store, held, acc, ended, wall, "Amaranth simulator")

    return amaranth_runs(dut, jobs, size, SCHEDULE_PORTS, lambda spec: size.n,
                         SCHEDULE_SCALAR_FIELDS, SCHEDULE_LANE_FIELDS, record, _drive_amaranth)


def amaranth_runs(dut, jobs: Sequence[dict], size: ScheduleSize, table, count,
                  scalar_fields, lane_fields, record, drive=None) -> list:
    """Load and run every job on ``dut`` in Amaranth's simulator; one record per job.

    Shared by the program-driven fabrics: ``table`` is the fabric's port
    table, ``count(spec)`` the length of a per-node/per-port group,
    ``record(job, rows, store, held, acc, ended, wall)`` makes the record,
    ``drive(ctx, dut, writes)`` drives a cycle's timed writes (streaming).
    """
    from amaranth.sim import Simulator

    results: list = []

    def handle(key: str, i: int | None = None):
        spec = next(s for s in table if s.key == key)
        g = getattr(dut, spec.group)
        if i is not None:
            g = g[i]
        return g if spec.field is None else getattr(g, spec.field)

    outs = {schedule_record_field(k): handle(k) for k in ("busy", "done", "cycle", "length")}
    specs = {schedule_record_field(s.key): s for s in table}
    lanes = {f: [handle(specs[f].key, i) for i in range(count(specs[f]))] for f in lane_fields}

    async def bench(ctx) -> None:
        for job in jobs:
            t0 = time.perf_counter()
            for kind, node, addr, data in job["writes"]:
                ctx.set(dut.load.valid, 1)
                ctx.set(dut.load.kind, kind)
                ctx.set(dut.load.node, node)
                ctx.set(dut.load.addr, addr)
                ctx.set(dut.load.data, data)
                await ctx.tick()
            ctx.set(dut.load.valid, 0)
            rows = {k: [] for k in scalar_fields + lane_fields}
            ctx.set(dut.start, 1)
            done_at, k = None, 0
            timed = timed_by_cycle(job)
            while True:
                if drive:
                    drive(ctx, dut, timed.get(k, []))
                for f, s in outs.items():
                    rows[f].append(ctx.get(s))
                for f, sigs in lanes.items():
                    rows[f].append([ctx.get(s) for s in sigs])
                done_at, ended = _run_end(rows["done"], k, done_at, job)
                if ended:
                    break
                await ctx.tick()
                ctx.set(dut.start, 0)
                k += 1
            if drive:
                drive(ctx, dut, [])
            store, held, acc = await _read_back_amaranth(ctx, dut, size)
            results.append(record(job, rows, store, held, acc, ended,
                                  time.perf_counter() - t0))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return results


def _drive_amaranth(ctx, dut, writes: list) -> None:
    """Drive this cycle's timed writes (and nothing else) on the load and item ports."""
    on = {int(w[2]): w for w in writes if w[1] == 1}
    for i in range(len(dut.item)):
        w = on.get(i)
        ctx.set(dut.item[i].valid, int(w is not None))
        if w is not None:
            ctx.set(dut.item[i].slot, int(w[3]))
            ctx.set(dut.item[i].word, int(w[4]))
    shared = [w for w in writes if w[1] == 0]
    ctx.set(dut.load.valid, int(bool(shared)))
    if shared:
        _, _, node, slot, word = shared[0]
        ctx.set(dut.load.kind, int(LoadKind.ITEM))
        ctx.set(dut.load.node, int(node))
        ctx.set(dut.load.addr, int(slot))
        ctx.set(dut.load.data, int(word))


async def _read_back_amaranth(ctx, dut, size: ScheduleSize):
    store = [[0] * size.slots for _ in range(size.n)]
    held = [[0] * size.slots for _ in range(size.n)]
    acc = [0] * size.n
    for v in range(size.n):
        for x in range(size.slots):
            ctx.set(dut.read.node, v)
            ctx.set(dut.read.slot, x)
            await ctx.tick()  # latency 1: the answer is there after the edge
            store[v][x] = ctx.get(dut.read.word)
            held[v][x] = ctx.get(dut.read.held)
            acc[v] = ctx.get(dut.read.acc)
    return store, held, acc


def _record(job: dict, size: ScheduleSize, rows: dict, store, held, acc, ended: str,
            wall: float, origin: str) -> ScheduleRun:
    samples = {}
    for f, v in rows.items():
        arr = np.array(v, dtype=object if f.endswith("_word") else np.int64)
        samples[f] = arr.reshape(len(v), size.n) if f in SCHEDULE_LANE_FIELDS else arr
    return ScheduleRun(spec=RunSpec(word_seed=job["word_seed"], tail=job["tail"],
                                    max_cycles=job["max_cycles"], idle=0),
                       n=size.n, name=job["name"], samples=samples, store=store, held=held,
                       acc=acc, ended=ended, latency=LATENCY, load_cycles=len(job["writes"]),
                       wall_seconds=wall, origin=origin,
                       loads=[list(map(int, w)) for w in job.get("timed", [])
                              if int(w[0]) < len(rows["busy"])])


# ------------------------------------------------------------------ Verilator through cocotb
@dataclass
class ScheduleBuild:
    """A compiled simulation of one schedule-fabric size.

    ``reused`` is True when the cache already held it; ``seconds`` is the
    build's wall time (0 when reused).
    """

    size: ScheduleSize
    directory: Path
    reused: bool
    seconds: float


def _slug(size: ScheduleSize) -> str:
    return f"sched-n{size.n}-w{size.width}-d{size.depth}-s{size.slots}"


def build_schedule_fabric(size: ScheduleSize, *, root: Path | None = None,
                          progress: Progress | None = None,
                          recipe: Recipe = DEFAULT_RECIPE,
                          trace: str | None = None) -> ScheduleBuild:
    """Compile the fabric of ``size`` for Verilator, or reuse the cached build.

    Raises
    ------
    CosimError
        The toolchain failed.
    """
    from ...hw.schedule.export import schedule_verilog_text

    verilog = schedule_verilog_text(size.n, size.width, size.depth, size.slots, name=TOP)
    return build_program_fabric(size, verilog, schedule_ports(size), _slug(size), "schedule",
                                TOP, root=root, progress=progress, recipe=recipe, trace=trace)


def program_build_key(verilog: str, ports, fabric: str, top: str,
                      recipe: Recipe = DEFAULT_RECIPE, trace: str | None = None) -> str:
    """The build cache key of :func:`build_program_fabric`.

    The port table decides which signals the build makes public
    (``ports.vlt``), so it is part of the key: a build made with another
    table is never reused.
    """
    return build_cache.build_key(verilog, dict(
        simulator="verilator", trace=trace, recipe=asdict(recipe), fabric=fabric, top=top,
        ports=[[p.name, p.direction] for p in ports]))


def build_program_fabric(size, verilog: str, ports, slug: str, fabric: str, top: str, *,
                         root: Path | None = None, progress: Progress | None = None,
                         recipe: Recipe = DEFAULT_RECIPE,
                         trace: str | None = None) -> ScheduleBuild:
    """Compile a program-driven fabric's ``verilog`` for Verilator, or reuse the cached build.

    Shared by the schedule and network fabrics: the build cache is keyed by
    the Verilog text, ``fabric``, ``top``, the recipe, ``ports`` (the
    top-level ports the recipe makes public) and ``trace`` (``"vcd"`` or
    ``"fst"``: a build that can dump every signal, for ``--waves``).

    Raises
    ------
    CosimError
        The toolchain failed.
    """
    say = progress or (lambda msg: None)
    root = build_root() if root is None else Path(root)
    key = program_build_key(verilog, ports, fabric, top, recipe, trace)
    directory = root / (f"{slug}-{key}" if trace is None else f"{slug}-{trace}-{key}")

    def compile_into(tmp: Path) -> dict:
        say(f"building the {fabric} fabric {slug} with Verilator in {directory} ...")
        try:
            use_verilator()
            runtime = verilator_runtime.cached(trace)
            control = table_vlt(top, ports)
            sources = [atomic_write(tmp / "ports.vlt", control) if recipe.public == "ports"
                       else None, atomic_write(tmp / f"{top}.v", verilog)]
            build_verilator(top=top, sources=[s for s in sources if s], build_dir=tmp,
                            log=tmp / "build.log", trace=trace, recipe=recipe, runtime=runtime)
            if runtime is None:
                verilator_runtime.store(tmp, trace)
        except (ToolchainError, RuntimeError, SystemExit, OSError) as e:
            raise CosimError(f"Verilator build of {slug} failed ({e})") from None
        return dict(size=asdict(size))

    return _cached_build(ScheduleBuild(size, directory, True, 0.0), key, root, False, say,
                         compile_into)


def run_schedule_build(b: ScheduleBuild, programs: Sequence[Program | StreamProgram], *,
                       seed: int = 0, names: Sequence[str] | None = None,
                       via: str = VIA_ITEM, jobs: Sequence[dict] | None = None
                       ) -> list[ScheduleRun]:
    """Load and run every program, in one simulator process, on build ``b``.

    A streaming program's timed loads go through ``via`` while it runs;
    ``jobs`` (as :func:`job_for` makes them) replace the programs' own.
    """
    _check_fits(programs, b.size)
    runs = list(jobs) if jobs is not None else [
        job_for(names[i] if names else p.slug, p, seed, via) for i, p in enumerate(programs)]
    return [ScheduleRun.from_json(d) for d in run_build_jobs(b, runs, "schedule", TOP)]


def run_build_jobs(b: ScheduleBuild, runs: list[dict], fabric: str, top: str,
                   waves: str | None = None, dump: Path | None = None) -> list[dict]:
    """Run the testbench on build ``b`` with ``runs`` (one simulator process); their records' JSON.

    Shared by the program-driven fabrics; the testbench picks the port
    table by ``fabric`` (:class:`ScheduleJob`).

    Raises
    ------
    CosimError
        The simulator failed or left no result.
    """
    job = dict(size=asdict(b.size), runs=runs, fabric=fabric)
    return run_in_build(b, top, "pipegossip.sim.schedule.testbench", JOB_ENV, job,
                        waves=waves, dump=dump)


def run_in_build(b: ScheduleBuild, top: str, test_module: str, env_name: str, job: dict,
                 files: dict[str, str] | None = None, waves: str | None = None,
                 dump: Path | None = None):
    """Run cocotb test module ``test_module`` on build ``b`` (Verilator); its JSON result.

    ``job`` gains ``result_path`` and is written to ``job.json``, named by
    the environment variable ``env_name``; ``files`` (name -> text) are
    written into the run's working folder first (the fast mode's ROM images).

    Raises
    ------
    CosimError
        The simulator failed or left no result.
    """
    with run_folder(b.directory, files) as work:
        result = work / "result.json"
        atomic_write(work / "job.json", json.dumps(dict(job, result_path=str(result))))
        try:
            use_verilator()
            run_simulator("verilator", top=top, test_module=test_module,
                          build_dir=b.directory, work=work,
                          env={env_name: str(work / "job.json")}, log=work / "sim.log",
                          waves=waves, dump=dump)
            if not result.is_file():
                raise CosimError("the testbench left no result")
        except (ToolchainError, CosimError, RuntimeError, SystemExit, OSError) as e:
            log = work / "sim.log"
            tail = log.read_text(errors="replace").splitlines()[-25:] if log.is_file() else []
            raise CosimError(f"simulation of {b.directory.name} failed ({e}):\n"
                             + "\n".join(tail)) from None
        return json.loads(result.read_text(encoding="utf-8"))


@dataclass
class ScheduleResult:
    """One schedule's outcome: its name, program, record and verdict."""

    name: str
    program: Program | StreamProgram
    record: ScheduleRun
    verdict: Verdict


@dataclass
class CosimReport:
    """Everything :func:`cosim_schedules` did: results and the builds it used."""

    results: list[ScheduleResult] = field(default_factory=list)
    builds: list[ScheduleBuild] = field(default_factory=list)
    #: ``"trace"`` or ``"fast"`` (the network fabric's fast mode); in the fast mode the
    #: fast verdicts by run name, and the runs repeated in trace mode for the report.
    mode: str = "trace"
    fast: list = field(default_factory=list)
    reruns: list[str] = field(default_factory=list)
    #: The dump written (``--waves``), or None.
    waveform: Path | None = None

    @property
    def match(self) -> bool:
        return all(r.verdict.match for r in self.results)

    @property
    def builds_made(self) -> int:
        """Verilator builds compiled (not reused from the cache)."""
        return sum(not b.reused for b in self.builds)


def cosim_schedules(schedules: Sequence[tuple[str, Schedule]], *, width: int = 8,
                    depth: int | None = None, seed: int = 0, simulator: str = "verilator",
                    root: Path | None = None, progress: Progress | None = None,
                    stream: int | None = None, banks: int = 2,
                    via: str = VIA_ITEM, images: dict | None = None,
                    waves: str | None = None, dump: Path | None = None,
                    companions=None) -> CosimReport:
    """Compile, build once per size, run and judge every schedule.

    Parameters
    ----------
    schedules : sequence of (name, Schedule)
    depth : int, optional
        Program depth of every build; default: the longest program of each
        n, rounded up to a power of two (so similar sets share builds).
    simulator : {"verilator", "amaranth"}
        ``amaranth`` runs in Amaranth's simulator (no build).
    stream : int, optional
        Run each schedule (a gossip of one item per node) as ``stream``
        gossips back to back, the later gossips' words loaded while the
        fabric runs (:func:`~pipegossip.model.schedules.stream.compile_stream`).
    banks : int
        Streaming: gossips' worth of store slots.
    via : {"item", "load"}
        Streaming: the path of the timed loads.
    images : dict, optional
        Schedule name -> :class:`~pipegossip.hw.schedule.image_read.LoadImage`:
        load that image's writes instead of the compiled program's (the judge
        still holds the run against the schedule), after checking that the
        build can run it.
    waves, dump : optional
        ``"vcd"`` or ``"fst"`` (Verilator, one N, no stream): dump the run
        into ``dump``; ``companions`` as for
        :func:`~pipegossip.sim.network.cosim.cosim_network`.

    Raises
    ------
    ProgramError
        A schedule does not fit ``depth``.
    ImageRefused
        An image the build cannot run (before any build).
    CosimError
        The toolchain failed.
    """
    from ..judge.schedule import judge_schedule

    def build(s: Schedule, d: int | None, slots: int | None = None):
        if stream is not None:
            sp = compile_stream(s, stream, banks=banks, width=width, depth=d, slots=slots)
            load_timetable(sp, via)  # refused before any build when the path cannot keep up
            return sp
        return compile_schedule(s, width=width, depth=d, slots=slots)

    by_n: dict[int, list[tuple[str, Schedule, Program | StreamProgram]]] = {}
    for name, s in schedules:
        try:
            program = build(s, depth)
        except ProgramError as e:  # several files: say which one does not fit
            raise ProgramError(f"{name}: {e}") from None
        by_n.setdefault(s.n, []).append((name, s, program))
    if waves is not None and (len(by_n) > 1 or stream is not None or simulator != "verilator"):
        raise ProgramError("--waves dumps one Verilator run of one N without --stream; these "
                           f"schedules need {len(by_n)} builds")
    report = CosimReport()
    for n, items in by_n.items():
        d = depth or 1 << (max(p.cycles for *_, p in items) - 1).bit_length()
        slots = max(loaded(p).slots for *_, p in items)
        programs = [build(s, d, slots) for _, s, _ in items]
        names = [name for name, *_ in items]
        size = size_for(programs)
        jobs = [job_for(nm, p, seed, via) for nm, p in zip(names, programs)]
        for job in jobs:
            if images and job["name"] in images:
                from ...hw.schedule.image_read import build_sizes, check_runs
                image = images[job["name"]]
                check_runs(image, build_sizes(size),
                           f"the co-simulation's build of {job['name']} ({_slug(size)})")
                job["writes"] = [list(w) for w in image.writes()]
        if simulator == "amaranth":
            records = run_programs_amaranth(programs, size, seed, names, via, jobs=jobs)
        else:
            b = build_schedule_fabric(size, root=root, progress=progress, trace=waves)
            report.builds.append(b)
            if waves is None:
                records = run_schedule_build(b, programs, seed=seed, names=names, via=via,
                                             jobs=jobs)
            else:
                from ..waves import staged_dump
                with staged_dump(dump) as staged:
                    records = [ScheduleRun.from_json(d) for d in run_build_jobs(
                        b, jobs, "schedule", TOP, waves=waves, dump=staged)]
                    if companions is not None:
                        companions(staged, "schedule", size, programs, names, seed,
                                   Path(dump).parent)
                report.waveform = Path(dump).resolve()
        for name, p, r in zip(names, programs, records):
            report.results.append(ScheduleResult(name, p, r, judge_schedule(p, r)))
    return report


__all__ += ["CosimReport"]
