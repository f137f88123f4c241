"""Solver work in a child process, so that a signal or a time limit always stops it.

A SAT solver's C code does not return to Python while it searches: neither
a signal handler nor a clock in the same process gets a chance to run, so
Ctrl-C, SIGTERM and ``--time-limit`` would wait for the solver (issue 25).
:func:`run_bounded` forks a child that does the work and sends its progress
and result through a pipe; the parent only waits on the pipe, so it handles
a signal at once (the command exits 130 or 143) and stops at the deadline,
killing the child either way. The child dies with the default action of
SIGINT and SIGTERM (a Ctrl-C reaches the whole process group) and ends by
itself when its parent is gone.

A time limit counts from the start of the process, not of the search: it
bounds the command as the user sees it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from .. import _hold
from ..cli import EXIT_TERMINATED

__all__ = ["TimeLimitReached", "run_bounded", "seconds_since_start", "time_limited"]


class TimeLimitReached(Exception):
    """The deadline passed first; ``progress`` holds what the work reported until then."""

    def __init__(self, limit: float, progress: list):
        super().__init__(f"time limit of {limit:g} s reached")
        self.limit = limit
        self.progress = progress


def seconds_since_start() -> float:
    """Seconds since this process started (Linux ``/proc``; 0 where unknown)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


@contextmanager
def time_limited(limit: float | None):
    """Raise :class:`TimeLimitReached` once ``limit`` seconds have passed since the process started.

    For the work around the solver (building the problem, checking the
    answer), which runs here: a timer signal (SIGALRM) interrupts it in the
    main thread. Inside :func:`run_bounded` the same limit also stops the
    child. Raises at once when the limit has already passed.
    """
    if limit is None:
        yield
        return
    remaining = limit - seconds_since_start()
    if remaining <= 0:
        raise TimeLimitReached(limit, [])

    def expire(signum, frame):
        raise TimeLimitReached(limit, [])

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, remaining)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _orphan_watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)  # the parent is gone (killed outright): nobody wants the answer


def _child(conn, fn: Callable, args: tuple, kwargs: dict) -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_orphan_watch, args=(os.getppid(),), daemon=True).start()
    _hold("solver", wait=False)  # (a test hook: the work has started in this child)
    try:
        result = fn(*args, progress=lambda *item: conn.send(("progress", item)), **kwargs)
        conn.send(("done", result))
    except BaseException as e:  # noqa: BLE001 - handed to the parent, raised there
        try:
            conn.send(("error", e))
        except Exception:  # noqa: BLE001 - an exception that does not pickle
            conn.send(("error", RuntimeError(f"{type(e).__name__}: {e}")))
    finally:
        conn.close()


def run_bounded(fn: Callable, *args, time_limit: float | None = None, **kwargs):
    """``fn(*args, progress=..., **kwargs)`` in a child process; returns ``(result, progress)``.

    ``fn`` calls ``progress(*item)`` as it goes; the items come back as
    tuples in ``progress``. An exception of ``fn`` is raised here.

    Raises
    ------
    TimeLimitReached
        ``time_limit`` seconds passed since the process started.
    RuntimeError
        The child ended without an answer (killed, out of memory).
    """
    deadline = None if time_limit is None else \
        time.monotonic() - seconds_since_start() + time_limit
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args, kwargs), daemon=True)
    progress: list = []
    proc.start()
    send.close()
    try:
        late = False
        while True:
            wait = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
            if wait <= 0:
                if late or not recv.poll(0):  # one message already there is still read
                    raise TimeLimitReached(time_limit, progress)
                late = True
            if recv.poll(max(wait, 0)):
                try:
                    kind, payload = recv.recv()
                except EOFError:
                    proc.join(1)
                    # Killed by a signal meant for the command (sent to the child
                    # alone, or to the group and seen here first): end as the command.
                    if proc.exitcode == -signal.SIGINT:
                        raise KeyboardInterrupt from None
                    if proc.exitcode == -signal.SIGTERM:
                        raise SystemExit(EXIT_TERMINATED) from None
                    raise RuntimeError("the solver process ended without an answer "
                                       f"(exit status {proc.exitcode}; out of memory?)") from None
                if kind == "progress":
                    progress.append(payload)
                elif kind == "done":
                    return payload, progress
                else:
                    raise payload
    except TimeLimitReached as e:  # the timer of time_limited(): keep what was reported
        raise TimeLimitReached(e.limit, progress) from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
