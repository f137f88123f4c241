"""``network-table table5``: gossip rows past the held-schedule limit run streamed.

The real limits (32,768 held, 49,152 streamed: ccc_12 and butterfly_12) are
shrunk so that ccc_4 and butterfly_4 (64 nodes) take the streamed path."""

import json

import pytest

from pipegossip.sweeps import heuristics_stream as network_stream, heuristics as network_sweep
from pipegossip.cli import main
from pipegossip.model.algorithms.coloring import color_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate
from pipegossip.paper.heuristics import paper_tables


@pytest.fixture
def small_limits(monkeypatch):
    for mod in (network_sweep, network_stream):
        monkeypatch.setattr(mod, "MAX_GOSSIP_NODES", 40)
    monkeypatch.setattr(network_stream, "MAX_STREAMED_GOSSIP_NODES", 64)


def _held(fam, k):
    """R and S of the paper's string on the held path."""
    colors = paper_tables()["table6"][fam][str(k)]
    v = validate(color_schedule(topology(fam, k=k), colors))
    return v.R, v.S, colors


def test_rows_past_the_held_limit_run_streamed_with_the_held_metrics(small_limits, capsys,
                                                                       tmp_path):
    argv = ["network-table", "table5", "--min-k", "4", "--max-k", "5", "--families",
            "ccc,butterfly", "--format", "json", "--best", "1", "--workers", "0",
            "--store", str(tmp_path)]
    assert main(argv) == 0
    rows = {r["graph"]: r for r in json.loads(capsys.readouterr().out)}
    for fam in ("ccc", "butterfly"):
        R, S, colors = _held(fam, 4)
        row = rows[f"{fam}_4"]
        assert (row["n"], row["R"], row["S"], row["status"]) == (64, R, S, "done")
        assert row["R"] == row["paper_HR"]
        assert row["by"] == (f"coloring {colors} (the paper's Table 6 string, streamed: "
                             "schedule not held or stored)")
        # past the streamed limit too (160 nodes): the held limit's row, no job
        big = rows[f"{fam}_5"]
        assert (big["R"], big["status"]) == (None, "not run")
        assert big["error"].startswith("gossip is limited to 40 nodes")


