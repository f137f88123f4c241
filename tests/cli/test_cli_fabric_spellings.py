"""``verilog --fabric schedule`` and ``cosim --schedule``: the schedule fabric
through the FSM fabric's commands, equal to ``verilog-schedule`` and
``cosim-schedule``, and every option of the other fabric refused in one line."""

import json
import subprocess
import sys

import pytest

PG = [sys.executable, "-m", "pipegossip"]


def pg(*args, cwd=None):
    return subprocess.run([*PG, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_verilog_fabric_schedule_equals_verilog_schedule(tmp_path):
    a, b = tmp_path / "a.v", tmp_path / "b.v"
    r = pg("verilog", "--fabric", "schedule", "--n", "5", "--width", "6", "--depth", "16",
           "-o", str(a))
    assert r.returncode == 0, r.stderr
    r = pg("verilog-schedule", "--n", "5", "--width", "6", "--depth", "16", "-o", str(b))
    assert r.returncode == 0, r.stderr
    text = a.read_text()
    assert text == b.read_text()
    assert "n=5 width=6 depth=16 slots=5" in text
    # The FSM fabric is still the default and differs.
    r = pg("verilog", "--n", "5", "--order", "identity", "--width", "6")
    assert r.returncode == 0 and r.stdout != text


@pytest.mark.parametrize("argv, words", [
    (["verilog", "--fabric", "schedule", "--n", "4", "--order", "identity"],
     "--order applies only to --fabric fsm"),
    (["verilog", "--fabric", "schedule", "--n", "4", "--substitute", "--sessions", "2"],
     "--substitute, --sessions apply only to --fabric fsm"),
    (["verilog", "--fabric", "schedule"], "required: --n"),
    (["verilog", "--n", "4", "--order", "identity", "--depth", "8"],
     "--depth applies only to --fabric schedule"),
    (["verilog", "--n", "4"], "required: --order"),
    (["verilog", "--fabric", "crossbar", "--n", "4"], "invalid choice"),
    (["cosim", "--schedule", "s.json", "--order", "identity"],
     "--order applies only to the FSM fabric"),
    (["cosim", "--schedule", "s.json", "--n", "4", "--runs", "3"],
     "--n, --runs apply only to the FSM fabric"),
    (["cosim", "--schedule", "s.json", "--simulator", "icarus"], "runs on Verilator"),
    (["cosim", "--n", "4", "--order", "identity", "--depth", "4"],
     "--depth applies only with --schedule"),
    (["cosim", "--n", "4"], "required: --order (or --schedule"),
    (["cosim", "--schedule", "missing.json"], "'missing.json' does not exist"),
])
def test_options_of_the_other_fabric_are_refused(tmp_path, argv, words):
    (tmp_path / "s.json").write_text("{}")
    r = pg(*argv, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"pipegossip {argv[0]}: error:") and words in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_cosim_schedule_equals_cosim_schedule_command(tmp_path):
    for family in ("cyclic-shift", "one-factor"):
        r = pg("schedule", family, "--n", "4", "-o", f"{family}.json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    files = ["cyclic-shift.json", "one-factor.json"]
    r = pg("cosim", "--schedule", *files, "--word-seed", "3", "--format", "json", "--quiet",
           cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ours = json.loads(r.stdout)
    r = pg("cosim-schedule", *files, "--seed", "3", "--format", "json", "--quiet",
           cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    theirs = json.loads(r.stdout)
    assert ours["match"] and ours["builds"] == 1
    assert ours["results"] == theirs["results"]
    assert [x["R"] for x in ours["results"]] == [3, 6]
    assert all(x["word_seed"] == 3 for x in ours["results"])
