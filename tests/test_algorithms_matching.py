"""The matching heuristic (Beier and Sibeyn, section 4): validity, and R against Table 5."""

import pytest

from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate
from pipegossip.network_cli import DIST_EXPS, paper_tables

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
    return min(validate(matching_schedule(topo, dist_exp=de, **kw)).R for de in DIST_EXPS)


@pytest.mark.parametrize("family", ["shuffle_exchange", "debruijn", "butterfly", "ccc"])
@pytest.mark.parametrize("k", [3, 4, pytest.param(5, marks=pytest.mark.slow)])
def test_table5_within_hr_plus_one(family, k):
    hr = paper_tables()["table5"][family]["HR"][k - 3]
    if family == "ccc" and k == 3:
        pytest.skip("CCC_3: the paper's 7 is its colouring result (test_algorithms_coloring); "
                    "the matching heuristic gives 9")
    assert _best(topology(family, k=k)) <= hr + 1


@pytest.mark.slow
@pytest.mark.parametrize("family", ["shuffle_exchange", "debruijn", "butterfly", "ccc"])
def test_table5_k6_within_hr_plus_one(family):
    hr = paper_tables()["table5"][family]["HR"][3]
    assert _best(topology(family, k=6)) <= hr + 1


@pytest.mark.parametrize("family", ["shuffle_exchange", "debruijn", "ccc", "butterfly"])
def test_table4_broadcast_within_hr_plus_one(family):
    hr = paper_tables()["table4"][family]["HR"][1]
    assert _best(topology(family, k=4), primitive="broadcast", root=0) <= hr + 1


def test_linear_cost_trades_rounds_for_steps():
    topo = topology("mesh", a=6, b=6)
    unit = validate(matching_schedule(topo))
    costly = validate(matching_schedule(topo, tau=2.0))
    assert costly.valid and costly.S < unit.S and costly.S >= topo.n - 1


@pytest.mark.parametrize("kw,match", [({"primitive": "gather"}, "primitive"),
                                      ({"weights": "x"}, "weights"), ({"tau": -1}, "tau"),
                                      ({"primitive": "broadcast"}, "root"),
                                      ({"root": 0}, "no root")])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        matching_schedule(topology("cycle", n=5), **kw)


def test_disconnected_graph_refused():
    with pytest.raises(ValueError, match="disconnected"):
        matching_schedule(topology("explicit", n=4, edges=[[0, 1], [2, 3]]))


def test_deterministic_bytes():
    topo = topology("debruijn", k=5)
    assert matching_schedule(topo).to_bytes() == matching_schedule(topo).to_bytes()
