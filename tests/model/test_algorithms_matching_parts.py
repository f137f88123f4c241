"""The matching heuristic's parts, each against its definition (Beier and Sibeyn,
section 4) or a brute force on small graphs: fast, for `dev.py mutate`."""

import itertools
import time

import numpy as np
import pytest

from pipegossip.model.algorithms import matching as mm
from pipegossip.model.algorithms.matching import (_Graph, _match, _plan, _State, _steps,
                                                  OutOfTime, matching_schedule)
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate

# a 6-node graph with a triangle, a pendant and a 4-cycle: uneven degrees
EDGES = [[0, 1], [0, 2], [1, 2], [2, 3], [3, 4], [4, 5], [5, 2]]


def _small():
    return topology("explicit", n=6, edges=EDGES)


def test_graph_is_the_csr_of_the_edges():
    g = _Graph(_small())
    assert (g.n, g.m) == (6, 7)
    assert sorted(map(tuple, g.edges.tolist())) == sorted((min(e), max(e)) for e in EDGES)
    for v in range(6):
        got = list(zip(g.nbr[g.indptr[v]:g.indptr[v + 1]].tolist(),
                       g.eid[g.indptr[v]:g.indptr[v + 1]].tolist()))
        want = sorted((b if a == v else a, e) for e, (a, b) in enumerate(g.edges.tolist())
                      if v in (a, b))
        assert got == want, v


def test_complete_graph_has_every_pair():
    g = _Graph(topology("complete", n=5))
    assert g.m == 10
    assert sorted(map(tuple, g.edges.tolist())) == list(itertools.combinations(range(5), 2))


def _random_state(weights="potential", seed=5):
    topo = _small()
    st = _State(_Graph(topo), np.arange(6), weights, 2.0)
    st.K |= np.random.default_rng(seed).random(st.K.shape) < 0.35
    return topo, st


def test_state_starts_with_each_node_its_own_item():
    st = _State(_Graph(_small()), np.array([4]), "bfs", 1.0)
    assert st.K.shape == (6, 1) and st.K[:, 0].tolist() == [v == 4 for v in range(6)]
    assert not st.done()
    st.K[:] = True
    assert st.done()


def test_potential_counts_items_known_at_exactly_one_end():
    _, st = _random_state()
    want = [int((st.K[a] ^ st.K[b]).sum()) for a, b in st.g.edges.tolist()]
    assert st.weights_of()[0].tolist() == want


def test_regions_group_items_by_their_holders():
    _, st = _random_state()
    st.K[:, 3] = st.K[:, 1]  # items 1 and 3: one region
    rep, counts, inverse = st.regions()
    holders = [tuple(st.K[:, j]) for j in range(6)]
    assert len(rep) == len(set(holders))
    for j in range(6):
        assert holders[rep[inverse[j]]] == holders[j]
        assert counts[inverse[j]] == holders.count(holders[j])


def test_bfs_weights_of_a_path_by_hand():
    # path 0-1-2-3, item 0 known by node 0 only: nodes 1, 2, 3 at distances 1, 2, 3
    # credit d^2 to the one edge leaving the region (0-1); the other items
    # likewise; cost = sum of distances over items and nodes
    topo = topology("path", n=4)
    st = _State(_Graph(topo), np.array([0]), "bfs", 2.0)
    w, _, cost = st.weights_of(partner=np.full(4, -1, np.int64))
    assert w.tolist() == [1 + 4 + 9, 0, 0] and cost == 1 + 2 + 3


def _matchings(n, edges):
    """Every matching of the edges (ids), by brute force."""
    for r in range(len(edges) + 1):
        for pick in itertools.combinations(range(len(edges)), r):
            ends = [v for e in pick for v in edges[e]]
            if len(ends) == len(set(ends)):
                yield pick


def _mate(n, edges, pick):
    mate = np.full(n, -1, np.int64)
    for e in pick:
        a, b = edges[e]
        mate[a], mate[b] = b, a
    return mate


def _weighted(seed, top):
    """The small graph with random integer weights below ``top`` and a random rank."""
    rng = np.random.default_rng(seed)
    g = _Graph(_small())
    return g, rng.integers(0, top, g.m).astype(float), rng.permutation(g.m)


