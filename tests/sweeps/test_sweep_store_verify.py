"""The sweep store verifies what it reads (issue 39, items 3, 11, 12 and 13).

* an object replaced by a folder gave a traceback (``IsADirectoryError``, then
  ``TypeError`` in ``cli._folder_hint``) in ``table8``, ``conjecture21``,
  ``sim sweep`` and ``sweep-report``: now one line naming it, exit 2;
* an object edited by hand (valid JSON, L = 999999) was printed as cached; a
  truncated or random-bytes one was skipped by ``sweep-report`` without a
  word: every object now carries the SHA-256 of its record, and its key must
  be the key of its own job, configuration, versions and code; a damaged one
  is computed again by a sweep (one line naming it) and refused by
  ``sweep-report``;
* a marker ``{"format": 99}`` was accepted: refused now;
* a twin creating the same new store could see the other's first entry
  before its marker and refuse the store;
* ``--scheduler`` at a dead address created the store before it failed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipegossip import cli
from pipegossip.cli import main
from pipegossip.sweeps import store as ss
from pipegossip.sweeps.store import STORE_MARKER, ResultStore, code_digest, job_key, tool_versions


def _objects(root: Path) -> list[Path]:
    return sorted(root.glob("objects/*/*.json"))


def _object_of_n(root: Path, n: int) -> Path:
    for path in _objects(root):
        if json.loads(path.read_text())["record"]["config"]["n"] == n:
            return path
    raise AssertionError(f"no object of N={n}")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A store of table8 up to N=8 (three objects), made by this code."""
    root = tmp_path_factory.mktemp("verify") / "st"
    assert main(["table8", "--max-n", "8", "--workers", "0", "--store", str(root)]) == 0
    assert len(_objects(root)) == 3
    return root


@pytest.fixture
def store(made, tmp_path):
    root = tmp_path / "st"
    shutil.copytree(made, root)
    return root


def _table8(root, capsys, *flags):
    """Exit status, {N: L}, the final progress line and the other stderr lines."""
    status = main(["table8", "--max-n", "8", "--workers", "0", "--store", str(root),
                   "--format", "json", *flags])
    out = capsys.readouterr()
    lines = out.err.splitlines()
    progress = [x for x in lines if x.startswith("table8: ")]
    rows = {r["N"]: r["L"] for r in json.loads(out.out)} if out.out else {}
    return status, rows, (progress or [""])[-1], [x for x in lines if x not in progress]


def _report(root, tmp_path, capsys):
    status = main(["sweep-report", str(root), "-o", str(tmp_path / "rep")])
    return status, capsys.readouterr().err.splitlines()


def test_objects_carry_a_checksum_and_the_marker_the_format(store):
    assert json.loads((store / STORE_MARKER).read_text()) == {"format": ss.FORMAT} and ss.FORMAT == 2
    for path in _objects(store):
        obj = json.loads(path.read_text())
        assert obj["sha256"] == ss.record_checksum(obj["record"])
        rec = obj["record"]
        assert path.stem == rec["key"] == job_key(rec["job"], rec["config"], rec["versions"],
                                                  rec["code"])


@pytest.mark.parametrize("command", ["table8", "conjecture21", "sweep-report"])
def test_a_folder_in_place_of_an_object_is_one_line_and_exit_2(store, tmp_path, capsys,
                                                               command):
    victim = _object_of_n(store, 4)
    victim.unlink()
    victim.mkdir()
    (victim / "the user's").write_text("kept\n")
    argv = {"table8": ["table8", "--max-n", "8", "--workers", "0", "--store", str(store)],
            "conjecture21": ["conjecture21", "--max-n", "8", "--workers", "0", "--store",
                             str(store)],
            "sweep-report": ["sweep-report", str(store), "-o", str(tmp_path / "rep")]}[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert f"sweep store object {str(victim)!r} is a folder" in err
    assert (victim / "the user's").read_text() == "kept\n"  # nothing of it removed
    assert not (tmp_path / "rep").exists()


def test_sim_sweep_refuses_a_folder_in_place_of_its_object_before_building(tmp_path):
    # The key the sweep will look up, made as run_sweep makes it; no build is needed
    # to reach the lookup, so the folder is refused before any work.
    from pipegossip.sim.sweep_job import COSIM_TOOLS, cosim_configs, cosim_jobs
    job = cosim_jobs(cosim_configs([4], ["identity"]))[0]
    key = job_key(job.func, job.config, tool_versions(COSIM_TOOLS),
                  code_digest(job.func.rpartition(".")[0]))
    root = tmp_path / "st"
    ResultStore(root)
    (root / "objects" / key[:2] / f"{key}.json").mkdir(parents=True)
    build = tmp_path / "build"
    run = subprocess.run([sys.executable, "-m", "pipegossip", "sim", "sweep", "--n", "4",
                          "--orders", "identity", "--workers", "0", "--store", str(root)],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PIPEGOSSIP_BUILD_DIR=str(build)))
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert "is a folder, not a record" in run.stderr
    assert not build.exists() or not any(build.iterdir())


