"""`fpga-sweep` on the sweep runner, with fake tools: 2 workers give the serial rows; a
sweep interrupted by Ctrl-C resumes without rebuilding finished points.

The jobs run in other processes (Dask workers, and the process of each job that
``--timeout`` starts), where a monkeypatch cannot reach. So each test writes a
``sitecustomize.py`` that puts the fake tool in place of the YoWASP tools and
hands it to every process on ``PYTHONPATH``.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

GRID = ["--devices", "ice40-up5k,ecp5-25k", "--n", "4", "--widths", "8"]
FOUR = [*GRID, "--features", "base,sessions4"]

# Synthesis succeeds; place-and-route reports an overflow that depends on the
# design (a checksum of its RTLIL) and fails:
# a "does not fit" row, which is a result and cached. With the file HANG, the
# second place-and-route hangs instead (its pid in PID) until it is killed.
FAKE = """#!/bin/sh
case "$*" in *synth.ys*) echo yosys >> {calls}; exit 0;; esac
echo nextpnr >> {calls}
if [ -e {hang} ] && [ "$(grep -c nextpnr {calls})" -eq 2 ]; then
    echo $$ > {pid}
    exec sleep 120
fi
used=$((10000 + $(cksum < top.il | cut -c1-3)))
printf 'Info: Device utilisation:\\n' > nextpnr.log
printf 'Info: \\t   ICESTORM_LC:  %s/ 5280   200%%\\n' $used >> nextpnr.log
printf 'Info: \\t  TRELLIS_COMB:  %s/ 9999   200%%\\n' $((used + 1)) >> nextpnr.log
echo 'ERROR: Unable to place cell' >> nextpnr.log
exit 1
"""


@pytest.fixture
def fake(tmp_path):
    """Paths of the fake tool's call log, hang switch and pid file; its environment."""
    paths = {k: tmp_path / k for k in ("calls", "hang", "pid")}
    tool = tmp_path / "fake-tool"
    tool.write_text(FAKE.format(**paths))
    tool.chmod(0o755)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import pipegossip.hw.fpga.sweep as sweep\n"
        f"sweep.yowasp_tool = lambda name: {str(tool)!r}\n")
    paths["env"] = dict(os.environ, PYTHONPATH=str(site))
    return paths


def sweep(fake, store, *flags, points=FOUR):
    return subprocess.run([sys.executable, "-m", "pipegossip", "fpga-sweep", *points,
                           "--store", str(store), "--format", "json", *flags],
                          capture_output=True, text=True, env=fake["env"])


def untimed(data: dict) -> list[dict]:
    """The rows without their build times, which differ from run to run."""
    return [{k: v for k, v in row.items() if k != "seconds"} for row in data["rows"]]


def nextpnr_calls(fake) -> int:
    return fake["calls"].read_text().count("nextpnr")


def test_two_workers_give_the_serial_rows_and_a_rerun_builds_nothing(tmp_path, fake):
    base = [*GRID, "--features", "base"]
    serial = sweep(fake, tmp_path / "a", "--workers", "0", points=base)
    assert serial.returncode == 0, serial.stderr
    rows = untimed(json.loads(serial.stdout))
    assert [(r["device"], r["status"], r["logic_cell"]) for r in rows] == [
        ("ice40-up5k", "does not fit", "ICESTORM_LC"), ("ecp5-25k", "does not fit", "TRELLIS_COMB")]
    assert nextpnr_calls(fake) == 2

    workers = sweep(fake, tmp_path / "b", "--workers", "2", points=base)
    assert workers.returncode == 0, workers.stderr
    data = json.loads(workers.stdout)
    assert untimed(data) == rows and data["counts"] == {"done": 2, "cached": 0, "failed": 0}
    assert nextpnr_calls(fake) == 4
    table = (tmp_path / "b" / "fpga-sweep" / "sweep.md").read_text()  # has no times
    assert table == (tmp_path / "a" / "fpga-sweep" / "sweep.md").read_text()

    again = sweep(fake, tmp_path / "b", "--workers", "0", points=base)
    assert json.loads(again.stdout)["counts"] == {"done": 0, "cached": 2, "failed": 0}
    assert untimed(json.loads(again.stdout)) == rows and nextpnr_calls(fake) == 4


def test_an_interrupted_sweep_resumes_without_rebuilding_finished_points(tmp_path, fake):
    store = tmp_path / "store"
    fake["hang"].write_text("")
    proc = subprocess.Popen([sys.executable, "-m", "pipegossip", "fpga-sweep", *FOUR,
                             "--store", str(store), "--format", "json", "--workers", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=fake["env"])
    deadline = time.monotonic() + 90
    while not fake["pid"].exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    hung = int(fake["pid"].read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and out == ""
    assert not _alive(hung)  # the job's tool went with it
    assert [p for p in store.rglob("*") if p.name.endswith(".tmp")] == []
    finished = {p: p.stat().st_mtime_ns for p in store.glob("objects/*/*.json")}
    assert len(finished) == 1 and nextpnr_calls(fake) == 2

    fake["hang"].unlink()
    resumed = sweep(fake, store, "--workers", "0")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["counts"] == {"done": 3, "cached": 1, "failed": 0}
    assert nextpnr_calls(fake) == 2 + 3  # the hung point and the two never started
    assert all(p.stat().st_mtime_ns == t for p, t in finished.items())


def _alive(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return False  # dead, not yet reaped
        except FileNotFoundError:
            return False
        time.sleep(0.1)
    return True
