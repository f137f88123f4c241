"""The schedule judge, one planted difference at a time.

The correct records are stored (``judge_records.py``: a gossip, a
streaming gossip, an allreduce that forwards accumulators, a gather and a
broadcast, each as Amaranth's simulator ran it); each test changes one field
of a copy and checks that the judge names exactly that difference: kind,
cycle, node, and what it expected.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from judge_records import stored

from pipegossip.hw.schedule.load import slot_words
from pipegossip.model.schedules.program import NONE
from pipegossip.sim.judge.schedule import judge_schedule, port_figures, schedule_verdict_json


@pytest.fixture(scope="module")
def records():
    return stored("schedule")


def _copy(records, name: str):
    program, record = records[name]
    return program, copy.deepcopy(record)


def _where(verdict) -> list[tuple]:
    return [(m.kind, m.cycle, m.processor, m.note) for m in verdict.mismatches]


@pytest.mark.parametrize("name", ["shift4", "stream5", "allreduce4", "gather4", "broadcast4"])
def test_every_stored_record_matches(records, name):
    program, record = records[name]
    verdict = judge_schedule(program, record)
    assert verdict.match and verdict.mismatches == [], verdict.report()


# -- the run's control outputs ----------------------------------------------

def test_a_producer_problem_and_a_timeout_are_named(records):
    program, bad = _copy(records, "shift4")
    bad.problems = ["x on send_word"]
    bad.ended = "timeout"
    got = [(m.kind, m.cycle, m.processor, m.expected, m.got)
           for m in judge_schedule(program, bad).mismatches]
    assert got == [("timeout", None, None, "done after 4 cycles", "ended timeout after 7 samples"),
                   ("record", None, None, "a clean sample", "x on send_word")]


@pytest.mark.parametrize("field", ["busy", "done", "cycle"])
@pytest.mark.parametrize("k", range(1, 7))  # L = 3, latency 1: busy in 1..4, done 5..6
def test_busy_done_and_cycle_are_judged_in_every_cycle_after_the_start(records, field, k):
    program, bad = _copy(records, "shift4")
    want = {"busy": int(k <= 4), "done": int(k > 4), "cycle": k - 1 if 2 <= k <= 4 else 0}[field]
    assert bad.samples[field][k] == want
    bad.samples[field][k] = want + 1 if field == "cycle" else 1 - want
    verdict = judge_schedule(program, bad)
    kind = "cycle" if field == "cycle" else field
    assert [(m.kind, m.cycle, m.processor, m.expected) for m in verdict.mismatches] == \
        [(kind, k, None, str(want))]


def test_a_wrong_length_is_named(records):
    program, bad = _copy(records, "shift4")
    bad.samples["length"][0] = 4
    got = [(m.kind, m.cycle, m.expected, m.got) for m in judge_schedule(program, bad).mismatches]
    assert got == [("cycle", 0, "length 3", "length 4")]


def test_a_record_of_another_size_is_refused_alone(records):
    program, bad = _copy(records, "shift4")
    bad.n = 5
    got = [(m.kind, m.expected, m.got) for m in judge_schedule(program, bad).mismatches]
    assert got == [("record", "4 nodes", "5")]


# -- the trace ----------------------------------------------------------------

def _slot_text(program, t: int, v: int, comb: bool = False) -> str:
    """The judge's wording of program cycle t at node v (a gossip: send and receive)."""
    return (f"send {program.send[t - 1, v]}, recv {program.recv[t - 1, v]} from "
            f"p{program.source[t - 1, v]}" + (" and combine" if comb else ""))


