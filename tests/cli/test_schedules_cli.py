"""The schedule commands: exit status 0/1/2, one-line refusals, files."""

import json
import subprocess
import sys

import pytest

from pipegossip.cli import main


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("argv", [
    ["one-factor", "--n", "6"], ["cyclic-shift", "--n", "5"],
    ["recursive-doubling", "--n", "12"], ["recursive-doubling", "--topology", "hypercube", "--k", "3"],
    ["min-calls", "--n", "9"], ["run", "--n", "6", "--order", "identity"],
    ["run", "--n", "5", "--order", "pipelined", "--receive", "any", "--substitute"],
    ["run", "--n", "5", "--order", "random", "--seed", "2", "--sessions", "2", "--channels", "1"],
])
def test_schedule_then_check(capsys, tmp_path, argv):
    path = tmp_path / "s.json"
    status, out, err = run(capsys, "schedule", *argv, "-o", str(path))
    assert status == 0 and err == ""
    first = path.read_bytes()
    assert run(capsys, "schedule", *argv, "-o", str(path))[0] == 0
    assert path.read_bytes() == first  # deterministic
    status, out, err = run(capsys, "check", str(path))
    assert status == 0, err
    assert "R " in out and "efficiency" in out and "busy" in out and "bound" in out


def test_stdout_and_gzip(capsys, tmp_path):
    status, out, _ = run(capsys, "schedule", "one-factor", "--n", "4")
    assert status == 0 and json.loads(out)["origin"]["algorithm"] == "one-factor"
    gz = tmp_path / "s.json.gz"
    assert run(capsys, "schedule", "one-factor", "--n", "4", "-o", str(gz))[0] == 0
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    status, out, _ = run(capsys, "check", str(gz), "--format", "json")
    data = json.loads(out)
    assert status == 0 and data["valid"] and data["R"] == 6 and data["busy"] == [4] * 6


def test_run_matches_run_length(capsys, tmp_path):
    path = tmp_path / "run.json"
    run(capsys, "schedule", "run", "--n", "10", "--order", "pipelined", "-o", str(path))
    status, out, _ = run(capsys, "check", str(path))
    assert "R 27" in out
    assert "busy 2 2 4 4 6 6 8 8 10 8 10 8 10 8 10 8 10 8 10 8 8 6 6 4 4 2 2" in out


def test_invalid_exit_1(capsys, tmp_path):
    path = tmp_path / "bad.json"
    run(capsys, "schedule", "one-factor", "--n", "4", "-o", str(path))
    data = json.loads(path.read_text())
    data["rounds"][2][0]["items"] = [3]
    path.write_text(json.dumps(data))
    status, out, err = run(capsys, "check", str(path))
    assert status == 1 and out == ""
    assert err.count("\n") == 1 and "round 3, message 0:" in err


@pytest.mark.parametrize("content", [b"\x00\x01\x02\xff" * 64, b"\xff\xfe{}", b"{bad json",
                                     b'{"format": "pipegossip-schedule/1", "x": 1}', b""])
def test_unreadable_exit_2(capsys, tmp_path, content):
    path = tmp_path / "in.json"
    path.write_bytes(content)
    status, out, err = run(capsys, "check", str(path))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err and str(path) in err


def test_missing_file(capsys, tmp_path):
    status, _, err = run(capsys, "check", str(tmp_path / "none.json"))
    assert status == 2 and err.count("\n") == 1


