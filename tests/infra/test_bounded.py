"""Solver-backed commands stop on a signal and at --time-limit (issue 25).

The SAT searches run their solver in a child process (``pipegossip/infra/bounded.py``):
SIGTERM gives exit 143 and Ctrl-C (SIGINT to the whole group) 130 within a
second, and ``--time-limit`` stops the command within 10 % of the limit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipegossip.infra.bounded import TimeLimitReached, run_bounded

pytest.importorskip("pysat")

PG = [str(Path(sys.executable).with_name("pipegossip"))]
if not Path(PG[0]).exists():
    PG = [sys.executable, "-m", "pipegossip"]


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _start_search(*argv: str) -> tuple[subprocess.Popen, int]:
    """Start a command and wait until its solver child runs; returns it and the child."""
    proc = subprocess.Popen([*PG, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    end = time.monotonic() + 60
    while not (kids := _children(proc.pid)):
        assert proc.poll() is None and time.monotonic() < end, "the search never started"
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the solver by now
    return proc, kids[0]


@pytest.mark.parametrize("argv,sig,code", [
    (["polling-search", "--k", "5", "--graph", "complete"], signal.SIGTERM, 143),
    (["short-messages-search", "--n", "9", "--p", "4"], signal.SIGTERM, 143),
    (["polling-search", "--k", "5", "--graph", "hypercube"], signal.SIGINT, 130),
])
def test_a_signal_stops_the_search_within_a_second(argv, sig, code):
    proc, child = _start_search(*argv)
    sent = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # as Ctrl-C in a terminal: the whole group
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == code, err
    assert took < 1.0, f"exit {took:.2f} s after the signal"
    assert b"internal error" not in err and b"Traceback" not in err
    assert len(err.splitlines()) <= 1
    assert not Path(f"/proc/{child}").exists() or _zombie(child), "the solver outlived it"


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_time_limit_is_honoured_within_ten_percent():
    # The limit counts from the command's start, so it must be well above
    # the bare start-up and exit of the command line: 2 s on an idle machine
    # (as the issue asks), more on a loaded one, always held to 10 %.
    # Start-up is measured twice and the slower taken: under load one sample
    # can be quick while the run after it is not (a CI run beside FPGA builds
    # overshot 2.0 s by 0.24 s, with the start-up sampled at a quiet moment).
    startup = []
    for _ in range(2):
        began = time.monotonic()
        subprocess.run([*PG, "--version"], capture_output=True, check=True, timeout=60)
        startup.append(time.monotonic() - began)
    limit = round(max(2.0, 5 * max(startup)), 1)
    started = time.monotonic()
    # c(9,4) is open (14..15: undecided after 40 minutes of two solvers)
    run = subprocess.run([*PG, "short-messages-search", "--n", "9", "--p", "4",
                          "--time-limit", str(limit)], capture_output=True, text=True,
                         timeout=60)
    took = time.monotonic() - started
    assert run.returncode == 1, run.stderr
    assert took <= 1.1 * limit, f"{took:.2f} s for --time-limit {limit}"
    assert run.stderr.strip().splitlines() == [
        f"pipegossip short-messages-search: time limit of {limit:g} s reached; the search is "
        "not settled (exit status 1)"]
    assert "time limit: c(9,4) >= " in run.stdout and "proved, not settled" in run.stdout


def _count(n, progress):
    for k in range(n):
        progress(k, k * k)
    return "done"


def _forever(progress):
    progress("started")
    while True:
        pass


def _fails(progress):
    raise ValueError("bad n")


def _slow_python_work(progress):
    began = time.monotonic()
    while time.monotonic() - began < 30:
        pass


def test_work_before_the_solver_is_bounded_too():
    from pipegossip.infra.bounded import seconds_since_start, time_limited
    began = time.monotonic()
    with pytest.raises(TimeLimitReached):
        with time_limited(seconds_since_start() + 1.0):
            _slow_python_work(None)
    assert time.monotonic() - began < 1.5
    with pytest.raises(TimeLimitReached):  # already past: at once
        with time_limited(seconds_since_start() - 1.0):
            _slow_python_work(None)
    with pytest.raises(TimeLimitReached) as e:  # the timer inside run_bounded keeps progress
        with time_limited(seconds_since_start() + 1.0):
            run_bounded(_forever)
    assert e.value.progress == [("started",)]


def test_run_bounded_returns_raises_and_stops():
    assert run_bounded(_count, 3) == ("done", [(0, 0), (1, 1), (2, 4)])
    with pytest.raises(ValueError, match="bad n"):
        run_bounded(_fails)
    from pipegossip.infra.bounded import seconds_since_start
    began = time.monotonic()
    with pytest.raises(TimeLimitReached) as e:
        run_bounded(_forever, time_limit=seconds_since_start() + 1.0)
    assert 0.9 <= time.monotonic() - began <= 1.5
    assert e.value.progress == [("started",)]
