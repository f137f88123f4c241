"""The C++-driven fast mode and the bare loop (sim/fast/native.py), without a toolchain.

The generated C++ is checked for what it must drive and report (every input
the fast top takes, every summary port, the edges as the cocotb driver
counts them), and the result parsing with stand-in executables (shell
scripts in place of the Verilator model): summaries field for field,
refused output when the driver stops early, bad lines, a failing exit.
The real builds run in tests/sim/test_network_fast_verilator.py.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pipegossip.sim.fsm.runner import CosimError
from pipegossip.sim.fast import network as fast_hw
from pipegossip.sim.fast import network_testbench
from pipegossip.sim.fast import native
from pipegossip.sim.fast.native import NativeBuild, bare_cpp, driver_cpp, run_bare, run_driver


def test_the_driver_sets_every_input_and_writes_every_summary_port():
    text = driver_cpp("top", fast_hw.INPUTS, fast_hw.SUMMARY)
    for i, name in enumerate(fast_hw.INPUTS):
        assert f"t->{name} = v[{i}];" in text
    assert ", ".join(f"(unsigned long long)t->{k}" for k in fast_hw.SUMMARY) in text
    # the cocotb driver's edges: go for one edge, the run's cycles, then up to 2c + 16
    assert "unsigned long long waited = cycles + 1;" in text
    assert "waited < 2 * cycles + 16" in text
    assert f"v[{len(fast_hw.INPUTS)}]" in text  # the cycles follow the inputs
    # and the two drivers take the same ports
    assert network_testbench.INPUTS == fast_hw.INPUTS
    assert network_testbench.SUMMARY == fast_hw.SUMMARY


def test_the_bare_loop_toggles_only_clock_reset_and_start():
    text = bare_cpp("pipegossip_network_fabric")
    assigned = {line.split("->")[1].split()[0] for line in text.splitlines()
                if line.strip().startswith("t->") and "=" in line}
    assert assigned == {"clk", "rst", "start"}
    assert "(c % period) == 0" in text


def _fake(tmp_path: Path, script: str) -> NativeBuild:
    exe = tmp_path / "obj" / native.EXE
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return NativeBuild(tmp_path, "top", True, 0.0)


SUMMARY = ("finished", "bad", "bad_check")


def test_run_driver_reads_one_summary_per_run_and_hands_over_the_files(tmp_path):
    # the stand-in echoes the runs' first input as bad_check and checks the ROM file is there
    b = _fake(tmp_path, 'test -f rom.hex || exit 7\n'
                        'while read a b c; do echo "1 0 $a $c 0.5" >> "$2"; done < "$1"\n'
                        'echo "end 99 1.25" >> "$2"\n')
    out, edges, seconds = run_driver(b, [[4, 0, 10], [6, 1, 12]], SUMMARY, {"rom.hex": "00\n"})
    assert out == [dict(finished=1, bad=0, bad_check=4, waited=10, wall_seconds=0.5),
                   dict(finished=1, bad=0, bad_check=6, waited=12, wall_seconds=0.5)]
    assert (edges, seconds) == (99, 1.25)
    assert not any((tmp_path / "runs").iterdir())  # the run's folder is gone


@pytest.mark.parametrize("script, message", [
    ('echo "1 0 0 5 0.1" > "$2"\n', "stopped before its last run"),
    ('echo "1 0 5 0.1" > "$2"; echo "end 1 1" >> "$2"\n', "bad line"),
    ('echo "1 0 0 5 0.1" > "$2"; echo "end 1 1" >> "$2"\n', "reported 1 runs of 2"),
    ('echo broken >&2; exit 3\n', "failed \\(exit 3\\): broken"),
])
def test_run_driver_refuses_what_is_not_a_whole_result(tmp_path, script, message):
    b = _fake(tmp_path, script)
    with pytest.raises(CosimError, match=message):
        run_driver(b, [[1, 2, 3], [1, 2, 3]], SUMMARY, {})


def test_run_bare_reads_the_loops_cycles_and_seconds(tmp_path):
    b = _fake(tmp_path, 'test "$2" = 7 || exit 5\necho "$1 0.25"\n')
    r = run_bare(b, 1000, 7)
    assert (r.cycles, r.loop_seconds) == (1000, 0.25)
    assert r.cycles_per_second == 4000 and r.process_seconds > 0
    assert r.end_to_end == 1000 / r.process_seconds
    with pytest.raises(CosimError, match="exit 5"):
        run_bare(b, 1000, 8)
