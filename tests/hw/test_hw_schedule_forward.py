# amaranth: UnusedElaboratable=no
"""The schedule fabric forwards accumulators: reduce/allreduce in Amaranth's simulator, judged."""

import copy

import numpy as np
import pytest

from pipegossip.hw.schedule import LATENCY
from pipegossip.hw.schedule.fabric import LoadKind
from pipegossip.hw.schedule.load import load_writes, slot_words
from pipegossip.model.algorithms.limits import cyclic_shift
from pipegossip.model.algorithms.reduce import allreduce_schedule, reduce_schedule
from pipegossip.model.schedules import Message, Schedule
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.program import ACC, NONE, ProgramError, compile_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.judge.schedule import judge_schedule
from pipegossip.sim.schedule.cosim import job_for, run_programs_amaranth

CASES = [  # (name, schedule, cycles on the crossbar)
    ("allreduce-hypercube-2", lambda: allreduce_schedule(topology("hypercube", k=2)), 2),
    ("allreduce-hypercube-3", lambda: allreduce_schedule(topology("hypercube", k=3)), 3),
    ("reduce-hypercube-2-root-3", lambda: reduce_schedule(topology("hypercube", k=2), 3), 2),
    ("reduce-hypercube-3-root-0", lambda: reduce_schedule(topology("hypercube", k=3), 0), 3),
    # 3 rounds; the root hears both neighbours in round 3: one port serialises them
    ("reduce-cycle-6-root-0", lambda: reduce_schedule(topology("cycle", n=6), 0), 4),
]


def _sum(words, nodes, width=8):
    return sum(words[i] for i in nodes) % (1 << width)


@pytest.mark.parametrize("name,make,cycles", CASES, ids=[c[0] for c in CASES])
def test_compiled_programs_forward_whole_accumulators(name, make, cycles):
    s = make()
    p = compile_schedule(s)
    assert p.cycles == cycles
    assert ((p.send == ACC) | (p.send == NONE)).all() and (p.send == ACC).any()
    # a combined accumulator word is selected and combined, never stored
    assert (p.recv == NONE).all() and ((p.source != NONE) == p.combine).all()
    words = slot_words(p, 3)
    every = _sum(words, range(s.n))
    end = p.expected_accumulators(words)
    for v in p.reduction_nodes():
        assert end[v] == every == p.reduction(words)
    # the ACC writes load each node's own token
    accs = [w for w in load_writes(p, 3) if w[0] == LoadKind.ACC]
    assert accs == [(int(LoadKind.ACC), v, 0, words[v]) for v in range(s.n)]


def test_the_network_fabric_takes_the_same_number_of_rounds_on_the_hypercube():
    for k in (2, 3):
        s = allreduce_schedule(topology("hypercube", k=k))
        assert compile_schedule(s).cycles == compile_network(s).cycles == k


@pytest.mark.parametrize("name,make,cycles", CASES, ids=[c[0] for c in CASES])
def test_reduce_and_allreduce_run_and_match(name, make, cycles):
    p = compile_schedule(make(), depth=8)
    (r,) = run_programs_amaranth([p], seed=5)
    v = judge_schedule(p, r)
    assert v.match, v.report()
    assert r.busy_cycles == cycles + LATENCY
    words = slot_words(p, 5)
    for u in p.reduction_nodes():
        assert int(r.acc[u]) == _sum(words, range(p.n))


def test_forwarding_and_item_programs_share_one_build():
    hyper = topology("hypercube", k=3)
    programs = [compile_schedule(allreduce_schedule(hyper), depth=8),
                compile_schedule(reduce_schedule(hyper, 5), depth=8),
                compile_schedule(cyclic_shift(8), depth=8)]
    for p, r in zip(programs, run_programs_amaranth(programs, seed=7)):
        assert judge_schedule(p, r).match, judge_schedule(p, r).report()


def _partial():
    rounds = [[Message(0, (1,), (0,)), Message(2, (1,), (2,))],
              [Message(1, (0,), (1, 2)), Message(1, (2,), (0, 1))]]
    return Schedule.from_rounds(rounds, topology=topology("path", n=3), model="Hstar", p=1,
                                primitive="allreduce")


