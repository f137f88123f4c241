"""Schedule files past the held limit, read round by round (issue 43 item 4).

The limits are shrunk (``HELD_BYTES = 0``: every file streamed) so that small files take
the streamed path. The streamed read must give the whole read's schedule, its
verdict, error text and metrics, and refuse what the whole read refuses; its bounds
(text, whitespace, a round's entries) must hold.
"""

import gzip
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipegossip import cli
from pipegossip.model import inputs
from pipegossip.model.errors import FormatError
from pipegossip.model.schedules import read_rounds
from pipegossip.model.schedules.ir import Message, Schedule, complete, dumps, loads
from pipegossip.model.schedules.read_rounds import Streamed, load, open_schedule, validate_file
from pipegossip.model.schedules.validate import validate
from schedule_faults import plant
from test_schedules_validate_rounds import BASES, FAULTS


@pytest.fixture
def streamed(monkeypatch):
    """Every schedule file read as a stream."""
    monkeypatch.setattr(read_rounds, "HELD_BYTES", 0)


def _two_items() -> Schedule:
    # h = 2: node v owns v and v + 2; a second pass finds the largest id
    return Schedule.from_rounds([[Message(0, (1,), (0, 2))], [Message(1, (0,), (1, 3))]],
                                topology=complete(2), model="H1", p=None)


def _polling() -> Schedule:
    return Schedule.from_rounds([[Message(0, (1,), ("q",))], [Message(1, (0,), ("q", 1))]],
                                topology=complete(2), model="H1", p=None, primitive="polling",
                                root=0)


CASES = {**BASES, "two-items": _two_items, "polling": _polling}


def _write(tmp_path, s: Schedule, name="s.json") -> str:
    path = tmp_path / name
    path.write_bytes(dumps(s, gz=name.endswith(".gz")))
    return str(path)


def _same_arrays(a: Schedule, b: Schedule):
    for key in ("round_ptr", "src", "dst_ptr", "dst", "item_ptr", "items"):
        assert np.array_equal(getattr(a, key), getattr(b, key)), key
    assert a.header() == b.header()


@pytest.mark.parametrize("name", ["s.json", "s.json.gz"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_streamed_file_gives_the_whole_reads_verdict_and_schedule(tmp_path, streamed, case,
                                                                    name):
    s = CASES[case]()
    path = _write(tmp_path, s, name)
    opened = open_schedule(path)
    assert isinstance(opened, Streamed)
    assert validate_file(opened).to_json() == validate(s).to_json()
    _same_arrays(load(path), s)  # commands that hold the schedule build it from the stream


def test_small_files_are_still_held(tmp_path):
    assert isinstance(open_schedule(_write(tmp_path, BASES["ccc_4"]())), Schedule)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from(sorted(BASES)), kind=st.sampled_from(FAULTS), data=st.data())
def test_a_fault_in_a_late_round_gives_the_same_error_streamed(tmp_path, monkeypatch, base,
                                                               kind, data):
    monkeypatch.setattr(read_rounds, "HELD_BYTES", 0)
    s = plant(BASES[base](), kind, data, late=True)
    if s is None:
        return
    path = _write(tmp_path, s)
    assert validate_file(open_schedule(path)).to_json() == validate(s).to_json()


def test_other_json_spellings_read_the_same(tmp_path, streamed):
    s = BASES["ccc_4"]()
    doc = json.loads(dumps(s))
    for r in doc["rounds"]:  # keys of a message in another order, in every other round
        r[::2] = [{"items": m["items"], "src": m["src"], "dst": m["dst"]} for m in r[::2]]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc, indent=3))
    _same_arrays(load(path), s)
    assert validate_file(open_schedule(path)).to_json() == validate(s).to_json()


