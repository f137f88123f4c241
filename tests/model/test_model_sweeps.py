import json

import pytest

from pipegossip.model import RunConfig, simulate
from pipegossip.plots.figures import figure_bytes, runtable_figure, scaling_figure, utilization_figure
from pipegossip.model.paper import DATA_FILE
from pipegossip.model.sweeps import PAPER_TABLE8, TABLE8_N, family_sweep, table8


def test_paper_table8_is_the_spec_transcription():
    paper = json.loads(DATA_FILE.read_text())["table8_paper"]
    assert list(TABLE8_N) == [2 ** k for k in range(1, 12)] == paper["N"]
    # docs/reference.md "Closed forms", efficiency (%) for N = 2, 4, ..., 2048.
    assert [PAPER_TABLE8[n] for n in TABLE8_N] == [100, 85.71, 73.68, 71.43, 69.66, 68.11,
                                                   67.55, 67.11, 66.88, 66.75, 65.34]


def test_table8_small_rows():
    rows = table8([2, 4, 8, 16])
    assert [r.n for r in rows] == [2, 4, 8, 16]
    assert rows[0].efficiency == 1.0 and rows[0].length == 2
    assert rows[2].length == 18  # one step shorter than the paper's 19
    for r in rows:
        run = simulate(RunConfig.family(r.n, "identity", receive="any", substitute=True))
        assert (r.length, r.efficiency) == (run.length, run.efficiency)
        assert r.paper_efficiency == PAPER_TABLE8[r.n] / 100
        assert r.efficiency >= r.paper_efficiency  # ours is never longer


@pytest.mark.slow
def test_table8_full_sweep_stays_above_two_thirds():
    rows = table8()
    assert not [r.n for r in rows if r.below_two_thirds]
    assert all(r.efficiency >= r.paper_efficiency for r in rows)


def test_family_sweep_random_spread_and_substitution_flag():
    points = family_sweep([4, 6], families=("identity", "random"), seeds=range(3))
    assert {(p.family, p.substitute, p.n) for p in points} == {
        (f, s, n) for f in ("identity", "random") for s in (False, True) for n in (4, 6)}
    rnd = [p for p in points if p.family == "random"]
    assert all(len(p.lengths) == 3 for p in rnd)
    ident = next(p for p in points if p.family == "identity" and not p.substitute and p.n == 6)
    assert ident.lengths == (simulate(RunConfig.family(6, "identity")).length,)


def test_figures_render():
    r = simulate(RunConfig.family(6, "pipelined", sessions=2), table=True)
    assert figure_bytes(utilization_figure(r.utilization, n=6))[:4] == b"\x89PNG"
    svg = figure_bytes(runtable_figure(r.table, title="six"), "svg").decode()
    assert "six" in svg and "S send" in svg and "R1" in svg  # legend and cell labels
    pts = family_sweep([3, 4], families=("pipelined",), seeds=(0,))
    assert b"Efficiency" in figure_bytes(scaling_figure(pts), "svg")