def test_a_partial_send_is_refused_by_the_crossbar_and_named_by_the_network():
    # the crossbar forwards only its one accumulator; the network fabric also
    # sends a part it holds as one stored word, but not one it would have to split
    with pytest.raises(ProgramError) as xbar:
        compile_schedule(_partial())
    with pytest.raises(ProgramError) as net:
        compile_network(_partial())
    assert "round 2: node 1 sends tokens [1, 2] but its accumulator holds [0, 1, 2]" in \
        str(xbar.value) and "never a part of it" in str(xbar.value)
    assert str(net.value) == (
        "round 2: node 1 sends tokens [1, 2], neither its whole accumulator [0, 1, 2] nor one "
        "word it received or started with: the network fabric forwards words, it cannot split "
        "or recombine them")
    # the cycle's allreduce forwards single received words: the crossbar refuses
    # it, the network fabric sends each from the slot it was stored in
    cyc = allreduce_schedule(topology("cycle", n=6))
    with pytest.raises(ProgramError, match="never a part of it"):
        compile_schedule(cyc)
    assert compile_network(cyc).rounds == 3


def _faulty(p, seed, pick):
    """``p``'s load writes with the first entry ``pick`` accepts altered by ``pick``."""
    lay = p.layout
    writes = load_writes(p, seed)
    for k, (kind, v, c, data) in enumerate(writes):
        if kind == LoadKind.PROGRAM:
            f = lay.decode(data)
            if pick(f):
                writes[k] = (kind, v, c, lay.encode(**f))
                return writes, v, c
    raise AssertionError("no entry to alter")


def _flip_combine(f):
    if f["combine"]:
        f["combine"] = 0
        return True
    return False


def _store_not_send(f):
    if f["send_acc"]:
        f["send_acc"] = 0
        return True
    return False


@pytest.mark.parametrize("pick,note,wrong_sum", [(_flip_combine, "combine from p", True),
                                                 # node 0's slot 0 is its own token: same word
                                                 (_store_not_send, "send acc", False)])
def test_a_wrong_combine_is_caught_with_the_first_mismatch_named(pick, note, wrong_sum):
    p = compile_schedule(allreduce_schedule(topology("hypercube", k=3)), depth=8)
    writes, v, c = _faulty(p, 4, pick)
    job = dict(job_for("faulty", p, 4), writes=writes)
    (r,) = run_programs_amaranth([p], jobs=[job])
    verdict = judge_schedule(p, r)
    assert not verdict.match
    first = verdict.first_mismatch
    assert (first.kind, first.cycle, first.processor) == ("trace", c + 1 + LATENCY, v)
    assert note in first.expected
    # the wrong sum shows in the accumulators at the end too
    assert wrong_sum == any(m.note in ("combine", "combined result")
                            for m in verdict.mismatches)


def test_a_stored_word_not_combined_at_the_root_is_named_at_its_cycle():
    # gather: the root stores and combines; a cleared combine bit leaves the store right
    s = Schedule.from_rounds([[Message(1, (0,), (1,)), Message(3, (2,), (3,))],
                              [Message(2, (0,), (2, 3))]], topology=topology("complete", n=4),
                             model="F1", p=None, primitive="gather", root=0)
    p = compile_schedule(s, depth=8)
    writes, v, c = _faulty(p, 1, _flip_combine)
    (r,) = run_programs_amaranth([p], jobs=[dict(job_for("faulty", p, 1), writes=writes)])
    first = judge_schedule(p, r).first_mismatch
    assert (first.kind, first.cycle, first.processor) == ("trace", c + 1 + LATENCY, v)
    assert first.expected.endswith("and combine") and not first.got.endswith("and combine")


def test_the_judge_names_a_wrong_accumulator_word_on_the_wire():
    p = compile_schedule(reduce_schedule(topology("hypercube", k=3), 0), depth=8)
    (r,) = run_programs_amaranth([p], seed=6)
    assert judge_schedule(p, r).match
    k = int(np.flatnonzero(np.asarray(r.samples["send_acc"]).any(axis=1))[-1])
    u = int(np.flatnonzero(np.asarray(r.samples["send_acc"])[k])[0])
    bad = copy.deepcopy(r)
    bad.samples["send_word"][k, u] ^= 1
    ms = judge_schedule(p, bad).mismatches
    assert any(m.kind == "delivery" and m.cycle == k and "sends accumulator" in m.expected
               for m in ms)
    bad = copy.deepcopy(r)
    bad.acc[0] ^= 2
    assert {m.note for m in judge_schedule(p, bad).mismatches} == {"combine", "combined result"}
