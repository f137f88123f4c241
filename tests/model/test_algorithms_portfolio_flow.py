"""The portfolio's candidates, their order, labels and the choice, on graphs of a few nodes.

Fast (seconds, for ``python3 dev.py mutate model/algorithms/portfolio.py``):
every candidate is a real run, nothing is replaced; the graphs are so small
that the whole portfolio takes about a second. Each matching candidate is
checked against a direct call of the matching heuristic with the arguments
its label names, so a label that says one thing while the run does another
is caught.
"""

import re

import numpy as np
import pytest

from pipegossip.model.algorithms import matching, portfolio
from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.algorithms.portfolio import (DECAYS, MATCHING_SETTINGS, best_schedule,
                                                   dimension_order, setting_label)
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate


@pytest.fixture(autouse=True)
def _one_kernel_thread():
    """The kernels on one thread: on graphs this small the parallel ones' threads mostly
    wait for each other (41 s of CPU for this file with two, 3 s with one). The kernels
    split the work by the thread count they were compiled with, not by this, so the
    results are the same."""
    numba = pytest.importorskip("numba")
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(old)


@pytest.fixture(autouse=True)
def _no_restarts(monkeypatch):
    """The candidates before the random restarts, whose order these tests pin down;
    the restarts (the last phase, while the budget lasts) have their own tests in
    test_algorithms_portfolio.py."""
    monkeypatch.setattr(portfolio, "MAX_RESTARTS", 0)


#: The settings' labels in the order the docstring of MATCHING_SETTINGS gives them.
SETTINGS = ["bfs de=2", "bfs de=4", "bfs de=8", "bfs de=16", "bce ne=0 de=2", "bce ne=0 de=4",
            "bce ne=1 de=2", "bce ne=1 de=4", "potential"]


def _arguments(label: str, tau):
    """matching_schedule's keywords for a candidate's label (the test's own reading)."""
    kw, rest = {"tau": tau}, label.removeprefix("matching ")
    for word in rest.split(" "):
        if m := re.fullmatch(r"de=([\d.]+)>([\d.]+)", word):
            kw["dist_exp"], kw["dist_exp_end"] = float(m[1]), float(m[2])
        elif m := re.fullmatch(r"(de|ne|lookahead|tries|seed)=([\d.]+)", word):
            key = {"de": "dist_exp", "ne": "num_exp"}.get(m[1], m[1])
            kw[key] = float(m[2]) if m[1] in ("de", "ne") else int(m[2])
        elif word == "potential":
            kw["weights"] = "potential"
        elif word == "exact":
            kw["matcher"] = "exact"
        elif word == "unit":
            kw["tau"] = None
        elif word == "split":
            kw["split"] = True
        else:
            assert word in ("bfs", "bce", "cost"), label
    if kw["tau"] is None:  # the unit-cost extra of a split run: nothing to split
        kw.pop("split", None)
    return kw


def _check_matching_runs(topo, tried, tau, primitive="gossip", root=None):
    """Every matching candidate's (R, S) is what its label's arguments give."""
    for name, r, s in tried:
        if name.startswith("matching") and "improved" not in name:
            v = validate(matching_schedule(topo, primitive=primitive, root=root,
                                           **_arguments(name, tau)))
            assert (v.R, v.S) == (r, s), name


def _winner(tried, tau):
    """The first candidate of least R + tau S, then least S."""
    return min(tried, key=lambda t: (t[1] + (tau or 0) * t[2], t[2]))


def _check_origin(s, tried, tau):
    name = _winner(tried, tau)[0]
    assert s.origin == {"algorithm": "best", "source": (
        f"{name}: best of {len(tried)} candidates ("
        + ", ".join(f"{n} R={r}" for n, r, _ in tried) + ")")}
    v = validate(s)
    assert (name, v.R, v.S) in tried


def test_settings_and_labels_as_documented():
    assert [setting_label(*x) for x in MATCHING_SETTINGS] == SETTINGS
    assert MATCHING_SETTINGS[4] == ("bfs", 0.0, 2.0) and MATCHING_SETTINGS[8][0] == "potential"
    assert setting_label("bfs", None, 2.5) == "bfs de=2.5"
    assert setting_label("bfs", 1.0, 16.0) == "bce ne=1 de=16"
    assert setting_label("potential", 3.0, 8.0) == "potential"
    assert DECAYS == ((4.0, 1.0), (2.0, 0.5), (8.0, 1.0))


