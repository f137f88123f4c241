"""The network fabric's fast co-simulation mode: the model's run checked in the hardware.

:class:`~pipegossip.sim.fast.network.NetworkFastTop` loads, runs, checks and
reads back every run itself; Python writes its three ROMs, sets a run's
row offsets, pulses ``go``, sleeps until it must be over and reads a
summary: one wake-up per run, none per cycle.

* :func:`rom_rows` lays every job out in the ROMs. Every expected value
  comes from the model, through the judge's own helpers
  (:func:`~pipegossip.sim.judge.network.expected_lanes`,
  :func:`~pipegossip.sim.judge.network.completion_needs`) and the compiled
  program (final stores, words, accumulators): nothing is derived here.
  Identical jobs share their rows (a benchmark's repeated runs cost no ROM).
* :func:`run_fast_amaranth` simulates the top in Amaranth's simulator;
  :func:`build_network_fast` / :func:`run_fast_build` build it for Verilator
  (the build cache of the trace mode) and run
  :mod:`pipegossip.sim.fast.network_testbench`.
* :func:`fast_record` and :func:`judge_fast` turn a summary into a record and
  the one :class:`~pipegossip.sim.judge.verdict.Verdict`; :func:`fast_place`
  is the first mismatch as :func:`~pipegossip.sim.judge.network.mismatch_place`
  names the trace judge's, so the two modes compare field by field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from amaranth.back import verilog as amaranth_verilog
from amaranth.lib import wiring

from ...hw.export import plain_internal_names
from ...hw.network.export import TOP as TOP_FABRIC, size_verilog_text
from ...hw.network.fabric import LATENCY
from ...hw.network.load import item_words
from ...hw.ports import NetworkSize, Port
from ...model.schedules.network_program import ACC, NetworkProgram
from ...model.schedules.program import NONE
from ..fast.network import (CHECKS, FINAL_CYCLE, INPUTS, NET_FAST_TOP, NO_PLACE, ROM_FILES,
                            SUMMARY, FastLayout, NetworkFastTop, rom_module)
from ..fast.network_testbench import JOB_ENV
from ..fsm.runner import CosimError
from ..judge.network import completion_needs, expected_lanes
from ..judge.verdict import KINDS, Mismatch, Verdict
from ..schedule.cosim import TAIL, Progress, ScheduleBuild, build_program_fabric, run_in_build
from ..tools.simulators import Recipe
from ..fast.native import (NativeBuild, bare_cpp, build_native, driver_cpp, rom_depths,
                           rom_hex, run_driver)
from .run import NetworkRun, network_job

__all__ = ["span_of", "rom_rows", "run_fast_amaranth", "build_network_fast", "run_fast_build",
           "NetworkFastRun", "fast_record", "judge_fast", "fast_place", "FAST_RECIPE",
           "rom_depths", "build_network_native", "run_fast_native", "build_bare"]

#: The fast top's build recipe: C++ -O1 (its runs are long, one build serves many).
FAST_RECIPE = Recipe(opt_fast="-O1")


def span_of(program: NetworkProgram) -> int:
    """Clock cycles checked per run: the trace mode's samples of a fault-free run."""
    return program.cycles + LATENCY + TAIL + 1


def _expect_rows(program: NetworkProgram, seed: int, lay: FastLayout) -> list[int]:
    words = item_words(program, seed)
    T = span_of(program)
    want = expected_lanes(program, words, T, LATENCY)
    pw = lay.bits(lay.port_fields)
    rows = []
    for k in range(T):
        row, at = 0, 0
        for p in range(program.ports):
            tx, rx = int(want["tx"][k, p]), int(want["rx"][k, p])
            sent = want["sent"][k, p]
            row |= lay.pack(lay.port_fields, dict(
                tv=tx != NONE, ta=tx == ACC, ts=max(tx, 0), rv=rx != NONE, rs=max(rx, 0),
                cb=bool(want["comb"][k, p]), w=0 if sent is None else sent)) << at
            at += pw
        for v in range(program.n):
            row |= (int(want["acc"][k][v]) & ((1 << program.width) - 1)) << at
            at += program.width
        rows.append(row)
    return rows


def _final_rows(program: NetworkProgram, seed: int, lay: FastLayout) -> list[int]:
    words = item_words(program, seed)
    need, accs = completion_needs(program, words)
    must = {(v, int(x)) for v, xs in need for x in xs}
    slot_word = program.slot_words(words)
    final_acc = program.acc_values(words)[program.cycles]
    return [lay.pack(lay.final_fields, dict(
        held=program.final[v, x], word=slot_word[x], need=(v, x) in must, acc=final_acc[v],
        want=accs.get(v, 0), accneed=v in accs))
        for v in range(program.n) for x in range(program.slots)]


