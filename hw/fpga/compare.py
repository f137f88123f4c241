# amaranth: UnusedElaboratable=no
"""The schedule fabric beside the FSM fabric on the FPGA: cells, Fmax and time in ns.

Per target (device, N) three bare builds (:mod:`.flow`), each with every
place-and-route seed asked for:

* ``fsm-pipelined``: the FSM fabric of the pipelined orders (``ordered``);
* ``fsm-alg2``: the FSM fabric of identity orders with Algorithm 2 and
  ``receive any``;
* ``schedule``: the schedule fabric of that N, with the depth
  :func:`schedule_depth` chooses (every schedule of the comparison fits).

Then the time of one gossip on each fabric: cycles (the FSM fabric's run
length L, the schedule fabric's program cycles plus its latency) divided by
the Fmax of the build that runs it, for identity + Algorithm 2 + any on
both fabrics and for pipelined orders (FSM) against cyclic-shift (schedule).
Cycle counts come from the golden model and the schedule compiler, Fmax and
cells from nextpnr's reports: nothing is typed in.

A build folder that already holds a report of the same design digest
(netlist and flow options, seed included) is reused, so an interrupted
comparison resumes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...infra.files import atomic_write
from ...model.config import RunConfig
from .devices import DEVICES
from .flow import FlowJob, bare_digest, prepare, prepare_schedule, run_flow
from .outputs import _load_report, check_output_dir, check_writable_folder
from .sweep import _fabric_ffs
from .tools import FlowError, Progress, _quiet

__all__ = ["DEFAULT_TARGETS", "VARIANTS", "Target", "parse_targets", "schedule_depth",
           "workloads", "compare_builds", "run_compare", "compare_markdown", "write_compare"]

#: Default targets of ``pipegossip fpga-compare``: (device, N).
DEFAULT_TARGETS = (("ice40-up5k", 8), ("ecp5-25k", 16))

#: Build variants, in table order: key -> label.
VARIANTS = {
    "fsm-pipelined": "FSM, pipelined orders (ordered)",
    "fsm-alg2": "FSM, identity + Algorithm 2 + any",
    "schedule": "schedule fabric",
}

#: Memory cell types per device family: block RAM first (always shown), then
#: the others (shown when used): iCE40 SPRAM, ECP5 LUT RAM write ports.
_MEMORY = {"ice40": ("ICESTORM_RAM", "ICESTORM_SPRAM"), "ecp5": ("DP16KD", "TRELLIS_RAMW")}


@dataclass(frozen=True)
class Target:
    """One device and N of the comparison."""

    device: str
    n: int


def parse_targets(text: str) -> list[Target]:
    """``DEVICE:N,DEVICE:N,...`` as targets.

    Raises
    ------
    ValueError
        For an unknown device, a bad N or a malformed entry.
    """
    targets = []
    for entry in (x.strip() for x in text.split(",")):
        device, sep, n = entry.partition(":")
        if not sep or device not in DEVICES or not n.isascii() or not n.isdigit():
            raise ValueError(f"expected DEVICE:N,... with DEVICE one of {', '.join(DEVICES)}, "
                             f"got {entry!r}")
        if int(n) < 2:
            raise ValueError(f"N must be at least 2, got {entry!r}")
        targets.append(Target(device, int(n)))
    if len(set(targets)) != len(targets):
        raise ValueError(f"a target is listed twice in {text!r}")
    return targets


def _configs(n: int) -> dict[str, RunConfig]:
    return {"fsm-pipelined": RunConfig.family(n, "pipelined"),
            "fsm-alg2": RunConfig.family(n, "identity", receive="any", substitute=True)}


def _programs(n: int, width: int, depth: int | None = None) -> dict:
    """The compiled programs the schedule fabric runs: Algorithm 2 and cyclic-shift."""
    from ...model.algorithms.limits import GENERATORS
    from ...model.schedules.compile_run import schedule_of_config
    from ...model.schedules.program import compile_schedule

    runs = {k: schedule_of_config(c) for k, c in _configs(n).items()}
    return {"alg2": compile_schedule(runs["fsm-alg2"], width=width, depth=depth),
            "pipelined-run": compile_schedule(runs["fsm-pipelined"], width=width, depth=depth),
            "cyclic-shift": compile_schedule(GENERATORS["cyclic-shift"](n), width=width,
                                             depth=depth)}


def schedule_depth(n: int, width: int = 8) -> int:
    """The schedule fabric's depth for the comparison at ``n``.

    The longest of the compiled programs of identity + Algorithm 2 + any, the
    pipelined run and cyclic-shift at ``n``, rounded up to a power of two
    (``cosim-schedule``'s default rule): every one of them loads.
    """
    longest = max(p.cycles for p in _programs(n, width).values())
    return 1 << max(0, longest - 1).bit_length()


def workloads(n: int, width: int, depth: int) -> list[dict]:
    """The gossips timed on each fabric, with their cycle counts.

    ``fsm_cycles`` is the FSM fabric's run length L (its ``busy`` cycles);
    ``schedule_cycles`` is the compiled program's length, ``schedule_busy``
    adds the schedule fabric's latency (``busy`` is high for L + 1 cycles).
    """
    from ...model.engine import simulate
    from ..schedule.fabric import LATENCY

    programs = _programs(n, width, depth)
    configs = _configs(n)
    rows = []
    for name, fsm, program, label in (
            ("identity + Algorithm 2 + any", "fsm-alg2", "alg2", "same schedule"),
            ("gossip: FSM pipelined vs schedule cyclic-shift", "fsm-pipelined", "cyclic-shift",
             "cyclic-shift")):
        rows.append({"workload": name, "fsm_variant": fsm,
                     "fsm_cycles": simulate(configs[fsm]).length,
                     "schedule_program": label,
                     "schedule_cycles": programs[program].cycles,
                     "schedule_busy": programs[program].cycles + LATENCY})
    return rows


def compare_builds(targets: Sequence[Target], width: int = 8, seeds: Sequence[int] = (1,),
                   clock_mhz: float | None = None) -> list[tuple[Target, str, int, FlowJob]]:
    """Every build of the comparison, prepared (no tool runs): (target, variant, seed, job).

    Raises
    ------
    TypeError, ValueError
        For anything :func:`~.flow.prepare` or :func:`~.flow.prepare_schedule` refuses.
    """
    builds = []
    for t in targets:
        configs = _configs(t.n)
        depth = schedule_depth(t.n, width)
        for seed in seeds:
            for variant in VARIANTS:
                if variant == "schedule":
                    job = prepare_schedule(t.n, width, depth, device=t.device,
                                           clock_mhz=clock_mhz, pnr_seed=seed)
                else:
                    job = prepare(configs[variant], width, device=t.device,
                                  clock_mhz=clock_mhz, pnr_seed=seed)
                builds.append((t, variant, seed, job))
    return builds


def _folder(out: Path, job: FlowJob) -> Path:
    return out / f"{job.device.name}-{job.slug}-w{job.width}-s{job.pnr_seed}"


def run_compare(targets: Sequence[Target], out_dir: str | os.PathLike, width: int = 8,
                seeds: Sequence[int] = (1,), clock_mhz: float | None = None,
                timeout: float | None = None, rebuild: bool = False,
                progress: Progress = _quiet) -> dict:
    """Build (or reuse) every build into ``out_dir`` and return the comparison.

    Builds run one after the other. ``timeout`` (seconds) applies to each
    build; a build that fails or runs out of time is a row with its error,
    and the others go on. Returns ``{"width", "seeds", "targets": [...]}``,
    each target with its ``depth``, ``builds`` and ``workloads`` (times in ns
    from the first seed's Fmax).

    Raises
    ------
    ValueError
        ``out_dir`` or a build folder in it may not be written.
    """
    out = check_writable_folder(out_dir)
    seeds = list(dict.fromkeys(seeds))
    builds = compare_builds(targets, width, seeds, clock_mhz)
    for *_, job in builds:
        check_output_dir(_folder(out, job))
    reports: dict[tuple, dict] = {}
    for k, (t, variant, seed, job) in enumerate(builds, 1):
        folder = _folder(out, job)
        earlier = _load_report(folder)
        where = f"[{k}/{len(builds)}] {folder.name}"
        if (not rebuild and earlier is not None
                and earlier.get("design_digest") == bare_digest(job)):
            progress(f"{where}: reusing the earlier build")
            reports[t, variant, seed] = earlier
            continue
        progress(f"{where}: building")
        try:
            reports[t, variant, seed] = run_flow(
                job, folder, progress=lambda m, where=where: progress(f"{where}: {m}"),
                timeout=timeout)
        except FlowError as e:
            progress(f"{where}: failed: {e}")
            reports[t, variant, seed] = {"error": str(e)}
    return _summarise(targets, width, seeds, builds, reports, out)


def _memory(report: dict, family: str) -> dict[str, int]:
    """The fabric's memory cells: block RAM always, the other kinds when used."""
    cells = report.get("fabric_cells", {})
    bram, *others = _MEMORY[family]
    return {bram: cells.get(bram, 0), **{k: cells[k] for k in others if cells.get(k)}}


def _summarise(targets, width, seeds, builds, reports, out: Path) -> dict:
    result = {"width": width, "seeds": list(seeds), "targets": []}
    for t in targets:
        dev = DEVICES[t.device]
        depth = schedule_depth(t.n, width)
        rows = []
        for variant, label in VARIANTS.items():
            job = next(j for tt, v, _, j in builds if tt == t and v == variant)
            per_seed = [reports[t, variant, s] for s in seeds]
            first = per_seed[0]
            row = {"variant": variant, "label": label, "slug": job.slug,
                   "folder": str(_folder(out, job)),
                   "fmax_mhz": [r.get("fmax_mhz") for r in per_seed],
                   "errors": [r["error"] for r in per_seed if "error" in r]}
            if "error" not in first:
                lc = first["logic_cells"]
                row.update(logic_cell=lc["type"], used=lc["used"], available=lc["available"],
                           fabric=lc.get("fabric"), boundary=lc.get("boundary"),
                           ff_fabric=_fabric_ffs(first),
                           memory_fabric=_memory(first, dev.family),
                           constraint_mhz=first["constraint_mhz"],
                           timing_met=first["timing_met"],
                           critical_path={k: (first.get("critical_path") or {}).get(k)
                                          for k in ("from", "to", "logic_levels")})
            rows.append(row)
        fmax = {r["variant"]: r["fmax_mhz"][0] for r in rows}
        times = []
        for w in workloads(t.n, width, depth):
            f_fsm, f_sched = fmax[w["fsm_variant"]], fmax["schedule"]
            w["fsm_fmax_mhz"], w["schedule_fmax_mhz"] = f_fsm, f_sched
            w["fsm_ns"] = round(w["fsm_cycles"] * 1000 / f_fsm, 1) if f_fsm else None
            w["schedule_ns"] = (round(w["schedule_busy"] * 1000 / f_sched, 1) if f_sched
                                else None)
            w["speedup"] = (round(w["fsm_ns"] / w["schedule_ns"], 2)
                            if w["fsm_ns"] and w["schedule_ns"] else None)
            times.append(w)
        result["targets"].append({"device": t.device, "part": dev.part, "n": t.n,
                                  "depth": depth, "builds": rows, "workloads": times})
    return result


def _num(value, fmt: str = "{}") -> str:
    return "-" if value is None else fmt.format(value)


def compare_markdown(result: dict) -> str:
    """The comparison as two Markdown tables: resources and Fmax, then time per gossip."""
    seeds = " / ".join(str(s) for s in result["seeds"])
    first = result["seeds"][0]
    lines = [f"Width {result['width']}, nextpnr seeds {seeds}; logic cells, flip-flops (Yosys) "
             f"and memory cells from the seed {first} build, times from its Fmax. TRELLIS_RAMW "
             f"counts ECP5 LUT RAM (16x4 bits each).", "",
             "| device | N | fabric | logic cells (fabric + boundary) | FFs (fabric) "
             f"| memory (fabric) | Fmax MHz (seeds {seeds}) |",
             "|---|---:|---|---|---:|---:|---|"]
    for t in result["targets"]:
        for r in t["builds"]:
            label = r["label"] + (f", depth {t['depth']}" if r["variant"] == "schedule" else "")
            if "used" in r:
                cells = (f"{r['used']} ({r['fabric']} + {r['boundary']}) {r['logic_cell']}")
                ff = str(r["ff_fabric"])
                bram = ", ".join(f"{v} {k}" for k, v in r["memory_fabric"].items())
            else:
                cells, ff, bram = "failed: " + r["errors"][0], "-", "-"
            fmax = " / ".join(_num(f, "{:.1f}") for f in r["fmax_mhz"])
            lines.append(f"| {t['part']} | {t['n']} | {label} | {cells} | {ff} | {bram} "
                         f"| {fmax} |")
    lines += ["", "| device | N | gossip | FSM fabric: cycles, Fmax, time "
              "| schedule fabric: program (cycles / busy), Fmax, time | FSM / schedule |",
              "|---|---:|---|---|---|---:|"]
    for t in result["targets"]:
        for w in t["workloads"]:
            fsm = (f"{w['fsm_cycles']} @ {_num(w['fsm_fmax_mhz'], '{:.1f}')} MHz = "
                   f"{_num(w['fsm_ns'], '{:.0f}')} ns")
            sched = (f"{w['schedule_program']} {w['schedule_cycles']} / {w['schedule_busy']} @ "
                     f"{_num(w['schedule_fmax_mhz'], '{:.1f}')} MHz = "
                     f"{_num(w['schedule_ns'], '{:.0f}')} ns")
            lines.append(f"| {t['part']} | {t['n']} | {w['workload']} | {fsm} | {sched} "
                         f"| {_num(w['speedup'], '{:.2f}')} |")
    return "\n".join(lines) + "\n"


def write_compare(result: dict, out_dir: str | os.PathLike) -> list[Path]:
    """Write ``compare.md`` and ``compare.json`` into ``out_dir``; returns their paths."""
    out = Path(out_dir)
    return [atomic_write(out / "compare.md", compare_markdown(result)),
            atomic_write(out / "compare.json", json.dumps(result, indent=2) + "\n")]

