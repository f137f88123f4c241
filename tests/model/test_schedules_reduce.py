"""reduce and allreduce in the schedule format and the validator: one combined
word per message, no token counted twice, sender holds its set, completion."""

import json

import pytest

from pipegossip.model.errors import FormatError
from pipegossip.model.schedules.ir import Message, Schedule, complete, dumps, loads
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import ScheduleError, check, validate

Q2 = topology("hypercube", k=2)


def M(src, dst, items):
    return Message(src, tuple(dst), tuple(items))


def S(rounds, primitive="allreduce", root=None, model="F1", topo=Q2, p=1):
    return Schedule.from_rounds(rounds, topology=topo, model=model, p=p, primitive=primitive,
                                root=root)


#: Recursive doubling on Q_2: every node sends its whole set to its partner.
RD = [[M(0, [1], [0]), M(1, [0], [1]), M(2, [3], [2]), M(3, [2], [3])],
      [M(0, [2], [0, 1]), M(2, [0], [2, 3]), M(1, [3], [0, 1]), M(3, [1], [2, 3])]]


def test_recursive_doubling_accepted_one_word_per_message():
    v = check(S(RD))
    # p=1 holds although round 2 sends two tokens: a combined set is one word
    assert (v.R, v.messages, v.S, v.item_transfers, v.calls) == (2, 8, 2, 12, 4)
    assert v.busy == [4, 4]


def test_reduce_up_a_star_accepted():
    s = S([[M(1, [0], [1]), M(2, [0], [2]), M(3, [0], [3])]], primitive="reduce", root=0,
          model="Fstar", topo=complete(4))
    v = check(s)
    assert (v.R, v.S, v.messages) == (1, 1, 3)


@pytest.mark.parametrize("rounds,kw,text", [
    # counted twice: the receiver already holds a token of the set
    ([RD[0], [M(0, [2], [0, 1]), M(2, [0], [2, 3]), M(1, [3], [0, 1]), M(3, [1], [2, 3]),
              ]] + [[M(1, [0], [1, 2, 3])]], {"model": "Fstar"},
     "round 3, message 0: node 0 already holds token 1: combining it again counts it twice"),
    # counted twice: two messages of one round bring the same token
    ([[M(1, [2], [1])], [M(1, [0], [1]), M(2, [0], [1, 2])]],
     {"model": "Fstar", "primitive": "reduce", "root": 0, "topo": complete(4)},
     "round 2, message 1: node 0 receives token 1 twice this round: it would be counted twice"),
    # the sender must hold every token of its set
    ([RD[0], [M(0, [2], [0, 1]), M(2, [0], [2, 3]), M(1, [3], [0, 1]), M(3, [1], [2, 0])]], {},
     "round 2, message 3: node 3 sends item 0 it does not hold"),
    ([RD[0]], {}, "round 1, message -: incomplete allreduce: node 0 lacks item 2"),
    ([[M(1, [0], [1])], [M(3, [1], [3])]], {"primitive": "reduce", "root": 0},
     "incomplete reduce: node 0 lacks item 2"),
    ([[M(0, [3], [0])]], {}, "round 1, message 0: no edge 0-3 in topology hypercube"),
    ([[M(0, [1], [4])]], {}, "unknown item 4 (allreduce has one token per node, items 0..3)"),
    ([[M(0, [1], ["q"])]], {}, "question 'q' outside polling"),
    ([[M(0, [1], [0]), M(3, [1], [3])]], {}, "node 1 receives twice this round (F1)"),
])
def test_refused_with_round_message_and_rule(rounds, kw, text):
    v = validate(S(rounds, **kw))
    assert not v.valid and text in v.error
    with pytest.raises(ScheduleError):
        check(S(rounds, **kw))


def test_counted_twice_through_a_multicast():
    # port: one message to two receivers, one of which already holds the token
    s = S([[M(1, [0], [1])], [M(1, [0, 2], [1])], [M(2, [0], [2]), M(3, [1], [3])],
           [M(1, [0], [3])]], primitive="reduce", root=0, model="port", topo=complete(4))
    assert "round 2, message 0: node 0 already holds token 1" in validate(s).error


def test_root_rules_and_file_round_trip():
    with pytest.raises(FormatError, match="root must be null for allreduce"):
        S(RD, root=0)
    with pytest.raises(FormatError, match="reduce needs a root"):
        S(RD, primitive="reduce")
    s = S(RD)
    data = dumps(s)
    assert json.loads(data)["primitive"] == "allreduce" and dumps(loads(data)) == data
    r = S([[M(1, [0], [1]), M(3, [2], [3])], [M(2, [0], [2, 3])]], primitive="reduce", root=0,
          model="Hstar")
    assert dumps(loads(dumps(r))) == dumps(r) and check(loads(dumps(r))).R == 2


def test_crossbar_compiler_forwards_whole_accumulators_only():
    from pipegossip.model.schedules.program import ACC, compile_schedule
    # (a partial send is refused: tests/hw/test_hw_schedule_forward.py)
    p = compile_schedule(S(RD), width=8)
    assert p.cycles == 2 and (p.send == ACC).all() and p.combine.all()
