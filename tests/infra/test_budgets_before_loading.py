"""Budgets are checked before the work and before the input is loaded (issue 39, items 8, 9).

* ``hw verilog --n 362 --order pipelined`` ran for over 300 s at 6.3 GB and
  ``sim cosim --n 300`` said nothing for a minute: generating the FSM fabric
  is now estimated (:func:`pipegossip.infra.budgets.export_seconds`) and refused at
  once over the ``seconds`` budget;
* an order file of N = 5000 (144 MB) was refused after 19.5 s and 2.6 GB of
  parsing: its N is counted from its brackets first;
* a 200,002-round schedule was refused by ``hw program`` after 37 s and
  567 MB: its rounds are counted first (a lower bound of the depth).

Each test makes the loader (or the generator) fail loudly if it is reached,
so "before loading" is checked by what runs, not by how long it took.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipegossip.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Reached(Exception):
    pass


def _never(*args, **kwargs):
    raise Reached("the input was loaded (or the work started) before the budget refused it")


def _one_line(capsys, *needles):
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def test_export_estimate_refuses_the_largest_fabric_of_the_bit_budget():
    from pipegossip.infra.budgets import export_seconds
    assert export_seconds(64) == pytest.approx(61.44)  # "about a minute" (limits.py)
    assert export_seconds(362) > 600 >= export_seconds(128)


@pytest.mark.parametrize("argv", [
    ["hw", "verilog", "--n", "362", "--order", "pipelined"],
    ["sim", "cosim", "--n", "300", "--order", "identity"],
])
def test_a_fabric_that_would_take_half_an_hour_is_refused_at_once(monkeypatch, capsys, argv):
    monkeypatch.delenv("PIPEGOSSIP_MAX_SECONDS", raising=False)
    monkeypatch.setattr("pipegossip.hw.export.verilog_text", _never)
    monkeypatch.setattr("pipegossip.sim.fsm.runner.fabric_verilog", _never)
    monkeypatch.setattr("pipegossip.cli.options.RunConfig.family", _never)
    assert main(argv) == 2
    _one_line(capsys, "generating the fabric for N=", "seconds", "PIPEGOSSIP_MAX_SECONDS")


def _orders(tmp_path: Path, n: int) -> Path:
    path = tmp_path / f"o{n}.json"
    path.write_text(json.dumps([[j for j in range(n) if j != i] for i in range(n)]))
    return path


@pytest.mark.parametrize("argv,env,needle", [
    (["hw", "verilog", "--order", "{file}"], ("PIPEGOSSIP_MAX_FABRIC_BITS", "10000"),
     "the fabric for N=64"),
    (["model", "run", "--order", "{file}"], ("PIPEGOSSIP_MAX_TABLE_CELLS", "1000"),
     "the run-table of N=64"),
    (["sim", "cosim", "--order", "{file}"], ("PIPEGOSSIP_MAX_MEMORY", "1M"),
     "a golden-model run with N=64"),
])
def test_an_order_file_too_big_is_refused_before_it_is_parsed(tmp_path, monkeypatch, capsys,
                                                              argv, env, needle):
    path = _orders(tmp_path, 64)
    monkeypatch.setenv(*env)
    monkeypatch.setattr("pipegossip.cli.options.load_orders", _never)
    assert main([a.replace("{file}", str(path)) for a in argv]) == 2
    _one_line(capsys, needle)


def test_an_order_file_within_the_budgets_still_runs(tmp_path, capsys):
    path = _orders(tmp_path, 5)
    assert main(["model", "run", "--order", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["N"] == 5


def _schedule(tmp_path: Path, rounds: int, empty: int = 0) -> Path:
    s = json.loads((EXAMPLES / "one-factor-n8.json").read_text())
    s["rounds"] = [s["rounds"][0][:1]] * rounds + [[]] * empty
    path = tmp_path / f"r{rounds}.json"
    path.write_text(json.dumps(s, indent=1))
    return path


def test_rounds_are_counted_without_parsing(tmp_path):
    from pipegossip.cli.program import rounds_in_file
    assert rounds_in_file(str(EXAMPLES / "one-factor-n8.json")) == 14
    assert rounds_in_file(str(_schedule(tmp_path, 7, empty=3))) == 7  # empty rounds: no cycle
    tricky = tmp_path / "tricky.json"
    tricky.write_text('{"origin": {"source": "[[\\"rounds\\": [[]]"}, "x": {"rounds": [[1]]}, '
                      '"rounds": [[{"src": 0}], [], [{"src": 1}]]}')
    assert rounds_in_file(str(tricky)) == 2
    assert rounds_in_file(str(tmp_path / "missing.json")) is None


def test_a_200002_round_schedule_is_refused_before_it_is_built(tmp_path, monkeypatch, capsys):
    path = _schedule(tmp_path, 200_002)
    monkeypatch.delenv("PIPEGOSSIP_MAX_FABRIC_BITS", raising=False)
    monkeypatch.setattr("pipegossip.model.schedules.ir.load", _never)
    assert main(["hw", "program", str(path), "-o", str(tmp_path / "i.hex")]) == 2
    _one_line(capsys, "200,002 rounds", "PIPEGOSSIP_MAX_FABRIC_BITS")
    assert not (tmp_path / "i.hex").exists()


def test_a_schedule_within_the_budget_still_programs(tmp_path, capsys):
    out = tmp_path / "i.hex"
    assert main(["hw", "program", str(EXAMPLES / "one-factor-n8.json"), "-o", str(out)]) == 0
    assert out.stat().st_size > 0
