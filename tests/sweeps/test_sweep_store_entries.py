"""Tampered sweep-store entries are skipped, never waited on or read without end (issue 25).

A record or a table replaced by a FIFO hung ``table8`` and ``sweep-report``;
one linked to ``/dev/zero`` grew without bound. Each command here runs in a
child under a timeout, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipegossip.sweeps.store import MAX_ENTRY_BYTES, ResultStore

PG = [sys.executable, "-m", "pipegossip"]


def _run(*argv, timeout=120):
    return subprocess.run([*PG, *argv], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweeps") / "store"
    run = _run("table8", "--max-n", "8", "--workers", "0", "--store", str(root))
    assert run.returncode == 0, run.stderr
    return root


def _records(root):
    return sorted(root.glob("objects/*/*.json"))


def _tamper(path, how):
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")
    else:  # oversized: a sparse regular file
        with open(path, "wb") as f:
            f.truncate(MAX_ENTRY_BYTES + 1)


@pytest.mark.parametrize("how", ["fifo", "dev-zero", "oversized"])
def test_tampered_record_and_table_are_skipped(store, tmp_path, how):
    import shutil
    root = tmp_path / "store"
    shutil.copytree(store, root, symlinks=True)
    records = _records(root)
    assert len(records) == 3  # N = 2, 4, 8
    _tamper(records[0], how)
    _tamper(root / "table8" / "table.jsonl", how)

    # sweep-report refuses the store, naming the record (issue 39: a report is made
    # only of objects it could verify), without waiting on it or reading it whole.
    report = _run("sweep-report", str(root), "-o", str(tmp_path / "rep"), timeout=60)
    assert report.returncode == 2, report.stderr
    assert "Traceback" not in report.stderr and len(report.stderr.splitlines()) == 1
    assert f"sweep store object {str(records[0])!r} is damaged" in report.stderr
    assert not (tmp_path / "rep").exists()

    # table8 says so, recomputes that job and stores a real file again.
    again = _run("table8", "--max-n", "8", "--workers", "0", "--store", str(root), timeout=60)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    assert f"sweep store object {str(records[0])!r} is damaged" in again.stderr
    assert records[0].is_file() and not records[0].is_symlink()
    assert records[0].stat().st_size < 10_000
    assert (root / "table8" / "table.jsonl").is_file()
    assert len(ResultStore(root, create=False).tables()["table8"]) == 3

    # The table alone tampered: skipped by sweep-report with one warning line.
    _tamper(root / "table8" / "table.jsonl", how)
    report = _run("sweep-report", str(root), "-o", str(tmp_path / "rep"), timeout=60)
    assert report.returncode == 0, report.stderr
    skipped = [line for line in report.stderr.splitlines() if "skipped sweep store entry" in line]
    assert len(skipped) == 1 and "table.jsonl" in skipped[0], report.stderr
    assert "3 result(s)" in report.stderr


def test_a_damaged_record_is_a_missing_one(tmp_path):
    from pipegossip.sweeps.store import job_key
    store = ResultStore(tmp_path / "s")
    key = job_key("m.f", {"n": 2}, {}, "")
    record = {"key": key, "job": "m.f", "config": {"n": 2}, "versions": {}, "code": "",
              "result": {"N": 2}}
    store.put(key, record)
    assert store.get(key) == record
    path = tmp_path / "s" / "objects" / key[:2] / f"{key}.json"
    for text in ('{"result": 5}', "[1, 2]", "[" * 100_000):
        path.write_text(text)
        assert store.get(key) is None and store.lookup(key).state == "damaged"
