"""The colouring heuristic's parts against their definitions (Beier and Sibeyn,
sections 6 and 8) on small graphs: fast, for `dev.py mutate`."""

import itertools

import numpy as np
import pytest

from pipegossip.model.algorithms import coloring as col
from pipegossip.model.algorithms.coloring import (color_schedule, matchings, parse_colors,
                                                   search_colors, sequence_schedule)
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate


@pytest.mark.parametrize("pancake", [False, True])
def test_permutation_matchings_by_definition(pancake):
    k = 4
    perms = list(itertools.permutations(range(k)))
    mates = col._perm_matchings(k, pancake)
    assert len(mates) == k - 1
    for c, mate in enumerate(mates):
        for i, p in enumerate(perms):
            q = list(p)
            if pancake:
                q[:c + 2] = q[:c + 2][::-1]  # reverse the first c+2 entries
            else:
                q[0], q[c + 1] = q[c + 1], q[0]  # swap entries 0 and c+1
            assert perms[mate[i]] == tuple(q), (c, p)


def test_hypercube_matchings_are_its_dimensions():
    mates = matchings(topology("hypercube", k=3))
    assert [m.tolist() for m in mates] == [[v ^ (1 << c) for v in range(8)] for c in range(3)]


def _cube_edges(k, butterfly):
    """Edge classes of a ccc / butterfly node (i, j) = i*k + j."""
    cyc, cross = set(), set()
    for i in range(1 << k):
        for j in range(k):
            a = i * k + j
            cyc.add(frozenset((a, i * k + (j + 1) % k)))
            cross.add(frozenset((a, (i ^ (1 << j)) * k + ((j + 1) % k if butterfly else j))))
    return cyc, cross


@pytest.mark.parametrize("name,k", [("ccc", 4), ("ccc", 3), ("ccc", 5), ("butterfly", 4),
                                    ("butterfly", 3), ("butterfly", 5)])
def test_cube_matchings_follow_section_8(name, k):
    mates = matchings(topology(name, k=k))
    n = k << k
    cyc, cross = _cube_edges(k, name == "butterfly")
    sets = []
    for m in mates:
        assert (m >= 0).all() and (m[m] == np.arange(n)).all()  # perfect matchings
        sets.append({frozenset((v, int(m[v]))) for v in range(n)})
    assert set().union(*sets) == cyc | cross and sum(map(len, sets)) == len(cyc | cross)
    assert len(mates) == (3 if name == "ccc" else 4)
    if k % 2 == 0:
        # M_0, M_1: the cycle edges leaving even / odd levels; the rest cross edges
        for c in (0, 1):
            assert sets[c] == {frozenset((i * k + j, i * k + (j + 1) % k))
                               for i in range(1 << k) for j in range(c, k, 2)}
        if name == "butterfly":
            # M_2 / M_3: the cross edges leaving even / odd levels (level j to j+1)
            def leaving(e):
                a, b = sorted(e, key=lambda v: v % k)
                return a % k if b % k == (a % k + 1) % k else b % k
            for c in (2, 3):
                assert sets[c] == {e for e in cross if leaving(e) % 2 == c - 2}
    elif name == "ccc":
        # odd k: M_0 adds the cross edges at level k-1, M_1 those at level 0, M_2
        # the other cross edges and the cycle edges (i, k-1) - (i, 0)
        level = lambda e: min(e) % k  # noqa: E731 (a cross edge joins equal levels)
        assert {level(e) for e in sets[0] & cross} == {k - 1}
        assert {level(e) for e in sets[1] & cross} == {0}
        assert {level(e) for e in sets[2] & cross} == set(range(1, k - 1))
        assert sets[2] & cyc == {frozenset((i * k + k - 1, i * k)) for i in range(1 << k)}


def test_two_colour_alternates_along_cycles():
    # a 6-cycle 0..5 with edge (0, 1) fixed to colour 2: colours alternate
    edges = [(v, (v + 1) % 6) for v in range(6)]
    a, b = col._two_colour(6, edges, {(0, 1): 2})
    assert a == [(0, 1), (2, 3), (4, 5)] and b == [(1, 2), (3, 4), (5, 0)]
    a, b = col._two_colour(6, edges, {(1, 2): 3})
    assert a == [(0, 1), (2, 3), (4, 5)] and b == [(1, 2), (3, 4), (5, 0)]


def test_greedy_colouring_classes_are_maximal_matchings_covering_each_edge_once():
    topo = topology("explicit", n=6, edges=[[0, 1], [0, 2], [1, 2], [2, 3], [3, 4], [4, 5],
                                            [2, 5], [1, 4]])
    mates = matchings(topo)
    edges = {tuple(e) for e in topo.edges.tolist()}
    seen, rest = [], set(edges)
    for m in mates:
        v = np.flatnonzero(m >= 0)
        assert (m[m[v]] == v).all()
        pairs = {(min(a, int(m[a])), max(a, int(m[a]))) for a in v}
        assert pairs <= rest  # each edge in exactly one class
        # maximal among the edges no earlier class took (not among all edges:
        # the completion loop of _greedy_colouring never adds one, see the report)
        assert all(m[a] >= 0 or m[b] >= 0 for a, b in rest)
        rest -= pairs
        seen.append(pairs)
    assert not rest and set().union(*seen) == edges
    # class by class, the edges left in order, each taken when both ends are free
    left, want = sorted(edges), []
    while left:
        cls, used = set(), set()
        for a, b in left:
            if a not in used and b not in used:
                cls.add((a, b))
                used |= {a, b}
        want.append(cls)
        left = [e for e in left if e not in cls]
    assert seen == want and len(want) == 4  # node 2 has degree 4