@pytest.mark.parametrize("field", ["recv_slot", "send_slot", "recv_source"])
def test_a_wrong_slot_or_source_is_a_trace_mismatch_of_that_cycle_and_node(records, field):
    program, bad = _copy(records, "shift4")
    k, v = 3, 1  # exchange cycle 2 (latency 1), node 1: it sends and receives then
    assert bad.samples["send_valid"][k, v] and bad.samples["recv_valid"][k, v]
    bad.samples[field][k, v] = (bad.samples[field][k, v] + 1) % 4
    verdict = judge_schedule(program, bad)
    # a wrong send slot sends another slot's word, a wrong source delivers another's word
    also = [] if field == "recv_slot" else [("delivery", k, v, "")]
    assert [w for w in _where(verdict) if w[1] is not None] == [("trace", k, v, "")] + also
    first = verdict.first_mismatch
    assert first.expected == _slot_text(program, 2, v)
    send, src, recv = (int(program.send[1, v]), int(program.source[1, v]),
                       int(program.recv[1, v]))
    send, src, recv = {"send_slot": ((send + 1) % 4, src, recv),
                       "recv_source": (send, (src + 1) % 4, recv),
                       "recv_slot": (send, src, (recv + 1) % 4)}[field]
    assert first.got == f"send {send}, recv {recv} from p{src}"
    # the schedule read back from the trace (a receive slot is not part of it) is no
    # gossip: node 1 sends an item it does not hold yet / node 1 lacks an item
    rb = [(m.kind, m.cycle, m.expected, m.got[:23]) for m in verdict.mismatches
          if m.note == "read-back schedule"]
    assert rb == ([] if field == "recv_slot" else
                  [("trace", None, "round 1 of the schedule", "read back [('invalid', ")])


def test_two_rounds_swapped_read_back_as_another_valid_schedule(records):
    program, bad = _copy(records, "shift4")
    for field in ("send_slot", "recv_source", "recv_slot", "send_word", "recv_word"):
        bad.samples[field][[3, 4]] = bad.samples[field][[4, 3]]
    verdict = judge_schedule(program, bad)
    assert [(m.kind, m.cycle) for m in verdict.mismatches] == \
        [("trace", 3)] * 4 + [("trace", 4)] * 4 + [("trace", None)]
    rb = verdict.mismatches[-1]
    third = sorted((u, ((u + 3) % 4,), (u,)) for u in range(4))  # round 3 moves each item 3 on
    assert (rb.expected, rb.got, rb.note) == ("round 2 of the schedule", f"read back {third}",
                                              "read-back schedule")


def test_a_combine_flag_on_a_plain_receive_is_a_trace_mismatch(records):
    program, bad = _copy(records, "shift4")
    bad.samples["recv_comb"][2, 3] = 1
    (m,) = [m for m in judge_schedule(program, bad).mismatches if m.cycle is not None]
    assert (m.kind, m.cycle, m.processor) == ("trace", 2, 3)
    assert (m.expected, m.got) == (_slot_text(program, 1, 3), _slot_text(program, 1, 3, True))


@pytest.mark.parametrize("k", [1, 5])  # the cycle before the first exchange, the one after
def test_a_send_outside_the_program_cycles_is_a_trace_mismatch(records, k):
    program, bad = _copy(records, "shift4")
    bad.samples["send_valid"][k, 2] = 1
    bad.samples["send_slot"][k, 2] = 1
    bad.samples["send_word"][k, 2] = slot_words(program, 3)[1]  # the word is right, the time not
    got = [(m.kind, m.cycle, m.processor, m.expected, m.got)
           for m in judge_schedule(program, bad).mismatches]
    assert got == [("trace", k, 2, "-, -", "send 1, -")]


def test_a_receive_from_itself_cannot_be_read_back_as_a_schedule(records):
    program, bad = _copy(records, "shift4")
    bad.samples["recv_source"][2, 0] = 0
    (rb,) = [m for m in judge_schedule(program, bad).mismatches if m.cycle is None]
    assert rb.note == "read-back schedule" and "invalid" in rb.got


def test_an_accumulator_send_is_judged_as_one(records):
    program, bad = _copy(records, "allreduce4")
    assert bad.samples["send_acc"][2, 0] == 1 and bad.samples["recv_comb"][2, 0] == 1
    src = int(program.source[0, 0])
    bad.samples["send_acc"][2, 0] = 0
    got = [(m.kind, m.cycle, m.processor, m.expected, m.got)
           for m in judge_schedule(program, bad).mismatches if m.cycle is not None]
    slot = int(bad.samples["send_slot"][2, 0])
    assert got == [("trace", 2, 0, f"send acc, combine from p{src}",
                    f"send {slot}, combine from p{src}")]


# -- the words on the trace -----------------------------------------------------

def test_a_wrong_sent_word_is_named_at_the_sender_and_its_receiver(records):
    program, bad = _copy(records, "shift4")
    k, v = 3, 1
    x = int(program.send[1, v])
    word = slot_words(program, 3)[x]
    bad.samples["send_word"][k, v] ^= 1
    receiver = int(np.flatnonzero(program.source[1] == v)[0])
    verdict = judge_schedule(program, bad)
    assert _where(verdict) == [("delivery", k, v, ""), ("delivery", k, receiver, "")]
    assert verdict.mismatches[0].expected == f"sends word {word:#x} of slot {x}"
    assert verdict.mismatches[1].expected == f"the word p{v} sends ({word ^ 1:#x})"


