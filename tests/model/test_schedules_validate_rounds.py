"""Streamed validation: rounds checked as a generator yields them, never held.

The streamed path and the whole-schedule path share one implementation (the static
pass and ``_Pass``); these tests hold them to the same verdict, error text and
metrics, on valid schedules and on schedules with a fault planted in a late round,
and hold the colour-string generator's streamed rounds to the rounds of the held
schedule."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipegossip.model.algorithms.coloring import (color_rounds, color_schedule, matchings,
                                                  sequence_rounds, sequence_schedule)
from pipegossip.model.algorithms.limits import cyclic_shift, min_calls, one_factor
from pipegossip.model.schedules.ir import Message, Schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate
from pipegossip.model.schedules.validate_rounds import validate_rounds
from schedule_faults import plant, rebuild

BASES = {
    "ccc_4": lambda: color_schedule(topology("ccc", k=4), "012021202"),
    "ccc_5": lambda: color_schedule(topology("ccc", k=5), "2020120120210"),
    "butterfly_4": lambda: color_schedule(topology("butterfly", k=4), "0123023"),
    "hypercube_4": lambda: color_schedule(topology("hypercube", k=4), "0123"),
    "one-factor": lambda: one_factor(6),
    "cyclic-shift": lambda: cyclic_shift(5),
    "min-calls": lambda: min_calls(9),
}


def _rounds_of(s: Schedule, dtype=np.int32):
    """The rounds of ``s`` as a generator hands them over (own pointers, int32 ids)."""
    for r in range(1, s.rounds_total + 1):
        a, b = int(s.round_ptr[r - 1]), int(s.round_ptr[r])
        d0, i0 = int(s.dst_ptr[a]), int(s.item_ptr[a])
        yield (s.src[a:b].copy(), s.dst_ptr[a:b + 1] - d0, s.dst[d0:int(s.dst_ptr[b])].copy(),
               s.item_ptr[a:b + 1] - i0, s.items[i0:int(s.item_ptr[b])].astype(dtype))


def _same(s: Schedule):
    whole = validate(s, knowledge=True)
    streamed = validate_rounds(s, _rounds_of(s), knowledge=True)
    assert (streamed.to_json(), streamed.knowledge) == (whole.to_json(), whole.knowledge)
    return whole


@pytest.mark.parametrize("base", sorted(BASES))
def test_valid_schedules_give_the_same_metrics_streamed(base):
    v = _same(BASES[base]())
    assert v.valid and v.R >= 1 and v.item_transfers > 0


#: Faults a late round can carry: each keeps the items per node (the streamed path
#: declares h = 1 up front).
FAULTS = ("drop", "unheld", "double-book", "self", "unknown-node", "empty-message",
          "empty-round", "break-edge")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(sorted(BASES)), kind=st.sampled_from(FAULTS), data=st.data())
def test_a_fault_in_a_late_round_gives_the_same_verdict_streamed(base, kind, data):
    s = plant(BASES[base](), kind, data, late=True)
    if s is None:
        return
    v = _same(s)
    if kind not in ("empty-message", "empty-round"):
        assert not v.valid and v.error.startswith("round ")


def test_the_first_error_stops_the_generator():
    # later rounds are not asked for: a fault in round 2 of a long schedule
    s = BASES["ccc_5"]()
    rounds = [list(r) for r in s.rounds]
    rounds[1][0] = Message(rounds[1][0].src, (rounds[1][0].src,), rounds[1][0].items)
    asked = []

    def counted():
        for i, rnd in enumerate(_rounds_of(rebuild(s, rounds)), 1):
            asked.append(i)
            yield rnd
    v = validate_rounds(s, counted())
    assert not v.valid and v.error.startswith("round 2, message 0: node ")
    assert asked == [1, 2]


def test_h_and_the_bit_limit_are_refused_up_front(monkeypatch):
    import importlib
    s = BASES["ccc_4"]()
    for h in (0, True, 1.0):
        with pytest.raises(ValueError, match="h must be an integer >= 1"):
            validate_rounds(s, _rounds_of(s), h=h)
    monkeypatch.setattr(importlib.import_module(
        "pipegossip.model.schedules.validate_rounds"), "_MAX_BITS", 64 * 64 - 1)
    with pytest.raises(ValueError, match="4096 knowledge bits"):
        validate_rounds(s, _rounds_of(s))


@pytest.mark.parametrize("name,k,colors", [
    ("ccc", 4, "012021202"), ("ccc", 5, "2020120120210"), ("butterfly", 4, "0123023"),
    ("butterfly", 5, "02103231023"), ("hypercube", 5, "01234"), ("ccc", 4, "01"),
])
def test_the_streamed_generator_yields_the_rounds_of_the_held_schedule(name, k, colors):
    # "01" on ccc_4 repeats its period without the cross edges: it never completes
    topo = topology(name, k=k)
    if colors == "01":
        with pytest.raises(ValueError, match="do not complete gossip within 20 rounds"):
            list(color_rounds(topo, colors, max_rounds=20))
        return
    s = color_schedule(topo, colors)
    got = list(color_rounds(topo, colors))
    assert len(got) == s.rounds_total
    for have, want in zip(got, _rounds_of(s)):
        assert [x.tolist() for x in have] == [x.tolist() for x in want]
        assert have[4].dtype == np.int32
    assert validate_rounds(s, iter(got)).to_json() == validate(s).to_json()


def test_sequence_rounds_on_a_greedy_colouring_match_the_held_schedule():
    topo = topology("mesh", a=3, b=4)
    period = matchings(topo)
    s = sequence_schedule(topo, period, origin={"algorithm": "", "source": ""})
    got = list(sequence_rounds(topo, period))
    assert [len(r[0]) for r in got] == np.diff(s.round_ptr).tolist()
    assert np.concatenate([r[4] for r in got]).tolist() == s.items.tolist()


def test_the_streamed_path_never_holds_the_schedule(monkeypatch):
    # ccc_6: 147,072 item ids, 0.6 MB even as int32; the largest round holds a fifth.
    # Streamed, the peak is about one round (generator and validator), not the schedule;
    # the generator's blocks and the validator's chunks are shrunk to scale (ccc_12:
    # 2^24 of 2.4 billion ids)
    import importlib
    import tracemalloc
    monkeypatch.setattr(importlib.import_module("pipegossip.model.schedules.validate_static"),
                        "_CHUNK", 1024)
    monkeypatch.setattr(importlib.import_module("pipegossip.model.algorithms.matching"),
                        "BLOCK", 4096)
    topo = topology("ccc", k=6)
    s = color_schedule(topo, "01202120212020")
    held = s.items.nbytes // 2  # the ids as int32
    tracemalloc.start()
    try:
        v = validate_rounds(s, color_rounds(topo, "01202120212020"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert v.valid and (v.R, v.S) == (validate(s).R, validate(s).S)
    # a held schedule needs its ids (int32 at least: 588 KB) at the peak; streamed, about
    # two rounds' (the largest: 126 KB) and the chunks' temporaries
    assert peak < held * 0.75, (peak, held)
