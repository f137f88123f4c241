"""The schedule file format: strict reading, deterministic bytes, round trips."""

import gzip
import json

import pytest

from pipegossip.model.algorithms.limits import cyclic_shift, min_calls, one_factor, recursive_doubling
from pipegossip.model.errors import FormatError
from pipegossip.model.schedules.ir import FORMAT, Message, Schedule, complete, dumps, load, loads
from pipegossip.model.schedules.topologies import topology


def _small():
    return Schedule.from_rounds([[Message(0, (1,), (0,))], [], [Message(1, (0,), (1,))]],
                                topology=complete(2), model="H1", p=1,
                                origin={"algorithm": "hand", "source": "test"})


def test_example_layout():
    data = json.loads(dumps(_small()))
    assert list(data) == ["format", "primitive", "root", "model", "p", "topology", "origin",
                          "rounds"]
    assert data["format"] == FORMAT
    assert data["rounds"] == [[{"src": 0, "dst": [1], "items": [0]}], [],
                              [{"src": 1, "dst": [0], "items": [1]}]]


@pytest.mark.parametrize("make", [lambda: one_factor(7), lambda: cyclic_shift(6),
                                  lambda: recursive_doubling(12), lambda: min_calls(9), _small])
def test_round_trip_byte_identical(make, tmp_path):
    s = make()
    data = dumps(s)
    assert dumps(loads(data)) == data
    assert dumps(make()) == data  # same command, same bytes
    gz = dumps(s, gz=True)
    assert gz == dumps(make(), gz=True)  # gzip with mtime 0 is deterministic
    assert gzip.decompress(gz) == data
    path = tmp_path / "s.json.gz"
    path.write_bytes(gz)
    assert dumps(load(path)) == data


def test_polling_item_q():
    s = Schedule.from_rounds([[Message(0, (1,), ("q",))], [Message(1, (0,), ("q", 1))]],
                             topology=complete(2), model="H1", p=None, primitive="polling",
                             root=0)
    back = loads(dumps(s))
    assert back.rounds[1][0].items == ("q", 1)
    assert back.primitive == "polling" and back.root == 0


def test_topology_parameters_round_trip():
    s = Schedule.from_rounds([[Message(0, (1,), (0,))]], topology=topology("mesh", a=2, b=3),
                             model="Hstar", p=2)
    assert json.loads(dumps(s))["topology"] == {"name": "mesh", "a": 2, "b": 3}


def _doc(**changes):
    d = json.loads(dumps(_small()))
    d.update(changes)
    return json.dumps(d).encode()


@pytest.mark.parametrize("data,text", [
    (_doc(extra=1), 'unknown key "extra"'),
    (_doc(format="other/1"), "format must be"),
    (_doc(model="H2"), "unknown model"),
    (_doc(primitive="scatter"), "unknown primitive"),
    (_doc(p=0), "p must be"),
    (_doc(root=0), "root must be null"),
    (_doc(origin={"algorithm": "x", "source": "y", "when": 1}), "origin: unknown key"),
    (_doc(rounds=[[{"src": 0, "dst": [1], "items": [0], "size": 1}]]), 'unknown key "size"'),
    (_doc(rounds=[[{"src": 0, "dst": 1, "items": [0]}]]), "must be lists"),
    (_doc(rounds=[[{"src": "0", "dst": [1], "items": [0]}]]), "src must be an integer"),
    (_doc(rounds=[[{"src": 0, "dst": [1], "items": ["x"]}]]), "item must be an integer"),
    (b"\x00\x01\xff\xfe", "not UTF-8"),
    (b"{not json", "not valid JSON"),
    (b"\x1f\x8b\x08garbage", "gzip"),
    (b"[]", "one JSON object"),
])
def test_refusals(data, text):
    with pytest.raises(FormatError, match=text):
        loads(data)


def test_missing_key():
    d = json.loads(dumps(_small()))
    del d["model"]
    with pytest.raises(FormatError, match="missing key 'model'"):
        loads(json.dumps(d))
    del d["p"]
    with pytest.raises(FormatError, match="missing keys 'model', 'p'"):
        loads(json.dumps(d))


def test_origin_and_rootless_root_default():
    d = json.loads(dumps(_small()))
    del d["origin"], d["root"]
    s = loads(json.dumps(d))
    assert s.root is None and s.origin == {"algorithm": "", "source": ""}
    back = json.loads(dumps(s))  # written back with every key
    assert back["root"] is None and back["origin"] == {"algorithm": "", "source": ""}
    assert back["rounds"] == json.loads(dumps(_small()))["rounds"]
    d["primitive"] = "reduce"
    with pytest.raises(FormatError, match="missing key 'root' \\(reduce needs a root\\)"):
        loads(json.dumps(d))


def test_save_writes_what_load_reads(tmp_path):
    from pipegossip.model.schedules.ir import save
    s = one_factor(5)
    for name in ("s.json", "s.json.gz"):
        data = save(s, tmp_path / name)
        assert (tmp_path / name).read_bytes() == data
        assert load(tmp_path / name) == s
