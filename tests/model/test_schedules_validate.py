"""The validator: every rule refused with round, message and rule; metrics; mutants."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipegossip.model.algorithms.limits import cyclic_shift, min_calls, one_factor, recursive_doubling
from pipegossip.model.schedules.ir import Message, Schedule, complete
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import ScheduleError, check, validate
from schedule_faults import plant, rebuild


def S(rounds, model="H1", p=1, topo=None, n=3, **kw):
    return Schedule.from_rounds([[Message(*m) if isinstance(m, tuple) else m for m in r]
                                 for r in rounds], topology=topo or complete(n), model=model,
                                p=p, **kw)


def M(src, dst, items):
    return Message(src, tuple(dst), tuple(items))


def test_valid_metrics():
    s = S([[M(0, [1], [0])], [M(1, [0], [1])], []], n=2)
    v = validate(s)
    assert v.valid and v.R == 2 and v.busy == [2, 2] and v.S == 2 and v.efficiency == 1.0
    assert v.T(0.5) == 3.0
    assert check(s) is not None


@pytest.mark.parametrize("rounds,model,p,text", [
    ([[M(0, [5], [0])]], "H1", 1, "round 1, message 0: unknown node 5"),
    ([[M(0, [1], [-3])]], "H1", None, "unknown item -3"),
    ([[M(0, [1], [0]), M(2, [1], [2])]], "H1", 1, "round 1, message 1: node 1 is in two"),
    ([[M(0, [1, 2], [0])]], "H1", 1, "one receiver"),
    ([[M(0, [1], [0, 1])]], "F1", 1, "more than p=1"),
    ([[M(0, [1], [1])]], "H1", 1, "node 0 sends item 1 it does not hold"),
    ([[M(0, [0], [0])]], "H1", 1, "sends to itself"),
    ([[M(0, [], [0])]], "port", 1, "no receiver"),
    ([[M(0, [1], [0, 0])]], "F1", None, "item 0 listed twice"),
    ([[M(0, [1], [0]), M(0, [2], [0])]], "port", 1, "node 0 sends twice"),
    ([[M(0, [1], [0]), M(2, [1], [2])]], "port", 1, "node 1 receives twice"),
    ([[M(0, [1], [0]), M(2, [0], [2])]], "F1", 1, "two calls"),
    ([[M(0, [1], ["q"])]], "H1", 1, "'q' outside polling"),
])
def test_rules(rounds, model, p, text):
    v = validate(S(rounds, model=model, p=p))
    assert not v.valid and text in v.error
    with pytest.raises(ScheduleError, match=text.split(": ", 1)[-1]):
        check(S(rounds, model=model, p=p))


def test_a_node_whose_caller_is_node_0_cannot_call_another_in_f1():
    # node 1 hears node 0 and calls node 2: two calls, and its partner's id
    # is 0, which must count as a partner like any other
    rounds = [[M(0, [1], [0]), M(1, [2], [1])]]
    v = validate(S(rounds, model="F1", p=1))
    assert not v.valid and "round 1, message 1: node 1 is in two calls" in v.error
    assert validate(S([[M(0, [1], [0]), M(1, [0], [1])]], model="F1", p=1, n=2)).valid


@pytest.mark.parametrize("primitive", ["gather", "broadcast", "gossip"])
def test_p_bounds_every_primitive_but_polling(primitive):
    # round 2: node 1 forwards two items with p=1
    rounds = [[M(0, [1], [0])], [M(1, [2], [0, 1])]]
    root = None if primitive == "gossip" else 0
    v = validate(S(rounds, model="F1", p=1, primitive=primitive, root=root))
    assert not v.valid and "round 2, message 0: message carries 2 items, more than p=1" \
        in v.error
    roomy = validate(S(rounds, model="F1", p=2, primitive=primitive, root=root))
    assert "more than p" not in (roomy.error or "")


def test_items_usable_next_round_only():
    s = S([[M(0, [1], [0]), M(1, [2], [0])]], model="port", p=1)
    assert "node 1 sends item 0 it does not hold" in validate(s).error


def test_edges_and_star_models():
    path = topology("path", n=3)
    v = validate(S([[M(0, [2], [0])]], model="Hstar", topo=path))
    assert "no edge 0-2 in topology path" in v.error
    v = validate(S([[M(0, [1], [0]), M(1, [0], [1])]], model="Hstar", topo=path))
    assert "edge 0-1 carries two messages" in v.error
    # Fstar: both directions of an edge in one round are fine, and so is a
    # node using all its edges at once
    rounds = [[M(0, [1], [0]), M(1, [0], [1]), M(1, [2], [1]), M(2, [1], [2])],
              [M(1, [0], [2]), M(1, [2], [0])]]
    assert validate(S(rounds, model="Fstar", topo=path)).valid
    assert "carries two" in validate(S(rounds[:1] * 1 + [[M(1, [0], [2]), M(1, [0], [1])]],
                                       model="Fstar", topo=path, p=None)).error


def test_incomplete():
    v = validate(S([[M(0, [1], [0])]]))
    assert not v.valid and v.error.startswith("round 1, message -: incomplete gossip")


def test_primitives_and_polling():
    b = S([[M(0, [1], [0])], [M(1, [2], [0])]], primitive="broadcast", root=0)
    assert validate(b).valid
    g = S([[M(1, [0], [1])], [M(2, [0], [2])]], primitive="gather", root=0)
    assert validate(g).valid
    poll = [[M(0, [1], ["q"])], [M(1, [2], ["q", 1])], [M(2, [0], ["q", 1, 2])]]
    v = validate(S(poll, primitive="polling", root=0, p=1))
    assert v.valid and v.R == 3 and v.S == 3
    early = [[M(0, [1], ["q"])], [M(2, [0], [2])]]
    assert "node 2 speaks before it heard" in validate(S(early, primitive="polling", root=0)).error


def test_sessions_items():
    # h = 2 items per node: node v owns v and v + n
    s = S([[M(0, [1], [0])], [M(1, [0], [1])], [M(0, [1], [2])], [M(1, [0], [3])]], n=2)
    v = validate(s)
    assert v.valid and v.items_per_node == 2 and v.R == 4


def test_calls_metric():
    v = validate(min_calls(10))
    assert v.valid and v.calls == 16
    assert validate(recursive_doubling(8)).calls == 12


def test_large_one_factor_is_fast():
    import time
    s = one_factor(512)
    t = time.perf_counter()
    v = validate(s)
    assert v.valid and v.R == 1022
    assert time.perf_counter() - t < 5


# ------------------------------------------------------------------ mutants
def _rows(s):
    return [[m for m in r] for r in s.rounds]


BASES = {
    "one-factor": lambda: one_factor(6),
    "one-factor-odd": lambda: one_factor(5),
    "cyclic-shift": lambda: cyclic_shift(5),
    "recursive-doubling": lambda: recursive_doubling(8),
    "recursive-doubling-hypercube": lambda: recursive_doubling(8, "hypercube"),
    "min-calls": lambda: min_calls(9),
}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(sorted(BASES)),
       kind=st.sampled_from(["drop", "unheld", "double-book", "exceed-p", "break-edge"]),
       data=st.data())
def test_mutants_are_refused(base, kind, data):
    s = BASES[base]()
    assert validate(s).valid
    mutant = plant(s, kind, data)
    if mutant is None:
        return
    v = validate(mutant)
    assert not v.valid, (base, kind)
    assert v.error.startswith("round ")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 9), data=st.data())
def test_polling_early_speaker_refused(n, data):
    # a valid polling schedule: q travels a path 0 -> 1 -> ... -> n-1, the
    # answers come back along it; any node that speaks earlier is refused
    down = [[M(v, [v + 1], ["q"])] for v in range(n - 1)]
    up = [[M(v, [v - 1], ["q"] + list(range(v, n)))] for v in range(n - 1, 0, -1)]
    base = down + up
    assert validate(S(base, n=n, p=None, primitive="polling", root=0)).valid
    r = data.draw(st.integers(0, n - 3))
    speaker = data.draw(st.integers(r + 2, n - 1))  # has not heard q by round r+1
    early = [list(x) for x in base]
    early[r] = early[r] + [M(speaker, [0], [speaker])]
    v = validate(S(early, n=n, p=None, primitive="polling", root=0))
    assert not v.valid
    assert f"node {speaker} speaks before" in v.error or "two messages" in v.error


# -- behaviours a mutation of validate.py changed unnoticed -------------------

@pytest.mark.parametrize("rounds,model,n,text", [
    # the message index is its place in the round, the node another number
    ([[M(2, [3], [2]), M(0, [3], [0])]], "H1", 4, "round 1, message 1: node 3 is in two "
     "messages this round (H1)"),
    ([[M(2, [0], [2]), M(2, [1], [2])]], "port", 3, "round 1, message 1: node 2 sends twice "
     "this round (port)"),
    ([[M(0, [2], [0]), M(2, [0], [2])]], "Hstar", 3, "round 1, message 1: edge 0-2 carries two "
     "messages this round (Hstar)"),
    ([[M(0, [3], [0])]], "H1", 3, "round 1, message 0: unknown node 3 (nodes are 0..2)"),
    ([[M(3, [0], [0])]], "H1", 3, "round 1, message 0: unknown node 3 (nodes are 0..2)"),
    ([[M(0, [2], [0]), M(1, [2], [1])]], "port", 3, "round 1, message 1: node 2 receives twice "
     "this round (port)"),
    # a repeated item after the first message's
    ([[M(0, [1], [0]), M(2, [0], [2, 2])]], "port", 3, "round 1, message 1: item 2 listed twice"),
    # two broken messages: the earlier one is named, whichever rule is checked first
    ([[M(0, [1], [0, 0]), M(2, [7], [2])]], "port", 3, "round 1, message 0: item 0 listed twice"),
])
def test_the_error_names_the_right_message(rounds, model, n, text):
    assert validate(S(rounds, model=model, p=None, n=n)).error == text


def test_metrics_of_a_three_node_schedule():
    s = S([[M(0, [1], [0])], [M(1, [2], [0, 1])], [M(2, [0], [1, 2])], [M(2, [1], [2])]],
          model="F1", p=None, n=3)
    v = validate(s, knowledge=True)
    assert v.valid and (v.R, v.S, v.messages, v.item_transfers) == (4, 6, 4, 6)
    assert v.busy == [2, 2, 2, 2] and v.efficiency == 8 / 12
    assert v.knowledge == [3, 4, 6, 8, 9]
    assert validate(s).knowledge == []


def test_incomplete_counts_every_missing_node_item_pair():
    v = validate(S([[M(0, [1], [0])]], model="F1", p=1, n=3))
    assert v.error == ("round 1, message -: incomplete gossip: node 0 lacks item 1 at the end "
                       "(5 node-item pairs missing)")


def test_polling_items_beyond_the_nodes_are_unknown():
    s = S([[M(1, [0], [3])]], model="F1", p=None, n=3, primitive="polling", root=0)
    assert "unknown item 3 (polling has items 0..2 and 'q')" in validate(s).error


def test_a_knowledge_matrix_over_the_limit_is_refused_at_its_largest_item(monkeypatch):
    import importlib

    mod = importlib.import_module("pipegossip.model.schedules.validate")

    # n * n * h bits: 3 * 3 * 3 = 27 with items up to 8 (h = 3)
    s = S([[M(0, [1], [0])], [M(1, [2], [0, 7])]], model="F1", p=None, n=3)
    monkeypatch.setattr(mod, "_MAX_BITS", 27)
    assert "too many items" not in (validate(s).error or "")
    monkeypatch.setattr(mod, "_MAX_BITS", 26)
    v = validate(s)
    assert v.error == "round 2, message 0: unknown item 7 (too many items per node)"
    assert (v.valid, v.messages, v.R) == (False, 0, 0)


def test_empty_rounds_in_the_metrics_and_the_knowledge():
    # an empty round inside counts (busy 0, knowledge unchanged); one at the
    # end does not (R stops at the last busy round)
    s = S([[M(0, [1], [0])], [], [M(1, [2], [0, 1])], [M(2, [0], [1, 2])], [M(2, [1], [2])], []],
          model="F1", p=None, n=3)
    v = validate(s, knowledge=True)
    assert v.valid and (v.R, v.S, v.calls) == (5, 6, 4)
    assert v.busy == [2, 0, 2, 2, 2] and v.knowledge == [3, 4, 4, 6, 8, 9]


def test_multicast_reaches_every_listed_receiver():
    s = S([[M(0, [1, 2], [0])], [M(1, [0, 2], [1])], [M(2, [0, 1], [2])]], model="port", p=1, n=3)
    v = validate(s)
    assert v.valid, v.error
    assert (v.R, v.messages, v.transfers, v.item_transfers) == (3, 3, 6, 6)
    # two messages in a round, the first a multicast: its last receiver holds
    # the item next round (and nobody else got it)
    s = S([[M(0, [1, 2], [0]), M(3, [4], [3])], [M(2, [3], [0]), M(4, [0], [0])]],
          model="port", p=1, n=5)
    assert validate(s).error == "round 2, message 1: node 4 sends item 0 it does not hold"


def test_more_than_64_items_take_a_second_knowledge_word():
    for n in (65, 70, 129):
        assert validate(cyclic_shift(n)).valid, n


def test_an_invalid_schedule_has_no_metrics():
    v = validate(S([[M(0, [5], [0])]]))
    assert v.to_json() == {"valid": False, "error": v.error, "n": 3, "R": 0, "messages": 0,
                           "calls": None, "transfers": 0, "item_transfers": 0, "S": 0,
                           "efficiency": 0.0, "busy": []}


def test_missing_pairs_of_items_beyond_64_are_counted():
    s = S([[M(66, [0], [66])]], model="F1", p=1, n=70, primitive="broadcast", root=66)
    assert validate(s).error == ("round 1, message -: incomplete broadcast: node 1 lacks item 66 "
                                 "at the end (68 node-item pairs missing)")


def test_the_first_incomplete_node_is_named():
    # nodes 0 and 1 end complete, node 2 lacks items 0 and 1
    s = S([[M(2, [0], [2])], [M(0, [1], [0, 2])], [M(1, [0], [1])]], model="F1", p=None, n=3)
    assert validate(s).error == ("round 3, message -: incomplete gossip: node 2 lacks item 0 at "
                                 "the end (2 node-item pairs missing)")


def _broadcast_cases():
    """Broadcast schedules of a path of 130 nodes (three words of bits a node when every
    item is tracked): valid, with h = 2 root items, with faults of each kind."""
    n, topo = 130, topology("path", n=130)

    def chain(stop=n, items=(5,), extra=()):  # root 5: both ways along the path
        rounds = [[M(5, [4], items)]]
        for t in range(stop):
            down, up = 4 - t, 5 + t
            rnd = ([M(down, [down - 1], items)] if down > 0 else []) + (
                [M(up, [up + 1], items)] if up + 1 < n else [])
            if rnd:
                rounds.append(rnd)
        return S(rounds + list(extra), model="F1", p=None, topo=topo, primitive="broadcast",
                 root=5)
    return {
        "valid": chain(),
        "two root items": chain(items=(5, 5 + n)),
        "incomplete": chain(stop=100),
        "not held": chain(extra=[[M(70, [71], [71])]]),
        "someone else's item": chain(extra=[[M(71, [72], [71])]]),
        "question": chain(extra=[[M(70, [71], ["q"])]]),
        "two calls": chain(extra=[[M(70, [71], [5]), M(72, [71], [5])]]),
    }


@pytest.mark.parametrize("case", list(_broadcast_cases()))
def test_broadcast_tracks_only_its_items_with_the_same_verdict_and_metrics(monkeypatch, case):
    # a broadcast's knowledge pass keeps a bit for the carried and the root's items only
    # (Table 4's butterfly_14: 229,376 nodes); verdict, error and every metric (the
    # knowledge counts included) equal those of the pass that tracks every item
    import importlib
    mod = importlib.import_module("pipegossip.model.schedules.validate")
    s = _broadcast_cases()[case]
    fast = validate(s, knowledge=True)
    monkeypatch.setattr(mod, "_tracked", lambda s, h: None)
    full = validate(s, knowledge=True)
    assert (fast.to_json(), fast.knowledge) == (full.to_json(), full.knowledge)
    assert fast.valid == (case in ("valid", "two root items", "someone else's item"))
    if case == "valid":
        assert fast.knowledge[0] == 130 and fast.knowledge[-1] == 2 * 130 - 1


def test_broadcast_bits_scale_with_its_items_not_with_n(monkeypatch):
    import importlib
    mod = importlib.import_module("pipegossip.model.schedules.validate")
    s = _broadcast_cases()["valid"]
    monkeypatch.setattr(mod, "_MAX_BITS", 130)  # one bit a node: 130 x 130 would not fit
    assert validate(s).valid
    g = S([[M(0, [1], [0])], [M(1, [0], [1])]], model="F1", p=None, n=2)
    monkeypatch.setattr(mod, "_MAX_BITS", 3)  # gossip keeps n x n bits
    assert "too many items per node" in validate(g).error


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(sorted(BASES)),
       kind=st.sampled_from(["none", "drop", "unheld", "double-book", "repeat", "empty"]),
       chunk=st.integers(1, 6), data=st.data())
def test_items_in_chunks_give_the_verdict_and_metrics_of_one_pass(base, kind, chunk, data):
    # a gossip on 22,528 nodes carries 507 million item ids: the static pass and each
    # round go through them in chunks of _CHUNK; any chunk size gives the same first
    # error (round, message, rule) and the same metrics
    import importlib
    s = BASES[base]()
    if kind == "repeat":  # an item listed twice, after higher ones (not rising)
        rounds = _rows(s)
        r = data.draw(st.sampled_from([i for i, x in enumerate(rounds) if x]))
        j = data.draw(st.integers(0, len(rounds[r]) - 1))
        m = rounds[r][j]
        rounds[r][j] = Message(m.src, m.dst, m.items + m.items[:1])
        s = rebuild(s, rounds)
    elif kind == "empty":  # empty messages among the others (an empty round too)
        rounds = _rows(s)
        r = data.draw(st.integers(0, len(rounds) - 1))
        rounds.insert(r, [])
        for rr in rounds:
            if rr:
                rr.insert(data.draw(st.integers(0, len(rr))),
                          Message(rr[0].src, rr[0].dst, ()))
                break
        s = rebuild(s, rounds)
    elif kind != "none":
        s = plant(s, kind, data) or s
    whole = validate(s, knowledge=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(importlib.import_module("pipegossip.model.schedules.validate_static"),
                   "_CHUNK", chunk)  # _spans and the static pass read it there
        parts = validate(s, knowledge=True)
    assert (parts.to_json(), parts.knowledge) == (whole.to_json(), whole.knowledge)
    if kind == "repeat":
        assert "listed twice" in parts.error


def test_the_validator_holds_no_array_as_long_as_the_item_ids(monkeypatch):
    # a 22,528-node gossip carries 507 million item ids (4 GB): the validator's own
    # arrays must stay at chunk size, never one more int64 (or bool) per item
    import importlib
    import tracemalloc
    mod = importlib.import_module("pipegossip.model.schedules.validate")
    s = recursive_doubling(512)
    ids = s.items.nbytes  # 261,632 ids, 2 MB
    monkeypatch.setattr(importlib.import_module("pipegossip.model.schedules.validate_static"),
                        "_CHUNK", 4096)
    tracemalloc.start()
    try:
        assert mod.items_per_node(s) == 1
        assert tracemalloc.get_traced_memory()[1] < ids / 16
        v = validate(s)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert v.valid and v.R == 9
    assert peak < ids / 4, peak
