"""The matching heuristic (Beier and Sibeyn, section 4): validity, and R against Table 5."""

import json

import numpy as np
import pytest

from pipegossip.model.algorithms.matching import _Graph, _match, _State, matching_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate
from pipegossip.paper.heuristics import paper_tables
from pipegossip.paper.heuristics import PORTFOLIO

FAMILIES = [("complete", {"n": 7}), ("path", {"n": 6}), ("cycle", {"n": 7}),
            ("hypercube", {"k": 4}), ("mesh", {"a": 3, "b": 5}), ("torus", {"a": 4, "b": 4}),
            ("star", {"k": 4}), ("pancake", {"k": 4}), ("ccc", {"k": 3}),
            ("butterfly", {"k": 3}), ("shuffle_exchange", {"k": 4}), ("debruijn", {"k": 4}),
            ("knodel", {"n": 14}), ("explicit", {"n": 5, "edges": [[0, 1], [1, 2], [2, 3],
                                                                    [3, 4], [1, 3]]})]
VARIANTS = [{}, {"matcher": "greedy"}, {"weights": "potential"}, {"tau": 0.5},
            {"lookahead": 1}, {"primitive": "broadcast", "root": 1}]


CASES = ([(name, params, kw) for name, params in FAMILIES for kw in VARIANTS[:1] + VARIANTS[-1:]]
         + [(name, params, kw) for name, params in FAMILIES[3:13:3] for kw in VARIANTS[1:-1]])


@pytest.mark.parametrize("name,params,kw", CASES)
def test_every_family_validates(name, params, kw):
    s = matching_schedule(topology(name, **params), **kw)
    v = validate(s)
    assert v.valid, v.error
    assert s.model == "F1" and s.primitive == kw.get("primitive", "gossip")


@pytest.mark.parametrize("name,params,optimum", [
    ("hypercube", {"k": 5}, 5), ("hypercube", {"k": 7}, 7), ("mesh", {"a": 4, "b": 6}, 8),
    ("mesh", {"a": 7, "b": 6}, 11), ("torus", {"a": 6, "b": 8}, 7), ("torus", {"a": 8, "b": 8}, 8)])
def test_optimal_on_meshes_tori_hypercubes(name, params, optimum):
    assert validate(matching_schedule(topology(name, **params))).R == optimum


def _best(topo, **kw):
    """Best R over the tables' settings (``network-table``'s portfolio), each validated."""
    rs = []
    for weights, num_exp, de in PORTFOLIO:
        v = validate(matching_schedule(topo, weights=weights, num_exp=num_exp, dist_exp=de, **kw))
        assert v.valid, v.error
        rs.append(v.R)
    return min(rs)


@pytest.mark.parametrize("family", ["shuffle_exchange", "debruijn", "butterfly", "ccc"])
@pytest.mark.parametrize("k", [3, 4, pytest.param(5, marks=pytest.mark.slow)])
def test_table5_within_hr_plus_one(family, k):
    hr = paper_tables()["table5"][family]["HR"][k - 3]
    assert _best(topology(family, k=k)) <= hr + 1


def test_ccc3_within_hr_plus_one_by_the_paper_even_split():
    """CCC_3: 9 rounds with the shortest-path split at every Dist_Exp, 8 with equation (9)."""
    topo = topology("ccc", k=3)
    assert validate(matching_schedule(topo, num_exp=0.0, dist_exp=2.0)).R == 8
    assert min(validate(matching_schedule(topo, dist_exp=de)).R for de in (2, 4, 8, 16)) == 9


def _reference_weights(topo, K, dist_exp, num_exp):
    """Equation (9) by the definition: BFS from each item's region, bce_v as Python sets."""
    n, edges = topo.n, [tuple(map(int, e)) for e in topo.edges]
    eid = {frozenset(e): i for i, e in enumerate(edges)}
    nbrs = [[] for _ in range(n)]
    for a, b in edges:
        nbrs[a].append(b)
        nbrs[b].append(a)
    w = np.zeros(len(edges))
    for p in range(K.shape[1]):
        dist = {v: 0 for v in range(n) if K[v, p]}
        bce = {v: set() for v in dist}
        frontier = list(dist)
        while frontier:
            nxt = []
            for x in frontier:
                for y in nbrs[x]:
                    if y not in dist:
                        dist[y] = dist[x] + 1
                        bce[y] = set()
                        nxt.append(y)
            for y in nxt:
                for x in nbrs[y]:
                    if dist.get(x, -9) == dist[y] - 1:
                        bce[y] |= {eid[frozenset((x, y))]} if dist[x] == 0 else bce[x]
            frontier = nxt
        for v, d in dist.items():
            for e in bce[v] if d else ():
                w[e] += d ** dist_exp / len(bce[v]) ** num_exp
    return w


