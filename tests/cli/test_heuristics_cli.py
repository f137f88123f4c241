"""``pipegossip schedule matching|coloring``, ``network-table`` and ``network-bench`` options."""

import json

import numpy as np
import pytest

from pipegossip.cli import main
from pipegossip.model.errors import FormatError


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("argv,r", [
    (["matching", "--topology", "mesh", "--a", "4", "--b", "5"], 7),
    (["matching", "--topology", "hypercube", "--k", "5", "--matcher", "greedy"], 5),
    (["matching", "--topology", "torus", "--a", "4", "--b", "4", "--weights", "potential"], 4),
    (["matching", "--topology", "butterfly", "--k", "3", "--primitive", "broadcast",
      "--root", "5"], None),
    (["matching", "--topology", "debruijn", "--k", "4", "--tau", "0.5", "--lookahead", "1"],
     None),
    (["matching", "--topology", "knodel", "--n", "16"], None),
    (["matching", "--topology", "ccc", "--k", "3", "--num-exp", "0", "--dist-exp", "2"], 8),
    (["matching", "--topology", "butterfly", "--k", "3", "--tries", "3", "--seed", "4",
      "--lookahead", "1", "--candidates", "6"], None),
    (["coloring", "--topology", "pancake", "--k", "4", "--colors", "02102"], 5),
    (["coloring", "--topology", "star", "--k", "4"], 6)])
def test_schedule_then_check(tmp_path, capsys, argv, r):
    out = tmp_path / "s.json"
    assert _run(capsys, "schedule", *argv, "-o", str(out))[0] == 0
    status, text, _ = _run(capsys, "check", str(out), "--format", "json")
    assert status == 0
    got = json.loads(text)
    assert got["valid"] and (r is None or got["R"] == r)


@pytest.mark.parametrize("argv", [
    ["matching", "--topology", "mesh", "--k", "3"],
    ["matching", "--topology", "mesh", "--a", "3"],
    ["matching", "--topology", "hypercube", "--k", "3", "--root", "0"],
    ["matching", "--topology", "hypercube", "--k", "3", "--primitive", "broadcast"],
    ["matching", "--topology", "hypercube", "--k", "3", "--colors", "01"],
    ["matching", "--topology", "hypercube", "--k", "3", "--tau", "-1"],
    ["matching", "--topology", "hypercube", "--k", "3", "--p", "2"],
    ["matching", "--topology", "nosuch", "--k", "3"],
    ["matching", "--topology", "explicit", "--n", "3"],
    ["matching", "--topology", "hypercube", "--k", "15"],
    ["matching", "--topology", "star", "--k", "9"],
    ["matching", "--topology", "knodel", "--n", "7"],
    ["coloring", "--topology", "star", "--k", "4", "--colors", "0x"],
    ["coloring", "--topology", "star", "--k", "4", "--colors", "7"],
    ["coloring", "--topology", "hypercube", "--k", "4", "--colors", "01"],
    ["coloring", "--topology", "star", "--k", "4", "--tau", "1"],
    ["coloring", "--topology", "complete", "--n", "4"],
    ["matching", "--topology", "mesh", "--a", "3", "--b", "3", "--primitive", "gather"],
    ["matching", "--topology", "hypercube", "--k", "3", "--tries", "0"],
    ["matching", "--topology", "hypercube", "--k", "3", "--candidates", "0"],
    ["matching", "--topology", "hypercube", "--k", "3", "--num-exp", "-1"],
    ["matching", "--topology", "hypercube", "--k", "3", "--tries", "x"],
    ["coloring", "--topology", "star", "--k", "4", "--tries", "2"],
    ["coloring", "--topology", "star", "--k", "4", "--num-exp", "1"]])
def test_bad_options_one_line_exit_2(capsys, argv):
    status, out, err = _run(capsys, "schedule", *argv)
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_network_table6_json(capsys):
    status, out, _ = _run(capsys, "network-table", "table6", "--max-k", "4", "--format", "json")
    assert status == 0
    rows = json.loads(out)
    assert {r["graph"] for r in rows} >= {"pancake_4", "star_4", "ccc_4", "butterfly_3"}
    assert all(r["R"] == r["paper_R"] for r in rows)
    assert next(r for r in rows if r["graph"] == "pancake_4")["S"] == 23