def _bad(tmp_path, change) -> str:
    doc = json.loads(dumps(BASES["ccc_4"]()))
    change(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("change", [
    lambda d: d["rounds"][3][2].update(items=[-1]),
    lambda d: d["rounds"][3][2].update(items=["x"]),
    lambda d: d["rounds"][3][2].update(items=[1 << 63]),
    lambda d: d["rounds"][3][2].update(dst=[1.5]),
    lambda d: d["rounds"][3][2].update(size=1),
    lambda d: d["rounds"][3].__setitem__(2, 7),
    lambda d: d["rounds"].__setitem__(3, {}),
    lambda d: d.update(model="H2"),
    lambda d: d.update({"extra": 1, **{k: d.pop(k) for k in list(d)}}),  # before the rounds
])
def test_a_bad_file_is_refused_with_the_whole_reads_rule(tmp_path, monkeypatch, change):
    path = _bad(tmp_path, change)
    with pytest.raises(FormatError) as whole:
        load(path)
    monkeypatch.setattr(read_rounds, "HELD_BYTES", 0)
    with pytest.raises(FormatError) as stream:
        validate_file(open_schedule(path))
    rule = str(whole.value).split(": ", 1)[1]  # after the file's name
    assert rule in str(stream.value) and path in str(stream.value)


@pytest.mark.parametrize("inside", ["1 2, ", "1,,", "1, ,", ", ", "01, ", "1-2, ", "- 1, "])
@pytest.mark.parametrize("key", ["dst", "items"])
def test_lists_json_refuses_are_refused_streamed(tmp_path, monkeypatch, inside, key):
    text = dumps(BASES["ccc_4"]()).decode()
    at = text.index(f'"{key}": [', text.index("}],\n  [") + 1)  # round 2, message 0
    path = tmp_path / "bad.json"
    path.write_text(text[:at] + f'"{key}": [' + inside + text[at + len(key) + 5:])
    with pytest.raises(FormatError, match="not valid JSON"):
        load(path)
    monkeypatch.setattr(read_rounds, "HELD_BYTES", 0)
    with pytest.raises(FormatError, match=f"round 2, message 0: {key}: not valid JSON"):
        validate_file(open_schedule(path))


def test_streamed_layout_rules(tmp_path, streamed):
    text = dumps(BASES["ccc_4"]()).decode()
    after = tmp_path / "after.json"  # a key after the rounds
    after.write_text(text[:text.rindex("]}")] + '], "origin": {}}\n')
    with pytest.raises(FormatError, match='ends with its "rounds"'):
        validate_file(open_schedule(after))
    blanks = tmp_path / "blanks.json"
    blanks.write_text(text.replace('"rounds": [', '"rounds": [' + " " * (2 << 20), 1))
    with pytest.raises(FormatError, match="bytes of whitespace in a row"):
        open_schedule(blanks)
        validate_file(open_schedule(blanks))


def test_the_stream_bounds_work_and_a_rounds_memory(tmp_path, streamed, monkeypatch):
    s = BASES["ccc_5"]()
    gz = _write(tmp_path, s, "s.json.gz")
    size = len(dumps(s))
    monkeypatch.setattr(inputs, "MAX_STREAM_BYTES", size - 1)  # the work bound
    with pytest.raises(FormatError, match=f"decompresses to more than {size - 1:,} bytes"):
        validate_file(open_schedule(gz))
    monkeypatch.setattr(inputs, "MAX_STREAM_BYTES", size)
    assert validate_file(open_schedule(gz)).valid
    biggest = max(int(s.dst_ptr[s.round_ptr[r + 1]] - s.dst_ptr[s.round_ptr[r]])
                  + int(s.item_ptr[s.round_ptr[r + 1]] - s.item_ptr[s.round_ptr[r]])
                  for r in range(s.rounds_total))
    monkeypatch.setattr(read_rounds, "MAX_ROUND_ENTRIES", biggest - 1)
    with pytest.raises(FormatError, match=f"more than {biggest - 1:,} receivers and item ids"):
        validate_file(open_schedule(gz))
    monkeypatch.setattr(read_rounds, "MAX_ROUND_ENTRIES", biggest)
    assert validate_file(open_schedule(gz)).valid


def test_a_gzip_bomb_of_valid_rounds_stops_at_the_work_bound(tmp_path, streamed, monkeypatch):
    # empty rounds are valid JSON and cheap to repeat: 4 MiB of them from a few KB
    head = dumps(BASES["hypercube_4"]()).decode()
    head = head[:head.index('"rounds": [') + len('"rounds": [')]
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(head.encode() + b"[], " * (1 << 20), 9))
    monkeypatch.setattr(inputs, "MAX_STREAM_BYTES", 1 << 20)
    with pytest.raises(FormatError, match="decompresses to more than 1,048,576 bytes"):
        validate_file(open_schedule(bomb))


def test_schedule_check_reads_a_file_past_the_held_limit(tmp_path, capsys, streamed):
    s = BASES["ccc_5"]()
    path = _write(tmp_path, s, "s.json.gz")
    assert cli.main(["schedule", "check", path, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    whole = validate(s).to_json()
    assert out["streamed"] and {k: out[k] for k in whole} == whole
    rounds = [list(r) for r in s.rounds]
    m = rounds[-1][0]
    rounds[-1][0] = Message(m.src, (m.src,), m.items)  # sends to itself, in the last round
    bad = _write(tmp_path, Schedule.from_rounds(rounds, topology=s.topology, model=s.model,
                                                p=s.p), "bad.json")
    assert cli.main(["schedule", "check", bad]) == 1
    err = capsys.readouterr().err
    assert f"invalid: round {len(rounds)}, message 0:" in err and "read as a stream" in err