def test_a_wrong_received_word_is_a_delivery_mismatch(records):
    program, bad = _copy(records, "shift4")
    k, v = 3, 1
    bad.samples["recv_word"][k, v] ^= 1
    verdict = judge_schedule(program, bad)
    assert _where(verdict) == [("delivery", k, v, "")]
    u = int(program.source[1, v])
    assert verdict.first_mismatch.expected == \
        f"the word p{u} sends ({int(bad.samples['send_word'][k, u]):#x})"


@pytest.mark.parametrize("k", [2, 3])  # both exchange cycles of the allreduce
def test_a_wrong_accumulator_word_is_named_with_its_value(records, k):
    program, bad = _copy(records, "allreduce4")
    want = program.acc_values(slot_words(program, 5))[k - 2][1]
    assert bad.samples["send_word"][k, 1] == want
    bad.samples["send_word"][k, 1] ^= 4
    verdict = judge_schedule(program, bad)
    receiver = int(np.flatnonzero(program.source[k - 2] == 1)[0])
    assert sorted(_where(verdict)) == sorted([("delivery", k, 1, "combine"),
                                              ("delivery", k, receiver, "")])
    (sent,) = [m for m in verdict.mismatches if m.processor == 1]
    assert (sent.expected, sent.got) == (f"sends accumulator {want:#x}", f"{want ^ 4:#x}")


def test_a_wrong_combined_word_is_a_delivery_mismatch(records):
    program, bad = _copy(records, "allreduce4")
    assert bad.samples["recv_valid"][3, 2] == 0 and bad.samples["recv_comb"][3, 2] == 1
    bad.samples["recv_word"][3, 2] ^= 1
    assert _where(judge_schedule(program, bad)) == [("delivery", 3, 2, "")]


# -- the stores and accumulators after the run ---------------------------------

def test_a_wrong_stored_word_is_named(records):
    program, bad = _copy(records, "shift4")
    word = slot_words(program, 3)[1]
    bad.store[3][1] ^= 0x80
    verdict = judge_schedule(program, bad)
    assert [(m.kind, m.cycle, m.processor, m.note, m.expected, m.got)
            for m in verdict.mismatches] == \
        [("delivery", None, 3, "final store", f"slot 1 = {word:#x}", f"{word ^ 0x80:#x}")]


def test_a_lost_gossip_item_is_a_store_and_a_completion_mismatch(records):
    program, bad = _copy(records, "shift4")
    bad.held[2][0] = 0
    verdict = judge_schedule(program, bad)
    assert [(m.note, m.processor, m.expected, m.got) for m in verdict.mismatches] == \
        [("final store", 2, "slot 0 held", "empty"),
         ("incomplete gossip", 2, "every item", "lacks items [0]")]


def test_a_slot_held_that_should_be_empty_is_named(records):
    program, bad = _copy(records, "gather4")
    assert not program.final[1, 0]
    bad.held[1][0] = 1
    verdict = judge_schedule(program, bad)
    assert [(m.note, m.processor, m.expected, m.got) for m in verdict.mismatches] == \
        [("final store", 1, "slot 0 empty", "held")]


@pytest.mark.parametrize("name, node, slot, incomplete", [
    ("gather4", 0, 3, "incomplete gather"),   # the root needs every item
    ("gather4", 2, 3, None),                  # a relay does not
    ("broadcast4", 3, 2, "incomplete broadcast"),  # everyone needs the root's items
    ("broadcast4", 3, 6, "incomplete broadcast"),  # (the second in slot 6)
    ("broadcast4", 2, 2, "incomplete broadcast"),  # the root too
    ("broadcast4", 3, 7, None),                    # its own second item is not broadcast
])
def test_completion_is_judged_from_the_primitive(records, name, node, slot, incomplete):
    program, bad = _copy(records, name)
    assert program.final[node, slot]
    bad.held[node][slot] = 0
    notes = [(m.note, m.processor) for m in judge_schedule(program, bad).mismatches]
    assert notes == [("final store", node)] + ([(incomplete, node)] if incomplete else [])


