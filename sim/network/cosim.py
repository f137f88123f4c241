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

from ...hw.network.export import TOP, network_verilog_text
from ...hw.network.fabric import network_size
from ...hw.ports import NetworkSize, network_ports
from ...model.schedules.ir import Schedule
from ...model.schedules.network_program import NetworkProgram, compile_network
from ..judge.network import judge_network
from .run import NetworkRun, check_fits, faulty_writes, network_job, run_network_amaranth
from ..schedule.cosim import (CosimReport, Progress, ScheduleBuild, ScheduleResult,
                              build_program_fabric, run_build_jobs)

__all__ = ["build_network_fabric", "run_network_build", "cosim_network", "TOP"]


def _slug(program: NetworkProgram, size: NetworkSize) -> str:
    params = "-".join(str(v) for k, v in program.topology.params.items() if k != "edges")
    return (f"net-{program.topology.name}{params}-{program.op}-w{size.width}-d{size.depth}"
            f"-s{size.slots}" + ("" if size.store == "banks" else f"-{size.store}"))


def build_network_fabric(program: NetworkProgram, size: NetworkSize, *,
                         root: Path | None = None,
                         progress: Progress | None = None) -> ScheduleBuild:
    """Compile the network fabric ``program`` runs on (its topology and op) at ``size``.

    Raises
    ------
    CosimError
        The toolchain failed.
    """
    verilog = network_verilog_text(program.topology, size.width, size.depth, size.slots,
                                   program.op, name=TOP, store=size.store)
    return build_program_fabric(size, verilog, network_ports(size), _slug(program, size),
                                "network", TOP, root=root, progress=progress)


def run_network_build(b: ScheduleBuild, programs: Sequence[NetworkProgram], *, seed: int = 0,
                      names: Sequence[str] | None = None,
                      jobs: Sequence[dict] | None = None) -> list[NetworkRun]:
    """Load and run every program, in one simulator process, on build ``b``."""
    check_fits(programs, b.size)
    runs = list(jobs) if jobs is not None else [
        network_job(names[i] if names else p.slug, p, seed) for i, p in enumerate(programs)]
    return [NetworkRun.from_json(d) for d in run_build_jobs(b, runs, "network", TOP)]


def cosim_network(schedules: Sequence[tuple[str, Schedule]], *, width: int = 8,
                  depth: int | None = None, seed: int = 0, op: str = "sum",
                  simulator: str = "verilator", root: Path | None = None,
                  progress: Progress | None = None, fault: str | None = None,
                  store: str = "banks") -> CosimReport:
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
    store : {"banks", "single"}
        The nodes' item store (:data:`~pipegossip.hw.ports.STORES`).

    Raises
    ------
    ProgramError
        A schedule the network fabric cannot run.
    CosimError
        The toolchain failed.
    """
    groups: dict[str, list[tuple[str, Schedule, NetworkProgram]]] = {}
    for name, s in schedules:
        p = compile_network(s, op=op, width=width, depth=depth)
        groups.setdefault(json.dumps(s.topology.to_json(), sort_keys=True), []).append(
            (name, s, p))
    report = CosimReport()
    for items in groups.values():
        d = depth or 1 << (max(p.cycles for *_, p in items) - 1).bit_length()
        slots = max(max(p.slots for *_, p in items), items[0][1].n)
        programs = [compile_network(s, op=op, width=width, depth=d, slots=slots)
                    for _, s, _ in items]
        names = [name for name, *_ in items]
        jobs = None
        if fault is not None:
            jobs = [network_job(nm, p, seed, faulty_writes(p, fault, seed))
                    for nm, p in zip(names, programs)]
        if simulator == "amaranth":
            records = run_network_amaranth(programs, seed=seed, names=names, jobs=jobs,
                                           store=store)
        else:
            size = network_size(programs[0].topology, width, d, slots, store=store)
            b = build_network_fabric(programs[0], size, root=root, progress=progress)
            report.builds.append(b)
            records = run_network_build(b, programs, seed=seed, names=names, jobs=jobs)
        for name, p, r in zip(names, programs, records):
            report.results.append(ScheduleResult(name, p, r, judge_network(p, r)))
    return report
