"""The hardware commands: ``pipegossip verilog``, ``hwsim`` and ``cost``."""

from __future__ import annotations

import pytest

from pipegossip.cli import main
from pipegossip.model import RunConfig
from pipegossip.hw.export import verilog_text


# -- pipegossip verilog -------------------------------------------------------------

def test_verilog_writes_the_verilog(tmp_path, capsys):
    out = tmp_path / "fabric.v"
    rc = main(["verilog", "--n", "5", "--order", "pipelined", "--receive", "any",
               "--substitute", "--sessions", "2", "--channels", "2", "--width", "12",
               "--name", "g5", "-o", str(out)])
    assert rc == 0
    config = RunConfig.family(5, "pipelined", receive="any", substitute=True, sessions=2,
                              channels=2)
    assert out.read_text() == verilog_text(config, 12, "g5")


def test_verilog_reads_explicit_orders_and_prints_to_stdout(tmp_path, capsys):
    orders = tmp_path / "orders.json"
    orders.write_text("[[2, 1], [2, 0], [0, 1]]")
    assert main(["verilog", "--n", "3", "--order", str(orders)]) == 0
    text = capsys.readouterr().out
    assert text == verilog_text(RunConfig.explicit([[2, 1], [2, 0], [0, 1]]))


@pytest.mark.parametrize("args, needle", [
    (["--n", "1", "--order", "identity"], "N must be at least 2"),
    (["--n", "4", "--order", "identity", "--width", "0"], "--width"),
    (["--n", "4", "--order", "identity", "--width", "x"], "--width"),
    (["--n", "4", "--order", "identity", "--name", "9x"], "'9x'"),
    (["--n", "4", "--order", "identity", "--channels", "3"], "channels"),
    (["--n", "4", "--order", "identity", "--sessions", "0"], "sessions"),
    (["--n", "4", "--order", "spiral"], "spiral"),
    (["--n", "3", "--order", "{orders}"], "processor"),
])
def test_verilog_refuses_bad_input_with_one_line(tmp_path, capsys, args, needle):
    bad_orders = tmp_path / "bad.json"
    bad_orders.write_text("[[1, 1], [0, 2], [0, 1]]")
    out = tmp_path / "fabric.v"
    args = [a.replace("{orders}", str(bad_orders)) for a in args]
    rc = main(["verilog", *args, "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert "Traceback" not in err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad_orders]


def test_verilog_refuses_an_output_under_a_file(tmp_path, capsys):
    # Missing folders are created; a path through a file cannot be.
    rc = main(["verilog", "--n", "3", "--order", "identity", "-o", "/dev/null/f.v"])
    assert rc == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


# -- pipegossip hwsim ---------------------------------------------------------------

def test_hwsim_prints_the_rtl_table_and_the_verdict(tmp_path, capsys):
    vcd = tmp_path / "t9.vcd"
    rc = main(["hwsim", "--n", "5", "--order", "pipelined", "--receive", "any", "--substitute",
               "--vcd", str(vcd)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "used  2  4  4  4  4  4  4  4  4  2  2  2" in out
    assert out.rstrip().endswith("12 cycles, 20 deliveries; matches the model")
    assert "$enddefinitions" in vcd.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["t9.vcd"]


@pytest.mark.parametrize("args, needle", [
    (["--n", "300", "--order", "identity"], "too large"),
    (["--n", "4", "--order", "identity", "--width", "0"], "--width"),
    (["--n", "4", "--order", "identity", "--vcd", "/dev/null/x.vcd"], "is not a folder"),
])
def test_hwsim_refuses_bad_input(tmp_path, capsys, args, needle):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main(["hwsim", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert list(tmp_path.iterdir()) == []


# -- pipegossip cost ----------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["--sizes", "4,x"], "--sizes"),
    (["--sizes", "1"], "at least 2"),
    (["--widths", "0"], "at least 1"),
    (["--feature-sizes", ""], "at least one"),
    (["--jobs", "0"], "--jobs"),
])
def test_cost_refuses_bad_lists(tmp_path, capsys, args, needle):
    out = tmp_path / "cost.md"
    assert main(["cost", *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert not out.exists()


@pytest.mark.slow
def test_cost_prints_both_tables(tmp_path, capsys):
    out = tmp_path / "cost.md"
    assert main(["cost", "--sizes", "2,4", "--widths", "4", "--feature-sizes", "4",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert text == out.read_text()
    assert "| 2 | 4 |" in text and "| 4 | 4 |" in text
    assert "| 4 | base (ordered) |" in text and "| 4 | channels=1 |" in text
