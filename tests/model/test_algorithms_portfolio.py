"""The portfolio (``schedule best``): known constructions, every matching setting, colouring."""

import pytest

from pipegossip.cli import main
from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.algorithms import portfolio
from pipegossip.model.algorithms.portfolio import best_schedule, dimension_order, lower_bound
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate


@pytest.mark.parametrize("name,params,rounds", [("hypercube", {"k": 4}, 4),
                                                ("knodel", {"n": 16}, 4),
                                                ("knodel", {"n": 32}, 5)])
def test_dimension_order_is_log2_n(name, params, rounds):
    v = validate(dimension_order(topology(name, **params)))
    assert v.valid and v.R == rounds


def test_dimension_order_broadcast_and_other_families():
    v = validate(dimension_order(topology("hypercube", k=3), "broadcast", 5))
    assert v.valid and v.R == 3
    assert dimension_order(topology("mesh", a=3, b=3)) is None


def test_best_beats_the_default_matching_where_a_construction_wins():
    topo = topology("knodel", n=16)
    s, tried = best_schedule(topo, budget=0.01)
    # the matching heuristic needs 5 rounds here; Knodel's dimension order 4 (optimal)
    assert validate(matching_schedule(topo)).R == 5 and validate(s).R == 4
    assert s.origin["algorithm"] == "best" and s.origin["source"].startswith("dimension order")
    # 4 rounds meet the lower bound log2 16: proved optimal, nothing else runs
    assert tried == [("dimension order", 4, 1 + 2 + 4 + 8)]


def test_best_is_the_least_of_what_it_tried():
    s, tried = best_schedule(topology("mesh", a=3, b=3), budget=300)
    # every plain matching setting needs 6 rounds; colouring and look-ahead find 5 (optimal)
    assert validate(s).R == min(r for _, r, _ in tried) == 5
    plain = [r for name, r, _ in tried if name.startswith("matching")
             and "lookahead" not in name and "tries" not in name]
    assert len(plain) == 9 and min(plain) == 6
    assert any(name.startswith("coloring") and r == 5 for name, r, _ in tried)


def test_schedule_best_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "b.json"
    assert main(["schedule", "best", "--topology", "hypercube", "--k", "3", "--budget", "1",
                 "-o", str(out)]) == 0
    assert main(["check", str(out), "--format", "json"]) == 0
    assert '"R": 3' in capsys.readouterr().out
    assert main(["schedule", "best", "--topology", "hypercube", "--k", "3", "--colors", "012",
                 "-o", str(out)]) == 2
    assert "--colors does not apply" in capsys.readouterr().err
    assert main(["schedule", "best", "--topology", "hypercube", "--k", "3", "--budget", "0"]) == 2


def test_the_papers_table6_string_is_a_candidate():
    # butterfly_6: the plain matching settings need 13 rounds, the paper's string 12
    s, tried = best_schedule(topology("butterfly", k=6), budget=0.01)
    assert validate(s).R == 12 and "the paper's Table 6" in s.origin["source"]
    assert best_schedule(topology("debruijn", k=3), budget=0.01)[1][-1][0].startswith("matching")


def test_the_papers_string_runs_before_the_slow_heuristics_on_large_graphs(monkeypatch):
    # Table 1's butterfly_10 (10,240 nodes): the string (22 rounds, the paper's
    # coloring figure) must not wait behind a matching run that the budget cannot stop
    from pipegossip.model.algorithms import portfolio
    monkeypatch.setattr(portfolio, "CHEAP_FIRST_NODES", 10)
    s, tried = best_schedule(topology("butterfly", k=4), budget=0)
    assert tried[0] == ("coloring 0123023 (the paper's Table 6)", 7, 63)
    assert validate(s).R == 7
    assert all(name != "matching potential" for name, _, _ in tried)


def test_exact_matching_is_a_candidate_where_auto_is_greedy(monkeypatch):
    # Table 1's de Bruijn_13 has 16,381 edges: "auto" matches greedily there. The
    # exact run comes first; on de Bruijn_8 it needs 15 rounds, greedy 16 (same setting).
    from pipegossip.model.algorithms import matching, portfolio
    monkeypatch.setattr(matching, "EXACT_MAX_EDGES", 100)
    monkeypatch.setattr(portfolio, "CHEAP_FIRST_NODES", 10)  # no cheap potential run first
    topo = topology("debruijn", k=8)
    assert validate(matching_schedule(topo, dist_exp=4.0)).R == 16
    _, tried = best_schedule(topo, budget=0.01)
    assert tried[0] == ("matching bfs de=4 exact", 15, 739)
    _, tried = best_schedule(topo, budget=0.01, matcher="greedy")
    assert all("exact" not in name for name, _, _ in tried)


def test_broadcast_runs_the_greedy_settings_first_and_the_exact_run_last(monkeypatch):
    # Table 4's butterfly_12 (98,304 edges): an exact blossom a round is hours there,
    # a broadcast's greedy BFS run seconds; the exact run still comes, last
    from pipegossip.model.algorithms import matching, portfolio
    monkeypatch.setattr(matching, "EXACT_MAX_EDGES", 100)
    monkeypatch.setattr(portfolio, "CHEAP_FIRST_NODES", 10)  # gossip would run potential
    monkeypatch.setattr(portfolio, "MAX_RESTARTS", 0)
    topo = topology("debruijn", k=7)
    _, tried = best_schedule(topo, "broadcast", 0, budget=0)
    assert [name for name, _, _ in tried] == ["matching bfs de=2"]
    three = [("bfs", None, 2.0), ("bfs", None, 4.0), ("potential", None, 4.0)]
    s, tried = best_schedule(topo, "broadcast", 0, budget=600, settings=three)
    names = [name for name, _, _ in tried]
    assert names[:2] == ["matching bfs de=2", "matching bfs de=4"]
    assert "matching bfs de=4 exact" in names and "matching potential" in names
    assert names.index("matching bfs de=4 exact") > names.index("matching potential")
    assert validate(s).R == 9  # the paper's Table 4 figure


def test_restarts_find_what_the_settings_and_eight_tie_orders_miss():
    # shuffle-exchange_5: every setting, look-ahead and the 8 tie orders give 10 rounds
    # (the paper's Table 5 figure); a restart with another tie order reaches 9, node 0's
    # eccentricity 2k - 1, so optimal (the portfolio stops there)
    topo = topology("shuffle_exchange", k=5)
    s, tried = best_schedule(topo, budget=120)
    assert min(r for name, r, _ in tried if "restart" not in name) == 10
    assert validate(s).R == 9 == lower_bound(topo)
    assert "restart=" in s.origin["source"].split(":")[0]
    runs = [name for name, _, _ in tried if "restart" in name]
    assert runs[0].endswith("restart=8") and len(runs) <= portfolio.MAX_RESTARTS
