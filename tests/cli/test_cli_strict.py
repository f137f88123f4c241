"""Strict options and clear messages (issue 25, items 4 and 5): one line naming the option."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipegossip import cli


def refusal(capsys, args) -> str:
    assert cli.main(args) == 2, args
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("args, needle", [
    (["schedule-table", "--sizes", "8,,16"], "--sizes: empty item in '8,,16'"),
    (["schedule-bench", "--sizes", ",256"], "--sizes: empty item in ',256'"),
    (["network-bench", "--cases", "hypercube13,,"], "--cases: empty item"),
    (["prove-sweep", "--sizes", "3,,"], "argument --sizes: empty item in '3,,'"),
    (["prove-sweep", "--orders", "identity,"], "--orders: empty item"),
    (["network-table", "table5", "--families", ""], "--families: expected at least one name"),
    (["network-table", "table5", "--settings", "potential,,"], "--settings: empty item"),
    (["cosim-sweep", "--n", "4,,8"], "argument --n: empty item"),
])
def test_empty_list_items_refused(capsys, args, needle):
    assert needle in refusal(capsys, args)


@pytest.mark.parametrize("args, needle", [
    (["literature-table", "polling", "--max-n", "8"],
     "--max-n applies only to path-cycle and short-messages"),
    (["literature-table", "path-cycle", "--max-k", "5"], "--max-k applies only to polling"),
    (["literature-table", "polling", "--max-p", "2"], "--max-p applies only to short-messages"),
    (["literature-table", "polling", "--time-limit", "9"], "--time-limit applies only to path-cycle"),
    (["network-table", "table6", "--exact"], "--exact applies only to table3"),
    (["network-table", "table6", "--row-timeout", "5"], "--row-timeout applies only to table1"),
    (["network-table", "table5", "--search"], "--search applies only to table6"),
    (["network-table", "optimum", "--families", "ccc"],
     "--families applies only to table1, table3, table4, table5, table6"),
    (["network-table", "table1", "--tries", "2"], "--tries applies only to table3"),
    # each generator has only its own options (argparse refuses the others)
    (["schedule", "one-factor", "--n", "4", "--a", "3"],
     "--a does not apply to 'schedule one-factor' (an option of matching, coloring,"),
    (["schedule", "cyclic-shift", "--n", "4", "--tau", "1"],
     "--tau does not apply to 'schedule cyclic-shift' (an option of matching, best)"),
    (["schedule", "path-gossip", "--n", "4", "--lookahead", "1"],
     "--lookahead does not apply to 'schedule path-gossip' (an option of matching)"),
    (["schedule", "coloring", "--topology", "hypercube", "--k", "3", "--weights", "potential"],
     "--weights does not apply to 'schedule coloring' (an option of matching)"),
    (["prove-sweep", "--only", "schedule", "--no-schedule"],
     "--no-schedule applies without --only"),
    (["prove-sweep", "--rows"], "--rows applies only with --table"),
])
def test_inapplicable_options_refused(capsys, args, needle):
    assert needle in refusal(capsys, args)


@pytest.mark.parametrize("args, needle, absent", [
    (["schedule", "recursive-doubling", "--topology", "hypercube", "--k", "40"],
     "--k 40: recursive-doubling on the hypercube is limited to k <= 12", "1099511627776"),
    (["schedule", "polling-complete", "--k", "3", "--root", "5"],
     "--root 5: polling-complete polls from node 0", "every generator"),
    (["schedule", "one-factor", "--n", "4", "--root", "1"],
     "--root does not apply to 'schedule one-factor' (an option of polling-complete,",
     "every generator"),
    (["verilog-schedule", "--n", "1"], "--n must be at least 2, got 1", "ScheduleFabric"),
    (["verilog", "--fabric", "schedule", "--n", "1"], "--n must be at least 2", "ScheduleFabric"),
    (["run", "--n", "4", "--order", "identity", "-o", ""], "-o/--output: empty path", "'.'"),
    (["references", "-o", ""], "-o/--output: empty path", "'.'"),
    (["conjecture21", "--store", ""], "--store: empty path", "'.'"),
    (["schedule", "coloring", "--topology", "hypercube", "--k", "3", "--colors", "x" * 100_000],
     "colour string must be digits", "x" * 100),
])
def test_messages_name_the_option_not_the_internals(tmp_path, monkeypatch, capsys, args, needle,
                                                    absent):
    monkeypatch.chdir(tmp_path)
    err = refusal(capsys, args)
    assert needle in err and absent not in err and len(err) < 400, err
    assert list(tmp_path.iterdir()) == []


def write_schedule(tmp_path, name: str, change) -> str:
    assert cli.main(["schedule", "cyclic-shift", "--n", "4", "-o", str(tmp_path / "cs4.json")]) == 0
    doc = json.loads((tmp_path / "cs4.json").read_text())
    change(doc)
    (tmp_path / name).write_text(json.dumps(doc))
    return str(tmp_path / name)


@pytest.mark.parametrize("change, needle", [
    (lambda d: d["rounds"][0][0].update(items=[-1]), 'item -1 is negative'),
    (lambda d: d.update(model=None), "model must be a string, got null"),
    (lambda d: d.update(primitive="x" * 10_000), '"xxxxxxx'),
    (lambda d: d["topology"].update(n=None), "n must be an integer, got null"),
])
def test_schedule_file_messages_spell_json(tmp_path, capsys, change, needle):
    path = write_schedule(tmp_path, "bad.json", change)
    capsys.readouterr()
    err = refusal(capsys, ["check", path])
    assert needle in err and "None" not in err and "question" not in err and len(err) < 400, err


def test_check_of_a_5000_digit_number_exits_2(tmp_path, capsys):
    path = write_schedule(tmp_path, "big.json", lambda d: None)
    text = open(path).read().replace('"items": [', '"items": [' + "1" * 5000 + ", ", 1)
    open(path, "w").write(text)
    capsys.readouterr()
    assert "unreadable number" in refusal(capsys, ["check", path])


def test_cosim_schedule_names_the_bad_file_of_three(tmp_path, capsys):
    good = write_schedule(tmp_path, "good.json", lambda d: None)
    bad = write_schedule(tmp_path, "bad.json", lambda d: d["rounds"][0][0].update(dst=[9]))
    capsys.readouterr()
    # A schedule breaking a rule is the validator's verdict, exit 1 from every command
    # (docs/reference.md "Exit status", issue 39 item 21), still naming the file.
    assert cli.main(["cosim-schedule", good, bad, good, "--simulator", "amaranth"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("pipegossip cosim-schedule: invalid: ") and f"{bad}: " in err, err


def test_build_folder_variable_named_in_os_errors(tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("PIPEGOSSIP_BUILD_DIR", str(tmp_path / "file" / "x"))
    assert cli.main(["schedule", "cyclic-shift", "--n", "4", "-o", str(tmp_path / "s.json")]) == 0
    capsys.readouterr()
    err = refusal(capsys, ["cosim-schedule", str(tmp_path / "s.json")])
    assert "PIPEGOSSIP_BUILD_DIR=" in err, err


def test_warnings_are_one_line_without_source_paths(capsys):
    # cli.main installs this printer for every command.
    show = cli._warning_printer("pipegossip x")
    show(RuntimeWarning("overflow encountered in scalar multiply"), RuntimeWarning,
         "/venv/numpy/core/x.py", 12)
    err = capsys.readouterr().err
    assert err == "pipegossip x: warning: overflow encountered in scalar multiply\n"


def test_cosim_sweep_without_iverilog_is_usage(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pipegossip.sim.fsm.runner.iverilog_available", lambda: False)
    err = refusal(capsys, ["cosim-sweep", "--simulator", "icarus", "--workers", "0"])
    assert "needs iverilog" in err
    assert list(tmp_path.iterdir()) == []


def test_stdout_cut_by_head_exits_4(tmp_path):
    """``schedule ... | head -c 100``: the documented 4, not 0 after a partial write."""
    code = ("import sys; from pipegossip.cli import main; "
            "sys.exit(main(['schedule', 'one-factor', '--n', '256']))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(100)
    proc.stdout.close()
    assert proc.wait(timeout=300) == 4
    assert proc.stderr.read() == b""
