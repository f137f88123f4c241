"""The improvement pass on a schedule small enough to follow by hand (fast, for
`dev.py mutate`; tests/model/test_algorithms_improve.py runs it on the heuristics' output)."""

from pipegossip.model.algorithms.improve import improve_schedule
from pipegossip.model.schedules.ir import Schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate


def _schedule(rounds):
    return Schedule.from_rounds(
        [[{"src": s, "dst": [d], "items": items} for s, d, items in r] for r in rounds],
        topology=topology("path", n=3), model="F1", p=None,
        origin={"algorithm": "test", "source": "by hand"})


def test_an_item_moves_into_round_one():
    # path 0-1-2. Round 1: 0 -> 1 only; round 2: 1 and 2 exchange; round 3: 1 -> 0 {1, 2}.
    # Node 0 talks to 1 in round 1, when 1 already holds item 1 and 0's message from 1
    # (empty) is below the round's largest (1): item 1 moves there, round 3 shrinks to 1.
    before = _schedule([[(0, 1, [0])], [(1, 2, [0, 1]), (2, 1, [2])], [(1, 0, [1, 2])]])
    assert validate(before).S == 5
    after = improve_schedule(before)
    got = [sorted((m.src, m.dst[0], tuple(m.items)) for m in r) for r in after.rounds]
    assert got == [[(0, 1, (0,)), (1, 0, (1,))], [(1, 2, (0, 1)), (2, 1, (2,))], [(1, 0, (2,))]]
    v = validate(after)
    assert v.valid and (v.R, v.S) == (3, 4)
    assert after.origin["source"].endswith("; improved (deliveries moved into earlier rounds' "
                                           "spare room)")


def test_a_largest_message_postpones_an_item():
    # triangle. Round 2's largest message 1 -> 2 {0, 1}; in round 3 node 2 talks to 0
    # (2 -> 0 {2}), which knows 0 and 1, and 2 forwards neither before: item 0 goes
    # to 2 in round 3 instead, and round 2 costs one item less
    tri = topology("complete", n=3)
    rounds = [[(0, 1, [0]), (1, 0, [1])], [(1, 2, [0, 1]), (2, 1, [2])], [(2, 0, [2])]]
    before = Schedule.from_rounds(
        [[{"src": s, "dst": [d], "items": items} for s, d, items in r] for r in rounds],
        topology=tri, model="F1", p=None, origin={"algorithm": "test", "source": "by hand"})
    assert validate(before).S == 4
    after = improve_schedule(before)
    got = [sorted((m.src, m.dst[0], tuple(m.items)) for m in r) for r in after.rounds]
    assert got == [[(0, 1, (0,)), (1, 0, (1,))], [(1, 2, (1,)), (2, 1, (2,))],
                   [(0, 2, (0,)), (2, 0, (2,))]]
    v = validate(after)
    assert v.valid and (v.R, v.S) == (3, 3)