def test_complete_graph_needs_explicit_edges():
    with pytest.raises(ValueError, match="explicit edge set"):
        matchings(topology("complete", n=4))


def test_pairs_to_mate_refuses_non_matchings():
    assert col._pairs_to_mate(4, [(0, 1), (2, 3)]).tolist() == [1, 0, 3, 2]
    for bad in ([(0, 1), (1, 2)], [(0, 1), (2, 0)], [(2, 2)], [(0, 1), (2, 1)]):
        with pytest.raises(AssertionError, match="not a matching"):
            col._pairs_to_mate(4, bad)


def test_parse_colors():
    assert parse_colors("0120", 3) == [0, 1, 2, 0]
    assert parse_colors("2", 3) == [2]
    for bad in ("", "-1", "1 2", "３"):
        with pytest.raises(ValueError):
            parse_colors(bad, 3)
    with pytest.raises(ValueError, match="colour 3 is not a matching here \\(0..2\\)"):
        parse_colors("03", 3)


def _simulate(n, period, rounds):
    """Every round: the matched pairs exchange everything new (the definition)."""
    K = [{v} for v in range(n)]
    out = []
    for t in range(rounds):
        m = period[t % len(period)]
        msgs = {}
        for a in range(n):
            b = int(m[a])
            if b >= 0 and K[a] - K[b]:
                msgs[a, b] = sorted(K[a] - K[b])
        for (a, b), items in msgs.items():
            K[b] = K[b] | set(items)
        out.append(msgs)
        if all(len(k) == n for k in K):
            break
    return out, all(len(k) == n for k in K)


@pytest.mark.parametrize("name,params,colors", [("hypercube", {"k": 3}, "012"),
                                                ("pancake", {"k": 4}, "02102"),
                                                ("ccc", {"k": 3}, "012"),
                                                ("butterfly", {"k": 3}, "012320")])
def test_color_schedule_is_the_exchange_of_everything_new(name, params, colors):
    topo = topology(name, **params)
    mates = matchings(topo)
    s = color_schedule(topo, colors)
    want, done = _simulate(topo.n, [mates[int(c)] for c in colors], 10 * topo.n)
    assert done
    got = []
    for r in s.rounds:
        got.append({(m.src, m.dst[0]): list(m.items) for m in r})
    assert got == want
    assert s.model == "F1" and s.origin == {"algorithm": "coloring",
                                            "source": f"Beier and Sibeyn colouring heuristic: "
                                            f"colours {colors}"}
    assert validate(s).valid


ORIGIN = {"algorithm": "coloring", "source": "test"}


def test_sequence_schedule_round_limit():
    topo = topology("hypercube", k=3)
    mates = matchings(topo)
    assert validate(sequence_schedule(topo, mates, origin=ORIGIN, max_rounds=3)).R == 3
    with pytest.raises(ValueError, match="the sequence do not complete gossip within 2 rounds"):
        sequence_schedule(topo, mates, origin=ORIGIN, max_rounds=2)
    # the default limit is 4 * len(period) + n: dimension 0 alone never completes
    with pytest.raises(ValueError, match="within 12 rounds"):
        sequence_schedule(topo, mates[:1], origin=ORIGIN)
    with pytest.raises(ValueError, match=r'colours "00" do not complete gossip within 5 rounds'):
        color_schedule(topo, "00", max_rounds=5)


def test_sequence_schedule_with_more_than_64_nodes():
    # 2 x 40 torus-like path pairs: packed bits span several bytes and words
    topo = topology("hypercube", k=7)
    s = color_schedule(topo, "0123456")
    v = validate(s)
    assert v.valid and v.R == 7 and v.S == 127


def test_search_hypercube_finds_the_dimensions():
    found = search_colors(topology("hypercube", k=3), max_rounds=5)
    assert sorted(found) == ["0", "1", "2"]
    assert found == "012"  # ties go to the lower colour


def test_search_limits():
    topo = topology("hypercube", k=3)
    assert search_colors(topo, max_rounds=2) is None  # fewer than log2 n rounds
    assert search_colors(topo, max_rounds=3, budget=0) is None
    assert search_colors(topo, max_rounds=3, budget=3) == "012"
    assert search_colors(topo, max_rounds=3, budget=2) is None
    assert search_colors(topo, min_rounds=3, max_rounds=3) == "012"


def test_search_min_rounds_is_the_first_length_tried():
    # hypercube(2): "01" in 2 rounds; from min_rounds 3, the first 3-string found
    topo = topology("hypercube", k=2)
    assert search_colors(topo) == "01"
    three = search_colors(topo, min_rounds=3, max_rounds=3)
    assert three == "01"  # done after two rounds: the string stops there


