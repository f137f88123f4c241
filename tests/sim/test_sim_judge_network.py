"""The network judge, one planted difference at a time.

The correct records are stored (``judge_records.py``: gossip, gather and
broadcast (two items per node) on a path of 4 nodes, reduce on it, allreduce on the 2-cube,
polling on the 3-cube, each as Amaranth's simulator ran it). Ports are link
ends: on the path, port 0 is node 0's end of link 0-1, ports 1 and 2 node 1's
(to 0, to 2), ports 3 and 4 node 2's (to 1, to 3), port 5 node 3's. Clock
cycle k is program cycle k - 1.
"""

from __future__ import annotations

import copy

import pytest
from judge_records import stored

from pipegossip.hw.network.load import item_words
from pipegossip.model.schedules.network_program import combine_words
from pipegossip.sim.judge.network import judge_network, network_verdict_json


@pytest.fixture(scope="module")
def records():
    return stored("network")


def _copy(records, name: str):
    program, record = records[name]
    return program, copy.deepcopy(record)


def _got(verdict) -> list[tuple]:
    return [(m.kind, m.cycle, m.processor, m.note, m.expected, m.got) for m in verdict.mismatches]


def _where(verdict) -> list[tuple]:
    return [(m.kind, m.cycle, m.processor, m.note) for m in verdict.mismatches]


def _words(program, record) -> list[int]:
    return item_words(program, record.spec.word_seed)


@pytest.mark.parametrize("name", ["gossip-path4", "gather-path4", "broadcast-path4",
                                  "reduce-path4", "allreduce-q2", "polling-q3"])
def test_every_stored_record_matches(records, name):
    program, record = records[name]
    verdict = judge_network(program, record)
    assert verdict.match and verdict.mismatches == [], verdict.report()


@pytest.mark.parametrize("field, value, got", [("n", 5, "5 nodes, 6 ports"),
                                               ("ports", 7, "4 nodes, 7 ports")])
def test_a_record_of_another_network_is_refused_alone(records, field, value, got):
    program, bad = _copy(records, "gossip-path4")
    setattr(bad, field, value)
    assert _got(judge_network(program, bad)) == \
        [("record", None, None, "", "4 nodes, 6 ports", got)]


def test_the_control_outputs_are_judged(records):
    program, bad = _copy(records, "gossip-path4")
    bad.samples["busy"][-1] = 1
    assert _where(judge_network(program, bad)) == [("busy", 8, None, "")]


# -- the trace, per link end ------------------------------------------------------

@pytest.mark.parametrize("field, value, got", [
    ("tx_slot", 1, "send slot 1, store -"),
    ("tx_acc", 1, "send acc, store -"),
    ("rx_valid", 1, "send slot 0, store slot 0"),
    ("rx_comb", 1, "send slot 0, store -, combine"),
])
def test_a_wrong_link_end_is_a_trace_mismatch_named_by_its_port(records, field, value, got):
    program, bad = _copy(records, "gossip-path4")
    bad.samples[field][2, 0] = value  # program cycle 1: node 0 sends slot 0 to node 1
    if field == "rx_valid":
        bad.samples["rx_slot"][2, 0] = 0
    assert _got(judge_network(program, bad)) == \
        [("trace", 2, 0, "port 0: p0 -> p1", "send slot 0, store -", got)]


def test_a_lost_receive_is_named_at_the_receiving_end(records):
    program, bad = _copy(records, "gossip-path4")
    bad.samples["rx_valid"][2, 1] = 0
    assert _got(judge_network(program, bad)) == \
        [("trace", 2, 1, "port 1: p1 -> p0", "send -, store slot 0", "send -, store -")]


@pytest.mark.parametrize("k", [1, 7])  # before the first program cycle, after the last
def test_a_send_outside_the_program_is_a_trace_mismatch(records, k):
    program, bad = _copy(records, "gossip-path4")
    bad.samples["tx_valid"][k, 2] = 1
    bad.samples["tx_slot"][k, 2] = 1
    bad.samples["tx_word"][k, 2] = bad.samples["rx_word"][k, 3]  # what the link carries
    assert _got(judge_network(program, bad)) == \
        [("trace", k, 1, "port 2: p1 -> p2", "send -, store -", "send slot 1, store -")]


