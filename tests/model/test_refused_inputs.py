"""Inputs that were silently accepted or crashed are refused with one line (issue 39).

Items 4 (standard input closed), 5 (a lone surrogate), 14 (a JSON key twice),
15 (a message with no items), 16 (an explicit topology listing an edge
twice), 17 (a Table 8 size that is no power of two) and 18 (a refusal quoting
another number than the one typed).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipegossip import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCHEDULE = EXAMPLES / "one-factor-n8.json"


def _one_line(err, *words):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], err
    assert "Traceback" not in err


def _schedule(tmp_path, change=None, text=None) -> Path:
    data = json.loads(SCHEDULE.read_text())
    if change is not None:
        change(data)
    path = tmp_path / "s.json"
    path.write_text(text(json.dumps(data)) if text else json.dumps(data))
    return path


def test_standard_input_closed_is_refused():
    r = subprocess.run([sys.executable, "-m", "pipegossip", "schedule", "check", "-"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       preexec_fn=lambda: __import__("os").close(0))
    assert r.returncode == 2, r.stderr
    _one_line(r.stderr, "pipegossip schedule check: error:", "standard input", "closed")


def _surrogate(data):
    data["origin"]["source"] = "made by hand \ud800"


@pytest.mark.parametrize("argv", [["schedule", "check"], ["hw", "program"]],
                         ids=["check", "program"])
def test_a_lone_surrogate_is_refused_when_read(tmp_path, capsys, argv):
    path = _schedule(tmp_path, _surrogate)
    assert "\\ud800" in path.read_text()
    extra = ["-o", str(tmp_path / "i.hex")] if argv[0] == "hw" else []
    assert cli.main([*argv, str(path), *extra]) == 2
    _one_line(capsys.readouterr().err, "origin.source", "lone surrogate")
    assert not (tmp_path / "i.hex").exists()


def test_a_pair_of_surrogates_is_a_character_and_accepted(tmp_path, capsys):
    path = _schedule(tmp_path, lambda d: d["origin"].update(source="\U0001F600"))
    assert "\\ud83d\\ude00" in path.read_text()
    assert cli.main(["schedule", "check", str(path)]) == 0
    assert cli.main(["hw", "program", str(path), "-o", str(tmp_path / "i.hex")]) == 0


@pytest.mark.parametrize("where", ["top", "message", "topology"])
def test_a_key_twice_is_refused(tmp_path, capsys, where):
    twice = {"top": lambda t: t.replace('"model":', '"model": "H1", "model":', 1),
             "message": lambda t: t.replace('{"src": 0,', '{"src": 1, "src": 0,', 1),
             "topology": lambda t: t.replace('"n": 8', '"n": 8, "n": 8', 1)}[where]
    path = _schedule(tmp_path, text=twice)
    assert cli.main(["schedule", "check", str(path)]) == 2
    _one_line(capsys.readouterr().err, "appears twice in one object")


def test_a_key_twice_in_an_order_file_is_refused(tmp_path, capsys):
    path = tmp_path / "o.json"
    path.write_text('{"a": 1, "a": 2}')
    assert cli.main(["model", "run", "--order", str(path)]) == 2
    _one_line(capsys.readouterr().err, '"a" appears twice')


def test_a_message_without_items_is_refused_like_one_without_receivers(tmp_path, capsys):
    path = _schedule(tmp_path, lambda d: d["rounds"][1][2].update(items=[]))
    assert cli.main(["schedule", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "round 2, message 2: message carries no items" in err.splitlines()[0], err


def _explicit(edges):
    def change(data):
        data["topology"] = {"name": "explicit", "n": 8, "edges": edges}
    return change


@pytest.mark.parametrize("edges, words", [
    ([[0, 1]] * 3_000, ["3,000 edges", "more than the 56"]),
    ([[0, 1], [2, 3], [1, 0], [0, 1]], ["edge [0, 1] is listed twice", "entries 0 and 3"]),
], ids=["many-copies", "repeated"])
def test_an_explicit_topology_listing_an_edge_twice_is_refused(tmp_path, capsys, edges, words):
    path = _schedule(tmp_path, _explicit(edges))
    assert cli.main(["schedule", "check", str(path)]) == 2
    _one_line(capsys.readouterr().err, "topology explicit", *words)


def test_an_edge_list_of_three_million_copies_is_refused_before_building(monkeypatch):
    from pipegossip.model.errors import FormatError
    from pipegossip.model.schedules import topologies
    built = []
    monkeypatch.setattr(topologies, "_simple", lambda *a: built.append(a))
    with pytest.raises(FormatError, match="more than the 56"):
        topologies.topology("explicit", n=8, edges=[[0, 1]] * 3_000_000)
    assert not built


@pytest.mark.parametrize("argv, option", [
    (["paper", "table8", "--max-n", "3"], "--max-n"),
    (["paper", "table8", "--max-n", "1000000000000"], "--max-n"),
    (["waves", "report", "--table8-max", "3", "-o", "REP"], "--table8-max"),
    (["waves", "report", "--table8-max", "1000000000000", "-o", "REP"], "--table8-max"),
])
def test_table8_sizes_are_powers_of_two_and_quoted_as_typed(tmp_path, capsys, argv, option):
    argv = [str(tmp_path / "rep") if a == "REP" else a for a in argv]
    assert cli.main(argv) == 2
    typed = argv[argv.index(option) + 1]
    _one_line(capsys.readouterr().err, option, "power of two", f"got {typed}")
    assert not (tmp_path / "rep").exists()


def test_schedule_table_quotes_the_number_typed(capsys):
    assert cli.main(["schedule", "table", "--max-n", "1000000000000"]) == 2
    _one_line(capsys.readouterr().err, "--max-n", "got 1000000000000")


def test_a_network_fault_that_does_not_apply_is_refused_before_any_build(tmp_path, capsys,
                                                                          monkeypatch):
    """Item 7: `--fault drop` on polling (every receive combines) was an internal error."""
    from pipegossip.sim.network import cosim
    poll = tmp_path / "poll3.json"
    assert cli.main(["schedule", "polling-hypercube", "--k", "3", "-o", str(poll)]) == 0
    capsys.readouterr()
    built = []
    monkeypatch.setattr(cosim, "build_network_fabric", lambda *a, **k: built.append(a))
    assert cli.main(["sim", "cosim", "--fabric", "network", "--schedule", str(poll),
                     "--fault", "drop"]) == 2
    _one_line(capsys.readouterr().err, "pipegossip sim cosim: error: --fault drop does not apply",
              "faults that apply: misroute, combine, word, acc, directory")
    assert not built