def test_unit_cost_order_every_setting_then_colouring_then_the_extras():
    topo = topology("cycle", n=6)  # no construction, no published string
    s, tried = best_schedule(topo, budget=60, stop_at_bound=False)
    names = [t[0] for t in tried]
    best_run = "matching " + _winner([t for t in tried if t[0] != names[9]], None)[0][9:]
    assert names[:9] == ["matching " + x for x in SETTINGS]
    assert names[9].startswith("coloring ") and set(names[9][9:]) <= set("0123")
    assert names[10:] == [best_run + " lookahead=1", best_run + " tries=8 seed=0",
                          best_run + " lookahead=2"]
    _check_matching_runs(topo, tried, None)
    _check_origin(s, tried, None)


def test_the_extras_run_on_the_best_setting_by_r_then_s():
    # path(5), unit cost: every setting needs 5 rounds; only the potential weights
    # reach S = 8 (the others 11), so the extras run on "potential"
    topo = topology("path", n=5)
    s, tried = best_schedule(topo, budget=60, stop_at_bound=False)
    runs = {n: (r, sz) for n, r, sz in tried[:9]}
    assert runs["matching potential"][1] < min(sz for n, (r, sz) in runs.items()
                                               if n != "matching potential")
    assert [t[0] for t in tried[10:]] == ["matching potential lookahead=1",
                                          "matching potential tries=8 seed=0",
                                          "matching potential lookahead=2"]
    _check_matching_runs(topo, tried, None)
    _check_origin(s, tried, None)


@pytest.mark.parametrize("name,params,tau", [("cycle", {"n": 6}, 1.0),
                                             ("path", {"n": 5}, 0.5)])
def test_linear_cost_order_potential_and_decays_early_unit_cost_extra_first(name, params, tau):
    topo = topology(name, **params)
    s, tried = best_schedule(topo, tau=tau, budget=60, stop_at_bound=False)
    names = [t[0] for t in tried if "improved" not in t[0]]
    decays = [f"matching bfs de={a:g}>{b:g}" for a, b in DECAYS]
    split = [x + " split" for x in ["matching bfs de=2", *decays]]  # not potential
    assert names[:9] == ["matching bfs de=2", "matching potential", *decays, *split]
    assert names[9:16] == ["matching " + x for x in SETTINGS[1:8]]
    assert names[16].startswith("coloring ")
    runs = [t for t in tried if t[0].startswith("matching") and len(t[0].split()) <= 4
            and "improved" not in t[0]][:16]
    best_run = _winner(runs, tau)[0]
    assert names[17:] == [best_run + " unit cost", best_run + " lookahead=1",
                          best_run + " tries=8 seed=0", best_run + " lookahead=2"]
    _check_matching_runs(topo, tried, tau)
    _check_origin(s, tried, tau)


def test_an_improved_candidate_follows_its_original_when_it_costs_less():
    # shuffle-exchange(3): the improvement pass cuts the colouring's S; the
    # constructions and the matching runs it leaves as they are
    from pipegossip.model.algorithms.coloring import color_schedule
    from pipegossip.model.algorithms.improve import improve_schedule
    topo, tau = topology("shuffle_exchange", k=3), 1.0
    s, tried = best_schedule(topo, tau=tau, budget=60, stop_at_bound=False)
    k = next(i for i, t in enumerate(tried) if t[0].startswith("coloring "))
    name, r, size = tried[k]
    better = validate(improve_schedule(color_schedule(topo, name.split()[1])))
    assert better.R + tau * better.S < r + tau * size
    assert tried[k + 1] == (name + " improved", better.R, better.S)
    assert sum("improved" in t[0] for t in tried) == 1
    _check_origin(s, tried, tau)
    # with improve=False (or unit cost) nothing is improved
    assert not any("improved" in t[0] for t in best_schedule(
        topo, tau=tau, budget=60, stop_at_bound=False, improve=False)[1])


def test_the_extras_follow_the_least_r_then_s_at_unit_cost():
    # shuffle-exchange(4): "bfs de=8" 7 rounds (S = 31), "bfs de=2" 8 rounds (S = 29)
    _, tried = best_schedule(topology("shuffle_exchange", k=4), budget=60, stop_at_bound=False)
    runs = dict((n, (r, s)) for n, r, s in tried)
    assert runs["matching bfs de=8"] == (7, 31) and runs["matching bfs de=2"] == (8, 29)
    assert min(r for r, _ in runs.values()) == 7
    assert tried[-3][0] == "matching bfs de=8 lookahead=1"


def test_the_extras_follow_the_least_linear_cost_run():
    # torus 3x3, tau = 2: "bfs de=4>1" costs 6 + 2 * 10 = 26, "bfs de=2" 5 + 2 * 11 = 27;
    # ranking by R + tau R (or by R) would pick the latter
    _, tried = best_schedule(topology("torus", a=3, b=3), tau=2.0, budget=60,
                             stop_at_bound=False)
    runs = dict((n, (r, s)) for n, r, s in tried)
    assert runs["matching bfs de=4>1"] == (6, 10) and runs["matching bfs de=2"] == (5, 11)
    assert [t[0] for t in tried if "improved" not in t[0]][-4:] == [
        "matching bfs de=4>1 " + x for x in ("unit cost", "lookahead=1", "tries=8 seed=0",
                                              "lookahead=2")]