@pytest.mark.parametrize("seed", range(6))
def test_exact_match_is_a_maximum_weight_matching_ties_to_low_ranks(seed):
    g, w, rank = _weighted(seed, 4)
    edges = [tuple(e) for e in g.edges.tolist()]
    # the largest weight, then (among those) the least sum of ranks per edge taken
    # (live edges only: a zero-weight edge is never matched)
    best = max(_matchings(6, edges),
               key=lambda p: (sum(w[e] for e in p) if all(w[e] > 0 for e in p) else -1,
                              sum(g.m - rank[e] for e in p)))
    got = _match(g, w, "exact", rank)
    assert got.tolist() == _mate(6, edges, best).tolist()
    assert _match(g, w, "networkx", rank).tolist() == got.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_greedy_takes_edges_by_weight_then_rank(seed):
    g, w, rank = _weighted(seed, 3)
    mate = np.full(6, -1, np.int64)
    for e in sorted(range(g.m), key=lambda e: (-w[e], rank[e])):
        a, b = g.edges[e]
        if w[e] > 0 and mate[a] < 0 and mate[b] < 0:
            mate[a], mate[b] = b, a
    assert _match(g, w, "greedy", rank).tolist() == mate.tolist()


def test_auto_is_exact_up_to_the_edge_limit(monkeypatch):
    # a path 0-1-2-3 with the middle edge heaviest: greedy takes it (weight 3),
    # the exact matcher the two outer edges (weight 4)
    g = _Graph(topology("path", n=4))
    w = np.array([2.0, 3.0, 2.0])
    rank = np.arange(3)
    assert _match(g, w, "greedy", rank).tolist() == [-1, 2, 1, -1]
    assert _match(g, w, "exact", rank).tolist() == [1, 0, 3, 2]
    monkeypatch.setattr(mm, "EXACT_MAX_EDGES", 3)
    assert _match(g, w, "auto", rank).tolist() == [1, 0, 3, 2]
    monkeypatch.setattr(mm, "EXACT_MAX_EDGES", 2)
    assert _match(g, w, "auto", rank).tolist() == [-1, 2, 1, -1]
    assert _match(g, np.zeros(3), "exact", rank).tolist() == [-1] * 4


def test_unit_cost_plan_exchanges_everything_new():
    _, st = _random_state()
    mate = np.array([2, -1, 0, 4, 3, -1])
    src, dst, ptr, items = _plan(st, mate, None)
    got = {(int(s), int(d)): items[ptr[i]:ptr[i + 1]].tolist()
           for i, (s, d) in enumerate(zip(src, dst))}
    want = {}
    for a, b in ((0, 2), (3, 4)):
        for s, d in ((a, b), (b, a)):
            new = np.flatnonzero(st.K[s] & ~st.K[d]).tolist()
            if new:
                want[s, d] = new
    assert got == want and len(src) == len(want)


def _volume(counts, s):
    return sum(min(c, s) for c in counts)


@pytest.mark.parametrize("tau", [0.0, 0.3, 1.0, 4.0])
def test_steps_maximise_volume_per_time(tau):
    _, st = _random_state(seed=9)
    st.K[:, :] = False  # nobody knows anything: no round can finish
    dst = np.array([0, 1, 2, 3])
    counts = np.array([5, 1, 3, 3])
    new = np.zeros((4, 6), bool)
    for r, c in enumerate(counts):
        new[r, :c] = True
    s = _steps(st, dst, new, counts, tau)
    rates = [_volume(counts, x) / (1 + tau * x) for x in range(1, 6)]
    assert s == 1 + rates.index(max(rates))  # the first (fewest steps) of the best


def test_steps_do_not_cut_a_finishing_round():
    topo = topology("path", n=2)
    st = _State(_Graph(topo), np.arange(2), "potential", 1.0)
    new = np.array([[False, True], [True, False]])
    assert _steps(st, np.array([0, 1]), new[::-1], np.array([1, 1]), 100.0) == 1
    # node 1 lacks three items, nodes 2..5 one each; at 100x the cost per step
    # s = 1 moves the most per unit of time, unless the full round finishes
    st3 = _State(_Graph(topology("star", k=3)), np.arange(6), "potential", 1.0)
    st3.K[:, :] = True
    st3.K[1, :3] = False
    st3.K[2:, 5] = False
    new3 = ~st3.K[1:]
    counts = new3.sum(axis=1)
    assert counts.tolist() == [3, 1, 1, 1, 1]
    assert _steps(st3, np.arange(1, 6), new3, counts, 100.0) == 3
    st3.K[0, 4] = False  # node 0 is not called: the round cannot finish
    assert _steps(st3, np.arange(1, 6), new3, counts, 100.0) == 1