def test_the_cli_names_no_file_descriptor_as_a_path(capsys):
    # os.fdopen's IsADirectoryError names the descriptor (an int): the hint crashed on it.
    e = IsADirectoryError(21, "Is a directory", 3)
    assert cli._folder_hint(e) == "" and cli._named(e) == ""
    assert cli._named(FileNotFoundError(2, "No such file", "a.json")) == " 'a.json'"


def _tamper(path: Path, how: str) -> None:
    obj = json.loads(path.read_text())
    if how == "edited":  # valid JSON, the checksum left as it was
        obj["record"]["result"]["L"] = 999999
        path.write_text(json.dumps(obj))
    elif how == "edited-with-checksum":  # the checksum recomputed: the key still tells
        obj["record"]["config"]["n"] = 16
        obj["sha256"] = ss.record_checksum(obj["record"])
        path.write_text(json.dumps(obj))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    elif how == "random":
        path.write_bytes(os.urandom(600))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "json-list":
        path.write_text("[1, 2]")


@pytest.mark.parametrize("how", ["edited", "edited-with-checksum", "truncated", "random",
                                 "empty", "json-list"])
def test_a_damaged_object_is_computed_again_by_a_sweep(store, capsys, how):
    victim = _object_of_n(store, 8)
    _tamper(victim, how)
    status, rows, progress, err = _table8(store, capsys)
    assert status == 0, err
    assert rows == {2: 2, 4: 7, 8: 18}
    assert "1 completed, 0 failed, 2 cached" in progress
    assert len(err) == 1 and f"sweep store object {str(victim)!r} is damaged" in err[0], err
    assert "computing N=8 again" in err[0]
    # ... and stored whole again: the next run has nothing to say.
    status, rows, progress, err = _table8(store, capsys)
    assert status == 0 and err == [] and "0 completed, 0 failed, 3 cached" in progress


@pytest.mark.parametrize("how", ["edited", "edited-with-checksum", "truncated", "random"])
def test_sweep_report_refuses_a_damaged_object(store, tmp_path, capsys, how):
    victim = _object_of_n(store, 8)
    _tamper(victim, how)
    status, err = _report(store, tmp_path, capsys)
    assert status == 2 and len(err) == 1, err
    assert f"sweep store object {str(victim)!r} is damaged" in err[0]
    assert not (tmp_path / "rep").exists()


def test_an_object_under_another_key_is_damaged(store, tmp_path, capsys):
    a, b = _object_of_n(store, 8), _object_of_n(store, 4)
    shutil.copyfile(a, b)  # a whole, checksummed object under N=4's name
    status, rows, progress, err = _table8(store, capsys)
    assert status == 0 and len(err) == 1 and str(b) in err[0] and "damaged" in err[0]
    assert rows == {2: 2, 4: 7, 8: 18} and "1 completed, 0 failed, 2 cached" in progress


def test_no_cache_recomputes_without_reading(store, capsys):
    _tamper(_object_of_n(store, 8), "random")
    status, rows, progress, err = _table8(store, capsys, "--no-cache")
    assert status == 0 and err == [] and "3 completed" in progress


@pytest.mark.parametrize("marker", ['{"format": 99}', '{"format": "2"}', "[2]", "garbage",
                                    '{"format": true}', ""])