@pytest.mark.parametrize("name, node, notes", [
    ("allreduce4", 1, ["combine", "combined result"]),  # every node holds the reduction
    ("gather4", 0, ["combine", "combined result"]),     # the root does
    ("gather4", 2, ["combine"]),
    ("shift4", 1, ["combine"]),                         # a gossip has no reduction
])
def test_a_wrong_accumulator_after_the_run(records, name, node, notes):
    program, bad = _copy(records, name)
    bad.acc[node] ^= 1
    verdict = judge_schedule(program, bad)
    assert [(m.kind, m.cycle, m.processor, m.note) for m in verdict.mismatches] == \
        [("delivery", None, node, note) for note in notes]
    want = program.acc_values(slot_words(program, bad.spec.word_seed))[-1][node]
    assert verdict.mismatches[0].expected == f"accumulator {want:#x}"
    if len(notes) == 2:
        red = program.reduction(slot_words(program, bad.spec.word_seed))
        assert verdict.mismatches[1].expected == f"reduction {red:#x}"


# -- a streaming run: words per gossip, arrivals, the timed loads ----------------
# stream5: cyclic shift of 5 nodes, 3 gossips back to back (12 exchange cycles,
# clock cycle = program cycle + 1), one bank: gossip g's word of node v is item
# 5g + v in slot v, and the later gossips' words are loaded in clock cycles 5
# and 9, each in a window of one cycle.

def _item(i: int) -> str:
    return f"item {i} (gossip {i // 5}, p{i % 5})"


def _iw(program, seed: int = 0) -> list[int]:
    return slot_words(program.logical, seed)


def test_streaming_sent_word_of_another_item_is_named_with_its_gossip(records):
    program, bad = _copy(records, "stream5")
    bad.samples["send_word"][3, 1] ^= 1  # program cycle 2: node 1 sends item 1 to node 3
    verdict = judge_schedule(program, bad)
    assert _where(verdict) == [("delivery", 3, 1, ""), ("delivery", 3, 3, "")]
    assert verdict.mismatches[0].expected == f"sends {_iw(program)[1]:#x}, {_item(1)}"
    assert verdict.mismatches[1].expected.startswith("the word p1 sends")


def test_streaming_received_word_of_another_item_leaves_the_gossip_incomplete(records):
    program, bad = _copy(records, "stream5")
    bad.samples["recv_word"][3, 3] ^= 1
    verdict = judge_schedule(program, bad)
    assert _where(verdict) == [("delivery", 3, 3, ""), ("delivery", 3, 3, ""),
                               ("delivery", None, 3, "incomplete gossip")]
    assert f"receives {_iw(program)[1]:#x}, {_item(1)}" in [m.expected for m in verdict.mismatches]
    assert (verdict.mismatches[2].expected, verdict.mismatches[2].got) == \
        ("every word of 3 gossips", f"lacks {_item(1)}")


@pytest.mark.parametrize("field", ["recv_source", "recv_slot"])
def test_streaming_right_word_by_the_wrong_way_is_not_an_arrival(records, field):
    program, bad = _copy(records, "stream5")
    bad.samples["recv_word"][3, 3] = bad.samples["send_word"][3, 1]  # the right word
    bad.samples[field][3, 3] = (bad.samples[field][3, 3] + 1) % 5
    if field == "recv_source":  # and what that node sends, so only the way is wrong
        bad.samples["send_word"][3, 2] = bad.samples["recv_word"][3, 3]
    incomplete = [(m.processor, m.got) for m in judge_schedule(program, bad).mismatches
                  if m.note == "incomplete gossip"]
    assert incomplete == [(3, f"lacks {_item(1)}")]


@pytest.mark.parametrize("cycles, suffix", [(range(2, 6), ""),          # gossip 0: 4 items
                                            (range(2, 14), " and 8 more")])  # all 12
def test_streaming_lacking_words_are_listed_four_at_most(records, cycles, suffix):
    program, bad = _copy(records, "stream5")
    for k in cycles:
        bad.samples["recv_valid"][k, 0] = 0
    (m,) = [m for m in judge_schedule(program, bad).mismatches if m.note == "incomplete gossip"]
    assert (m.processor, m.got) == (0, "lacks " + ", ".join(_item(i) for i in (1, 2, 3, 4))
                                    + suffix)


def _load(record, node: int, cycle: int) -> list[int]:
    (w,) = [w for w in record.loads if w[2] == node and w[0] == cycle]
    return w


