"""The one input reader: every bad file refused in one line (reliability rows 7-10, 18, 20)."""

import os
import subprocess
import sys

import pytest

from pipegossip.model.errors import FormatError
from pipegossip.model.inputs import read_input_json, read_input_text
from pipegossip.model.orders import load_orders
from pipegossip.model.runtable import RunTable
from pipegossip.model import RunConfig, simulate

PG = [sys.executable, "-m", "pipegossip"]


def table_text(n=4):
    return simulate(RunConfig.family(n, "identity"), table=True).table.render(
        [RunConfig.family(n, "identity").header()])


def test_non_utf8_order_file(tmp_path):
    (tmp_path / "b.json").write_bytes(b"\xff\xfe")
    with pytest.raises(FormatError, match=r"b.json:1: order file is not UTF-8 text \(byte 0xff\)"):
        load_orders(tmp_path / "b.json")


def test_deeply_nested_order_file(tmp_path):
    (tmp_path / "d.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(FormatError, match="nests deeper than 64 levels"):
        load_orders(tmp_path / "d.json")


def test_brackets_inside_strings_do_not_count(tmp_path):
    (tmp_path / "s.json").write_text('["' + "[" * 200 + '"]')
    assert read_input_json(tmp_path / "s.json", "x") == ["[" * 200]


def test_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "o.json")
    with pytest.raises(FormatError, match="not a regular file"):
        load_orders(tmp_path / "o.json")


def test_folder_and_missing_file(tmp_path):
    with pytest.raises(FormatError, match="is a folder"):
        read_input_text(tmp_path, "run-table")
    with pytest.raises(FormatError, match="does not exist"):
        read_input_text(tmp_path / "nope", "run-table")


def test_oversized_file_refused_before_reading(tmp_path):
    (tmp_path / "big.txt").write_text("x" * 100)
    with pytest.raises(FormatError, match="over the limit of 10"):
        read_input_text(tmp_path / "big.txt", "run-table", max_bytes=10)


def test_binary_run_table_names_file_and_line(tmp_path):
    (tmp_path / "j.txt").write_bytes(b"# a\n\x00\x01")
    with pytest.raises(FormatError, match=r"j.txt:2: run-table is binary"):
        RunTable.read(tmp_path / "j.txt")


def test_latin1_comment_names_its_line(tmp_path):
    (tmp_path / "l.txt").write_bytes(table_text().encode() + b"# caf\xe9\n")
    with pytest.raises(FormatError, match=r"l.txt:9: run-table is not UTF-8"):
        RunTable.read(tmp_path / "l.txt")


@pytest.mark.parametrize("token,problem", [
    ("S99999999999999999999", "peer out of range"),
    ("S9", "peer out of range"),
    ("S0", "is a transfer to itself"),
    ("R٣", "bad run-table token"),
])
def test_bad_peers_are_refused(tmp_path, token, problem):
    text = table_text().replace("p0   S1", f"p0 {token}", 1)
    assert token in text
    with pytest.raises(FormatError, match=problem):
        RunTable.parse(text, "t.txt")


def test_header_n_must_match_the_rows():
    text = table_text().replace("N=4", "N=5")
    with pytest.raises(FormatError, match="header says N=5 but the table has 4"):
        RunTable.parse(text, "t.txt")


def test_valid_table_round_trips(tmp_path):
    (tmp_path / "t.txt").write_text(table_text())
    assert RunTable.read(tmp_path / "t.txt") == RunTable.parse(table_text())


@pytest.mark.parametrize("args", [
    ["run", "--n", "4", "--order", "b.json"],
    ["diff", "j.txt", "t.txt"],
    ["diff", "big.txt", "t.txt"],
    ["run", "--n", "٥", "--order", "identity"],
    ["run", "--n", "５", "--order", "identity"],
    ["run", "--n", "1_0", "--order", "identity"],
    ["run", "--n", "99999999999999999999", "--order", "identity"],
])
def test_cli_refuses_in_one_line(tmp_path, args):
    (tmp_path / "b.json").write_bytes(b"\xff\xfe")
    (tmp_path / "j.txt").write_bytes(os.urandom(3000) + b"\0")
    (tmp_path / "t.txt").write_text(table_text())
    (tmp_path / "big.txt").write_text(table_text().replace("p0   S1", "p0 S99999999999999999999", 1))
    r = subprocess.run([*PG, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and f"pipegossip {args[0]}: error: " in r.stderr
