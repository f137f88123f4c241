"""No child outlives a sweep stopped by SIGTERM (issue 39, item 10).

``kill PID`` of ``pipegossip sim sweep --workers 2`` (started under
``setsid``, the signal to the main process alone) left ``make -j 2`` and
``c++``/``cc1plus`` running under PID 1, and a ``build/cosim/.n25-...pid...``
temporary behind: the workers were closed under their builds. Each job that
starts tools now runs in a process group of its own, which the command stops
and waits for (the job removes its temporaries as it goes) before it exits.

Every process the command starts inherits an environment tag, so the test
finds them wherever they were reparented; it waits for an observable event
(a compiler of the command running), never for a guessed delay.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pipegossip.sim.scratch import owner_pid

TOOLS = ("make", "c++", "g++", "cc1plus", "verilator", "verilator_bin", "ccache", "ld")


def _tagged(tag: str) -> list[tuple[int, str]]:
    """Live (not zombie) processes whose environment holds ``tag``: (pid, command name)."""
    found = []
    needle = f"PIPEGOSSIP_TEST_TAG={tag}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        if stat[stat.rindex(")") + 2:].split()[0] != "Z":
            found.append((int(entry), name))
    return found


def _verilator_ready():
    from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(f"Verilator is not usable here: {e}")


def test_sigterm_to_a_cosim_sweep_leaves_no_tool_and_no_temporary(tmp_path):
    _verilator_ready()
    tag = uuid.uuid4().hex
    build = tmp_path / "build"
    env = dict(os.environ, PIPEGOSSIP_BUILD_DIR=str(build), PIPEGOSSIP_TEST_TAG=tag)
    proc = subprocess.Popen([sys.executable, "-m", "pipegossip", "sim", "sweep", "--n", "21,25",
                             "--orders", "identity", "--workers", "2", "--store",
                             str(tmp_path / "st")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        began = time.monotonic()
        # The event: a compiler of this command runs (a bound only against a hang).
        while not any(name in ("cc1plus", "c++", "g++") for _, name in _tagged(tag)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - began < 900, "no compiler started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)  # the main process alone, as `kill PID`
        _, err = proc.communicate(timeout=300)
        left = _tagged(tag)  # at once: the command waits for its children before it exits
    finally:
        for pid, _ in _tagged(tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert proc.returncode == 143, err
    assert "Traceback" not in err, err
    assert left == [], f"still running after the command ended: {left}"
    temporaries = [str(p) for p in build.rglob(".*") if owner_pid(p) is not None]
    assert temporaries == [], temporaries