@pytest.mark.parametrize("name,params", [("mesh", {"a": 3, "b": 4}), ("ccc", {"k": 3}),
                                         ("debruijn", {"k": 4})])
@pytest.mark.parametrize("num_exp", [0.0, 1.0, 0.5])
def test_even_split_weights_match_equation_9(name, params, num_exp):
    topo = topology(name, **params)
    state = _State(_Graph(topo), np.arange(topo.n), "bfs", 2.0, num_exp)
    rng = np.random.default_rng(7)
    state.K |= rng.random(state.K.shape) < 0.2  # an arbitrary knowledge state
    w = state.weights_of()[0]
    assert np.allclose(w, _reference_weights(topo, state.K, 2.0, num_exp))


def test_both_splits_hand_out_the_same_total():
    """With Num_Exp = 1 every outside node gives dist^Dist_Exp in total, as the path split."""
    topo = topology("butterfly", k=3)
    paths = _State(_Graph(topo), np.arange(topo.n), "bfs", 3.0)
    even = _State(_Graph(topo), np.arange(topo.n), "bfs", 3.0, 1.0)
    even.K = paths.K = np.random.default_rng(3).random((topo.n, topo.n)) < 0.3
    np.fill_diagonal(paths.K, True)
    assert np.isclose(paths.weights_of()[0].sum(), even.weights_of()[0].sum())
    assert not np.allclose(paths.weights_of()[0], even.weights_of()[0])


def test_tries_keep_the_best_and_are_reproducible():
    topo = topology("butterfly", k=3)
    one = validate(matching_schedule(topo, dist_exp=2.0))
    a = matching_schedule(topo, dist_exp=2.0, tries=4, seed=11)
    assert a.to_bytes() == matching_schedule(topo, dist_exp=2.0, tries=4, seed=11).to_bytes()
    best = validate(a)
    assert best.valid and (best.R, best.S) <= (one.R, one.S)
    assert "best of 4 tie orders (seed 11)" in a.origin["source"]


def test_first_try_continues_the_sequence_of_tie_orders():
    # restarts one run at a time: runs 0..3 one by one are the four runs of tries=4
    topo = topology("shuffle_exchange", k=5)
    runs = [matching_schedule(topo, dist_exp=8.0, seed=2, first_try=i) for i in range(4)]
    assert runs[0].to_bytes() == matching_schedule(topo, dist_exp=8.0).to_bytes()
    assert len({r.to_bytes() for r in runs}) > 1  # the tie orders differ
    key = [(v.R, v.S) for v in map(validate, runs)]
    best = matching_schedule(topo, dist_exp=8.0, seed=2, tries=4)
    assert (validate(best).R, validate(best).S) == min(key)
    def rounds(s):  # the schedule without its origin text
        return s.to_bytes().replace(json.dumps(s.origin["source"]).encode(), b"")
    assert rounds(best) in {rounds(r) for r in runs}
    two = matching_schedule(topo, dist_exp=8.0, seed=2, tries=2, first_try=2)
    assert (validate(two).R, validate(two).S) == min(key[2:])
    assert "best of 2 tie orders (seed 2, from run 2)" in two.origin["source"]
    assert "(seed 2, from run 3)" in runs[3].origin["source"]
    with pytest.raises(ValueError, match="first_try"):
        matching_schedule(topo, first_try=-1)


@pytest.mark.parametrize("matcher", ["exact", "greedy"])
def test_rank_breaks_ties(matcher):
    """All weights equal (a hypercube's first round): the rank alone picks the matching."""
    graph = _Graph(topology("hypercube", k=4))
    w = np.ones(graph.m)
    natural = _match(graph, w, matcher, np.arange(graph.m))
    other = _match(graph, w, matcher, np.random.default_rng(1).permutation(graph.m))
    for mate in (natural, other):
        assert (mate >= 0).all() and (mate[mate] == np.arange(graph.n)).all()
    assert not (natural == other).all()


@pytest.mark.parametrize("kw,match", [({"primitive": "gather"}, "primitive"),
                                      ({"weights": "x"}, "weights"), ({"tau": -1}, "tau"),
                                      ({"primitive": "broadcast"}, "root"),
                                      ({"root": 0}, "no root"), ({"num_exp": -1}, "num_exp"),
                                      ({"tries": 0}, "tries"), ({"candidates": 0}, "tries")])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        matching_schedule(topology("cycle", n=5), **kw)


