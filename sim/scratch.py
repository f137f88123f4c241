"""Private temporary folders that never outlive the work they were made for.

Builds, waveform dumps and the Verilator run-time cache are all produced in
a temporary folder beside their final place and renamed into it at the end.
This module makes those folders and guarantees they go away:

* :func:`scratch` removes its folder on every exit path: success, an
  exception, Ctrl-C (``KeyboardInterrupt``) or a SIGTERM that the command
  line turns into ``SystemExit``;
* the removal itself cannot be cut short by a second Ctrl-C
  (:func:`deferred_signals`), and it first stops compiler processes that a
  killed ``make`` left running in the folder, which would otherwise write
  new files into it while it is being deleted (:func:`remove`);
* every folder's name carries its owner's process id
  (``.<name>.pid<PID>.<random>``), so :func:`sweep` can delete, at the start
  of the next command, what a process killed outright (SIGKILL, a crash, a
  power cut) left behind: folders whose owner is dead, or that nothing has
  touched for :data:`STALE_SECONDS`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["STALE_SECONDS", "scratch", "make_scratch", "remove", "sweep", "deferred_signals",
           "owner_pid", "run_folder"]

#: A temporary nothing has written to for this long is abandoned, whoever owns it.
STALE_SECONDS = 3600

# ``.<name>.pid<PID>.<8 random characters of mkdtemp>``; the PID part is
# missing in folders left by versions before this module (swept by age only).
_NAME = re.compile(r"^\..+?(?:\.pid(?P<pid>\d+))?\.[a-z0-9_]{8}$")

# Signals that end a command early and must not cut a clean-up short.
_DEFERRED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                  if hasattr(signal, name))


def make_scratch(parent: Path, name: str) -> Path:
    """Create a private folder ``.<name>.pid<PID>.<random>`` in ``parent``.

    Parameters
    ----------
    parent : Path
        An existing folder on the same file system as the final place, so
        the result can be renamed into it.
    name : str
        The final name, for a reader of ``ls -a``.

    Returns
    -------
    Path
        The new, empty folder. The caller removes it (see :func:`scratch`).
    """
    return Path(tempfile.mkdtemp(prefix=f".{name}.pid{os.getpid()}.", dir=parent))


@contextlib.contextmanager
def scratch(parent: Path, name: str) -> Iterator[Path]:
    """A private folder in ``parent`` that is removed however the block ends.

    Whatever the block renames out of the folder survives; the rest, and the
    folder, are deleted by :func:`remove`.
    """
    folder = make_scratch(parent, name)
    try:
        yield folder
    finally:
        remove(folder)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold back SIGINT/SIGTERM/SIGHUP for the block, then deliver them.

    A clean-up or a sequence of renames interrupted half-way is exactly what
    this module exists to prevent, so a signal that arrives meanwhile is
    recorded and re-raised with its previous handler once the block is done.
    Only the main thread receives Python signals; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum))
                for sig in _DEFERRED}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)


def _working_in(folder: Path) -> list[int]:
    """Process ids (other than ours) whose working directory is in ``folder`` (Linux /proc)."""
    inside = str(folder)
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(proc / "cwd")
        except OSError:  # gone meanwhile, or another user's
            continue
        if (cwd == inside or cwd.startswith(inside + os.sep)) and int(proc.name) != os.getpid():
            found.append(int(proc.name))
    return found


def _stop_stragglers(folder: Path, timeout: float = 5.0) -> None:
    # When Ctrl-C reaches Python alone, subprocess.run kills the `make` it
    # started but not the compilers make started: they keep running in the
    # build folder and would write new files into it while it is deleted.
    pids = _working_in(folder)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if _running(p)]
        time.sleep(0.05)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie writes nothing and holds no folder)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return _alive(pid)
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def remove(folder: Path) -> None:
    """Delete ``folder`` completely, stopping processes still working in it first.

    Signals are deferred meanwhile (:func:`deferred_signals`). A missing
    folder is fine (its content was renamed into place).
    """
    folder = Path(folder)
    with deferred_signals():
        if not folder.exists():
            return
        _stop_stragglers(folder)
        # A process that was being killed may still have finished a write:
        # retry until the folder is really gone.
        for _ in range(50):
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                return
            time.sleep(0.1)


def owner_pid(folder: Path) -> int | None:
    """The process id recorded in a scratch folder's name, or None."""
    m = _NAME.match(Path(folder).name)
    return int(m["pid"]) if m and m["pid"] else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _last_touched(folder: Path) -> float:
    """Newest modification time of the folder and its direct entries."""
    newest = folder.stat().st_mtime
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            with contextlib.suppress(OSError):
                newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
    return newest


def sweep(parent: Path, max_age: float = STALE_SECONDS, *, legacy: bool = False) -> list[Path]:
    """Remove abandoned scratch folders in ``parent``.

    A folder is abandoned when the process named in it is dead, or when
    nothing in it changed for ``max_age`` seconds (which also covers a
    reused process id). Folders of live processes are left alone, so two
    commands can sweep and work in the same place at once.

    Parameters
    ----------
    legacy : bool
        Also remove ``.<name>.<random>`` folders without a process id (left
        by versions before this module) once ``max_age`` has passed. Only
        for folders the tool owns: a user's folder might hold such names.

    Returns
    -------
    list of Path
        The folders removed.
    """
    parent = Path(parent)
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:  # no folder yet: nothing to sweep
        return removed
    now = time.time()
    for entry in entries:
        if not _NAME.match(entry.name) or entry.is_symlink() or not entry.is_dir():
            continue
        pid = owner_pid(entry)
        if pid is None and not legacy:
            continue
        try:
            stale = (pid is not None and not _alive(pid)) or now - _last_touched(entry) > max_age
        except OSError:  # removed meanwhile by another sweeper
            continue
        if stale:
            remove(entry)
            removed.append(entry)
    return removed


@contextlib.contextmanager
def run_folder(build: Path, files: dict[str, str] | None = None) -> Iterator[Path]:
    """A private folder for one simulation of the build in ``build``, holding ``files``.

    Every simulator run of a build (a cocotb testbench, a C++ driver) works in
    ``build/runs/.run...`` (:func:`scratch`: gone when the run is), after what
    killed runs left there is swept; ``files`` (name -> text, the job's ROM
    images) are written into it first.
    """
    from ..infra.files import atomic_write

    runs = Path(build) / "runs"
    runs.mkdir(exist_ok=True)
    sweep(runs)
    with scratch(runs, "run") as work:
        for name, text in (files or {}).items():
            atomic_write(work / name, text)
        yield work
