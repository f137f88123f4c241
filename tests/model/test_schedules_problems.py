"""Every problem of a schedule at once: file positions, order, the limit, and
``check``'s lines; a hand-written file may leave out origin (and a rootless root)."""

import json

from pipegossip.cli import main
from pipegossip.model.algorithms.limits import one_factor
from pipegossip.model.schedules.ir import Message, Schedule, complete, dumps
from pipegossip.model.schedules.problems import _without, problems
from pipegossip.model.schedules.topologies import topology


def M(src, dst, items):
    return Message(src, tuple(dst), tuple(items))


def _bad():
    # round 1: message 2 uses a non-edge; round 2: message 1 sends a token its
    # sender lacks, message 3 would count token 0 twice at node 1
    rounds = [[M(0, [1], [0]), M(2, [3], [2]), M(0, [3], [0])],
              [M(1, [3], [0, 1]), M(3, [1], [1]), M(3, [2], [3]), M(0, [1], [0])]]
    return Schedule.from_rounds(rounds, topology=topology("hypercube", k=2), model="Fstar",
                                p=1, primitive="allreduce")


def test_all_problems_in_file_positions():
    found, more = problems(_bad())
    assert [str(e) for e in found] == [
        "round 1, message 2: no edge 0-3 in topology hypercube",
        "round 2, message 1: node 3 sends item 1 it does not hold",
        "round 2, message 3: node 1 already holds token 0: combining it again counts it twice",
    ] and not more


def test_limit_and_more():
    found, more = problems(_bad(), limit=2)
    assert len(found) == 2 and more
    found, more = problems(_bad(), limit=3)
    assert len(found) == 3 and not more


def test_incomplete_only_when_alone():
    s = Schedule.from_rounds([[M(0, [1], [0])]], topology=complete(3), model="H1", p=1)
    found, _ = problems(s)
    assert len(found) == 1 and "incomplete gossip" in str(found[0])
    assert problems(one_factor(6)) == ([], False)


def test_without_leaves_one_message_out():
    s = _bad()
    t = _without(s, 3)
    assert t.messages == 6 and t.round_ptr.tolist() == [0, 3, 6]
    assert t.rounds[1] == s.rounds[1][1:] and t.rounds[0] == s.rounds[0]


def test_check_lists_every_problem(tmp_path, capsys):
    path = tmp_path / "bad.json"
    data = json.loads(dumps(_bad()))
    del data["origin"], data["root"]  # both may be left out of an allreduce file
    path.write_text(json.dumps(data))
    assert main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 3 and all(x.startswith("pipegossip check: invalid: round ")
                                                 for x in lines)
    assert main(["check", str(path), "--format", "json"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["error"] == got["problems"][0] and len(got["problems"]) == 3
    assert got["more_problems"] is False


def test_large_schedules_get_the_first_problem_only(monkeypatch):
    import pipegossip.model.schedules.problems as pr
    monkeypatch.setattr(pr, "MAX_REPEAT_MESSAGES", 6)
    found, more = problems(_bad())  # 7 messages
    assert len(found) == 1 and more
