"""`pipegossip run` / `plot` / `table8` from the command line, in a subprocess
so that what users see (exit status, stderr, files) is what is tested."""

import json
import subprocess
import sys

import pytest
from paper import CASES, IDS

from pipegossip.model import RunTable, simulate


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True, cwd=cwd)


def test_run_text_is_the_spec_table_plus_summary():
    out = cli("run", "--n", "5", "--order", "identity", "--quiet")
    assert out.returncode == 0, out.stderr
    table = RunTable.parse(out.stdout)
    assert table == simulate(CASES[0].config, table=True).table
    assert out.stdout.rstrip().splitlines()[-1] == "# N=5 L=18 mu=2.2222 E=44.44% used=40"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_run_json_has_the_documented_keys(case):
    c = case.config
    args = ["run", "--n", str(c.n), "--order", c.order_name, "--receive", c.receive,
            "--sessions", str(c.sessions), "--format", "json", "--quiet"]
    if c.substitute:
        args.append("--substitute")
    out = cli(*args)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    u = list(case.utilization)
    assert data["N"] == c.n and data["L"] == case.length
    assert data["utilization"] == u
    assert data["mu"] == pytest.approx(sum(u) / case.length)
    assert data["efficiency"] == pytest.approx(sum(u) / (c.n * case.length))
    assert len(data["table"]) == c.n
    assert all(len(row) == case.length for row in data["table"])
    assert data["table"][0][0].startswith("S")


def test_run_json_no_table_and_explicit_order_file(tmp_path):
    path = tmp_path / "orders.json"
    path.write_text(json.dumps([[2, 1], [0, 2], [1, 0]]))
    out = cli("run", "--n", "3", "--order", str(path), "--format", "json", "--no-table")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert "table" not in data and data["config"]["orders"] == [[2, 1], [0, 2], [1, 0]]


def test_run_writes_output_file(tmp_path):
    target = tmp_path / "t.txt"
    out = cli("run", "--n", "4", "--order", "pipelined", "-o", str(target), "--quiet")
    assert out.returncode == 0 and out.stdout == ""
    assert RunTable.read(target).length == 9


@pytest.mark.parametrize("args, message", [
    (["--n", "1", "--order", "identity"], "N must be at least 2, got 1"),
    (["--n", "x", "--order", "identity"], "argument --n: expected an integer, got 'x'"),
    (["--n", "4", "--order", "identity", "--sessions", "0"], "sessions must be at least 1, got 0"),
    (["--n", "4", "--order", "identity", "--channels", "0"], "channels must be at least 1, got 0"),
    (["--n", "4", "--order", "identity", "--channels", "5"], "channels must be at most"),
    (["--n", "4", "--order", "identity", "--seed", "3"], "--seed applies only to --order random"),
    (["--n", "4", "--order", "zigzag"], "unknown order 'zigzag'"),
    (["--n", "4", "--order", "nope.json"], "order file 'nope.json' does not exist"),
    (["--n", "4", "--order", "identity", "--receive", "all"], "argument --receive: invalid choice"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, args, message):
    target = tmp_path / "out.txt"
    out = cli("run", *args, "-o", str(target), cwd=tmp_path)
    assert out.returncode == 2
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("orders, message", [
    ([[1, 1], [0, 2], [0, 1]], "processor 0: order repeats id 1"),
    ([[1, 2], [1, 2], [0, 1]], "processor 1: order names its own processor (1)"),
    ([[1, 2], [0, 2], [0]], "processor 2: order misses id 1"),
    ([[1, 7], [0, 2], [0, 1]], "processor 0: order entry 7 is outside 0..2"),
    ([[1, 2], [0, "b"], [0, 1]], "processor 1: order entry 'b' is not an integer"),
    ({"a": 1}, "must hold a JSON list of lists"),
])
def test_bad_order_files(tmp_path, orders, message):
    path = tmp_path / "orders.json"
    path.write_text(json.dumps(orders))
    out = cli("run", "--n", "3", "--order", str(path))
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_order_file_with_wrong_count_and_bad_json(tmp_path):
    path = tmp_path / "orders.json"
    path.write_text("[[1], [0]")
    out = cli("run", "--n", "2", "--order", str(path))
    assert out.returncode == 2 and "is not valid JSON" in out.stderr
    path.write_text("[[1], [0]]")
    out = cli("run", "--n", "3", "--order", str(path))
    assert out.returncode == 2 and "--n 3 disagrees" in out.stderr and "holds 2 orders" in out.stderr


def test_huge_table_is_refused_with_advice():
    out = cli("run", "--n", "300", "--order", "identity", "--quiet")
    assert out.returncode == 2 and "pass --no-table" in out.stderr


def test_plot_commands_write_figures(tmp_path):
    png, svg = tmp_path / "u.png", tmp_path / "t.svg"
    assert cli("plot", "utilization", "--n", "6", "--order", "pipelined", "-o", str(png)).returncode == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli("plot", "table", "--n", "5", "--order", "identity", "-o", str(svg)).returncode == 0
    assert b"<svg" in svg.read_bytes()[:500]
    bad = cli("plot", "table", "--n", "5", "--order", "identity", "-o", str(tmp_path / "x.gif"))
    assert bad.returncode == 2 and "must end in .png or .svg" in bad.stderr
    assert not (tmp_path / "x.gif").exists()


def test_plot_scaling_and_table8_commands(tmp_path):
    png = tmp_path / "s.png"
    out = cli("plot", "scaling", "--max-n", "8", "--seeds", "2", "-o", str(png))
    assert out.returncode == 0, out.stderr
    assert png.stat().st_size > 10_000
    out = cli("table8", "--max-n", "64", "--format", "json")
    rows = json.loads(out.stdout)
    assert [r["N"] for r in rows] == [2, 4, 8, 16, 32, 64]
    assert rows[2]["L"] == 18 and rows[2]["paper_efficiency"] == pytest.approx(0.7368)


def test_progress_lines_are_throttled(monkeypatch, capsys):
    """A long run logged to a file wrote a progress line every half second."""
    from pipegossip.cli import model as model_cli
    clock = [100.0]
    monkeypatch.setattr(model_cli.time, "monotonic", lambda: clock[0])
    report = model_cli.stderr_progress("run x", every=10.0)
    for step in range(60):  # 30 s of calls, two a second
        report(step, step, 100)
        clock[0] += 0.5
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(",")[0] for line in lines] == ["run x: step 0", "run x: step 20",
                                                       "run x: step 40"]
    assert lines[1] == "run x: step 20, 20/100 transfers (20%), 10.0s"
