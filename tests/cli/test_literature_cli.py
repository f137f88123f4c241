"""``pipegossip literature-table``, ``polling-search`` and the literature generators."""

import json

import pytest

from pipegossip.cli import main


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("algorithm,opts,r", [
    ("path-gossip", ["--n", "9", "--p", "1"], 12), ("path-gossip", ["--n", "9", "--p", "2"], 8),
    ("cycle-gossip", ["--n", "10"], 9), ("cycle-gossip", ["--n", "10", "--p", "4"], 6),
    ("polling-complete", ["--k", "4"], 8), ("polling-hypercube", ["--k", "5"], 10),
    ("polling-general", ["--n", "12"], 7), ("short-messages", ["--n", "4", "--p", "3"], 2)])
def test_schedule_then_check(tmp_path, capsys, algorithm, opts, r):
    out = tmp_path / "s.json.gz"
    assert _run(capsys, "schedule", algorithm, *opts, "-o", str(out))[0] == 0
    status, text, _ = _run(capsys, "check", str(out), "--format", "json")
    assert status == 0
    assert json.loads(text)["R"] == r


@pytest.mark.parametrize("argv", [
    ["schedule", "path-gossip", "--n", "2", "-o", "-"],
    ["schedule", "cycle-gossip", "--k", "3", "-o", "-"],
    ["schedule", "polling-complete", "--n", "8", "-o", "-"],
    ["schedule", "polling-hypercube", "--k", "20", "-o", "-"],
    ["schedule", "polling-general", "--n", "9", "--p", "2", "-o", "-"],
    ["schedule", "path-gossip", "--n", "5", "--topology", "cycle", "-o", "-"],
    ["literature-table", "nope"], ["literature-table", "path-cycle", "--max-n", "2"],
    ["literature-table", "polling", "--plot", "x.txt"],
    ["polling-search", "--k", "9", "--graph", "complete"],
    ["polling-search", "--k", "3", "--graph", "torus"],
    ["schedule", "short-messages", "--n", "8", "-o", "-"],
    ["schedule", "short-messages", "--k", "3", "--p", "2", "-o", "-"],
    ["schedule", "short-messages", "--n", "2000", "--p", "2", "-o", "-"],
    ["literature-table", "short-messages", "--max-n", "300"],
    ["short-messages-search", "--n", "11", "--p", "2"],
    ["short-messages-search", "--n", "5"]])
def test_bad_options_one_line_exit_2(capsys, argv):
    status, _, err = _run(capsys, *argv)
    assert status == 2
    assert err.count("\n") == 1 and "Traceback" not in err


def test_path_cycle_table(capsys, tmp_path):
    png = tmp_path / "pc.png"
    status, out, _ = _run(capsys, "literature-table", "path-cycle", "--max-n", "12",
                          "--plot", str(png))
    assert status == 0 and png.read_bytes()[:4] == b"\x89PNG"
    row = next(line for line in out.splitlines() if line.startswith("| 7 |"))
    assert row == "| 7 | 9 | 9 | 6 | 6 | 6 | 6 | 6 | 5 | 5 | 5 |"


def test_polling_table_json(capsys):
    status, out, _ = _run(capsys, "literature-table", "polling", "--max-k", "6",
                          "--format", "json")
    assert status == 0
    rows = {r["K"]: r for r in json.loads(out)}
    assert rows[4]["hypercube_messages"] == 18 < rows[4]["cor6_bound"] == 19
    assert rows[4]["complete_messages"] == rows[4]["prop3_algorithm"] == 18


def test_polling_search_k3(capsys):
    pytest.importorskip("pysat")
    status, out, _ = _run(capsys, "polling-search", "--k", "3", "--graph", "complete")
    assert status == 0
    assert "at most 8 messages: UNSAT" in out and "optimum 9 messages" in out


def test_short_messages_schedule_calls(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert _run(capsys, "schedule", "short-messages", "--n", "16", "--p", "4", "-o", str(out))[0] == 0
    status, text, _ = _run(capsys, "check", str(out), "--format", "json")
    got = json.loads(text)
    assert status == 0 and got["calls"] == 40
    kinds = {(b["kind"], b["value"]) for b in got["bounds"] if b["metric"] == "calls"}
    assert kinds == {("lower", 38), ("upper", 41)}  # bound (2) rounded up; Theorem 3.1


def test_short_messages_table(capsys, tmp_path):
    png = tmp_path / "sm.png"
    status, out, _ = _run(capsys, "literature-table", "short-messages", "--max-n", "12",
                          "--max-p", "3", "--plot", str(png))
    assert status == 0 and png.read_bytes()[:4] == b"\x89PNG"
    lines = out.splitlines()
    assert len(lines) == 2 + 3 * 9
    assert "| 6 | 2 | 2 | 2 | 9 | 9 | 9 | 9 | 11 | 0 | 9 |" in lines  # the pairs scheme
    assert "| 12 | 1 | - | - | 66 | 66 | - | 66 | 66 | 0 |  |" in lines


def test_short_messages_table_json(capsys):
    status, out, _ = _run(capsys, "literature-table", "short-messages", "--max-n", "8",
                          "--max-p", "2", "--format", "json")
    rows = {(r["n"], r["p"]): r for r in json.loads(out)}
    assert status == 0 and rows[8, 2]["calls"] == 16 == rows[8, 2]["paper_count"] - 1
    assert rows[8, 2]["lower"] == 16 and rows[8, 2]["upper"] == 18 and rows[8, 2]["gap"] == 0


def test_short_messages_search(capsys):
    pytest.importorskip("pysat")
    status, out, _ = _run(capsys, "short-messages-search", "--n", "6", "--p", "3",
                          "--solver", "glucose4")
    assert status == 0 and "glucose4" in out and "first calls in id order" in out
    assert "8 calls: UNSAT" in out and "optimum c(6,3) = 9 calls (short-messages is optimal)" in out
    status, out, _ = _run(capsys, "short-messages-search", "--n", "5", "--p", "3")
    assert status == 0 and "optimum c(5,3) = 6 calls (short-messages is optimal)" in out
    status, out, _ = _run(capsys, "short-messages-search", "--n", "4", "--p", "2",
                          "--format", "json")
    assert status == 0 and json.loads(out)["optimum"] == 4


def test_short_messages_search_one_count(capsys):
    pytest.importorskip("pysat")
    status, out, _ = _run(capsys, "short-messages-search", "--n", "6", "--p", "3",
                          "--calls", "8")
    assert status == 0 and "8 calls: UNSAT" in out and "c(6,3) > 8" in out
    status, out, _ = _run(capsys, "short-messages-search", "--n", "6", "--p", "3",
                          "--calls", "9", "--format", "json")
    r = json.loads(out)
    assert status == 0 and r["verdict"] == "SAT" and r["claim"] == "c(6,3) <= 9"
    assert len(r["calls"]) == 9 and "one M asked" in r["method"]
    status, out, _ = _run(capsys, "short-messages-search", "--n", "6", "--p", "3",
                          "--no-counting")
    assert status == 0 and "slack" not in out and "optimum c(6,3) = 9" in out


@pytest.mark.parametrize("argv,text", [
    (["--calls", "0"], "--calls"), (["--calls", "145"], "--calls must be at most")])
def test_short_messages_search_one_count_refused(capsys, argv, text):
    status, _, err = _run(capsys, "short-messages-search", "--n", "6", "--p", "3", *argv)
    assert status == 2 and text in err