def test_a_construction_that_meets_the_bound_ends_the_search():
    # hypercube(2): dimension order takes 2 rounds and S = 1 + 2 = 3 = n - 1 items,
    # both lower bounds, so R + tau S meets the floor in either cost model
    topo = topology("hypercube", k=2)
    assert best_schedule(topo, budget=60)[1] == [("dimension order", 2, 3)]
    assert best_schedule(topo, tau=1.0, budget=60)[1] == [("dimension order", 2, 3)]
    assert best_schedule(topo, "broadcast", 1, tau=0.5, budget=60)[1] == \
        [("dimension order", 2, 2)]
    _, tried = best_schedule(topo, tau=1.0, budget=60, stop_at_bound=False)
    assert [t[0] for t in tried[:3]] == ["dimension order", "matching bfs de=2",
                                         "matching potential"]


def test_a_schedule_short_of_the_floor_does_not_end_the_search():
    # gossip, de Bruijn(3), tau = 1: the floor is 3 + 1 * (8 - 1) = 10; the potential
    # weights' 4 rounds, S = 7 cost 11, one tau above it: not proved optimal
    topo = topology("debruijn", k=3)
    _, tried = best_schedule(topo, tau=1.0, budget=60)
    assert tried[1] == ("matching potential", 4, 7) and len(tried) > 2
    # broadcast: a message holds the one item, so S = R and the floor is
    # bound * (1 + tau); star(4) from a leaf: the first run's 6 rounds (6 * 5 = 30,
    # under 5 + 4 * 23) were taken as optimal, where 5 rounds exist
    topo = topology("star", k=4)
    for root in (0, 23):
        s, tried = best_schedule(topo, "broadcast", root, tau=4.0, budget=60)
        assert validate(s).R == 5 and len(tried) > 1


def test_no_budget_runs_the_first_setting_only():
    # with no construction the first matching run is the one the budget cannot stop
    _, tried = best_schedule(topology("cycle", n=6), budget=0)
    assert [t[0] for t in tried] == ["matching bfs de=2"]
    _, tried = best_schedule(topology("cycle", n=6), tau=1.0, budget=0)
    assert [t[0] for t in tried] == ["matching bfs de=2"]
    # with one, nothing runs after it
    _, tried = best_schedule(topology("mesh", a=2, b=3), budget=0)
    assert [t[0] for t in tried] == ["line phases", "line phases, columns first"]


def test_a_better_later_candidate_wins_and_ties_keep_the_first():
    topo = topology("mesh", a=2, b=3)  # line phases 4 rounds; matching 3
    s, tried = best_schedule(topo, budget=60, stop_at_bound=False)
    assert tried[0][:2] == ("line phases", 4)
    assert s.origin["source"].startswith("matching bfs de=2:")
    _check_origin(s, tried, None)


def test_exact_first_and_cheap_first(monkeypatch):
    topo = topology("cycle", n=6)
    monkeypatch.setattr(matching, "EXACT_MAX_EDGES", 5)  # cycle(6) has 6 edges: greedy
    _, tried = best_schedule(topo, budget=60, stop_at_bound=False)
    assert tried[0][0] == "matching bfs de=4 exact"
    assert [t[0] for t in tried[1:10]] == ["matching " + x for x in SETTINGS]
    _check_matching_runs(topo, tried, None)
    _, tried = best_schedule(topo, budget=60, stop_at_bound=False, matcher="greedy")
    assert all("exact" not in t[0] for t in tried)
    monkeypatch.setattr(matching, "EXACT_MAX_EDGES", 6)
    _, tried = best_schedule(topo, budget=60, stop_at_bound=False)
    assert tried[0][0] == "matching bfs de=2"
    # above CHEAP_FIRST_NODES with no construction: the potential weights first
    monkeypatch.setattr(portfolio, "CHEAP_FIRST_NODES", 5)
    _, tried = best_schedule(topo, budget=60, stop_at_bound=False)
    assert [t[0] for t in tried[:2]] == ["matching potential", "matching bfs de=2"]
    assert [t[0] for t in tried].count("matching potential") == 1
    monkeypatch.setattr(portfolio, "CHEAP_FIRST_NODES", 6)
    _, tried = best_schedule(topo, budget=60, stop_at_bound=False)
    assert tried[0][0] == "matching bfs de=2"