def test_network_table5_md(capsys):
    status, out, _ = _run(capsys, "network-table", "table5", "--max-k", "3")
    assert status == 0
    assert out.startswith("| graph |") and "| debruijn_3 |" in out
    ccc3 = next(line for line in out.splitlines() if line.startswith("| ccc_3 |"))
    assert int(ccc3.split("|")[6]) <= 8  # the paper's HR 7, plus one


def test_network_table4_families_and_k_range(capsys):
    status, out, _ = _run(capsys, "network-table", "table4", "--min-k", "4", "--max-k", "4",
                          "--families", "debruijn", "--format", "json")
    assert status == 0
    rows = json.loads(out)
    assert [r["graph"] for r in rows] == ["debruijn_4"]
    assert rows[0]["R"] <= rows[0]["paper_HR"] and rows[0]["setting"]


def test_network_table1_row_timeout(capsys):
    """Each Table 1 row is its own process: a row over --row-timeout is stopped and said so."""
    status, out, _ = _run(capsys, "network-table", "table1", "--max-k", "13",
                          "--row-timeout", "0.5")
    assert status == 0
    lines = [line for line in out.splitlines() if line.startswith("| Pancake")]
    assert len(lines) == 1 and "stopped after 0.5 s" in lines[0]


@pytest.mark.parametrize("argv", [["network-table", "table9"],
                                  ["network-table", "table5", "--max-k", "2"],
                                  ["network-table", "table5", "--format", "csv"],
                                  ["network-table", "table5", "--min-k", "5", "--max-k", "4"],
                                  ["network-table", "table5", "--families", "nosuch"],
                                  ["network-table", "table5", "--tries", "0"],
                                  ["network-table", "table1", "--row-timeout", "0"],
                                  ["network-bench", "--cases", "nosuch"]])
def test_table_and_bench_bad_options(capsys, argv):
    status, _, err = _run(capsys, *argv)
    assert status == 2 and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_network_bench_runs(capsys):
    status, out, _ = _run(capsys, "network-bench", "--cases", "pancake7")
    assert status == 0 and "pancake7" in out


@pytest.mark.parametrize("argv, needle", [
    (["schedule", "matching", "--topology", "mesh", "--a", "4", "--b", "4", "--tau", "inf"],
     "--tau: expected a number"),
    (["schedule", "matching", "--topology", "mesh", "--a", "4", "--b", "4", "--dist-exp",
      "nan"], "--dist-exp: expected a number"),
    (["schedule", "matching", "--topology", "mesh", "--a", "4", "--b", "4", "--dist-exp",
      "1e400"], "out of range"),
    (["network-table", "table6", "--max-k", "\uff19"], "--max-k: expected an integer"),
    (["schedule", "matching", "--topology", "mesh", "--a", "1_0", "--b", "4"],
     "--a: expected an integer"),
    (["schedule", "matching", "--topology", "mesh", "--a", "4", "--b", "4", "--tries",
      "100000000"], "must be 1..1,000"),
    (["network-table", "table5", "--lookahead", "99"], "must be 0..8"),
])
def test_numbers_are_plain_and_finite(capsys, argv, needle):
    """Hostile probes: inf, nan and full-width digits used to be accepted (and run)."""
    from pipegossip import cli
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Warning" not in err


def test_table5_by_the_portfolio(capsys, tmp_path):
    argv = ["network-table", "table5", "--max-k", "3", "--families", "debruijn", "--best", "1",
            "--format", "json", "--workers", "0", "--store", str(tmp_path / "store")]
    status = main(argv)
    rows = json.loads(capsys.readouterr().out)
    assert status == 0 and rows[0]["graph"] == "debruijn_3" and rows[0]["R"] == 4
    assert rows[0]["status"] == "done" and rows[0]["lower"] == 3
    assert rows[0]["wall_s"] > 0 and rows[0]["cpu_s"] >= 0
    # the sweep store caches the row: the second run computes nothing, and says what
    # the row took when it ran
    assert main(argv) == 0
    cached = json.loads(capsys.readouterr().out)[0]
    assert cached["status"] == "cached" and cached["wall_s"] == rows[0]["wall_s"]
    assert main(["network-table", "table6", "--best", "1"]) == 2
    assert "--best applies to table1, table3, table4 and table5" in capsys.readouterr().err
    assert main(["network-table", "table5", "--workers", "0"]) == 2
    assert "--workers applies only with --best" in capsys.readouterr().err
    assert main(["network-table", "table5", "--best", "1", "--tries", "2"]) == 2
    assert "--tries applies only without --best" in capsys.readouterr().err


