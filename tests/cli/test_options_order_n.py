"""An order file gives N: ``--n`` may be left out, a typed ``--n`` must agree,
and a default ``--n`` (``demo``, ``prove``) gives way to the file."""

import argparse
import json
from pathlib import Path

import pytest

from pipegossip.cli import main
from pipegossip.model.errors import ConfigError
from pipegossip.cli.options import add_config_arguments, config_from_args, missing_config

ORDERS5 = str(Path(__file__).resolve().parents[2] / "examples" / "orders-n5.json")


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_run_takes_n_from_the_order_file(capsys):
    status, out, err = _run(capsys, "run", "--order", ORDERS5, "--no-table", "--quiet")
    assert status == 0, err
    assert out.startswith("# N=5 order=explicit")


def test_a_typed_n_that_disagrees_is_refused_in_one_line(capsys, tmp_path):
    target = tmp_path / "t.txt"
    status, out, err = _run(capsys, "run", "--n", "6", "--order", ORDERS5, "-o", str(target))
    assert status == 2 and out == "" and not target.exists()
    assert err == (f"pipegossip run: error: --n 6 disagrees with {ORDERS5}, which holds 5 "
                   "orders (leave --n out: the file gives N)\n")
    status, _, err = _run(capsys, "run", "--n", "5", "--order", ORDERS5, "--no-table", "--quiet")
    assert status == 0, err


def test_a_family_still_needs_n(capsys):
    status, out, err = _run(capsys, "run", "--order", "pipelined")
    assert status == 2 and out == ""
    assert err == ("pipegossip run: error: --n N is required with --order pipelined "
                   "(an order file gives N itself)\n")


def test_a_default_n_gives_way_to_the_file():
    parser = argparse.ArgumentParser()
    add_config_arguments(parser, n_default=8, order_default="pipelined")
    assert config_from_args(parser.parse_args([])).n == 8
    assert config_from_args(parser.parse_args(["--order", ORDERS5])).n == 5
    with pytest.raises(ConfigError, match="--n 8 disagrees"):
        config_from_args(parser.parse_args(["--n", "8", "--order", ORDERS5]))


@pytest.mark.parametrize("n,order,missing", [
    (None, None, ["--n", "--order"]),
    (None, "identity", ["--n"]),
    (None, ORDERS5, []),
    (4, None, ["--order"]),
    (4, "random", []),
])
def test_missing_config(n, order, missing):
    assert missing_config(argparse.Namespace(n=n, order=order)) == missing


def test_schedule_run_and_verilog_take_n_from_the_file(capsys, tmp_path):
    out = tmp_path / "run5.json"
    status, _, err = _run(capsys, "schedule", "run", "--order", ORDERS5, "-o", str(out))
    assert status == 0, err
    assert json.loads(out.read_text())["topology"] == {"name": "complete", "n": 5}
    status, text, err = _run(capsys, "verilog", "--order", ORDERS5)
    assert status == 0, err
    assert "// N=5 order=explicit" in text
    status, _, err = _run(capsys, "verilog", "--order", "identity")
    assert status == 2 and err == "pipegossip verilog: error: the following arguments are required: --n\n"
