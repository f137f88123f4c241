"""``pipegossip diff`` and :func:`diff_tables`: a one-token change is caught."""

from __future__ import annotations

import numpy as np
import pytest

from pipegossip.cli import main
from pipegossip.model import WS, RunConfig, RunTable, simulate
from pipegossip.waveforms.diff import diff_tables, format_diff, utilization_lines
from pipegossip.waveforms.golden import write_golden_dump


def model_table(n=5, order="identity", **kw) -> RunTable:
    return simulate(RunConfig.family(n, order, **kw), table=True).table


def test_equal_tables():
    d = diff_tables(model_table(), model_table())
    assert d.equal and d.total == 0 and d.differences == []
    assert "equal" in format_diff(d, "a", "b")


def test_one_token_change_is_found_with_its_place():
    good = model_table()
    text = good.render()
    lines = text.splitlines()
    # p2 at step 6 is R1 in Table 1; make it WR (and leave `used` alone).
    row = lines.index(next(x for x in lines if x.startswith("p2 ")))
    cells = lines[row].split()
    assert cells[6] == "R1"  # cells[0] is the row label
    cells[6] = "WR"
    lines[row] = " ".join(cells)
    bad = RunTable.parse("\n".join(lines))
    d = diff_tables(good, bad)
    assert not d.equal and d.total == 1
    (x,) = d.differences
    assert (x.step, x.row, x.expected, x.got) == (6, "p2", "R1", "WR")
    out = format_diff(d, "model", "edited")
    assert "1 slot(s) differ; first at step 6" in out
    assert "     6  p2   R1        WR" in out


def test_length_difference_is_said_once_and_listed_as_missing_steps():
    a, b = model_table(5, "pipelined"), model_table(5, "identity")
    d = diff_tables(a, b, limit=500)
    assert d.notes == ["L differs: expected 12, got 18"]
    tail = [x for x in d.differences if x.step > 12]
    assert tail and all(x.expected in ("-", "(none)") for x in tail)


def test_different_n():
    d = diff_tables(model_table(5), model_table(6))
    assert not d.equal and d.notes == ["N differs: expected 5, got 6"]


def test_exact_compares_wait_peers():
    a = model_table(5, "identity")
    peers = a.peers.copy()
    p, t = map(int, np.argwhere(a.actions == WS)[0])
    peers[p, t] += 1
    b = RunTable(a.actions, peers)
    assert diff_tables(a, b).equal  # run-table tokens drop WS/WR peers
    d = diff_tables(a, b, exact=True)
    assert not d.equal
    assert d.differences[0].expected == f"WS({a.peers[p, t]})"
    assert d.differences[0].got == f"WS({a.peers[p, t] + 1})"


def test_utilization_lines_mark_differences():
    lines = utilization_lines(np.array([2, 2, 4]), np.array([2, 4]), per_line=30)
    assert lines[0].split() == ["step", "1", "2", "3"]
    assert lines[1].split() == ["expected", "2", "2", "4"]
    assert lines[2].split() == ["got", "2", "4", "."]
    assert lines[3].strip() == "^ ^"


def test_cli_exit_codes_and_sides(tmp_path, capsys):
    good = tmp_path / "good.txt"
    good.write_text(model_table().render())
    bad = tmp_path / "bad.txt"
    bad.write_text(good.read_text().replace("used  2  2  2  2  2  2  4", "used  2  2  2  2  2  2  2"))
    assert main(["diff", str(good), "n=5,order=identity"]) == 0
    assert main(["diff", "table1", str(good)]) == 0
    capsys.readouterr()
    assert main(["diff", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "7  used  4         2" in out
    assert "utilisation:" in out
    # A dump on one side.
    dump = write_golden_dump(simulate(RunConfig.family(5, "identity"), table=True),
                             tmp_path / "g.vcd")
    assert main(["diff", "n=5,order=identity", str(dump), "--exact"]) == 0
    assert main(["diff", str(bad), str(dump)]) == 1


@pytest.mark.parametrize("args, message", [
    (["nothere.txt", "table1"], "is not a file, a dump"),
    (["table1", "missing.vcd"], "dump 'missing.vcd' does not exist"),
    (["n=5,order=identity,colour=red", "table1"], "unknown key 'colour'"),
    (["n=1,order=identity", "table1"], "N must be at least 2, got 1"),
    (["n=5,order=identity,sessions=x", "table1"], "sessions must be an integer, got 'x'"),
    (["table1", "n=5,order=identity", "--exact"], "--exact needs WS/WR peers"),
])
def test_cli_refuses_with_one_line(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(["diff", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err
    assert list(tmp_path.iterdir()) == []
