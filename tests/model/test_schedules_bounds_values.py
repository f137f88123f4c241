"""Every bound's value, kind and choice of source at the edges of its cases.

The values are the papers' closed forms worked by hand (the comment beside
each says how); ``bounds_for`` is pinned per model, topology, primitive and
``h``, so a bound listed for the wrong schedule, or left out, fails here.
"""

from __future__ import annotations

import pytest

from pipegossip.model.schedules import bounds as b
from pipegossip.model.schedules.ir import Message, Schedule, complete
from pipegossip.model.schedules.topologies import topology


def test_bound_text_says_the_direction_and_rounds_fractions():
    assert str(b.Bound("R", 5, "x")) == "R >= 5 (x)"
    assert str(b.Bound("calls", 7.0, "y", "upper")) == "calls <= 7 (y)"
    assert str(b.Bound("S", 10 / 3, "z")) == "S >= 3.33 (z)"


@pytest.mark.parametrize("n, h, value", [(4, 1, 6), (5, 1, 10), (4, 3, 18), (5, 2, 20),
                                         (2, 1, 2), (3, 1, 6)])
def test_h1_gossip_rounds(n, h, value):
    # 2h(n-1) for even n, 2hn for odd n
    assert b.h1_gossip_rounds(n, h).value == value


def test_port_gossip_rounds():
    assert [b.port_gossip_rounds(n, h).value for n, h in ((5, 3), (2, 1), (8, 1))] == [12, 1, 7]


@pytest.mark.parametrize("n, value", [(2, 1), (3, 3), (4, 2), (5, 4), (8, 3), (9, 5), (16, 4),
                                      (17, 6)])
def test_telephone_gossip_rounds(n, value):
    # ceil(log2 n) + (n mod 2)
    assert b.telephone_gossip_rounds(n).value == value


@pytest.mark.parametrize("n, value", [(2, 1), (3, 3), (4, 4), (5, 6), (10, 16)])
def test_telephone_min_calls(n, value):
    assert b.telephone_min_calls(n).value == value


@pytest.mark.parametrize("n, p, split", [(10, 3, (2, 4)), (11, 3, (3, 2)), (5, 4, (0, 5)),
                                         (12, 4, (2, 4)), (13, 4, (2, 5)), (6, 2, (2, 2))])
def test_packet_split_is_n_equals_hp_plus_k(n, p, split):
    # 2 <= k <= p+1 and n = hp + k
    assert b.packet_split(n, p) == split


# (n, p, lower, which lower bound, upper): k from n = hp + k;
# (1) = n^2/(2p) + (p-2)n/(2p), (2) = n^2/(2p) + (1 - k/(2p) - 1/(2(k-1)))n,
# upper = floor((2) + p). Ties keep the earlier source: (1) over (2), and
# (1)/(2) over 2n-4.
PACKET = [
    (6, 3, 8, "(2)", 10),     # k=3: (1) 7, (2) 6 + 1.5 = 7.5 -> 8, 2n-4 = 8 ties
    (8, 3, 12, "(1)", 15),    # k=2: (1) = (2) = 12 = 2n-4
    (5, 3, 6, "2n-4", 8),     # k=2: (1) = (2) = 5 < 6
    (9, 3, 16, "(2)", 18),    # k=3: (1) 15, (2) 13.5 + 2.25 = 15.75
    (12, 4, 22, "(2)", 26),   # k=4: (1) 21, (2) 18 + 4 = 22
    (11, 4, 20, "(2)", 23),   # k=3: (1) 17.875, (2) 15.125 + 4.125 = 19.25
    (10, 2, 25, "(1)", 27),   # k=2: (1) = (2) = 25
    (13, 4, 25, "(1)", 28),   # k=5: (1) = (2) = 24.375
    (12, 6, 20, "2n-4", 22),  # k=6: (2) 16.8 < 20
    (7, 4, 10, "2n-4", 12),   # k=3: (2) 8.75 < 10
]


@pytest.mark.parametrize("n, p, lower, which, upper", PACKET)
def test_packet_calls_lower_and_upper(n, p, lower, which, upper):
    lo, up = b.packet_calls_lower(n, p), b.packet_calls_upper(n, p)
    assert (lo.value, lo.kind, up.value, up.kind) == (lower, "lower", upper, "upper")
    assert (f"calls bound {which}" if which != "2n-4" else "2n-4: no gossip") in lo.source