def test_over_exact_first_max_edges_the_greedy_settings_come_first(monkeypatch):
    # Table 1's Random(10000, 80000): an exact blossom a round takes hours there, so
    # with no candidate yet the greedy BFS run is the first (the one without a
    # deadline) and the exact run comes after the plain settings
    topo = topology("cycle", n=6)  # 6 edges, no construction
    monkeypatch.setattr(matching, "EXACT_MAX_EDGES", 5)
    monkeypatch.setattr(portfolio, "CHEAP_FIRST_NODES", 5)  # no potential run first either
    monkeypatch.setattr(portfolio, "EXACT_FIRST_MAX_EDGES", 5)
    _, tried = best_schedule(topo, budget=60, stop_at_bound=False)
    names = [t[0] for t in tried]
    assert names[:10] == ["matching " + x for x in SETTINGS] + ["matching bfs de=4 exact"]
    _check_matching_runs(topo, tried, None)
    _, tried = best_schedule(topo, budget=0, stop_at_bound=False)
    assert [t[0] for t in tried] == ["matching bfs de=2"]
    monkeypatch.setattr(portfolio, "EXACT_FIRST_MAX_EDGES", 6)  # at the limit: exact first
    _, tried = best_schedule(topo, budget=0, stop_at_bound=False)
    assert [t[0] for t in tried] == ["matching bfs de=4 exact"]
    # a construction's candidate is there already: the exact run has a deadline, first
    monkeypatch.setattr(portfolio, "EXACT_FIRST_MAX_EDGES", 5)
    mesh = topology("mesh", a=2, b=3)  # 7 edges; line phases 4 rounds, bound 3
    _, tried = best_schedule(mesh, budget=60, stop_at_bound=False)
    names = [t[0] for t in tried]
    assert names[0] == "line phases" and "matching" not in " ".join(names[:names.index(
        "matching bfs de=4 exact")]) and names.index("matching bfs de=4 exact") < names.index(
        "matching bfs de=2")


def test_broadcast_has_no_colouring_and_the_root_is_passed():
    topo = topology("path", n=5)
    s, tried = best_schedule(topo, "broadcast", 2, budget=60, stop_at_bound=False)
    assert not any(t[0].startswith("coloring") for t in tried)
    # ceil(log2 5) = 3 rounds: 2 -> 1; 1 -> 0 and 2 -> 3; 3 -> 4
    assert s.root == 2 and validate(s).R == 3
    _check_matching_runs(topo, tried, None, "broadcast", 2)


def _dimension_edges(topo):
    return [sorted(map(tuple, pairs.tolist())) for pairs in portfolio._dimensions(topo)]


@pytest.mark.parametrize("name,params", [("hypercube", {"k": 3}), ("knodel", {"n": 8}),
                                         ("knodel", {"n": 16})])
def test_dimensions_are_perfect_matchings_of_the_graph(name, params):
    topo = topology(name, **params)
    edges = {tuple(e) for e in np.asarray(topo.edges).tolist()}
    dims = _dimension_edges(topo)
    assert len(dims) == topo.n.bit_length() - 1
    for pairs in dims:
        assert sorted(v for e in pairs for v in e) == list(range(topo.n))
        assert {tuple(sorted(e)) for e in pairs} <= edges
    if name == "hypercube":
        assert {tuple(sorted(e)) for pairs in dims for e in pairs} == edges
        assert dims[0] == [(0, 1), (2, 3), (4, 5), (6, 7)]


def test_dimension_order_broadcast_by_definition():
    # round t: every node that knows the root's item passes it along dimension t
    topo = topology("hypercube", k=3)
    for root in (0, 5):
        s = dimension_order(topo, "broadcast", root)
        v = validate(s)
        assert v.valid and (v.R, v.S) == (3, 3) and s.origin == {"algorithm": "best",
                                                                  "source": "dimension order"}
        know = {root}
        for t, rnd in enumerate(s.rounds):
            want = sorted((x, (x ^ 1 << t,)) for x in know)
            assert sorted((m.src, m.dst) for m in rnd) == want
            assert all(m.items == (root,) for m in rnd)
            know |= {x ^ 1 << t for x in know}


def test_dimension_order_gives_up_after_max_rounds():
    topo = topology("hypercube", k=3)
    assert validate(dimension_order(topo, max_rounds=3)).R == 3
    assert dimension_order(topo, max_rounds=2) is None
    assert validate(dimension_order(topo, "broadcast", 0, max_rounds=3)).R == 3
    assert dimension_order(topo, "broadcast", 0, max_rounds=2) is None
    v = validate(dimension_order(topology("knodel", n=8)))
    assert v.valid and (v.R, v.S) == (3, 7)
