"""The network compiler: cycles per round, accumulator sets, entries, and what it refuses."""

import numpy as np
import pytest

from pipegossip.model.algorithms.limits import one_factor
from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.algorithms.path_cycle import cycle_gossip, path_gossip
from pipegossip.model.algorithms.polling import polling_hypercube
from pipegossip.model.schedules import Message, Schedule
from pipegossip.model.schedules.network_program import (ACC, NetworkLayout, combine_words,
                                                        compile_network)
from pipegossip.model.schedules.program import NONE, ProgramError
from pipegossip.model.schedules.topologies import topology


@pytest.mark.parametrize("make, cycles", [(lambda: path_gossip(4, 1), 5),
                                          (lambda: cycle_gossip(8, 1), 7),
                                          (lambda: path_gossip(8, 2), 14),
                                          (lambda: polling_hypercube(3), 6)])
def test_cycles_are_R_for_one_word_rounds_and_S_otherwise(make, cycles):
    s = make()
    p = compile_network(s)
    assert p.cycles == cycles
    one_word = p.schedule.p == 1 or p.schedule.primitive == "polling"
    assert p.cycles == (p.rounds if one_word else p.S)


def test_multi_item_rounds_take_one_cycle_per_word_and_links_carry_one_word():
    s = matching_schedule(topology("hypercube", k=3))
    p = compile_network(s)
    assert p.cycles == p.S > p.rounds
    for r in range(1, p.rounds + 1):
        biggest = max(len(m.items) for m in s.round_messages(r))
        assert int(np.count_nonzero(p.round_of == r)) == biggest
    # every sent slot is an item the sender holds, on a port whose peer stores it
    for c, q in zip(*np.nonzero(p.tx != NONE)):
        assert p.rx[c, p.peer(int(q))] == p.tx[c, q]


def test_polling_drains_towards_the_root_and_counts_each_response_once():
    p = compile_network(polling_hypercube(3))
    root = p.schedule.root
    assert p.acc_sets[-1][root] == frozenset(range(8))
    assert sum(len(a) for a in p.acc_sets[-1]) == 8  # every response in one accumulator
    words = [3, 5, 7, 11, 13, 17, 19, 23]
    assert p.acc_values(words)[-1][root] == combine_words("sum", words, 8) == sum(words)
    assert (p.tx == ACC).any() and p.drain.any()


def test_entries_round_trip_through_the_layout():
    p = compile_network(cycle_gossip(8, 1))
    entries = p.entries()
    for v in range(p.n):
        lay = p.layout(v)
        assert lay == NetworkLayout(2, p.slots, p.slots)
        for c in range(p.cycles):
            f = lay.decode(entries[v][c])
            for j in range(2):
                port = p.offsets[v] + j
                assert f[f"tx{j}"] == (p.tx[c, port] != NONE)
                if f[f"tx{j}"]:
                    assert (f[f"txbank{j}"], f[f"txaddr{j}"]) == p.directory[v][p.tx[c, port]]
                assert f[f"rx{j}"] == (p.rx[c, port] != NONE)
                if f[f"rx{j}"]:
                    assert f[f"rxslot{j}"] == p.rx[c, port]
    with pytest.raises(KeyError):
        p.layout(0).encode(nonsense=1)


def test_a_non_edge_of_the_fabric_is_refused():
    s = one_factor(8)  # complete graph
    with pytest.raises(ProgramError, match="non-edge of the fabric's topology cycle"):
        compile_network(s, topology=topology("cycle", n=8))
    compile_network(s)  # on complete(8) it runs


def test_depth_and_slots_are_refused():
    s = cycle_gossip(8, 1)
    with pytest.raises(ProgramError, match="--depth 7"):
        compile_network(s, depth=6)
    with pytest.raises(ProgramError, match="store holds 4"):
        compile_network(s, slots=4)
    with pytest.raises(ProgramError, match="operation"):
        compile_network(s, op="max")


def _poll(rounds):
    return Schedule.from_rounds(rounds, topology=topology("path", n=3), model="H1", p=None,
                                primitive="polling", root=0)


