"""``network-table table5``: gossip rows past the held-schedule limit run streamed.

The real limits (32,768 held, 49,152 streamed: ccc_12 and butterfly_12) are
shrunk so that ccc_4 and butterfly_4 (64 nodes) take the streamed path."""

import json

import pytest

from pipegossip import network_stream, network_sweep
from pipegossip.cli import main
from pipegossip.model.algorithms.coloring import color_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate
from pipegossip.network_tables import paper_tables


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
    from pipegossip.limits import MAX_GOSSIP_NODES, MAX_STREAMED_GOSSIP_NODES
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