def test_table5_gossip_past_the_node_limit_is_a_row_that_says_so(monkeypatch, capsys, tmp_path):
    from pipegossip.sweeps import heuristics as network_sweep
    monkeypatch.setattr(network_sweep, "MAX_GOSSIP_NODES", 20)
    assert main(["network-table", "table5", "--max-k", "5", "--min-k", "4", "--families",
                 "debruijn", "--best", "1", "--format", "json", "--workers", "0",
                 "--store", str(tmp_path)]) == 0
    small, big = json.loads(capsys.readouterr().out)
    assert (small["graph"], small["R"], small["status"]) == ("debruijn_4", 6, "done")
    assert (big["graph"], big["n"], big["R"], big["status"]) == ("debruijn_5", 32, None, "not run")
    assert big["paper_HR"] == 8 and big["error"] == (
        "gossip is limited to 20 nodes (its schedule holds n(n-1) item ids: 7.94e-06 GB here)")
    # broadcast (table4) has no such limit
    assert main(["network-table", "table4", "--max-k", "5", "--min-k", "5", "--families",
                 "debruijn", "--best", "1", "--format", "json", "--workers", "0",
                 "--store", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)[0]["status"] == "done"


def test_rows_past_the_broadcast_limit_say_so_and_run_nothing(monkeypatch, capsys, tmp_path):
    # a row over its limit is a row with the limit, not a job that fails the whole
    # table; Table 4's largest rows (229,376 nodes) are inside the real broadcast limit
    from pipegossip.model.schedules import topologies
    assert topologies.MAX_BROADCAST_NODES >= 229376 > topologies.MAX_NODES
    monkeypatch.setattr(topologies, "MAX_BROADCAST_NODES", 1 << 17)
    argv = ["network-table", "table4", "--min-k", "14", "--max-k", "14", "--families",
            "ccc,butterfly", "--format", "json"]
    assert main(argv + ["--best", "1", "--workers", "0", "--store", str(tmp_path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["graph"], r["n"], r["status"]) for r in rows] == [
        ("ccc_14", 229376, "not run"), ("butterfly_14", 229376, "not run")]
    assert {r["error"] for r in rows} == {"broadcast topologies are limited to 131072 nodes"}
    assert [r["paper_HR"] for r in rows] == [33, 24]
    assert main(argv) == 0  # the per-setting table says the same
    rows = json.loads(capsys.readouterr().out)
    assert [(r["graph"], r["R"]) for r in rows] == [("ccc_14", None), ("butterfly_14", None)]
    assert {r["setting"] for r in rows} == {
        "not run: broadcast topologies are limited to 131072 nodes"}


def test_broadcast_rows_have_their_own_node_limit(monkeypatch, capsys, tmp_path):
    # with the builder's limit at 32 nodes, de Bruijn_6 (64 nodes) still broadcasts
    # (Table 4) but does not gossip (Table 5): the limits are separate
    from pipegossip.model.schedules import topologies
    monkeypatch.setattr(topologies, "MAX_NODES", 32)
    common = ["--min-k", "6", "--max-k", "6", "--families", "debruijn", "--format", "json"]
    for extra in (["--best", "1", "--workers", "0", "--store", str(tmp_path)],
                  ["--settings", "bfs de=4"]):
        assert main(["network-table", "table4", *common, *extra]) == 0
        (row,) = json.loads(capsys.readouterr().out)
        assert (row["graph"], row["n"]) == ("debruijn_6", 64) and row["R"] >= 6
        assert main(["network-table", "table5", *common, *extra]) == 0
        (row,) = json.loads(capsys.readouterr().out)
        assert row["R"] is None
        assert "gossip topologies are limited to 32 nodes" in str(row.get("error") or
                                                                   row["setting"])
    with pytest.raises(FormatError, match="64 nodes, more than the 32 supported$"):
        topologies.topology("debruijn", k=6)
    with pytest.raises(FormatError, match="524288 nodes, more than the 262144 supported for "
                       "broadcast$"):
        topologies.topology("debruijn", k=19, max_nodes=topologies.MAX_BROADCAST_NODES)
    with pytest.raises(ValueError, match="max_nodes must be at most 262144"):
        topologies.topology("debruijn", k=3, max_nodes=(1 << 18) + 1)


def test_table3_by_the_portfolio_on_the_sweep_runner(monkeypatch, capsys, tmp_path):
    from pipegossip.paper import heuristics as network_tables
    tables = network_tables.paper_tables()
    small = dict(tables, table3=[{"graph": "Mesh 4x4", "topology": {"name": "mesh", "a": 4,
                                                                      "b": 4},
                                  "n": 16, "m": 24, "RS": {"2.0": [8, 20]}}])
    monkeypatch.setattr(network_tables, "paper_tables", lambda: small)
    assert main(["network-table", "table3", "--best", "2", "--format", "json", "--workers", "0",
                 "--store", str(tmp_path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["T"] == row["R"] + 2 * row["S"] and row["paper_T"] == 48
    assert row["S"] >= 15 and row["R"] >= 6 and row["status"] == "done"


def test_optimum_table_marks_the_optimal_heuristics(monkeypatch):
    pytest.importorskip("pysat")
    from pipegossip.paper import heuristics as network_tables
    monkeypatch.setattr(network_tables, "OPTIMUM_ROWS", (("knodel", {"n": 8}),))
    (row,) = list(network_tables.optimum_rows(budget=1))
    # Knodel's dimension order is optimal; the matching heuristic is a round over
    assert (row["graph"], row["optimum"], row["best"], row["matching"]) == ("knodel_8", 3, "3*", "4")
    assert row["best_by"] == "dimension order" and row["model"] == "F1"


def test_optimum_table_other_models():
    # one row per model; under H1 the heuristics' F1 rounds are split in two
    # (C_4: F1 2 rounds, H1 needs 4, which the split matching meets)
    pytest.importorskip("pysat")
    from pipegossip.paper import heuristics as network_tables
    rows = list(network_tables.optimum_rows(budget=1, models=("F1", "H1", "Fstar"),
                                            rows=(("cycle", {"n": 4}),)))
    assert [(r["model"], r["optimum"], r["best"]) for r in rows] == [
        ("F1", 2, "2*"), ("H1", 4, "4*"), ("Fstar", 2, "2*")]


def test_optimum_table_command(monkeypatch, capsys):
    # the documented command: --row-timeout and --models apply to optimum
    pytest.importorskip("pysat")
    from pipegossip.paper import heuristics as network_tables
    monkeypatch.setattr(network_tables, "OPTIMUM_ROWS", (("cycle", {"n": 4}),))
    assert main(["network-table", "optimum", "--row-timeout", "60", "--models", "F1,H1"]) == 0
    out = capsys.readouterr().out
    assert "| cycle_4 | F1 | 4 | 4 | 2 | 2 |" in out and "| cycle_4 | H1 | 4 | 4 | 2 | 4 |" in out


@pytest.mark.parametrize("argv,text", [
    (["optimum", "--models", "F1,H2"], "--models: unknown 'H2'"),
    (["optimum", "--models", "H1,H1"], "--models: a repeat"),
    (["table5", "--models", "F1"], "--models applies only to optimum")])
def test_optimum_table_models_refused(capsys, argv, text):
    assert main(["network-table", *argv]) == 2
    assert text in capsys.readouterr().err


def test_best_rows_in_this_process_run_each_row_in_a_child_a_signal_can_stop(monkeypatch,
                                                                               tmp_path):
    # A row's search may hold the interpreter in compiled code for minutes, where
    # no signal handler runs (a SIGTERM was ignored for 20 s): with --workers 0
    # each row runs in the sweep's killable child, with no time limit.
    from pipegossip.sweeps import heuristics as network_sweep
    from pipegossip.sweeps.runner import SweepOptions
    seen = []

    def run(name, jobs, options):
        seen.append(options)
        raise KeyboardInterrupt  # stop here: only the options matter

    monkeypatch.setattr(network_sweep, "run_sweep", run)
    from pipegossip.paper import heuristics as network_tables
    paper = network_tables.paper_tables()
    for workers, timeout, expect in ((0, None, network_sweep.IN_CHILD_S), (0, 30.0, 30.0),
                                     (2, None, None)):
        options = SweepOptions(tmp_path / "store", workers=workers, timeout=timeout)
        with pytest.raises(KeyboardInterrupt):
            list(network_sweep.best_rows("table5", paper, 1.0, options, max_k=3,
                                         families=("debruijn",)))
        assert seen[-1].timeout == expect and seen[-1].workers == workers


def test_random_rows_are_a_seeded_graph_of_the_papers_size():
    # the paper's Random rows give only n and m: ours is G(n, m) with a printed seed,
    # the same graph every time, and labelled as not the paper's graph
    from pipegossip.sweeps.heuristics import row_label, table_topology
    from pipegossip.paper.heuristics import paper_tables
    tables = paper_tables()
    (big,) = [p for p in tables["table1"] if p["topology"]["name"] == "random"]
    (small,) = [p for p in tables["table3"] if p["topology"]["name"] == "random"]
    assert (big["n"], big["m"], big["HR"], big["time_s"]) == (10000, 80000, 17, 35393)
    assert small["RS"]["2.0"] == [19, 1009] and small["RS"]["0"] == [13, 1281]
    spec = small["topology"]
    a, b = table_topology(spec), table_topology(spec)
    assert (a.n, a.m) == (spec["n"], spec["m"]) == (1000, 8000)
    assert np.array_equal(a.edges, b.edges)
    assert not np.array_equal(a.edges, table_topology(dict(spec, seed=spec["seed"] + 1)).edges)
    assert row_label(small) == ("Random 1000,8000 (ours: G(n, m) seed 1, not the paper's "
                                "graph)")
    assert row_label(tables["table3"][0]) == "Mesh 20x20"
    with pytest.raises(ValueError, match=r"G\(30, 20\) with seed 1 is not connected"):
        table_topology({"name": "random", "n": 30, "m": 20, "seed": 1})


def test_table3_random_row_on_the_sweep_runner(monkeypatch, capsys, tmp_path):
    from pipegossip.paper import heuristics as network_tables
    tables = network_tables.paper_tables()
    small = dict(tables, table3=[{"graph": "Random 24,60", "topology": {
        "name": "random", "n": 24, "m": 60, "seed": 3}, "n": 24, "m": 60,
        "RS": {"0.5": [9, 30]}}])
    monkeypatch.setattr(network_tables, "paper_tables", lambda: small)
    argv = ["network-table", "table3", "--format", "json"]
    assert main(argv + ["--best", "1", "--workers", "0", "--store", str(tmp_path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["graph"] == "Random 24,60 (ours: G(n, m) seed 3, not the paper's graph)"
    assert row["status"] == "done" and row["S"] >= 23 and row["R"] >= 5
    assert main(argv) == 0  # the per-setting table builds the same graph
    (plain,) = json.loads(capsys.readouterr().out)
    assert plain["graph"] == row["graph"] and plain["S"] >= 23


def test_families_picks_table1_and_table3_rows(monkeypatch, capsys, tmp_path):
    # --families runs the rows of one topology alone (Table 1's Random row without
    # the six others); a name the table does not have is refused in one line
    from pipegossip.paper import heuristics as network_tables
    tables = network_tables.paper_tables()
    mesh = {"graph": "Mesh 4x4", "topology": {"name": "mesh", "a": 4, "b": 4}, "n": 16,
            "m": 24, "RS": {"0.5": [8, 20]}}
    rnd = {"graph": "Random 24,60", "topology": {"name": "random", "n": 24, "m": 60,
                                                  "seed": 3}, "n": 24, "m": 60,
           "RS": {"0.5": [9, 30]}}
    monkeypatch.setattr(network_tables, "paper_tables", lambda: dict(tables, table3=[mesh, rnd]))
    for extra in ([], ["--best", "1", "--workers", "0", "--store", str(tmp_path)]):
        for fam, want in (("random", ["Random 24,60"]), ("mesh", ["Mesh 4x4"]),
                          ("mesh,random", ["Mesh 4x4", "Random 24,60"])):
            assert main(["network-table", "table3", "--families", fam, "--format", "json",
                         *extra]) == 0
            rows = json.loads(capsys.readouterr().out)
            assert [r["graph"].split(" (")[0] for r in rows] == want
    assert main(["network-table", "table3", "--families", "ccc"]) == 2
    assert capsys.readouterr().err.strip().endswith("unknown 'ccc' (expected mesh, random)")
    monkeypatch.undo()
    assert main(["network-table", "table1", "--families", "torus"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "unknown 'torus' (expected mesh, hypercube, knodel, butterfly, debruijn, pancake, "
        "random)")
