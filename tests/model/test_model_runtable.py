import numpy as np
import pytest

from pipegossip.model import R, S, WR, WS, FormatError, RunConfig, RunTable, simulate
from pipegossip.model.runtable import parse_token, token

TABLE1 = """\
# pipegossip run-table v1
# N=5 order=identity receive=ordered substitute=off sessions=1 channels=none
step  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18
p0   S1 S2 S3 S4 R1 WR R2 WR WR WR R3 WR WR WR R4  -  -  -
p1   R0 WS WS WS S0 S2 S3 S4 R2 WR WR R3 WR WR WR R4  -  -
p2   WR R0 WR WR WR R1 S0 WS S1 S3 S4 WR R3 WR WR WR R4  -
p3   WR WR R0 WR WR WR R1 WR WR R2 S0 S1 S2 S4 WR WR WR R4
p4   WR WR WR R0 WR WR WR R1 WR WR R2 WR WR R3 S0 S1 S2 S3
used  2  2  2  2  2  2  4  2  2  2  4  2  2  2  2  2  2  2
"""


def test_model_renders_table1_exactly():
    assert simulate(RunConfig.family(5, "identity"), table=True).table.render() == TABLE1


def test_parse_render_round_trip_and_header():
    t = RunTable.parse(TABLE1)
    assert t.n == 5 and t.length == 18
    assert t.render() == TABLE1
    assert t.header_fields()["order"] == "identity"
    assert t.token_at(1, 2) == "WS" and t.token_at(2, 9) == "S1"
    assert t == simulate(RunConfig.family(5, "identity"), table=True).table


def test_equality_is_token_equality():
    a = RunTable.parse(TABLE1)
    b = RunTable(a.actions.copy(), a.peers.copy())
    b.peers[a.actions == WS] += 1  # WS peers are not part of the text format
    assert a == b
    c = RunTable(a.actions.copy(), a.peers.copy())
    c.peers[0, 0] = 2  # S1 -> S2
    assert a != c
    d = RunTable(a.actions, a.peers, used=np.where(np.arange(18) == 3, 4, a.used))
    assert a != d  # a used row that disagrees with the rows is a difference


@pytest.mark.parametrize("tok, code", [("S12", (S, 12)), ("R0", (R, 0)), ("WS", (WS, 0)),
                                       ("WR", (WR, 0)), ("-", (0, 0))])
def test_tokens(tok, code):
    assert parse_token(tok) == code
    assert token(*code) == tok


@pytest.mark.parametrize("text, message", [
    ("p0 S1 X\np1 R0 WR\n", r"p0 step 2: bad run-table token 'X'"),
    ("p0 S1\np2 R0\n", "processor row p1 is missing"),
    ("p0 S1 WS\np1 R0\n", "row p1 has 1 steps, p0 has 2"),
    ("step 1 3\np0 S1 WS\np1 R0 WR\n", "step row must count 1, 2, 3"),
    ("p0 S1\np0 S1\n", "row p0 appears twice"),
    ("q0 S1\n", "unknown row label 'q0'"),
    ("# only comments\n", "no processor rows"),
    ("p0 S1\np1 R0\nused 2 2\n", "used row has 2 columns, rows have 1"),
])
def test_parse_errors_are_precise(text, message):
    with pytest.raises(FormatError, match=message):
        RunTable.parse(text)


def test_read_missing_file(tmp_path):
    with pytest.raises(FormatError, match="run-table .*nope.txt. does not exist"):
        RunTable.read(tmp_path / "nope.txt")