# -- the words on the links ----------------------------------------------------------

def test_a_wrong_sent_word_is_named_at_the_sender_and_the_receiving_end(records):
    program, bad = _copy(records, "gossip-path4")
    w = _words(program, bad)[0]
    bad.samples["tx_word"][2, 0] ^= 1
    assert _got(judge_network(program, bad)) == [
        ("delivery", 2, 0, "port 0: p0 -> p1", f"sends {w:#x} (slot 0)", f"{w ^ 1:#x}"),
        ("delivery", 2, 1, "port 1: p1 -> p0", f"the word p0 sends ({w ^ 1:#x})", f"{w:#x}")]


def test_a_wrong_received_word_is_named_at_the_receiver(records):
    program, bad = _copy(records, "gossip-path4")
    w = _words(program, bad)[0]
    bad.samples["rx_word"][2, 1] ^= 1
    assert _got(judge_network(program, bad)) == [
        ("delivery", 2, 1, "port 1: p1 -> p0", f"receives {w:#x} from p0", f"{w ^ 1:#x}"),
        ("delivery", 2, 1, "port 1: p1 -> p0", f"the word p0 sends ({w:#x})", f"{w ^ 1:#x}")]


def test_a_wrong_word_carried_faithfully_names_both_ends(records):
    program, bad = _copy(records, "gossip-path4")
    w = _words(program, bad)[0]
    bad.samples["tx_word"][2, 0] ^= 1
    bad.samples["rx_word"][2, 1] ^= 1
    assert [(m.processor, m.expected) for m in judge_network(program, bad).mismatches] == \
        [(0, f"sends {w:#x} (slot 0)"), (1, f"receives {w:#x} from p0")]


def test_a_wrong_accumulator_word_on_a_link(records):
    program, bad = _copy(records, "allreduce-q2")
    want = program.acc_values(_words(program, bad))[0][0]  # node 0's token, sent to node 1
    assert bad.samples["tx_word"][2, 0] == want
    bad.samples["tx_word"][2, 0] ^= 1
    got = _got(judge_network(program, bad))
    assert got[0] == ("delivery", 2, 0, "port 0: p0 -> p1", f"sends {want:#x} (acc)",
                      f"{want ^ 1:#x}")
    assert [g[:3] for g in got] == [("delivery", 2, 0), ("delivery", 2, 1)]


def test_a_wrong_combined_word_is_named_at_the_combining_end(records):
    program, bad = _copy(records, "allreduce-q2")
    assert program.rx[0, 2] == -1 and program.comb[0, 2]  # port 2: node 1 combines from 0
    bad.samples["rx_word"][2, 2] ^= 1
    assert [(m.kind, m.cycle, m.processor, m.expected[:8]) for m in
            judge_network(program, bad).mismatches] == [("delivery", 2, 1, "receives"),
                                                        ("delivery", 2, 1, "the word")]


# -- every node's accumulator, every cycle -------------------------------------------

@pytest.mark.parametrize("k, step", [(0, 0), (1, 0), (2, 0), (3, 1), (4, 2), (5, 2)])
def test_the_accumulators_are_judged_in_every_cycle(records, k, step):
    program, bad = _copy(records, "allreduce-q2")
    want = program.acc_values(_words(program, bad))[step][3]
    assert bad.samples["acc"][k, 3] == want
    bad.samples["acc"][k, 3] ^= 0x10
    assert _got(judge_network(program, bad)) == \
        [("delivery", k, 3, "combine", f"accumulator {want:#x}", f"{want ^ 0x10:#x}")]


# -- the stores and accumulators after the run -----------------------------------------

@pytest.mark.parametrize("name, node, slot, incomplete", [
    ("gossip-path4", 2, 0, "incomplete gossip"),
    ("broadcast-path4", 3, 1, "incomplete broadcast"),  # everyone needs the root's items
    ("broadcast-path4", 3, 5, "incomplete broadcast"),  # (its second in slot 5)
    ("broadcast-path4", 2, 2, None),                    # its own item is not the broadcast
    ("gather-path4", 1, 3, "incomplete gather"),        # the root needs every item
    ("gather-path4", 2, 3, None),                       # a relay does not
])
def test_a_lost_item_and_what_the_primitive_needs(records, name, node, slot, incomplete):
    program, bad = _copy(records, name)
    assert program.final[node, slot]
    bad.held[node][slot] = 0
    got = [(m.processor, m.note, m.expected, m.got) for m in judge_network(program, bad).mismatches]
    assert got == [(node, "final store", f"slot {slot} held", "empty")] + \
        ([(node, incomplete, "every item", f"lacks items [{slot}]")] if incomplete else [])


