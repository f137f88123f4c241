"""Fuzzing: random bytes and random structures into every reader, random argv into the CLI.

Whatever arrives, a reader either returns a value or raises FormatError /
ConfigError (one line for the user); the CLI exits 0, 1 or 2 and never
crashes (exit 3) or prints a traceback.
"""

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipegossip import cli
from pipegossip.model.errors import ConfigError, FormatError
from pipegossip.model.orders import load_orders
from pipegossip.model.runtable import RunTable
from pipegossip.model import RunConfig

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=4),
    max_leaves=40)


@FUZZ
@given(data=st.binary(max_size=400))
def test_order_reader_on_random_bytes(tmp_path, data):
    path = tmp_path / "o.json"
    path.write_bytes(data)
    try:
        orders = load_orders(path)
        RunConfig.explicit(orders)
    except (FormatError, ConfigError):
        pass


@FUZZ
@given(value=json_values)
def test_order_reader_on_random_json(tmp_path, value):
    path = tmp_path / "o.json"
    path.write_text(json.dumps(value))
    try:
        RunConfig.explicit(load_orders(path))
    except (FormatError, ConfigError):
        pass


TOKENS = st.sampled_from(["S0", "S1", "S2", "S3", "R0", "R1", "R2", "R3", "WS", "WR", "-",
                          "S99999999999999999999", "R-1", "x", "S", "p0", "used", "step"])


@FUZZ
@given(rows=st.lists(st.lists(TOKENS, min_size=0, max_size=6), min_size=0, max_size=5),
       header=st.sampled_from(["", "# N=4\n", "# N=99\n", "# pipegossip run-table v1\n"]),
       junk=st.binary(max_size=20))
def test_runtable_reader_on_random_tables(tmp_path, rows, header, junk):
    text = header + "step " + " ".join(str(i + 1) for i in range(len(rows[0]) if rows else 0))
    text += "\n" + "".join(f"p{p} " + " ".join(r) + "\n" for p, r in enumerate(rows))
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode() + junk)
    try:
        table = RunTable.read(path)
    except FormatError:
        return
    assert table.actions.shape == table.peers.shape
    assert ((table.peers >= 0) & (table.peers < table.n)).all()


OPTIONS = st.sampled_from([
    "--n", "--order", "--seed", "--receive", "--substitute", "--sessions", "--channels",
    "--format", "--no-table", "--quiet", "-o", "--width", "--help-not", "-x", "--",
])
VALUES = st.sampled_from([
    "4", "5", "0", "-1", "1_0", "٥", "99999999999999999999", "identity", "pipelined",
    "random", "any", "ordered", "json", "text", "b.json", "nope/", ".", "-", "", " ", "x",
])


@FUZZ
@given(argv=st.lists(OPTIONS | VALUES, max_size=8))
def test_random_argv_to_run_never_crashes(tmp_path, argv):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    (tmp_path / "b.json").write_bytes(b"\xff\xfe")
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = cli.main(["run", *argv])
            except SystemExit as e:  # argparse's --help / --version
                status = e.code
    finally:
        os.chdir(cwd)
    assert status in (0, 2), (argv, err.getvalue())
    assert "Traceback" not in err.getvalue()
    if status == 2:
        assert err.getvalue().count("\n") == 1, err.getvalue()