def rom_rows(programs: Sequence[NetworkProgram], jobs: Sequence[dict], size: NetworkSize
             ) -> tuple[dict[str, list[int]], list[dict]]:
    """The ROMs' rows and each run's inputs (:data:`~..fast.network.INPUTS`) for ``jobs``.

    ``jobs[i]`` (:func:`~.run.network_job`) loads ``programs[i]``, faulty or
    not; the expectations are always ``programs[i]``'s.
    """
    lay = FastLayout(size)
    roms: dict[str, list[int]] = {"load": [], "expect": [], "final": []}
    seen: dict[tuple, dict] = {}
    texts: dict[int, str] = {}  # a job list repeating one job serialises its writes once
    params = []
    for program, job in zip(programs, jobs):
        writes = job["writes"]
        if id(writes) not in texts:
            texts[id(writes)] = json.dumps(writes)
        key = (id(program), job["word_seed"], texts[id(writes)])
        if key not in seen:
            seed = job["word_seed"] or 0
            run = dict(load_base=len(roms["load"]), load_count=len(job["writes"]),
                       exp_base=len(roms["expect"]), span=span_of(program),
                       final_base=len(roms["final"]), length=program.cycles)
            roms["load"] += [lay.pack(lay.load_fields, dict(kind=k, node=v, addr=a, data=d))
                             for k, v, a, d in job["writes"]]
            roms["expect"] += _expect_rows(program, seed, lay)
            roms["final"] += _final_rows(program, seed, lay)
            # clock cycles from go to finished: two input registers, load, run, read-back
            run["cycles"] = run["load_count"] + run["span"] + size.n * size.slots + 3
            seen[key] = run
        params.append(dict(seen[key]))
    return roms, params


def run_fast_amaranth(programs: Sequence[NetworkProgram], jobs: Sequence[dict],
                      size: NetworkSize) -> list[dict]:
    """Run ``jobs`` on the fast top in Amaranth's simulator; one summary dict each."""
    from amaranth.sim import Simulator

    roms, params = rom_rows(programs, jobs, size)
    depths = rom_depths(roms)
    p0 = programs[0]
    dut = NetworkFastTop(size, p0.topology, p0.op, depths,
                         {k: v + [0] * (depths[k] - len(v)) for k, v in roms.items()})
    out: list[dict] = []

    async def bench(ctx) -> None:
        for run in params:
            for k in INPUTS:
                ctx.set(getattr(dut, k), run[k])
            ctx.set(dut.go, 1)
            await ctx.tick()
            ctx.set(dut.go, 0)
            await ctx.tick().repeat(run["cycles"] - 1)
            waited = run["cycles"]
            while not ctx.get(dut.finished) and waited < 2 * run["cycles"]:
                await ctx.tick()
                waited += 1
            out.append({k: int(ctx.get(getattr(dut, k))) for k in SUMMARY})

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return out


def _top_ports(top: NetworkFastTop) -> list[Port]:
    sig = top.signature
    return [Port("__".join(map(str, path)), "in" if member.flow == wiring.In else "out",
                 len(value)) for path, member, value in sig.flatten(top)]


def build_network_fast(program: NetworkProgram, size: NetworkSize, depths: dict[str, int], *,
                       root: Path | None = None, progress: Progress | None = None
                       ) -> ScheduleBuild:
    """Build (or reuse) the fast top around the fabric ``program`` runs on, at ``size``.

    The fabric's text is the trace mode's build's, byte for byte.

    Raises
    ------
    CosimError
        The toolchain failed.
    """
    text, top = _fast_text(program, size, depths)
    return build_program_fabric(size, text, _top_ports(top), _slug("netfast", program, size),
                                "network-fast", NET_FAST_TOP, root=root, progress=progress,
                                recipe=FAST_RECIPE)


def _slug(kind: str, program: NetworkProgram, size: NetworkSize) -> str:
    params = "-".join(str(v) for k, v in program.topology.params.items() if k != "edges")
    return (f"{kind}-{program.topology.name}{params}-{program.op}-w{size.width}"
            f"-d{size.depth}-s{size.slots}-b{size.bank_depth or size.slots}")


def _fast_text(program: NetworkProgram, size: NetworkSize, depths: dict[str, int]
               ) -> tuple[str, NetworkFastTop]:
    """The fast top's Verilog (the fabric's text, the ROMs, the top) and the top."""
    fabric = size_verilog_text(program.topology, size, program.op)
    top = NetworkFastTop(size, program.topology, program.op, depths)
    lay = top.layout
    text = (fabric + "\n" + "".join(rom_module(r, lay.width(r), depths[r]) for r in ROM_FILES)
            + plain_internal_names(amaranth_verilog.convert(top, name=NET_FAST_TOP,
                                                            emit_src=False)))
    return text, top


def build_network_native(program: NetworkProgram, size: NetworkSize, depths: dict[str, int], *,
                         root: Path | None = None, progress: Progress | None = None
                         ) -> NativeBuild:
    """Build (or reuse) the fast top with the C++ driver (:mod:`..fast.native`), no cocotb.

    The same fast top as :func:`build_network_fast` (the trace mode's fabric text
    byte for byte inside); the driver comes from :data:`INPUTS` and :data:`SUMMARY`.

    Raises
    ------
    CosimError
        The toolchain failed.
    """
    text, _ = _fast_text(program, size, depths)
    b = build_native(text, NET_FAST_TOP, driver_cpp(NET_FAST_TOP, INPUTS, SUMMARY),
                     _slug("netnative", program, size), root=root, progress=progress)
    return replace(b, size=size)