@pytest.mark.parametrize("n", [3, 4, 5, 9])
def test_packet_calls_lower_for_p_1_is_every_pair_once(n):
    # (1) with p = 1: n^2/2 - n/2
    assert b.packet_calls_lower(n, 1).value == max(n * (n - 1) // 2, 2 * n - 4)


# name, n, p, rounds: path p>1: n (even), n-1 (odd); path p=1: 3n/2-1, 3(n-1)/2;
# cycle p>1: n/2+1, (n+1)/2+1; cycle p=1: n-1; the triangle 2 for every p
HSTAR = [("path", 6, 2, 6), ("path", 7, 2, 6), ("path", 6, None, 6), ("path", 6, 1, 8),
         ("path", 7, 1, 9), ("cycle", 8, 2, 5), ("cycle", 9, 2, 6), ("cycle", 9, None, 6),
         ("cycle", 8, 1, 7), ("cycle", 9, 1, 8), ("cycle", 3, 1, 2), ("cycle", 3, 5, 2),
         ("cycle", 4, 2, 3), ("path", 2, 1, 2)]


@pytest.mark.parametrize("name, n, p, rounds", HSTAR)
def test_hstar_rounds_table_1(name, n, p, rounds):
    bound = b.hstar_rounds(name, n, p)
    assert (bound.metric, bound.value, bound.kind) == ("R", rounds, "lower")
    if n > 3:
        assert f"p{'=1' if p == 1 else '>1'}" in bound.source


def test_hstar_rounds_only_for_paths_and_cycles():
    assert b.hstar_rounds("mesh", 6, 2) is None and b.hstar_rounds("complete", 6, 1) is None


@pytest.mark.parametrize("n, rounds", [(2, 2), (3, 3), (4, 4), (5, 4), (6, 5), (7, 5), (8, 6),
                                       (9, 6), (11, 6), (12, 7), (16, 8)])
def test_polling_rounds_proposition_2(n, rounds):
    # k = ceil(log2 N): 2k on 2^k nodes, 2k-1 from 3*2^(k-2) on, else 2k-2
    assert b.polling_rounds(n).value == rounds


@pytest.mark.parametrize("n", [1, 2, 4, 6, 12, 24])
def test_polling_messages_only_for_powers_of_two_from_8(n):
    assert b.polling_messages(n) is None


@pytest.mark.parametrize("k, want", [
    (3, [("messages", 9, "lower")]),
    (4, [("messages", 18, "upper"), ("messages", 18, "lower")]),   # 16 + 3 - 1; SAT 18
    (5, [("messages", 37, "upper")]),                              # 32 + 6 - 1
    (6, [("messages", 75, "upper")]),                              # Corollary 6 false here
    (7, [("messages", 151, "upper")]),                             # odd k: no Corollary 6
    (9, [("messages", 607, "upper")]),                             # odd k from 8 on neither
    (8, [("messages", 303, "upper"), ("messages", 302, "lower")]),  # 256+42.67+4-1.33
    (10, [("messages", 1215, "upper"), ("messages", 1202, "lower")])])
def test_polling_hypercube_messages(k, want):
    assert [(x.metric, x.value, x.kind) for x in b.polling_hypercube_messages(k)] == want


@pytest.mark.parametrize("n, h, delta, steps", [(8, 1, 1, 7), (8, 2, 1, 14), (8, 1, 0, 7),
                                                (8, 1, 3, 3), (9, 2, 4, 4), (9, 1, 4, 2),
                                                (9, 1, 2, 4)])
def test_linear_cost_steps(n, h, delta, steps):
    # h(n-1) with one receiving edge, ceil(h(n-1)/delta) with delta of them
    bound = b.linear_cost_steps(n, h, delta)
    assert (bound.metric, bound.value) == ("S", steps)
    assert ("all-port" in bound.source) == (delta > 1)


def _one_message(topo, model, p, primitive="gossip", root=None):
    return Schedule.from_rounds([[Message(0, (1,), (0,))]], topology=topo, model=model, p=p,
                                primitive=primitive, root=root)


# topology, model, p, primitive, root, h -> the bounds listed (without sources)
LISTED = [
    (complete(6), "H1", 1, "gossip", None, 1, ["R >= 10", "S >= 5"]),
    (complete(7), "H1", 1, "gossip", None, 2, ["R >= 28", "S >= 12"]),
    (complete(6), "H1", 2, "gossip", None, 1, ["S >= 5"]),
    (complete(6), "port", 1, "gossip", None, 1, ["R >= 5", "S >= 5"]),
    (complete(6), "port", 1, "gossip", None, 3, ["R >= 15", "S >= 15"]),
    (topology("cycle", n=6), "port", 1, "gossip", None, 1, ["S >= 5"]),
    (complete(9), "F1", None, "gossip", None, 1, ["R >= 5", "calls >= 14", "S >= 8"]),
    (complete(9), "F1", None, "gossip", None, 2, ["S >= 16"]),
    (complete(9), "F1", 3, "gossip", None, 1, ["R >= 5", "calls >= 16", "calls <= 18", "S >= 8"]),
    (complete(9), "F1", 3, "gossip", None, 2, ["S >= 16"]),
    (topology("path", n=7), "Hstar", 2, "gossip", None, 1, ["R >= 6", "R >= 6", "S >= 6"]),
    (topology("path", n=7), "Hstar", 2, "gossip", None, 2, ["R >= 6", "S >= 12"]),
    (topology("cycle", n=8), "Hstar", 1, "gossip", None, 1, ["R >= 7", "R >= 4", "S >= 4"]),
    (topology("mesh", a=2, b=3), "Hstar", 1, "gossip", None, 1, ["R >= 3", "S >= 3"]),
    (topology("cycle", n=8), "Fstar", 1, "gossip", None, 1, ["R >= 4", "S >= 4"]),
    (complete(8), "H1", None, "polling", 1, 1, ["R >= 6", "messages >= 9"]),
    (complete(12), "H1", None, "polling", 1, 1, ["R >= 7"]),
    (topology("hypercube", k=4), "H1", None, "polling", 1, 1,
     ["R >= 8", "messages <= 18", "messages >= 18"]),
    (topology("cycle", n=8), "H1", None, "polling", 1, 1, []),
    (complete(8), "F1", None, "polling", 1, 1, []),
    (topology("path", n=7), "F1", None, "reduce", 1, 1, ["R >= 5", "R >= 3"]),
    (topology("path", n=7), "Hstar", None, "allreduce", None, 1, ["R >= 6"]),
    (topology("path", n=7), "F1", 1, "gather", 1, 1, []),
    (complete(6), "H1", 1, "broadcast", 0, 1, []),       # the polling bounds are polling's
    (topology("hypercube", k=3), "H1", 1, "gather", 0, 1, []),
]


@pytest.mark.parametrize("topo, model, p, primitive, root, h, want", LISTED)
def test_bounds_for_lists_what_holds_for_the_model(topo, model, p, primitive, root, h, want):
    s = _one_message(topo, model, p, primitive, root)
    assert [str(x).split(" (")[0] for x in b.bounds_for(s, h)] == want


def test_round_bound_is_the_largest_lower_r_bound():
    cycle = _one_message(topology("cycle", n=8), "Hstar", 1)
    assert b.round_bound(cycle).value == 7 and "Table 1" in b.round_bound(cycle).source
    path = _one_message(topology("path", n=7), "F1", None, "reduce", 1)
    assert b.round_bound(path).value == 5
    assert b.round_bound(_one_message(complete(6), "H1", 2)) is None


def test_one_item_per_node_is_the_default():
    assert (b.h1_gossip_rounds(5).value, b.port_gossip_rounds(5).value) == (10, 4)
    assert (b.linear_cost_steps(8).value, b.linear_cost_steps(8, 1).value) == (7, 7)
    ring = _one_message(topology("cycle", n=8), "Fstar", 1)  # max(diameter 4, ceil(7h/2))
    assert (b.allport_gossip_rounds(ring).value, b.allport_gossip_rounds(ring, 2).value) == (4, 7)
    assert [str(x).split(" (")[0] for x in b.bounds_for(ring)] == ["R >= 4", "S >= 4"]
    many = _one_message(complete(6), "H1", 1)
    assert b.round_bound(many).value == 10 and b.round_bound(many, 2).value == 20