def test_an_unknown_or_damaged_marker_is_refused(store, tmp_path, capsys, marker):
    (store / STORE_MARKER).write_text(marker)
    before = {p: p.read_bytes() for p in _objects(store)}
    for run in (lambda: _table8(store, capsys)[::3], lambda: _report(store, tmp_path, capsys)):
        status, err = run()
        assert status == 2 and len(err) == 1, err
        assert STORE_MARKER in err[0] or "format 99" in err[0], err
    assert (store / STORE_MARKER).read_text() == marker
    assert {p: p.read_bytes() for p in _objects(store)} == before


def test_a_folder_as_marker_is_refused(store, capsys):
    (store / STORE_MARKER).unlink()
    (store / STORE_MARKER).mkdir()
    status, _, _, err = _table8(store, capsys)
    assert status == 2 and len(err) == 1 and "marker" in err[0] and "unreadable" in err[0]


def _as_format_1(root: Path) -> None:
    """The store as the previous version wrote it: plain records, marker format 1."""
    (root / STORE_MARKER).write_text('{"format":1}\n')
    for path in _objects(root):
        path.write_text(json.dumps(json.loads(path.read_text())["record"]) + "\n")


def test_a_format_1_store_is_computed_again_and_upgraded(store, capsys):
    _as_format_1(store)
    status, rows, progress, err = _table8(store, capsys)
    assert status == 0 and len(err) == 1, err
    assert "3 record(s)" in err[0] and "without a checksum" in err[0]
    assert rows == {2: 2, 4: 7, 8: 18} and "3 completed, 0 failed, 0 cached" in progress
    assert json.loads((store / STORE_MARKER).read_text()) == {"format": 2}
    assert all("sha256" in json.loads(p.read_text()) for p in _objects(store))


def test_sweep_report_leaves_format_1_records_out_with_one_line(store, tmp_path, capsys):
    _as_format_1(store)
    status, err = _report(store, tmp_path, capsys)
    assert status == 0
    assert any("left out 3 record(s)" in x for x in err), err
    assert "0 result(s)" in err[-1]
    assert (store / STORE_MARKER).read_text() == '{"format":1}\n'  # a reader changes nothing


def test_a_twin_seen_half_way_through_creating_the_store_is_no_foreign_folder(tmp_path,
                                                                              monkeypatch):
    """The interleaving of issue 39 item 13, made deterministic: the twin's marker
    lands between our look for it and our listing of the folder (its first
    entry, ``table8/``, already made). Old code looked for the marker first,
    then saw ``table8/`` as a foreign entry and refused the store."""
    root = tmp_path / "st"
    root.mkdir()
    real_iterdir = Path.iterdir

    def twin_finishes_meanwhile(self):
        if self == root and not (root / STORE_MARKER).exists():
            (root / STORE_MARKER).write_text('{"format":2}\n')  # the twin: marker first...
            (root / "table8").mkdir()  # ... then its sweep's folder
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", twin_finishes_meanwhile)
    store = ResultStore(root)
    assert store.format == ss.FORMAT


def test_twins_creating_one_store_both_succeed(tmp_path):
    """Two table8 --workers 2 at once on a new store, ten times: neither refuses it."""
    for attempt in range(3):
        root = tmp_path / f"st{attempt}"
        argv = [sys.executable, "-m", "pipegossip", "table8", "--max-n", "16", "--workers",
                "0", "--no-cache", "--store", str(root)]
        twins = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        for twin in twins:
            _, err = twin.communicate(timeout=120)
            assert twin.returncode == 0, err


def test_a_dead_scheduler_creates_nothing(tmp_path, capsys):
    root = tmp_path / "st"
    assert main(["table8", "--max-n", "4", "--scheduler", "tcp://127.0.0.1:1",
                 "--store", str(root)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no Dask scheduler at tcp://127.0.0.1:1" in err, err
    assert not root.exists()


def test_a_dead_scheduler_leaves_an_existing_store_as_it_was(store, capsys):
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    stamps = {p: p.stat().st_mtime_ns for p in store.rglob("*")}
    assert main(["table8", "--max-n", "4", "--scheduler", "tcp://127.0.0.1:1",
                 "--store", str(store)]) == 2
    capsys.readouterr()
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*")} == stamps