def test_streaming_missing_load_is_named_with_its_window(records):
    program, bad = _copy(records, "stream5")
    bad.loads.remove(_load(bad, 2, 5))
    verdict = judge_schedule(program, bad)
    assert [(m.kind, m.cycle, m.processor, m.note, m.expected, m.got)
            for m in verdict.mismatches] == \
        [("delivery", 5, 2, "load timetable",
          f"a load of {_item(7)} into slot 2 in cycles 5..5", "none")]


@pytest.mark.parametrize("cycle", [4, 6])
def test_streaming_load_outside_its_window_is_named(records, cycle):
    program, bad = _copy(records, "stream5")
    _load(bad, 2, 5)[0] = cycle
    verdict = judge_schedule(program, bad)
    assert [(m.cycle, m.processor, m.note, m.expected, m.got) for m in verdict.mismatches] == \
        [(cycle, 2, "load timetable", f"{_item(7)} loaded into slot 2 in cycles 5..5",
          f"loaded in cycle {cycle}")]


def test_streaming_wrong_load_word_is_named(records):
    program, bad = _copy(records, "stream5")
    _load(bad, 2, 9)[4] ^= 2
    want = _iw(program)[12]
    verdict = judge_schedule(program, bad)
    assert [(m.cycle, m.processor, m.note, m.expected, m.got) for m in verdict.mismatches] == \
        [(9, 2, "load", f"load word {want:#x} of {_item(12)}", f"{want ^ 2:#x}")]


@pytest.mark.parametrize("cycle, clash", [(7, True), (8, False)])
def test_streaming_load_nobody_asked_for_and_a_load_lost_to_a_receive(records, cycle, clash):
    program, bad = _copy(records, "stream5")
    # node 2 receives into slot 0 in clock cycle 7 (program cycle 6), not in 8
    assert (bad.samples["recv_slot"][cycle, 2] == 0) == clash
    bad.loads.append([cycle, 1, 2, 0, 0x11])
    verdict = judge_schedule(program, bad)
    got = [(m.cycle, m.processor, m.note, m.expected) for m in verdict.mismatches]
    assert got == [(cycle, 2, "load", "a load into slot 0 that lands")] * clash + \
        [(cycle, 2, "load timetable", "no load")]


def test_streaming_final_store_holds_the_last_gossip(records):
    program, bad = _copy(records, "stream5")
    bad.store[1][3] ^= 1
    want = _iw(program)[13]  # slot 3 ends with gossip 2's word of node 3
    verdict = judge_schedule(program, bad)
    assert [(m.processor, m.note, m.expected) for m in verdict.mismatches] == \
        [(1, "final store", f"slot 3 = {want:#x}")]


def test_streaming_wrong_send_slot_is_read_back(records):
    program, bad = _copy(records, "stream5")
    bad.samples["send_slot"][3, 1] = 2
    notes = [(m.kind, m.cycle, m.processor, m.note) for m in judge_schedule(program, bad).mismatches]
    assert ("trace", 3, 1, "") in notes and ("trace", None, None, "read-back schedule") in notes


# -- port figures -------------------------------------------------------------------

def _figures(**changes) -> dict:
    out = dict(exchange_cycles=3, busy_cycles=4, gossips=1, send_util=[1.0] * 4,
               recv_util=[1.0] * 4, min_util=1.0, complete=[4], period=None, per_1000=None,
               per_1000_run=250.0)
    out.update(changes)
    return out


def test_port_figures_of_a_stream(records):
    program, record = records["stream5"]
    assert port_figures(program, record) == dict(
        exchange_cycles=12, busy_cycles=13, gossips=3, send_util=[1.0] * 5, recv_util=[1.0] * 5,
        min_util=1.0, complete=[5, 9, 13], period=4.0, per_1000=250.0, per_1000_run=230.8)


def test_port_figures_of_a_stream_with_a_receive_missing(records):
    program, bad = _copy(records, "stream5")
    bad.samples["recv_valid"][13, 2] = 0  # the last word of the last gossip
    f = port_figures(program, bad)
    assert f["recv_util"] == [1.0, 1.0, 0.9167, 1.0, 1.0] and f["min_util"] == 0.9167
    assert f["complete"] == [5, 9, 13]  # the others still arrive in cycle 13


def test_port_figures_of_one_gossip(records):
    assert port_figures(*records["shift4"]) == _figures()