def test_a_slot_held_that_should_be_empty(records):
    program, bad = _copy(records, "gather-path4")
    bad.held[0][1] = 1
    assert _got(judge_network(program, bad)) == \
        [("delivery", None, 0, "final store", "slot 1 empty", "held")]


def test_a_wrong_stored_word(records):
    program, bad = _copy(records, "gossip-path4")
    w = program.slot_words(_words(program, bad))[3]
    bad.store[0][3] ^= 4
    assert _got(judge_network(program, bad)) == \
        [("delivery", None, 0, "final store", f"slot 3 = {w:#x}", f"{w ^ 4:#x}")]


@pytest.mark.parametrize("name, node, incomplete", [
    ("polling-q3", 0, "incomplete polling"), ("polling-q3", 3, None),
    ("reduce-path4", 0, "incomplete reduce"), ("reduce-path4", 1, None),
    ("allreduce-q2", 2, "incomplete allreduce"),  # every node holds the reduction
])
def test_a_wrong_final_accumulator(records, name, node, incomplete):
    program, bad = _copy(records, name)
    words = _words(program, bad)
    want = program.acc_values(words)[program.cycles][node]
    bad.acc[node] ^= 1
    got = [(m.processor, m.note, m.expected) for m in judge_network(program, bad).mismatches]
    every = combine_words(program.op, words[:program.n], program.width)
    assert got == [(node, "final accumulator", f"accumulator {want:#x}")] + \
        ([(node, incomplete, f"sum of all {program.n} tokens {every:#x}")] if incomplete else [])


# -- the verdict as JSON -------------------------------------------------------------------

def test_verdict_json(records):
    program, record = records["polling-q3"]
    got = network_verdict_json(judge_network(program, record))
    assert got == dict(match=True, schedule="polling-q3", algorithm=program.algorithm, n=8,
                       topology=program.topology.to_json(), primitive="polling",
                       model=program.schedule.model, op="sum", R=program.rounds, S=program.S,
                       cycles=6, latency=1, busy_cycles=7, load_cycles=record.load_cycles,
                       word_seed=4, first_mismatch=None, mismatch_counts={}, mismatches=[])
    program, bad = _copy(records, "polling-q3")
    bad.samples["acc"][:] = [[int(x) ^ 1 for x in row] for row in bad.samples["acc"]]
    bad.acc = [a ^ 1 for a in bad.acc]
    verdict = judge_network(program, bad)
    got = network_verdict_json(verdict)
    assert got["match"] is False and got["first_mismatch"] == verdict.mismatches[0].to_json()
    assert got["mismatch_counts"] == {"delivery": 80 + 8 + 1}
    assert got["mismatches"] == [m.to_json() for m in verdict.mismatches[:100]]
    assert len(got["mismatches"]) == 89
    bad.samples["tx_word"][:] = [[int(x) ^ 1 for x in row] for row in bad.samples["tx_word"]]
    got = network_verdict_json(judge_network(program, bad))
    assert got["mismatch_counts"]["delivery"] > 100 and len(got["mismatches"]) == 100


def test_a_record_cut_short_before_the_first_exchange_is_judged(records):
    program, bad = _copy(records, "gossip-path4")
    for field in bad.samples:
        bad.samples[field] = bad.samples[field][:2]  # the start cycle and one more
    bad.ended = "timeout"
    assert [m.kind for m in judge_network(program, bad).mismatches] == ["timeout"]


def test_a_word_on_a_link_end_that_does_not_send_is_not_judged(records):
    program, bad = _copy(records, "gossip-path4")
    assert not bad.samples["tx_valid"][2, 1]
    bad.samples["tx_word"][2, 1] ^= 0x33
    assert judge_network(program, bad).match
