"""The sweep runner (pipegossip.sweeps.runner): local Dask cluster versus the serial path,
a worker killed mid-sweep, Ctrl-C and resume, failures, the store, bad flags.

Job functions used here live at module level so that Dask worker processes
(and the child process of --timeout) can import them by name.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipegossip.cli import main
from pipegossip.sweeps.runner import Job, SweepOptions, run_sweep
from pipegossip.cli.sweep import conjecture21_sizes, model_jobs
from pipegossip.sweeps.store import ResultStore, job_key


def square(config):
    return {"x": config["x"], "square": config["x"] ** 2}


def die_once(config):
    """Kill this (worker) process the first time; the marker file remembers."""
    marker = Path(config["marker"])
    if not marker.exists():
        marker.write_text("killed once\n")
        os.kill(os.getpid(), signal.SIGKILL)
    return {"x": config["x"]}


def fail_or_sleep(config):
    if config["what"] == "raise":
        raise ValueError("bad point")
    time.sleep(config["seconds"])
    return {"slept": config["seconds"]}


def half_written(store: Path) -> list[Path]:
    return [p for p in store.rglob("*") if p.name.endswith(".tmp")]


def test_key_is_canonical_and_depends_on_versions():
    a = job_key("m.f", {"n": 4, "order": "identity"}, {"pipegossip": "0.1.0"})
    assert a == job_key("m.f", {"order": "identity", "n": 4}, {"pipegossip": "0.1.0"})
    assert a != job_key("m.f", {"n": 4, "order": "identity"}, {"pipegossip": "0.2.0"})
    assert a != job_key("m.g", {"n": 4, "order": "identity"}, {"pipegossip": "0.1.0"})


@pytest.fixture(scope="module")
def two_workers():
    """A LocalCluster of 2 one-thread worker processes, shared (each takes seconds to start);
    the sweeps reach it by --scheduler. The embedded cluster is tested with Ctrl-C below."""
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


def test_two_workers_give_the_serial_results_and_a_rerun_is_cached(tmp_path, two_workers):
    jobs = model_jobs(conjecture21_sizes(96))
    serial = run_sweep("t", jobs, SweepOptions(tmp_path / "a", workers=0), progress=False)
    on_dask = SweepOptions(tmp_path / "b", scheduler=two_workers)
    dask = run_sweep("t", jobs, on_dask, progress=False)
    assert serial.counts == dask.counts == {"done": len(jobs), "cached": 0, "failed": 0}
    assert [o.result for o in serial.outcomes] == [o.result for o in dask.outcomes]
    again = run_sweep("t", jobs, on_dask, progress=False)
    assert again.counts["cached"] == len(jobs) and again.wall_seconds < 1
    table = (tmp_path / "b" / "t" / "table.jsonl").read_text().splitlines()
    assert {json.loads(line)["status"] for line in table} == {"cached"} and len(table) == len(jobs)
    forced = run_sweep("t", jobs[-3:], SweepOptions(tmp_path / "b", workers=0, cache=False),
                       progress=False)
    assert forced.counts["done"] == 3


def test_a_killed_worker_is_replaced_and_the_sweep_completes(tmp_path, two_workers):
    jobs = [Job.of(die_once, {"x": 0, "marker": str(tmp_path / "marker")}, label="dies")]
    jobs += [Job.of(square, {"x": x}) for x in range(1, 6)]
    store = tmp_path / "store"
    run = run_sweep("kill", jobs, SweepOptions(store, scheduler=two_workers), progress=False)
    assert (tmp_path / "marker").exists()
    assert run.counts == {"done": 6, "cached": 0, "failed": 0}
    assert len(list(ResultStore(store).records())) == 6 and half_written(store) == []


def test_failures_are_reported_not_cached_and_retried(tmp_path):
    jobs = [Job.of(fail_or_sleep, {"what": "raise"}, label="raises"),
            Job.of(fail_or_sleep, {"what": "sleep", "seconds": 0})]
    run = run_sweep("f", jobs, SweepOptions(tmp_path / "s", workers=0), progress=False)
    assert [o.status for o in run.outcomes] == ["failed", "done"]
    assert run.outcomes[0].error == "ValueError: bad point"
    rows = [json.loads(line) for line in (tmp_path / "s" / "f" / "table.jsonl").open()]
    assert [r["status"] for r in rows] == ["failed", "done"] and "error" in rows[0]
    retry = run_sweep("f", jobs, SweepOptions(tmp_path / "s", workers=0), progress=False)
    assert [o.status for o in retry.outcomes] == ["failed", "cached"]


def test_a_job_past_its_timeout_is_stopped_and_recorded(tmp_path):
    hang = Job.of(fail_or_sleep, {"what": "sleep", "seconds": 60}, label="hangs")
    start = time.monotonic()
    run = run_sweep("t", [hang], SweepOptions(tmp_path / "s", workers=0, timeout=2),
                    progress=False)
    assert time.monotonic() - start < 30
    assert run.outcomes[0].error == "JobTimeout: no result after 2 s (--timeout)"


def test_interrupted_sweep_resumes_without_recomputing(tmp_path, capsys):
    store = tmp_path / "store"
    args = ["conjecture21", "--max-n", "256", "--store", str(store), "--format", "json"]
    # --timeout runs each job in a process of its own: a start-up cost per job
    # that keeps the sweep running long enough to be interrupted half-way,
    # however fast the model gets.
    proc = subprocess.Popen([sys.executable, "-m", "pipegossip", *args, "--workers", "2",
                             "--timeout", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The event: the first result stored (the bound only stops a hang; it used to be
    # 60 s, after which the signal went out anyway and a loaded machine failed).
    deadline = time.monotonic() + 900
    while not list(store.glob("objects/*/*.json")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "pipegossip conjecture21: interrupted"
    assert "Traceback" not in err and out == "" and half_written(store) == []
    before = {p: p.stat().st_mtime_ns for p in store.glob("objects/*/*.json")}
    total = len(conjecture21_sizes(256))
    assert 1 <= len(before) < total

    assert main([*args, "--workers", "0"]) == 0  # the restart, in-process to save a start-up
    data = json.loads(capsys.readouterr().out)
    assert data["counts"] == {"cached": len(before), "done": total - len(before), "failed": 0}
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())  # not recomputed
    assert [r["N"] for r in data["rows"]] == conjecture21_sizes(256)
    assert data["smallest_n_below_two_thirds"] == 6  # identity + Algorithm 2 at 3 * 2**k
    assert data["smallest_power_of_two_below_two_thirds"] is None
    assert Path(data["figure"]).is_file()


def test_conjecture21_text_and_sweep_report(tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["conjecture21", "--max-n", "48", "--workers", "0", "--store", str(store)]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0].split() == ["N", "L", "E", "%", "<", "2/3", "job", "s"]
    assert lines[1].split()[:3] == ["2", "2", "100.000"] and len(lines) == 1 + 10 + 3
    assert lines[4].split()[:4] == ["6", "19", "52.632", "yes"]
    assert lines[-3:-1] == ["# E first drops below 2/3 at N = 6", "# E stays at or above 2/3 "
                            "for every power of two N computed (N <= 48)"]
    assert "conjecture21: 10 completed, 0 failed, 0 cached, 0 remaining" in out.err
    assert (store / "conjecture21" / "efficiency.png").stat().st_size > 10_000
    # An FPGA-like job's results (fpga-sweep's row keys) get their own figures.
    keys = {}
    for n, used, fmax in ((4, 281, 71.8), (8, 923, 53.2)):
        keys[n] = key = job_key("fpga.point", {"n": n}, {}, "")
        ResultStore(store).put(key, {
            "key": key, "job": "fpga.point", "config": {"n": n}, "versions": {}, "code": "",
            "result": {"device": "ice40-up5k", "n": n, "used": used, "fmax_mhz": fmax,
                       "_artefacts": {"report.txt": f"N={n}\n"}}})
    assert ResultStore(store).artefact(keys[4], "report.txt").read_text() == "N=4\n"
    assert main(["sweep-report", str(store), "-o", str(tmp_path / "report")]) == 0
    csv_lines = (tmp_path / "report" / "results.csv").read_text().splitlines()
    assert len(csv_lines) == 13 and "efficiency" in csv_lines[0].split(",")
    for figure in ("efficiency.png", "cells.png", "fmax.png"):
        assert (tmp_path / "report" / figure).stat().st_size > 10_000
    assert "12 result(s), 0 failure(s)" in capsys.readouterr().err


@pytest.mark.parametrize("flags, message", [
    (["--workers", "-1"], "argument --workers: must be 0 (in-process) or more, got -1"),
    (["--scheduler", "garbage"], "argument --scheduler: expected a Dask scheduler address"),
    (["--store", "FILE"], "is a file, not a folder"),
    (["--timeout", "0"], "argument --timeout: must be more than 0 and at most 604,800 seconds"),
    # hostile probes conjecture21/timeout='inf' and 'nan': every job used to fail
    # with OverflowError (exit 1) instead of a refusal
    (["--timeout", "inf"], "argument --timeout: must be more than 0"),
    (["--timeout", "nan"], "argument --timeout: must be more than 0"),
    (["--timeout", "1e9"], "at most 604,800 seconds"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "cannot be combined"),
])
def test_bad_flags_are_one_line_and_exit_2(tmp_path, capsys, flags, message):
    (tmp_path / "FILE").write_text("not a store\n")
    flags = [str(tmp_path / f) if f == "FILE" else f for f in flags]
    assert main(["conjecture21", "--max-n", "4", *flags]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.splitlines()) == 1 and message in out.err, out.err
    assert out.err.startswith("pipegossip conjecture21: error: ")
    assert (tmp_path / "FILE").read_text() == "not a store\n"
