"""``pipegossip waves``: text and JSON output, exit status, refusals."""

from __future__ import annotations

import json

import pytest

from pipegossip.cli import main
from pipegossip.model import RunConfig, RunResult, RunTable, simulate
from pipegossip.waveforms.golden import write_golden_dump

CONFIG = RunConfig.family(5, "identity", receive="any", substitute=True)


@pytest.fixture
def dump(tmp_path):
    return write_golden_dump(simulate(CONFIG, table=True), tmp_path / "run.vcd")


def test_text_output_is_the_run_table(dump, capsys):
    assert main(["waves", str(dump)]) == 0
    out = capsys.readouterr().out
    table = RunTable.parse(out)
    assert table == simulate(CONFIG, table=True).table
    assert "# N=5 read back from run.vcd scope=TOP.pipegossip_model run=1/1" in out
    assert out.rstrip().endswith("# " + simulate(CONFIG).summary())


def test_gtkw_option_writes_the_save_file(dump, capsys):
    assert main(["waves", str(dump), "--gtkw"]) == 0
    assert f"wrote {dump.with_suffix('.gtkw')}" in capsys.readouterr().err
    assert dump.with_name("run.slot.txt").is_file()


def test_json_output_matches_run_json(dump, capsys, tmp_path):
    out = tmp_path / "waves.json"
    assert main(["waves", str(dump), "--format", "json", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    data = json.loads(out.read_text())
    assert main(["run", "--n", "5", "--order", "identity", "--receive", "any", "--substitute",
                 "--format", "json", "--quiet"]) == 0
    ref = json.loads(capsys.readouterr().out)
    for key in ("N", "L", "mu", "efficiency", "utilization", "table"):
        assert data[key] == ref[key], key


def test_contract_problems_give_exit_one(tmp_path, capsys):
    good = simulate(CONFIG, table=True)
    used = good.table.used.copy()
    used[0] = 4
    bad = RunResult(CONFIG, good.deliveries, used,
                    RunTable(good.table.actions, good.table.peers, used))
    path = write_golden_dump(bad, tmp_path / "bad.vcd")
    assert main(["waves", str(path)]) == 1
    captured = capsys.readouterr()
    assert "# problem: used shows 4 in cycle 1 but the trace has 2 S/R slots" in captured.out
    assert "pipegossip waves: used shows 4 in cycle 1" in captured.err


@pytest.mark.parametrize("args, message", [
    (["missing.vcd"], "dump 'missing.vcd' does not exist"),
    (["{dump}", "--top", "elsewhere"], "no scope named 'elsewhere'"),
    (["{dump}", "--run", "2"], "only 1 run(s) start in this dump"),
    (["{dump}", "--run", "0"], "must be at least 1, got 0"),
    (["{dump}", "--clock", "clock"], "lacks clock"),
])
def test_refusals_are_one_line_and_write_nothing(dump, tmp_path, capsys, monkeypatch,
                                                 args, message):
    monkeypatch.chdir(tmp_path)
    before = set(tmp_path.iterdir())
    out = tmp_path / "out.txt"
    argv = ["waves"] + [a.format(dump=dump) for a in args] + ["-o", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err
    assert set(tmp_path.iterdir()) == before
