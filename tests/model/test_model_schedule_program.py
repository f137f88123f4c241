"""The schedule -> cycle-program compiler (model/schedules/program.py)."""

import numpy as np
import pytest

from pipegossip.model.algorithms.limits import GENERATORS, cyclic_shift, one_factor
from pipegossip.model.algorithms.polling import polling_general
from pipegossip.model.config import RunConfig
from pipegossip.model.schedules import Message, Schedule, complete, schedule_of_config, topology
from pipegossip.model.schedules.program import (NONE, EntryLayout, ProgramError, canonical,
                                                compile_schedule, cycles_for)


@pytest.mark.parametrize("name", sorted(GENERATORS))
@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9])
def test_generators_compile_and_read_back(name, n):
    s = GENERATORS[name](n)
    p = compile_schedule(s)
    assert canonical(p.read_back(p.send, p.source, p.recv)) == canonical(s)
    assert p.final.all()  # gossip: every node holds every item
    # one word out and one in per node per cycle
    for c in range(p.cycles):
        sending = p.send[c] != NONE
        assert ((p.source[c] == NONE) == (p.recv[c] == NONE)).all()
        assert set(p.source[c][p.source[c] != NONE]) <= set(np.flatnonzero(sending))


@pytest.mark.parametrize("n", [4, 8, 16, 32])
def test_cyclic_shift_takes_n_minus_1_cycles(n):
    assert compile_schedule(cyclic_shift(n)).cycles == n - 1
    assert compile_schedule(one_factor(n)).cycles == 2 * (n - 1)


def test_multi_item_messages_take_one_cycle_per_item():
    p = compile_schedule(GENERATORS["recursive-doubling"](8))
    assert (p.rounds, p.cycles) == (3, 1 + 2 + 4)
    assert np.bincount(p.round_of).tolist() == [0, 1, 2, 4]


@pytest.mark.parametrize("opts", [dict(order="pipelined"), dict(order="identity"),
                                  dict(order="identity", substitute=True, receive="any")])
def test_compiled_runs_fit_one_cycle_per_round(opts):
    order = opts.pop("order")
    s = schedule_of_config(RunConfig.family(6, order, **opts))
    p = compile_schedule(s)
    assert p.cycles == p.rounds
    assert canonical(p.read_back(p.send, p.source, p.recv)) == canonical(s)


def test_overloaded_round_is_split():
    # Hstar: node 0 sends two messages in one round (to 1 and 2): two cycles
    s = Schedule.from_rounds([[Message(0, (1,), (0,)), Message(0, (2,), (0,))]],
                             topology=complete(3), model="Hstar", p=1, primitive="broadcast",
                             root=0)
    p = compile_schedule(s)
    assert (p.rounds, p.cycles) == (1, 2)
    assert cycles_for(s, ports=2) == 1
    assert canonical(p.read_back(p.send, p.source, p.recv)) == canonical(s)


def test_multicast_is_one_word():
    s = Schedule.from_rounds([[Message(0, (1, 2, 3), (0,))]], topology=complete(4),
                             model="port", p=1, primitive="broadcast", root=0)
    p = compile_schedule(s)
    assert p.cycles == 1 and p.send[0].tolist() == [0, NONE, NONE, NONE]
    assert p.source[0].tolist() == [NONE, 0, 0, 0]


def test_gather_combines_at_the_root():
    s = Schedule.from_rounds([[Message(1, (0,), (1,))], [Message(2, (0,), (2,))],
                              [Message(3, (0,), (3,))]], topology=complete(4), model="H1", p=1,
                             primitive="gather", root=0)
    p = compile_schedule(s, width=8)
    assert p.combine[:, 0].sum() == 3 and not p.combine[:, 1:].any()
    words = [10, 200, 100, 7]
    assert p.expected_accumulators(words)[0] == (200 + 100 + 7) % 256
    assert p.reduction(words) == (200 + 100 + 7) % 256
    assert not compile_schedule(s, combine=False).combine.any()


def test_polling_uses_the_question_slot():
    s = polling_general(8)
    p = compile_schedule(s)
    q = p.question_slot()
    assert q == 8 and p.slots == 9
    assert p.final[s.root, :8].all()
    assert canonical(p.read_back(p.send, p.source, p.recv)) == canonical(s)


def test_refusals_name_the_limit():
    s = cyclic_shift(8)
    with pytest.raises(ProgramError, match="needs 7 cycles.*depth=4.*--depth 7"):
        compile_schedule(s, depth=4)
    with pytest.raises(ProgramError, match="store holds 4"):
        compile_schedule(s, slots=4)
    with pytest.raises(ProgramError, match="one port"):
        compile_schedule(s, ports=2)
    bad = Schedule.from_rounds([[Message(0, (1,), (1,))]], topology=complete(2), model="H1", p=1)
    with pytest.raises(ValueError, match="does not hold"):
        compile_schedule(bad)


def test_entry_layout_round_trips():
    lay = EntryLayout(8, 8)
    assert lay.width == 4 + 2 * 3 + 3
    fields = dict(send=1, send_slot=5, recv=1, source=7, combine=0, recv_slot=2, send_acc=1)
    assert lay.decode(lay.encode(**fields)) == fields
    with pytest.raises(ValueError):
        lay.encode(source=8)


def test_entries_encode_the_program():
    p = compile_schedule(cyclic_shift(4))
    e = p.entries()
    d = p.layout.decode(int(e[1, 0]))
    assert d["send"] == 1 and d["send_slot"] == 1
    assert d["recv"] == 1 and d["source"] == int(p.source[0, 1])


def test_empty_rounds_inside_keep_an_idle_cycle():
    s = Schedule.from_rounds([[Message(0, (1,), (0,))], [], [Message(1, (0,), (1,))]],
                             topology=topology("complete", n=2), model="H1", p=1)
    p = compile_schedule(s)
    assert p.cycles == 3 and (p.send[1] == NONE).all()
