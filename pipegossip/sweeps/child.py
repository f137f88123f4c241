"""Sweep jobs in a process group of their own, stopped cleanly (:mod:`pipegossip.sweeps.runner`).

A job runs in a child process of the process that took it (a Dask worker,
or the command with ``--workers 0``) when it has a ``--timeout`` or starts
tools (a co-simulation builds with Verilator: ``make``, ``c++``). The child
is the leader of a new session, so the job and every tool it started form
one process group, and it is stopped as one:

* **Stopped** (a timeout, or the process that waits for it is stopped): the
  group gets SIGTERM. The job's own handler unwinds it, so every ``finally``
  runs (a build's scratch folder is removed, its compilers stopped); then
  whatever is left of the group is killed. Only a job that has not ended a
  minute later is killed outright.
* **Orphaned** (its worker died: the cluster is being closed, or a worker was
  killed): the kernel sends it the same SIGTERM (``PR_SET_PDEATHSIG``).
* **Waited for**: a child of a worker of the command's own local cluster
  holds a lock on a file of its own in the folder named by
  :data:`REGISTRY_ENV` while it lives (the lock goes with the process). The
  command, on its way out, stops every registered child and waits for each
  lock (:func:`stop_registered`), so no tool and no temporary outlives it,
  whichever way the workers went.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .store import canonical_json

__all__ = ["REGISTRY_ENV", "JobTimeout", "JobError", "resolve", "in_child", "stop_registered"]

#: The folder where each job child of a local cluster's workers registers.
REGISTRY_ENV = "PIPEGOSSIP_SWEEP_JOBS"
#: How long a stopped job may take to clean up before it is killed outright.
GRACE_S = 60.0


class JobTimeout(Exception):
    """A job ran longer than ``--timeout``; its process group was stopped."""


class JobError(Exception):
    """A job failed in its own process; the message is that process's last error line."""


def resolve(name: str) -> Callable[[dict], dict]:
    """The job function named ``module.qualname`` (imported)."""
    module, _, qualname = name.rpartition(".")
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def in_child(func: str, config: dict, timeout: float | None) -> str:
    """Run job ``func(config)`` in a child process group; return its JSON text.

    Raises
    ------
    JobTimeout
        No result after ``timeout`` seconds (None: no limit).
    JobError
        The job raised (its one-line error) or its process died.
    """
    # The child gets this process's import path, so any job function this
    # worker can import, the child can.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
               PIPEGOSSIP_SWEEP_PARENT=str(os.getpid()))
    code = "from pipegossip.sweeps.child import _child_main; _child_main()"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
    try:
        out, err = child.communicate(canonical_json([func, config]), timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(child)
        raise JobTimeout(f"no result after {timeout:g} s (--timeout)") from None
    except BaseException:  # interrupted: the job must not compute on for nobody
        _stop(child)
        raise
    if child.returncode != 0:
        lines = err.strip().splitlines()
        raise JobError(lines[-1] if lines else f"job process exited with {child.returncode}")
    return out


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _stop(child: subprocess.Popen) -> None:
    """SIGTERM to the job's group, its clean-up awaited; SIGKILL to what is left."""
    _signal_group(child.pid, signal.SIGTERM)
    try:
        child.communicate(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(child.pid, signal.SIGKILL)
    child.communicate()


def _register() -> object | None:
    """Hold a lock on this process's file in the registry while it lives (see the module)."""
    folder = os.environ.get(REGISTRY_ENV)
    if not folder:
        return None
    f = open(Path(folder) / f"{os.getpid()}.lock", "w")  # close-on-exec: tools do not hold it
    fcntl.flock(f, fcntl.LOCK_EX)
    f.write(f"{os.getpid()}\n")
    f.flush()
    return f


def _terminated(signum, frame):
    # Unwind the job like the command line does, so its `finally` blocks
    # remove its temporaries; a second signal during the clean-up waits.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def _child_main() -> None:
    """Entry of the child process of :func:`in_child`: job on stdin, result on stdout."""
    lock = _register()  # before any tool or temporary exists: a SIGTERM until here just ends us
    signal.signal(signal.SIGTERM, _terminated)
    _die_with_parent()
    try:
        func, config = json.loads(sys.stdin.read())
        try:
            text = canonical_json(resolve(func)(config))
        except Exception as e:  # noqa: BLE001 - becomes the job's one-line error
            print(f"{type(e).__name__}: {' '.join(str(e).split())}", file=sys.stderr)
            raise SystemExit(1) from None
        sys.stdout.write(text)
        sys.stdout.flush()
    finally:
        # Any tool of the job still running (a compiler make left) goes with it;
        # this process too, last (the lock goes with it).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for pid in _others_in_group():  # (not killpg: SIGKILL would take this process too)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + GRACE_S
        while _others_in_group() and time.monotonic() < deadline:
            time.sleep(0.02)
        if lock is not None:
            lock.close()


def _others_in_group() -> list[int]:
    """Live processes of this process's group other than itself (Linux /proc)."""
    me, group = os.getpid(), os.getpgrp()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            found.append(int(entry))
    return found


def _die_with_parent() -> None:
    # Linux: a worker killed or closed mid-job (Ctrl-C, cluster shutdown) takes
    # its job's process group along (the job and any tool it started) instead
    # of leaving it computing for nobody: the kernel sends this process SIGTERM
    # (handled above: the job unwinds and cleans up).
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if str(os.getppid()) != os.environ.get("PIPEGOSSIP_SWEEP_PARENT", str(os.getppid())):
        raise SystemExit(1)  # the parent was gone before prctl took effect


def stop_registered(folder: Path, wait: bool) -> None:
    """Stop every job child registered in ``folder``; with ``wait``, until each has ended.

    A file whose lock can be taken belongs to a child that has ended (or
    never started its work); one whose lock is held is a live child, whose
    group is sent SIGTERM. Waiting takes each lock in turn; a child that has
    not ended after :data:`GRACE_S` has its group killed.
    """
    for path in sorted(Path(folder).glob("*.lock")):
        try:
            f = open(path)
        except OSError:
            continue
        with f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                continue  # ended
            except BlockingIOError:
                pass
            pgid = int(path.stem)
            _signal_group(pgid, signal.SIGTERM)
            if not wait:
                continue
            deadline = time.monotonic() + GRACE_S
            while time.monotonic() < deadline:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    time.sleep(0.02)
            else:
                _signal_group(pgid, signal.SIGKILL)
                fcntl.flock(f, fcntl.LOCK_EX)