def test_polling_that_keeps_a_response_back_is_refused():
    # node 1 sends only its own response although it holds node 2's too
    s = _poll([[Message(0, (1,), ("q",))], [Message(1, (2,), ("q",))],
               [Message(2, (1,), ("q", 2))], [Message(1, (0,), ("q", 1))],
               [Message(1, (0,), ("q", 1, 2))]])
    with pytest.raises(ProgramError, match="does not list"):
        compile_network(s)
    ok = _poll([[Message(0, (1,), ("q",))], [Message(1, (2,), ("q",))],
                [Message(2, (1,), ("q", 2))], [Message(1, (0,), ("q", 1, 2))]])
    p = compile_network(ok)
    assert p.cycles == 4 and p.acc_sets[-1][0] == frozenset({0, 1, 2})


def _allreduce(topo, rounds, model="Fstar"):
    return Schedule.from_rounds(rounds, topology=topo, model=model, p=1, primitive="allreduce")


def test_a_part_of_the_accumulator_goes_from_the_store_slot_it_was_stored_in():
    from pipegossip.model.algorithms.reduce import allreduce_schedule
    p = compile_network(allreduce_schedule(topology("cycle", n=8)))
    assert p.cycles == p.rounds == 4
    assert all(a == frozenset(range(8)) for a in p.acc_sets[-1])
    # round 1 sends whole accumulators (the own token); later rounds forward single tokens
    assert (p.tx[0][p.tx[0] != NONE] == ACC).all()
    later = p.tx[1:][p.tx[1:] != NONE]
    assert later.size and (later >= 0).all()
    for c, q in zip(*np.nonzero(p.tx >= 0)):
        x, v = int(p.tx[c, q]), p.node_of(int(q))
        # the forwarded word is one the sender stored before (or its own token)
        assert p.slot_sets[x] <= p.acc_sets[c][v] and len(p.slot_sets[x]) == 1
        assert (c > 0 and (p.rx[:c, p.offsets[v]:p.offsets[v + 1]] == x).any()
                or p.initial[v, x])
        assert p.comb[c, p.peer(int(q))]  # and its receiver combines it
    # a slot's word is the combination of its tokens, the same on every node
    words = [3, 5, 7, 11, 13, 17, 19, 23]
    for x, part in enumerate(p.slot_sets):
        assert p.slot_words(words)[x] == sum(words[i] for i in part) % 256


def test_dimensionwise_allreduce_forwards_the_rows_combined_words():
    from pipegossip.model.algorithms.reduce import allreduce_schedule
    p = compile_network(allreduce_schedule(topology("mesh", a=3, b=4)))
    assert p.cycles == p.rounds == 5  # the diameter
    # the outer rows' words go on over two hops; the middle row's reaches both in one
    rows = {frozenset(range(i * 4, i * 4 + 4)) for i in (0, 2)}
    stored = {p.slot_sets[int(x)] for x in p.rx[p.rx >= 0]}
    assert rows <= stored and frozenset(range(4, 8)) not in stored
    assert p.slots == len(p.slot_sets) == 12 + 2
    assert all(a == frozenset(range(12)) for a in p.acc_sets[-1])


def test_a_set_that_splits_or_recombines_words_is_refused():
    # node 1 holds {0}, {1}, {2} as three words and sends {0, 1}: a word it never held
    path3 = topology("path", n=3)
    s = _allreduce(path3, [[Message(0, (1,), (0,)), Message(2, (1,), (2,))],
                           [Message(1, (2,), (0, 1)), Message(1, (0,), (1, 2))]])
    with pytest.raises(ProgramError, match="neither its whole accumulator.*split or recombine"):
        compile_network(s)
    ok = _allreduce(path3, [[Message(0, (1,), (0,)), Message(2, (1,), (2,))],
                            [Message(1, (2,), (0,)), Message(1, (0,), (2,))],
                            [Message(1, (2,), (1,)), Message(1, (0,), (1,))]])
    p = compile_network(ok)
    assert p.cycles == 3 and all(a == frozenset(range(3)) for a in p.acc_sets[-1])
    assert p.initial[1, p.slot_sets.index(frozenset({1}))]  # its own token, in its store
    # whole sets only: no store slot at all, as before
    from pipegossip.model.algorithms.reduce import allreduce_schedule
    p = compile_network(allreduce_schedule(topology("hypercube", k=6)))
    assert p.cycles == p.rounds == 6 and p.slots == 1 and not (p.rx != NONE).any()
    assert all(a == frozenset(range(64)) for a in p.acc_sets[-1])
