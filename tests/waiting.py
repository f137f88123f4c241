"""Waiting in tests without depending on the machine's speed (issue 39, item 19).

A test waits for an event (a file, a line, a process, a hold point of
``PIPEGOSSIP_TEST_HOLD``), never for a guessed delay, and it never claims a
speed: a bound on wall time is a *hang guard* only, far above anything a slow,
loaded machine needs (``HANG_GUARD``), so that it can fail on a hang and on
nothing else. See "Timing in tests" in docs/reference.md.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from contextlib import contextmanager

import pytest

#: Seconds after which a wait is a hang, not slowness: a refusal or a stop that
#: takes a second on an idle machine takes tens at load 10 under nice, never this.
HANG_GUARD = 300.0


def wait_until(condition, what: str, proc: subprocess.Popen | None = None,
               guard: float = HANG_GUARD):
    """Poll ``condition()`` until it returns something true, and return that.

    Fails when ``proc`` ends first (with its output), or after ``guard``
    seconds (a hang guard: the event never came).
    """
    end = time.monotonic() + guard
    while True:
        found = condition()
        if found:
            return found
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the command ended before {what}: {proc.communicate()}")
        if time.monotonic() > end:
            pytest.fail(f"hang guard: no {what} after {guard:.0f} s")
        time.sleep(0.02)


def finish(proc: subprocess.Popen, what: str, guard: float = HANG_GUARD) -> tuple:
    """``proc.communicate()``; a hang guard (kill, fail) if it runs past ``guard`` seconds."""
    try:
        return proc.communicate(timeout=guard)
    except subprocess.TimeoutExpired:
        proc.kill()
        out = proc.communicate()
        pytest.fail(f"hang guard: {what} still running after {guard:.0f} s: {out}")


@contextmanager
def hang_guard(what: str, guard: float = HANG_GUARD):
    """Fail an in-process call that runs past ``guard`` seconds (SIGALRM; main thread only).

    For "refused at once": the refusal must come, and a run that does the
    work instead (minutes to hours, or until memory runs out) is stopped here.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise AssertionError(f"hang guard: {what} still running after {guard:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, guard)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