def test_port_figures_of_a_gather(records):
    program, bad = _copy(records, "gather4")
    assert port_figures(program, bad) == _figures(
        send_util=[0.0, 0.3333, 0.6667, 0.3333], recv_util=[1.0, 0.0, 0.3333, 0.0], min_util=0.0)
    bad.samples["recv_valid"][4, 0] = 0  # the root's last receive
    bad.samples["cycle"][4] = 0          # and that cycle no exchange
    assert port_figures(program, bad) == _figures(
        exchange_cycles=2, send_util=[0.0, 0.5, 0.5, 0.5], recv_util=[1.0, 0.0, 0.5, 0.0],
        min_util=0.0, complete=[3])


def test_port_figures_without_exchange_or_busy_cycles(records):
    program, bad = _copy(records, "shift4")
    bad.samples["cycle"][:] = 0
    bad.samples["busy"][:] = 0
    f = port_figures(program, bad)
    assert f == _figures(exchange_cycles=0, busy_cycles=0, send_util=[0.0] * 4,
                         recv_util=[0.0] * 4, min_util=0.0, per_1000_run=None)


# -- the verdict as JSON ----------------------------------------------------------------

def test_verdict_json_of_a_matching_stream(records):
    program, record = records["stream5"]
    got = schedule_verdict_json(judge_schedule(program, record))
    assert got == dict(stream=dict(banks=1, timed_loads=10, **port_figures(program, record)),
                       match=True, schedule="stream5", algorithm=program.algorithm, n=5,
                       primitive="gossip", R=program.rounds, cycles=12, latency=1,
                       busy_cycles=13, load_cycles=record.load_cycles, word_seed=0,
                       first_mismatch=None, mismatch_counts={}, mismatches=[])


def test_verdict_json_lists_the_first_hundred_mismatches(records):
    program, bad = _copy(records, "shift4")
    bad.samples["send_word"][2:5] ^= 1  # every send: the sender's and the receiver's mismatch
    verdict = judge_schedule(program, bad)
    got = schedule_verdict_json(verdict)
    assert "stream" not in got and got["match"] is False
    assert got["mismatch_counts"] == {"delivery": 24}
    assert got["first_mismatch"] == verdict.mismatches[0].to_json()
    assert got["mismatches"] == [m.to_json() for m in verdict.mismatches]
    program, bad = _copy(records, "stream5")
    bad.samples["send_word"][2:14] ^= 1  # 60 sends
    got = schedule_verdict_json(judge_schedule(program, bad))
    assert got["mismatch_counts"]["delivery"] > 100 and len(got["mismatches"]) == 100


@pytest.mark.parametrize("k", [1, 4])  # the cycle before the first exchange, the one after
def test_an_accumulator_sent_outside_the_program_is_a_trace_mismatch_only(records, k):
    program, bad = _copy(records, "allreduce4")
    bad.samples["send_valid"][k, 0] = bad.samples["send_acc"][k, 0] = 1
    bad.samples["send_word"][k, 0] = 0x5A  # no cycle's accumulator: not judged as one
    assert [(m.kind, m.cycle, m.processor) for m in judge_schedule(program, bad).mismatches] == \
        [("trace", k, 0)]


@pytest.mark.parametrize("name", ["shift4", "stream5"])
def test_a_record_cut_short_before_the_first_exchange_is_judged(records, name):
    program, bad = _copy(records, name)
    for field in bad.samples:
        bad.samples[field] = bad.samples[field][:2]  # the start cycle and one more
    bad.ended, bad.loads = "timeout", []
    verdict = judge_schedule(program, bad)
    if name == "shift4":  # the stores were read back whole: only the end is missing
        assert [m.kind for m in verdict.mismatches] == ["timeout"]
    else:  # a stream's words must arrive on the trace, and its loads be driven
        notes = {(m.kind, m.note) for m in verdict.mismatches}
        assert {("timeout", ""), ("delivery", "incomplete gossip"),
                ("delivery", "load timetable")} <= notes


def test_a_record_cut_short_in_the_program_is_judged_on_the_cycles_it_has(records):
    program, bad = _copy(records, "shift4")
    bad.samples["send_slot"][2, 1] = 3  # in the one exchange cycle kept
    for field in bad.samples:
        bad.samples[field] = bad.samples[field][:3]
    bad.ended = "timeout"
    assert [(m.kind, m.cycle, m.processor) for m in judge_schedule(program, bad).mismatches] == \
        [("trace", 2, 1), ("delivery", 2, 1), ("timeout", None, None)]