def test_the_per_setting_table_runs_the_same_rows_streamed(small_limits, capsys):
    assert main(["network-table", "table5", "--min-k", "4", "--max-k", "4", "--families",
                 "butterfly,ccc", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["graph"] for r in rows] == ["butterfly_4", "ccc_4"]
    for row in rows:
        R, _, colors = _held(row["graph"].split("_")[0], 4)
        assert row["R"] == R and row["lower"] == 6 and row["seconds"] >= 0
        assert row["setting"].startswith(f"coloring {colors} (")
        assert "streamed" in row["setting"]


def test_only_unit_cost_gossip_with_a_paper_string_in_the_window_streams(small_limits):
    colors = network_stream.streamed_colors
    assert colors({"name": "ccc", "k": 4}, "gossip") == "012021202"
    assert colors({"name": "ccc", "k": 4}, "broadcast") is None
    assert colors({"name": "ccc", "k": 3}, "gossip") is None  # 24 nodes: held
    assert colors({"name": "ccc", "k": 5}, "gossip") is None  # 160: past the window
    assert colors({"name": "debruijn", "k": 6}, "gossip") is None  # 64, no string


def test_the_real_window_holds_exactly_table5s_k12_rows():
    # the limit was lifted for the rows run (ccc_12, butterfly_12), not beyond
    from pipegossip.infra.budgets import MAX_GOSSIP_NODES, MAX_STREAMED_GOSSIP_NODES
    from pipegossip.model.schedules.topologies import _size
    assert MAX_GOSSIP_NODES == 32768 and MAX_STREAMED_GOSSIP_NODES == 49152
    assert {_size(f, {"k": 12}) for f in ("ccc", "butterfly")} == {49152}
    for fam in ("ccc", "butterfly"):
        assert network_stream.streamed_colors({"name": fam, "k": 12}, "gossip") == (
            paper_tables()["table6"][fam]["12"])
        assert network_stream.streamed_colors({"name": fam, "k": 11}, "gossip") is None


def test_a_streamed_row_takes_its_verdict_from_the_validation(monkeypatch):
    # a generator that loses the last round's first message: the row must fail
    from pipegossip.model.algorithms import coloring
    real = coloring.color_rounds

    def lossy(topo, colors, **kw):
        rounds = list(real(topo, colors, **kw))
        src, dptr, dst, iptr, items = rounds[-1]
        cut = int(iptr[1])
        rounds[-1] = (src[1:], dptr[1:] - 1, dst[1:], iptr[1:] - cut, items[cut:])
        return iter(rounds)
    monkeypatch.setattr(coloring, "color_rounds", lossy)
    with pytest.raises(AssertionError, match="streamed schedule is invalid: round 9, "
                       "message -: incomplete gossip"):
        network_stream.streamed_row({"topology": {"name": "ccc", "k": 4},
                                     "colors": "012021202"})


@pytest.fixture
def table6_limits(monkeypatch):
    """Held up to 24 nodes, streamed up to 64: the window's both edges fall on rows of
    Table 6 (ccc_3, butterfly_3, star_4, pancake_4 have 24 nodes; ccc_4, butterfly_4
    64; star_5, pancake_5 120)."""
    for mod in (network_sweep, network_stream):
        monkeypatch.setattr(mod, "MAX_GOSSIP_NODES", 24)
    monkeypatch.setattr(network_stream, "MAX_STREAMED_GOSSIP_NODES", 64)


def test_table6_streams_exactly_the_rows_in_the_window(table6_limits, capsys, monkeypatch):
    streamed = []
    real = network_stream.streamed_row

    def spy(config):
        streamed.append(config["topology"])
        return real(config)
    monkeypatch.setattr(network_stream, "streamed_row", spy)
    assert main(["network-table", "table6", "--max-k", "5", "--format", "json"]) == 0
    rows = {r["graph"]: r for r in json.loads(capsys.readouterr().out)}
    assert streamed == [{"name": "ccc", "k": 4}, {"name": "butterfly", "k": 4}]
    assert {g for g, r in rows.items() if r["schedule"] == "streamed"} == {"ccc_4",
                                                                           "butterfly_4"}
    assert {g for g, r in rows.items() if r["schedule"] == "held"} == {
        "ccc_3", "butterfly_3", "star_3", "star_4", "pancake_3", "pancake_4"}
    for g in ("ccc_5", "butterfly_5", "star_5", "pancake_5"):  # past the window
        r = rows[g]
        assert (r["n"], r["R"], r["S"]) == (160 if g[0] in "cb" else 120, None, None)
        assert r["schedule"].startswith("not run: gossip is limited to 24 nodes (")
    for g, r in rows.items():  # streamed or held, the same R and S as the held path
        if r["R"] is not None:
            fam, k = g.rsplit("_", 1)
            assert (r["R"], r["S"], r["S_lower"]) == (*_held(fam, int(k))[:2], r["n"] - 1)
            assert r["R"] == r["paper_R"]


def test_table6_markdown_marks_the_streamed_and_not_run_rows(table6_limits, capsys):
    assert main(["network-table", "table6", "--min-k", "4", "--max-k", "5",
                 "--families", "butterfly"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("| graph | n | colors | paper_R | R | S | S_lower | seconds "
                        "| cpu_s | schedule |")
    R, S, colors = _held("butterfly", 4)
    assert lines[2].startswith(f"| butterfly_4 | 64 | {colors} | 7 | {R} | {S} | 63 | ")
    assert lines[2].endswith(" | streamed |")
    assert lines[3].startswith("| butterfly_5 | 160 | 02103231023 | 11 | - | - | 159 | - "
                               "| - | not run: gossip is limited to 24 nodes")
    assert len(lines) == 4


def test_table6_families_must_be_its_own():
    assert main(["network-table", "table6", "--families", "star,debruijn"]) == 2


def test_the_real_table6_window_holds_star_pancake_8_and_ccc_butterfly_12():
    from pipegossip.infra.budgets import MAX_GOSSIP_NODES, MAX_STREAMED_GOSSIP_NODES
    from pipegossip.model.schedules.topologies import _size
    over = {f"{fam}_{k}" for fam, rows in paper_tables()["table6"].items() for k in rows
            if _size(fam, {"k": int(k)}) > MAX_GOSSIP_NODES}
    assert over == {"star_8", "pancake_8", "ccc_12", "butterfly_12"}
    for g in over:
        fam, k = g.rsplit("_", 1)
        assert network_stream.streamed_colors({"name": fam, "k": int(k)}, "gossip") == (
            paper_tables()["table6"][fam][k])
        assert _size(fam, {"k": int(k)}) <= MAX_STREAMED_GOSSIP_NODES