def test_disconnected_graph_refused():
    with pytest.raises(ValueError, match="disconnected"):
        matching_schedule(topology("explicit", n=4, edges=[[0, 1], [2, 3]]))


def test_deterministic_bytes():
    topo = topology("debruijn", k=5)
    assert matching_schedule(topo).to_bytes() == matching_schedule(topo).to_bytes()


@pytest.mark.parametrize("tau", [0.5, 2.0])
def test_linear_cost_beats_the_unit_cost_schedule_at_its_own_measure(tau):
    # mesh 4x4: R >= 6 (the diameter) and S >= 15 (a node hears 15 items,
    # one partner per round), so T = R + tau S >= 6 + 15 tau. Cutting rounds
    # at s_opt must beat the unit-cost schedule (R 6, S 27) under T.
    topo = topology("mesh", a=4, b=4)
    unit = validate(matching_schedule(topo))
    linear = validate(matching_schedule(topo, tau=tau))
    assert (unit.R, unit.S) == (6, 27)
    assert 6 + 15 * tau <= linear.T(tau) < unit.T(tau)
    assert linear.T(2.0) <= 44  # 6 + 2 * 19, as measured when this test was written


def test_compiled_matching_equals_the_networkx_reference():
    # rustworkx's blossom against networkx's on random integer-weighted graphs: the
    # matchings may differ, their weights may not; both must be matchings
    from pipegossip.model.algorithms.matching import max_weight_pairs
    rng = np.random.default_rng(7)
    for trial in range(30):
        n = int(rng.integers(4, 40))
        pairs = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(3 * n, 2)) if a < b}
        weighted = [(a, b, int(rng.integers(1, 10 if trial % 2 else 1 << 40))) for a, b in pairs]
        w = {(a, b): x for a, b, x in weighted}
        total = {}
        for backend in ("rustworkx", "networkx"):
            got = max_weight_pairs(n, weighted, backend)
            ends = [v for p in got for v in p]
            assert len(ends) == len(set(ends)), backend
            total[backend] = sum(w[min(p), max(p)] for p in got)
        assert total["rustworkx"] == total["networkx"], trial


def test_exact_and_networkx_matchers_give_equal_rounds():
    topo = topology("ccc", k=3)
    assert (validate(matching_schedule(topo, matcher="exact")).R
            == validate(matching_schedule(topo, matcher="networkx")).R)


@pytest.mark.parametrize("block", [1, 5, 17])
@pytest.mark.parametrize("name,params,kw", [
    ("ccc", {"k": 3}, {}), ("debruijn", {"k": 5}, {"tries": 2}),
    ("mesh", {"a": 3, "b": 5}, {"lookahead": 1}), ("hypercube", {"k": 4}, {"tau": 0.5}),
    ("butterfly", {"k": 3}, {"primitive": "broadcast", "root": 2})])
def test_rounds_in_blocks_make_the_same_schedule(monkeypatch, block, name, params, kw):
    # a late gossip round on 22,528 nodes moves ~n^2/2 items: plan and delivery go in
    # blocks of BLOCK cells (the schedule's ids int32 until the end); any block size
    # gives the very same schedule, item ids int64
    from pipegossip.model.algorithms import matching
    from pipegossip.model.schedules.ir import dumps
    topo = topology(name, **params)
    whole = matching_schedule(topo, **kw)
    monkeypatch.setattr(matching, "BLOCK", block)
    parts = matching_schedule(topo, **kw)
    assert dumps(parts) == dumps(whole) and validate(parts).valid
    assert parts.items.dtype == np.int64 and len(parts.items) == len(whole.items)


def test_a_gossip_run_holds_its_item_ids_once_and_a_half(monkeypatch):
    # the schedule's int64 ids (4 GB on 22,528 nodes) plus the rounds' int32 ids being
    # let go: no second int64 copy, no per-round temporaries as long as a round's ids
    import tracemalloc
    from pipegossip.model.algorithms import matching
    topo = topology("hypercube", k=9)
    monkeypatch.setattr(matching, "BLOCK", 1 << 12)
    matching_schedule(topo, matcher="greedy")  # compile the kernels outside the trace
    tracemalloc.start()
    try:
        s = matching_schedule(topo, matcher="greedy")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert validate(s).valid and len(s.items) == 512 * 511
    assert peak < 1.75 * s.items.nbytes, (peak, s.items.nbytes)