def test_linear_cost_sends_the_rarest_items_first():
    # potential weights: a sender with more new items than s sends the s items
    # the fewest nodes know (ties to lower ids)
    topo = topology("path", n=2)
    st = _State(_Graph(_small()), np.arange(6), "potential", 1.0)
    st.K[0, :] = True
    st.K[2:, 4] = True  # item 4 known by 5 nodes; 5 and others by fewer
    st.K[3:, 1] = True
    mate = np.array([1, 0, -1, -1, -1, -1])
    new = st.K[[0]] & ~st.K[[1]]
    counts = new.sum(axis=1)
    out = mm._choose(st, mate, np.array([0]), new, counts, 2)
    holders = st.K.sum(axis=0)
    cand = np.flatnonzero(new[0]).tolist()
    want = sorted(cand, key=lambda j: (holders[j], j))[:2]
    assert np.flatnonzero(out[0]).tolist() == sorted(want)
    assert topo.n == 2


@pytest.mark.parametrize("k", [2, 3, 4])
def test_hypercube_gossip_and_broadcast_take_k_rounds(k):
    topo = topology("hypercube", k=k)
    g = validate(matching_schedule(topo))
    assert g.valid and g.R == k and g.S == 2 ** k - 1
    b = validate(matching_schedule(topo, primitive="broadcast", root=2 ** k - 1))
    assert b.valid and b.R == k


def test_path_broadcast_from_an_end():
    s = matching_schedule(topology("path", n=5), primitive="broadcast", root=4)
    v = validate(s)
    assert v.valid and v.R == 4 and s.root == 4 and s.primitive == "broadcast"


def test_gossip_on_a_path_by_hand():
    # path of 4: the optimum is 3 rounds (the diameter), n - 1 + ... = the bound
    v = validate(matching_schedule(topology("path", n=4)))
    assert v.valid and v.R == 3


@pytest.mark.parametrize("kw,match", [
    ({"tau": float("nan")}, "tau"), ({"dist_exp": -0.1}, "dist_exp"),
    ({"lookahead": -1}, "lookahead"), ({"num_exp": float("nan")}, "num_exp"),
    ({"dist_exp_end": -1.0}, "dist_exp_end"), ({"dist_exp_end": 1.0, "dist_decay": 0.0}, "decay"),
    ({"dist_exp_end": 1.0, "dist_decay": 1.5}, "decay"), ({"matcher": "x"}, "matcher"),
    ({"primitive": "broadcast", "root": 5}, "root"), ({"primitive": "broadcast", "root": -1}, "root"),
])
def test_more_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        matching_schedule(topology("cycle", n=5), **kw)


def test_edges_of_the_accepted_range():
    topo = topology("cycle", n=5)
    for kw in ({"tau": 0.0}, {"dist_exp": 0.0}, {"num_exp": 0.0}, {"tries": 1, "candidates": 1},
               {"dist_exp_end": 0.0, "dist_decay": 1.0}, {"primitive": "broadcast", "root": 0},
               {"primitive": "broadcast", "root": 4}):
        assert validate(matching_schedule(topo, **kw)).valid, kw


def test_max_rounds_and_deadline():
    topo = topology("hypercube", k=3)
    assert validate(matching_schedule(topo, max_rounds=3)).R == 3
    with pytest.raises(ValueError, match="within 2 rounds"):
        matching_schedule(topo, max_rounds=2)
    with pytest.raises(OutOfTime, match="after 0 rounds"):
        matching_schedule(topo, deadline=time.process_time() - 1)
    assert validate(matching_schedule(topo, deadline=time.process_time() + 600)).R == 3


def test_origin_names_the_settings():
    src = matching_schedule(topology("cycle", n=5), tau=0.5, weights="potential", num_exp=0.5,
                            dist_exp_end=1.0, dist_decay=0.5, tries=2, seed=3,
                            matcher="greedy").origin["source"]
    for part in ("potential weights", "dist_exp=4", "lowered towards 1 by 0.5 per round",
                 "greedy matching", "linear cost tau=0.5", "lookahead=0", "num_exp=0.5",
                 "best of 2 tie orders (seed 3)"):
        assert part in src, part
    plain = matching_schedule(topology("cycle", n=5)).origin["source"]
    assert "unit cost" in plain and "num_exp" not in plain and "best of" not in plain
    assert "lowered" not in plain