def test_no_traceback_binary_subprocess(tmp_path):
    path = tmp_path / "bin.json"
    path.write_bytes(bytes(range(256)) * 4)
    p = subprocess.run([sys.executable, "-m", "pipegossip", "check", str(path)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr.count("\n") == 1


@pytest.mark.parametrize("argv,text", [
    (["schedule", "one-factor"], "--n is required"),
    (["schedule", "one-factor", "--n", "4", "--order", "identity"],
     "--order does not apply to 'schedule one-factor' (an option of run)"),
    (["schedule", "cyclic-shift", "--n", "4", "--topology", "hypercube"],
     "--topology does not apply to 'schedule cyclic-shift'"),
    (["schedule", "recursive-doubling", "--n", "6", "--topology", "hypercube"], "2^k"),
    (["schedule", "min-calls", "--n", "8", "--p", "1"], "breaks it"),
    (["schedule", "one-factor", "--n", "4", "--root", "0"], "--root does not apply"),
    (["schedule", "run", "--n", "1"], "N"),
    (["schedule", "one-factor", "--n", "4", "-o", "/dev/null/x.json"], "not a folder"),
    (["schedule-table", "--min-n", "40", "--max-n", "50"], "no power of two"),
])
def test_refusals(capsys, argv, text):
    status, out, err = run(capsys, *argv)
    assert status == 2 and err.count("\n") == 1 and text in err, err


def test_table_md_and_json(capsys):
    status, out, _ = run(capsys, "schedule-table", "--sizes", "4,6")
    assert status == 0
    lines = out.splitlines()
    # 5 gossip rows per n; n=4: hypercube and cycle (all-port, allreduce, reduce), path
    # and mesh 2x2 (allreduce, reduce); n=6: cycle, path, mesh 2x3
    assert lines[0].startswith("| n | algorithm") and len(lines) == 2 + 10 + 10 + 7
    assert "| 4 | one-factor | H1 | 1 | 6 | 6 | 12 | 1.0000 |" in out
    assert "| 6 | all-port cycle | Fstar | 1 | 3 | 3 | 30 | 1.0000 |" in out
    status, out, _ = run(capsys, "schedule-table", "--sizes", "8", "--format", "json")
    rows = json.loads(out)
    assert {r["algorithm"] for r in rows} == {"pipelined", "identity+alg2", "one-factor",
                                              "cyclic-shift", "recursive-doubling",
                                              "all-port hypercube", "allreduce hypercube",
                                              "reduce hypercube", "all-port cycle",
                                              "allreduce cycle", "reduce cycle",
                                              "allreduce path", "reduce path",
                                              "allreduce mesh 2x4", "reduce mesh 2x4"}
    pipelined = next(r for r in rows if r["algorithm"] == "pipelined")
    assert pipelined["R"] == 21 and pipelined["bound"] == 14


def test_table_network_rows_meet_their_bounds(capsys):
    status, out, _ = run(capsys, "schedule-table", "--sizes", "9,16,64", "--format", "json")
    rows = {(r["n"], r["algorithm"]): r for r in json.loads(out)}
    assert {a for n, a in rows if n == 9} >= {"all-port cycle", "allreduce torus 3x3"}
    for (n, name), r in rows.items():
        if name.split()[0] in ("all-port", "allreduce", "reduce"):
            assert r["bound"] is not None and r["R"] == r["bound"], r
    assert rows[(64, "all-port hypercube")]["R"] == 11
    assert rows[(64, "allreduce hypercube")]["R"] == 6
    assert rows[(64, "allreduce torus 8x8")]["R"] == 8
    # the dimension-wise allreduce and the tree reduce: the diameter, the root's eccentricity
    assert rows[(64, "allreduce mesh 8x8")]["R"] == rows[(64, "reduce mesh 8x8")]["R"] == 14
    assert rows[(16, "allreduce path")]["R"] == 15 and rows[(9, "reduce cycle")]["R"] == 4


def test_plot(capsys, tmp_path):
    src = tmp_path / "s.json"
    run(capsys, "schedule", "recursive-doubling", "--n", "6", "-o", str(src))
    png = tmp_path / "s.png"
    status, _, err = run(capsys, "plot-schedule", str(src), "-o", str(png))
    assert status == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run(capsys, "plot-schedule", str(src), "-o", str(tmp_path / "s.gif"))[0] == 2


def test_bench_small(capsys):
    status, out, _ = run(capsys, "schedule-bench", "--sizes", "16")
    assert status == 0 and "one-factor" in out and "cyclic-shift" in out
    status, out, _ = run(capsys, "schedule-bench", "--sizes", "16", "--limit-gib", "0.00001")
    assert status == 0 and "skip n=16" in out
