"""``pipegossip optimum``: certified rounds on the command line, its refusals and its signals."""

import json
import subprocess
import sys
import time

import pytest

from pipegossip import cli
from pipegossip.cli import main

pytest.importorskip("pysat")


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_optimum_writes_a_validated_schedule(tmp_path, capsys):
    out = tmp_path / "o.json"
    status, text, _ = _run(capsys, "optimum", "--topology", "cycle", "--n", "6", "--model",
                           "Hstar", "-o", str(out))
    # seed 002: N/2 + 1 rounds; 3 is proved impossible, 4 found
    assert status == 0 and "3 rounds: UNSAT" in text and "optimum R = 4 (found by the solver)" in text
    status, text, _ = _run(capsys, "check", str(out), "--format", "json")
    assert status == 0 and json.loads(text)["R"] == 4


def test_optimum_json_and_the_heuristic_cap(capsys):
    status, text, _ = _run(capsys, "optimum", "--topology", "hypercube", "--k", "3", "--model",
                           "F1", "--format", "json")
    r = json.loads(text)
    assert status == 0 and r["optimum"] == r["heuristic"] == r["lower_bound"] == 3
    assert r["steps"] == []  # the matching schedule meets the lower bound: nothing to solve
    status, text, _ = _run(capsys, "optimum", "--topology", "path", "--n", "6", "--model",
                           "Hstar", "--p", "1")
    assert status == 0 and "optimum R = 8" in text  # seed 002: 3N/2 - 1


@pytest.mark.parametrize("argv,message", [
    (["--topology", "complete", "--n", "200", "--model", "F1"], "over the budget"),
    (["--topology", "mesh", "--k", "3", "--model", "F1"], "--k does not apply"),
    (["--topology", "cycle", "--n", "5", "--model", "F1", "--root", "1"], "--root"),
    (["--topology", "cycle", "--n", "5", "--model", "F1", "--primitive", "broadcast",
      "--root", "9"], "--root must be in 0..4"),
    (["--topology", "cycle", "--n", "5", "--model", "port"], "invalid choice"),
    (["--topology", "cycle", "--n", "5", "--model", "F1", "--time-limit", "0"], "--time-limit"),
])
def test_bad_input_is_one_line(tmp_path, capsys, argv, message):
    out = tmp_path / "o.json"
    status, _, err = _run(capsys, "optimum", *argv, "-o", str(out))
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_time_limit_is_a_verdict_status(tmp_path, capsys):
    out = tmp_path / "o.json"
    status, text, _ = _run(capsys, "optimum", "--topology", "torus", "--a", "4", "--b", "4",
                           "--model", "H1", "--time-limit", "0.5", "-o", str(out))
    assert status == 1 and "time limit" in text and not out.exists()


@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_signal_during_a_solver_call(tmp_path, sig):
    out = tmp_path / "o.json"
    code = (
        "import os, signal, sys, threading\n"
        "from pipegossip import cli\n"
        "import pipegossip.model.algorithms.optimum as o\n"
        "real = o._solve\n"
        "def slow(cnf, deadline):\n"
        f"    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIG{sig})).start()\n"
        "    return real(cnf, deadline)\n"
        "o._solve = slow\n"
        "sys.exit(cli.main(['optimum', '--topology', 'torus', '--a', '4', '--b', '4', "
        f"'--model', 'H1', '-o', {str(out)!r}]))\n")
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == (cli.EXIT_INTERRUPTED if sig == "INT" else cli.EXIT_TERMINATED), r.stderr
    assert time.monotonic() - t < 60 and not out.exists()
    assert sig == "TERM" or r.stderr.strip().splitlines()[-1].endswith("interrupted")