def test_decay_lowers_dist_exp_each_round(monkeypatch):
    seen = []
    real = mm._round

    def spy(state, matcher, tau, suppress=None):
        seen.append(state.dist_exp)
        return real(state, matcher, tau, suppress)

    monkeypatch.setattr(mm, "_round", spy)
    matching_schedule(topology("path", n=6), dist_exp=5.0, dist_exp_end=1.0, dist_decay=0.5)
    assert seen == [1.0 + 4.0 * 0.5 ** t for t in range(len(seen))] and len(seen) == 5


def test_tries_keep_the_least_time(monkeypatch):
    # four tries; the kept schedule has the least R + tau S (then S) among them
    topo = topology("mesh", a=2, b=3)
    runs = []
    real = mm._run

    def spy(*a, **k):
        out = real(*a, **k)
        R = len(out)
        S = sum(int(np.diff(r[2]).max()) if len(r[0]) else 0 for r in out)
        runs.append((R + 0.5 * S, S))
        return out

    monkeypatch.setattr(mm, "_run", spy)
    v = validate(matching_schedule(topo, tau=0.5, tries=4, seed=1))
    assert len(runs) == 4 and (v.R + 0.5 * v.S, v.S) == min(runs)


def test_lookahead_gives_a_valid_schedule_at_least_as_short():
    topo = topology("mesh", a=3, b=3)
    plain = validate(matching_schedule(topo, dist_exp=2.0))
    ahead = validate(matching_schedule(topo, dist_exp=2.0, lookahead=1, candidates=2))
    assert ahead.valid and ahead.R <= plain.R


def test_lookahead_suppresses_a_tenth_of_the_matched_edges(monkeypatch):
    # section 4.2: each other candidate drops max(1, |M| // 10) edges of the best matching M
    seen = []
    real = mm._round

    def spy(state, matcher, tau, suppress=None):
        plan, mate = real(state, matcher, tau, suppress)
        seen.append((int((mate >= 0).sum()) // 2, None if suppress is None else len(suppress)))
        return plan, mate

    monkeypatch.setattr(mm, "_round", spy)
    state = _State(_Graph(topology("mesh", a=6, b=6)), np.arange(36), "bfs", 2.0)
    mm._lookahead_round(state, "exact", None, 1, 1, np.arange(36), 3, None)
    used = seen[0][0]
    assert used == 18 and seen[0][1] is None
    cut = [k for _, k in seen[1:] if k is not None]
    assert cut == [max(1, used // 10)] * 2  # two other candidates, 1 edge each


# ------------------------------------------------- superpacket splitting
#: Graphs and tau where splitting lowers T = R + tau S at Dist_Exp 2, exact matching
#: (measured; elsewhere it can cost, which is why it is a setting of the portfolio).
SPLIT_WINS = [("debruijn", {"k": 6}, 0.5), ("shuffle_exchange", {"k": 6}, 0.5),
              ("mesh", {"a": 8, "b": 8}, 2.0)]


@pytest.mark.parametrize("name,params,tau", SPLIT_WINS)
def test_superpacket_splitting_wins_where_holders_share_their_new_items(name, params, tau):
    topo = topology(name, **params)
    plain, split = (validate(matching_schedule(topo, tau=tau, dist_exp=2.0, matcher="exact",
                                               split=x)) for x in (False, True))
    assert plain.valid and split.valid
    assert split.R + tau * split.S < plain.R + tau * plain.S


def test_split_senders_divide_the_items_they_share():
    # a star K_{1,3} around node 0 after node 0 learnt everything but its leaves did not:
    # three leaves would get the same top item; split, they get different ones
    topo = topology("explicit", n=5, edges=[[0, 1], [0, 2], [0, 3], [0, 4], [1, 2], [3, 4]])
    g = _Graph(topo)
    st = _State(g, np.arange(5), "bfs", 2.0)
    st.K[1, :] = st.K[3, :] = True  # 1 and 3 know everything; 2 and 4 only their own
    mate = np.full(5, -1, np.int64)
    mate[[1, 2, 3, 4]] = [2, 1, 4, 3]
    src, dst = np.array([1, 3]), np.array([2, 4])
    new = st.K[src] & ~st.K[dst]
    counts = new.sum(axis=1)
    same = mm._choose(st, mate, src, new, counts, 1, split=False)
    apart = mm._choose(st, mate, src, new, counts, 1, split=True)
    assert same.sum(axis=1).tolist() == apart.sum(axis=1).tolist() == [1, 1]
    assert (apart[0] & apart[1]).sum() == 0  # divided: no item down both calls
    assert (apart <= new).all()


def test_split_needs_linear_cost():
    with pytest.raises(ValueError, match="linear-cost"):
        matching_schedule(topology("cycle", n=6), split=True)
