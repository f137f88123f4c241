"""`pipegossip fpga-sweep`: the grid, its table/CSV/plot, resuming, bad input."""

import csv
import io
import subprocess
import sys

import pytest

from pipegossip.hw.fpga.sweep import (FEATURES, SWEEP_COLUMNS, SweepPoint, sweep_csv,
                                      sweep_markdown, sweep_points)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True)


def test_points_cover_the_grid_with_valid_configurations():
    points = sweep_points(["ice40-up5k", "ecp5-25k"], [4, 8, 16], [8, 32], list(FEATURES))
    assert len(points) == 2 * 3 * 2 * len(FEATURES)
    assert len({p.name for p in points}) == len(points)
    for p in points:
        config = p.config           # every variant is a valid configuration
        assert config.n == p.n and config.order_name == "pipelined"
    channels = [p.config.channels for p in points if p.feature == "channels"]
    assert all(1 <= c <= n // 2 for c, n in zip(channels, [p.n for p in points
                                                           if p.feature == "channels"]))


def test_unknown_devices_and_features_are_refused():
    with pytest.raises(ValueError, match="'gw1n'"):
        sweep_points(["gw1n"], [4], [8], ["base"])
    with pytest.raises(ValueError, match="'turbo'"):
        sweep_points(["ice40-up5k"], [4], [8], ["turbo"])


def test_table_and_csv_show_every_point_and_its_status():
    ok = {"device": "ice40-up5k", "feature": "base", "n": 8, "width": 8,
          "config": SweepPoint("ice40-up5k", 8, 8, "base").config.slug, "status": "ok",
          "logic_cell": "ICESTORM_LC", "used": 900, "available": 5280, "fabric": 750,
          "boundary": 150, "ff_fabric": 100, "fmax_mhz": 41.5, "constraint_mhz": 50.0,
          "timing_met": False, "critical_from": "a", "critical_to": "b", "seconds": 9.0}
    full = {k: None for k in SWEEP_COLUMNS} | {"device": "ice40-up5k", "feature": "base",
                                               "n": 16, "width": 32, "config": "x",
                                               "status": "does not fit",
                                               "logic_cell": "ICESTORM_LC", "used": 7000,
                                               "available": 5280}
    table = sweep_markdown([ok, full]).splitlines()
    assert len(table) == 4
    assert "| 900 (750 + 150) / 5280 ICESTORM_LC | 41.5 (50) (missed) | ok |" in table[2]
    assert "7000 / 5280" in table[3] and "does not fit" in table[3]
    rows = list(csv.DictReader(io.StringIO(sweep_csv([ok, full]))))
    assert [r["status"] for r in rows] == ["ok", "does not fit"]
    assert rows[1]["fmax_mhz"] == "" and rows[0]["fabric"] == "750"


@pytest.mark.parametrize("args", [["--devices", "ice40-hx1k"], ["--n", "0"],
                                  ["--widths", "8,x"], ["--features", "base,warp"]])
def test_bad_sweep_options_are_refused(tmp_path, args):
    run = cli("fpga-sweep", *args, "-o", str(tmp_path / "sweep"))
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "sweep").exists()


@pytest.mark.fpga
@pytest.mark.slow
def test_a_small_sweep_writes_csv_plot_and_table_and_resumes(tmp_path):
    out = tmp_path / "sweep"
    args = ["fpga-sweep", "--devices", "ice40-up5k", "--n", "4", "--widths", "8",
            "--features", "base,channels", "-o", str(out), "--store", str(tmp_path / "store")]
    run = cli(*args)
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(io.StringIO((out / "sweep.csv").read_text())))
    assert [(r["feature"], r["status"]) for r in rows] == [("base", "ok"), ("channels", "ok")]
    assert all(int(r["fabric"]) > 0 and float(r["fmax_mhz"]) > 0 for r in rows)
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run.stdout == (out / "sweep.md").read_text()
    again = cli(*args)
    assert again.returncode == 0 and "0 completed, 0 failed, 2 cached" in again.stderr
    assert again.stdout == run.stdout


def test_a_point_that_does_not_fit_is_a_result_and_kept_on_resume(tmp_path, monkeypatch):
    from pipegossip.hw.fpga import sweep as fpga_flow
    from pipegossip.sweeps.runner import SweepOptions, run_sweep

    calls = tmp_path / "calls"
    fake = tmp_path / "fake-tool"
    # Yosys succeeds; nextpnr reports an overflowing device and fails.
    fake.write_text("#!/bin/sh\n"
                    f"echo x >> {calls}\n"
                    "case \"$*\" in *synth.ys*) exit 0;; esac\n"
                    "printf 'Info: Device utilisation:\\n"
                    "Info: \\t   ICESTORM_LC:  6000/ 5280   113%%\\n"
                    "ERROR: Unable to place cell\\n' > nextpnr.log\n"
                    "exit 1\n")
    fake.chmod(0o755)
    # In-process (--workers 0, no --timeout), so the patch reaches the job.
    monkeypatch.setattr(fpga_flow, "yowasp_tool", lambda name: str(fake))
    jobs = fpga_flow.sweep_jobs(sweep_points(["ice40-up5k"], [4], [8], ["base"]))
    options = SweepOptions(tmp_path / "store", workers=0)
    run = run_sweep("fpga-sweep", jobs, options, progress=False)
    rows = [fpga_flow.outcome_row(o) for o in run.outcomes]
    assert rows[0]["status"] == "does not fit" and rows[0]["used"] == 6000
    assert calls.read_text().count("x") == 2
    assert "Unable to place cell" in run.store.artefact(run.outcomes[0].key,
                                                        "nextpnr-tail.log").read_text()
    again = run_sweep("fpga-sweep", jobs, options, progress=False)
    assert [fpga_flow.outcome_row(o) for o in again.outcomes] == rows
    assert again.counts["cached"] == 1 and calls.read_text().count("x") == 2