def run_fast_native(b: NativeBuild, programs: Sequence[NetworkProgram], jobs: Sequence[dict]
                    ) -> list[dict]:
    """Run ``jobs`` on native fast build ``b`` in one process; one summary dict each.

    The summaries are the cocotb driver's (:func:`run_fast_build`), field for field.

    Raises
    ------
    CosimError
        The executable failed or reported fewer runs.
    """
    roms, params = rom_rows(programs, jobs, b.size)
    lay = FastLayout(b.size)
    rows = [[run[k] for k in INPUTS] + [run["cycles"]] for run in params]
    out, _, _ = run_driver(b, rows, SUMMARY, {fname: rom_hex(roms[rom], lay.width(rom))
                                              for rom, fname in ROM_FILES.items()})
    return out


def build_bare(program: NetworkProgram, size: NetworkSize, *, root: Path | None = None,
               progress: Progress | None = None) -> NativeBuild:
    """Build (or reuse) the bare loop (:mod:`~pipegossip.sim.fast.native`) of the fabric ``program`` runs on."""
    return build_native(size_verilog_text(program.topology, size, program.op), TOP_FABRIC,
                        bare_cpp(TOP_FABRIC), _slug("netbare", program, size), root=root,
                        progress=progress)


def run_fast_build(b: ScheduleBuild, programs: Sequence[NetworkProgram], jobs: Sequence[dict]
                   ) -> list[dict]:
    """Run ``jobs`` on fast build ``b`` in one simulator process; one summary dict each.

    Raises
    ------
    CosimError
        The simulator failed or left no result.
    """
    roms, params = rom_rows(programs, jobs, b.size)
    lay = FastLayout(b.size)
    out = run_in_build(b, NET_FAST_TOP, "pipegossip.sim.fast.network_testbench", JOB_ENV,
                       dict(runs=params),
                       {fname: rom_hex(roms[rom], lay.width(rom)) for rom, fname in ROM_FILES.items()})
    if len(out) != len(jobs):
        raise CosimError(f"the fast testbench reported {len(out)} runs of {len(jobs)}")
    return out


@dataclass
class NetworkFastRun(NetworkRun):
    """A fast run's record: no samples, no read-back, the checker's ``summary``."""

    summary: dict = field(default_factory=dict)

    @property
    def busy_cycles(self) -> int:
        return int(self.summary.get("busy_cycles", 0))


def fast_record(job: dict, program: NetworkProgram, summary: dict, origin: str
                ) -> NetworkFastRun:
    """The record of one fast run of ``job``."""
    from ..record import RunSpec
    return NetworkFastRun(spec=RunSpec(word_seed=job["word_seed"], tail=job["tail"],
                                       max_cycles=job["max_cycles"], idle=0),
                          n=program.n, name=job["name"], samples={}, store=[], held=[],
                          acc=[], ended="done" if summary["finished"] else "timeout",
                          latency=LATENCY, load_cycles=len(job["writes"]),
                          wall_seconds=float(summary.get("wall_seconds", 0.0)), origin=origin,
                          ports=program.ports, summary=summary)


def fast_place(summary: dict) -> tuple | None:
    """The checker's first mismatch as ``(check, cycle, node, port or slot)``; None: none."""
    if not summary["bad"]:
        return None

    def opt(x: int) -> int | None:
        return None if x == NO_PLACE else int(x)

    cycle = summary["bad_cycle"]
    return (CHECKS[summary["bad_check"]], None if cycle == FINAL_CYCLE else int(cycle),
            opt(summary["bad_node"]), opt(summary["bad_port"]))


def judge_fast(program: NetworkProgram, record: NetworkFastRun) -> Verdict:
    """The verdict of a fast run: its first mismatch, where the checker saw it, or none."""
    out = []
    s = record.summary
    place = fast_place(s)
    if place is not None:
        check, cycle, node, port = place
        kind = check if check in KINDS else "delivery"
        where = "slot" if check.startswith("final") else "port"
        note = (f"port {port}: p{node} -> p{program.node_of(program.peer(port))}"
                if port is not None and where == "port" else f"{check}")
        out.append(Mismatch(kind, cycle, node, f"{check} as the model says"
                            + (f" (slot {port})" if where == "slot" and port is not None
                               else ""), "something else (fast checker: the trace mode "
                            "shows the values)", note))
    if not s["finished"]:
        out.append(Mismatch("timeout", None, None, "loaded, run and read back",
                            "the fast top never finished"))
    return Verdict(config=program, run=record, model=None, mismatches=out)


def fast_jobs(programs: Sequence[NetworkProgram], names: Sequence[str], seed: int,
              writes: Sequence[list] | None = None) -> list[dict]:
    """One :func:`~.run.network_job` per program (``writes``: faulty loads instead)."""
    return [network_job(nm, p, seed, None if writes is None else writes[i])
            for i, (nm, p) in enumerate(zip(names, programs))]


__all__ += ["fast_jobs"]
