# amaranth: UnusedElaboratable=no
"""The schedule judge, one planted difference at a time.

A correct record comes from Amaranth's simulator (one small fabric run,
shared); each test changes one field of one cycle and one node, and checks
that the judge names exactly that kind, cycle and node.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from pipegossip.hw.schedule import LATENCY
from pipegossip.model.algorithms.limits import cyclic_shift
from pipegossip.model.schedules.program import compile_schedule
from pipegossip.sim.judge.schedule import judge_schedule
from pipegossip.sim.schedule.cosim import run_programs_amaranth


@pytest.fixture(scope="module")
def correct():
    program = compile_schedule(cyclic_shift(4), depth=8)
    (record,) = run_programs_amaranth([program], seed=3)
    assert judge_schedule(program, record).match
    return program, record


def _planted(correct, field: str, change) -> tuple:
    program, record = correct
    bad = copy.deepcopy(record)
    k, v = 2 + LATENCY, 1  # exchange cycle 2, node 1: it sends and receives then
    lane = np.asarray(bad.samples[field])
    assert bad.samples["send_valid"][k][v] and bad.samples["recv_valid"][k][v]
    lane[k, v] = change(int(lane[k, v]))
    bad.samples[field] = lane
    return program, bad, k, v


@pytest.mark.parametrize("field", ["recv_slot", "send_slot", "recv_source"])
def test_a_wrong_slot_or_source_is_a_trace_mismatch_of_that_cycle_and_node(correct, field):
    program, bad, k, v = _planted(correct, field, lambda x: (x + 1) % 4)
    verdict = judge_schedule(program, bad)
    per_cycle = [(m.kind, m.cycle, m.processor) for m in verdict.mismatches
                 if m.cycle is not None]
    assert per_cycle[:1] == [("trace", k, v)], verdict.report()
    first = verdict.first_mismatch
    assert first.expected != first.got


def test_a_wrong_received_word_is_a_delivery_mismatch(correct):
    program, bad, k, v = _planted(correct, "recv_word", lambda x: x ^ 1)
    verdict = judge_schedule(program, bad)
    assert [(m.kind, m.cycle, m.processor) for m in verdict.mismatches] == [("delivery", k, v)]


def test_a_wrong_sent_word_is_a_delivery_mismatch(correct):
    program, bad, k, v = _planted(correct, "send_word", lambda x: x ^ 1)
    verdict = judge_schedule(program, bad)
    kinds = {(m.kind, m.cycle, m.processor) for m in verdict.mismatches}
    assert ("delivery", k, v) in kinds and {kind for kind, _, _ in kinds} == {"delivery"}