def test_search_skip_two_back_and_filter():
    # ccc(3): Table 6's string 0120120 repeats c_{j-2}: with the two-back pruning
    # the search needs another string
    topo = topology("ccc", k=3)
    plain = search_colors(topo, max_rounds=7)
    pruned = search_colors(topo, max_rounds=8, skip_two_back=True)
    for s in (plain, pruned):
        assert s is not None and validate(color_schedule(topo, s)).R == len(s)
    assert all(s[j] != s[j - 1] for s in (plain, pruned) for j in range(1, len(s)))
    assert all(pruned[j] != pruned[j - 2] for j in range(2, len(pruned)))
    assert len(plain) == 7


def _moves(n, mates, prefix):
    """Items each colour would move after the colours of ``prefix`` (by sets)."""
    K = [{v} for v in range(n)]
    for c in prefix:
        m = mates[c]
        K = [K[v] | K[int(m[v])] if m[v] >= 0 else K[v] for v in range(n)]
    done = all(len(k) == n for k in K)
    return {c: sum(len(K[int(m[v])] - K[v]) for v in range(n) if m[v] >= 0)
            for c, m in enumerate(mates) if not prefix or c != prefix[-1]}, done


def _greedy_path(topo, rounds):
    """Always the colour moving the most items (ties: the lower colour)."""
    mates, path = matchings(topo), []
    for _ in range(rounds):
        moves, done = _moves(topo.n, mates, path)
        if done:
            break
        path.append(max(moves, key=lambda c: (moves[c], -c)))
    return "".join(map(str, path))


def test_search_tries_the_biggest_movers_first():
    # with a budget of exactly R matchings, only the first path is tried: the greedy one
    topo = topology("mesh", a=3, b=3)
    greedy = _greedy_path(topo, 6)
    assert len(greedy) == 6 and validate(color_schedule(topo, greedy)).R == 6
    assert search_colors(topo, f=0.0, budget=6, min_rounds=6, max_rounds=6) == greedy


def test_filter_f_one_keeps_only_the_best_movers():
    topo = topology("mesh", a=3, b=3)
    mates = matchings(topo)
    strict = search_colors(topo, f=1.0, max_rounds=8)
    for j in range(len(strict)):
        moves, _ = _moves(topo.n, mates, [int(c) for c in strict[:j]])
        assert moves[int(strict[j])] == max(moves.values()), (strict, j)
    loose = search_colors(topo, f=0.5, max_rounds=8)
    assert validate(color_schedule(topo, loose)).R == len(loose) < len(strict)


@pytest.mark.parametrize("name", ["ccc", "butterfly"])
def test_small_cube_families_use_the_greedy_colouring(name):
    # k = 2 has no section-8 matchings: each edge in exactly one class of a greedy colouring
    topo = topology(name, k=2)
    sets = [{(min(v, int(m[v])), max(v, int(m[v]))) for v in np.flatnonzero(m >= 0)}
            for m in matchings(topo)]
    edges = {tuple(e) for e in topo.edges.tolist()}
    assert set().union(*sets) == edges and sum(map(len, sets)) == len(edges)



def _shortest_string(topo):
    """The fewest rounds of any colour string, by breadth-first search over states."""
    mates, n = matchings(topo), topo.n
    start = tuple(1 << v for v in range(n))
    level, seen, depth = {start}, {start}, 0
    while True:
        if any(all(k == (1 << n) - 1 for k in s) for s in level):
            return depth
        nxt = set()
        for s in level:
            for m in mates:
                t = tuple(s[v] | s[int(m[v])] if m[v] >= 0 else s[v] for v in range(n))
                if t not in seen:
                    seen.add(t)
                    nxt.add(t)
        level, depth = nxt, depth + 1


@pytest.mark.parametrize("name,params", [("mesh", {"a": 3, "b": 3}), ("pancake", {"k": 4}),
                                         ("ccc", {"k": 3}), ("butterfly", {"k": 3}),
                                         ("mesh", {"a": 2, "b": 5}), ("torus", {"a": 3, "b": 4})])
def test_unfiltered_search_with_budget_is_exhaustive(name, params):
    # f = 0 and a budget never reached: only sound pruning is left (a repeat moves
    # nothing; no node knows more than twice the most any node knew a round
    # before), so the shortest string
    topo = topology(name, **params)
    found = search_colors(topo, f=0.0, max_rounds=12, budget=10 ** 6)
    assert len(found) == _shortest_string(topo)


def test_search_does_not_prune_a_node_that_catches_up_at_once():
    # A real bug found here: the search pruned when the least-informed node could
    # not reach n by doubling, but a node may learn many items at once from a
    # well-informed partner; it missed "1021" (4 rounds, the optimum) on this graph
    topo = topology("explicit", n=7, edges=[[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6],
                                            [1, 5], [0, 3]])
    assert _shortest_string(topo) == 4
    found = search_colors(topo, f=0.0, budget=10 ** 6)
    assert len(found) == 4 and validate(color_schedule(topo, found)).R == 4
