"""Run schedules on the network fabric of their topology: one build per topology and size.

* :func:`build_network_fabric` compiles the fabric's Verilog for Verilator
  into the content-addressed build cache, as the schedule fabric's builds
  (:func:`~pipegossip.sim.schedule.cosim.build_program_fabric`);
* :func:`run_network_build` runs the shared cocotb testbench
  (:mod:`~pipegossip.sim.schedule.testbench`, ``fabric="network"``) on one build with a list
  of programs, loading each through the load port in turn;
* :func:`cosim_network` groups schedules by topology, builds each once, runs
  and judges (:func:`pipegossip.sim.judge.network.judge_network`) them all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ...hw.network.export import TOP, size_verilog_text
from ...hw.network.fabric import network_size
from ...hw.ports import NetworkSize, network_ports
from ...model.schedules.ir import Schedule
from ...model.schedules.network_program import NetworkProgram, compile_network
from ...model.schedules.program import ProgramError
from ..judge.network import judge_network
from .fast import (build_network_native, fast_record, judge_fast, rom_depths, rom_rows,
                   run_fast_amaranth, run_fast_native)
from .run import NetworkRun, check_fits, faulty_writes, network_job, run_network_amaranth
from ..schedule.cosim import (CosimReport, Progress, ScheduleBuild, ScheduleResult,
                              build_program_fabric, run_build_jobs)

__all__ = ["build_network_fabric", "run_network_build", "cosim_network", "TOP", "MODES"]

#: Co-simulation modes of the network fabric (the FSM fabric's spelling).
MODES = ("fast", "trace")


def _slug(program: NetworkProgram, size: NetworkSize) -> str:
    params = "-".join(str(v) for k, v in program.topology.params.items() if k != "edges")
    bank = "" if size.bank_depth is None else f"-b{size.bank_depth}"
    return (f"net-{program.topology.name}{params}-{program.op}-w{size.width}-d{size.depth}"
            f"-s{size.slots}{bank}" + ("" if size.store == "banks" else f"-{size.store}")
            + ("" if size.node == "wire" else f"-{size.node}"))


def build_network_fabric(program: NetworkProgram, size: NetworkSize, *,
                         root: Path | None = None, progress: Progress | None = None,
                         trace: str | None = None) -> ScheduleBuild:
    """Compile the network fabric ``program`` runs on (its topology and op) at ``size``.

    Raises
    ------
    CosimError
        The toolchain failed.
    """
    verilog = size_verilog_text(program.topology, size, program.op)
    return build_program_fabric(size, verilog, network_ports(size), _slug(program, size),
                                "network", TOP, root=root, progress=progress, trace=trace)


def run_network_build(b: ScheduleBuild, programs: Sequence[NetworkProgram], *, seed: int = 0,
                      names: Sequence[str] | None = None,
                      jobs: Sequence[dict] | None = None, waves: str | None = None,
                      dump: Path | None = None) -> list[NetworkRun]:
    """Load and run every program, in one simulator process, on build ``b`` (a trace build
    with ``waves`` dumps the whole simulation into ``dump``)."""
    check_fits(programs, b.size)
    runs = list(jobs) if jobs is not None else [
        network_job(names[i] if names else p.slug, p, seed) for i, p in enumerate(programs)]
    return [NetworkRun.from_json(d)
            for d in run_build_jobs(b, runs, "network", TOP, waves=waves, dump=dump)]


def cosim_network(schedules: Sequence[tuple[str, Schedule]], *, width: int = 8,
                  depth: int | None = None, seed: int = 0, op: str = "sum",
                  simulator: str = "verilator", root: Path | None = None,
                  progress: Progress | None = None, fault: str | None = None,
                  mode: str = "trace", bank_depth: int | None = None,
                  rerun: bool = True, store: str = "banks",
                  node: str = "wire", images: dict | None = None, waves: str | None = None,
                  dump: Path | None = None, companions=None) -> CosimReport:
    """Compile, build once per topology, run and judge every schedule.

    Parameters
    ----------
    depth : int, optional
        Program depth of every build; default the longest program of each
        topology rounded up to a power of two.
    simulator : {"verilator", "amaranth"}
    fault : str, optional
        Load every program with this fault (:data:`~.run.FAULTS`):
        the judge must find it.
    mode : {"trace", "fast"}
        ``trace``: the testbench samples every port every cycle and the judge
        holds the record against the program; ``fast``: the hardware loads,
        checks and reads back itself (:mod:`.fast`), and a run that differs
        is repeated in trace mode for the report (``rerun``), its fast
        verdict kept in :attr:`CosimReport.fast`.
    bank_depth : int, optional
        Words per store bank of every build (default the store's slots); a
        schedule needing deeper banks is refused with the depth it needs.
    store : {"banks", "single"}
        The nodes' item store (:data:`~pipegossip.hw.ports.STORES`).
    node : {"wire", "reg"}
        The nodes' design (:data:`~pipegossip.hw.ports.NODES`).
    images : dict, optional
        Schedule name -> :class:`~pipegossip.hw.schedule.image_read.LoadImage`:
        load that image's writes instead of the compiled program's (the judge
        still holds the run against the schedule), after checking that the
        build can run it.

    waves, dump : optional
        ``"vcd"`` or ``"fst"`` (trace mode, one topology): dump the run into
        ``dump`` (written aside and renamed in at the end,
        :func:`~pipegossip.sim.waves.staged_dump`); ``companions(dump, fabric, size,
        programs, names, seed, home)`` writes the files beside it before they
        are renamed in (the command passes
        :func:`pipegossip.waveforms.program_dump.write_companions`: the GTKWave
        save file and the ``.run.json`` that ``waves read`` judges it by).

    Raises
    ------
    ProgramError
        A schedule the network fabric cannot run.
    ImageRefused
        An image the build cannot run (before any build).
    CosimError
        The toolchain failed.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    groups: dict[str, list[tuple[str, Schedule, NetworkProgram]]] = {}
    for name, s in schedules:
        p = compile_network(s, op=op, width=width, depth=depth, bank_depth=bank_depth)
        groups.setdefault(json.dumps(s.topology.to_json(), sort_keys=True), []).append(
            (name, s, p))
    if waves is not None and (mode != "trace" or len(groups) > 1 or simulator != "verilator"):
        raise ProgramError("--waves dumps one Verilator trace-mode run of one topology; "
                           f"these schedules need {len(groups)} builds")
    report = CosimReport(mode=mode)
    for items in groups.values():
        d = depth or 1 << (max(p.cycles for *_, p in items) - 1).bit_length()
        slots = max(max(p.slots for *_, p in items), items[0][1].n)
        programs = [compile_network(s, op=op, width=width, depth=d, slots=slots,
                                    bank_depth=bank_depth) for _, s, _ in items]
        names = [name for name, *_ in items]
        size = network_size(programs[0].topology, width, d, slots, bank_depth, store, node)
        jobs = [network_job(nm, p, seed, _image_writes(images, nm, size, p, op)
                            if images and nm in images else
                            None if fault is None else faulty_writes(p, fault, seed))
                for nm, p in zip(names, programs)]

        def trace_runs(ps, js):
            if simulator == "amaranth":
                return run_network_amaranth(ps, seed=seed, jobs=js, store=store, node=node)
            b = build_network_fabric(ps[0], size, root=root, progress=progress, trace=waves)
            report.builds.append(b)
            if waves is None:
                return run_network_build(b, ps, seed=seed, jobs=js)
            from ..waves import staged_dump
            with staged_dump(dump) as staged:
                runs = run_network_build(b, ps, seed=seed, jobs=js, waves=waves, dump=staged)
                if companions is not None:
                    companions(staged, "network", size, ps, names, seed, Path(dump).parent)
            report.waveform = Path(dump).resolve()
            return runs

        if mode == "trace":
            records = trace_runs(programs, jobs)
            verdicts = [judge_network(p, r) for p, r in zip(programs, records)]
        else:
            records, verdicts = _fast_group(programs, jobs, size, simulator, root, progress,
                                            report)
            again = [i for i, v in enumerate(verdicts) if not v.match] if rerun else []
            if again:
                redo = trace_runs([programs[i] for i in again], [jobs[i] for i in again])
                for i, r in zip(again, redo):
                    records[i], verdicts[i] = r, judge_network(programs[i], r)
                    report.reruns.append(names[i])
        for name, p, r, v in zip(names, programs, records, verdicts):
            report.results.append(ScheduleResult(name, p, r, v))
    return report


def _image_writes(images: dict, name: str, size: NetworkSize, program: NetworkProgram,
                  op: str) -> list:
    """The load writes of ``images[name]``, refused if the build of ``size`` cannot run it."""
    from ...hw.schedule.image_read import build_sizes, check_runs
    image = images[name]
    check_runs(image, build_sizes(size, topology=program.topology, op=op),
               f"the co-simulation's build of {name} ({_slug(program, size)})")
    return [list(w) for w in image.writes()]


def _fast_group(programs, jobs, size: NetworkSize, simulator: str, root, progress,
                report: CosimReport) -> tuple[list, list]:
    """One topology's jobs in the fast mode: records and fast verdicts (kept in ``report``)."""
    if simulator == "amaranth":
        summaries = run_fast_amaranth(programs, jobs, size)
        origin = "fast checker on Amaranth's simulator"
    else:
        roms, _ = rom_rows(programs, jobs, size)
        b = build_network_native(programs[0], size, rom_depths(roms), root=root,
                                 progress=progress)
        report.builds.append(b)
        summaries = run_fast_native(b, programs, jobs)
        origin = "fast checker on verilator"
    records = [fast_record(j, p, s, origin) for j, p, s in zip(jobs, programs, summaries)]
    verdicts = [judge_fast(p, r) for p, r in zip(programs, records)]
    report.fast += [(j["name"], v) for j, v in zip(jobs, verdicts)]
    return records, verdicts
