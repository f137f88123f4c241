"""Every kind of picture, rendered: a sane size, no text outside the figure,
legends that cover no data, no text and no other axes, integer ticks where
the axis counts, and what each picture must show (partners, the goal, kinds
of N apart, missing points marked, findings on a linear axis)."""

import json
import struct

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.legend import Legend
from matplotlib.text import Text

from pipegossip.hw.fpga.sweep import SWEEP_COLUMNS, sweep_figure
from pipegossip.cli.literature import table_rows
from pipegossip.plots.literature import table_figure
from pipegossip.model import RunConfig, simulate
from pipegossip.model.algorithms.limits import recursive_doubling
from pipegossip.model.algorithms.polling import polling_general
from pipegossip.model.schedules.goal import GOAL_TEXT
from pipegossip.model.schedules.validate import validate
from pipegossip.model.sweeps import family_sweep
from pipegossip.plots.figures import figure_bytes, runtable_figure, scaling_figure, utilization_figure
from pipegossip.plots.schedule import schedule_figure
from pipegossip.cli.sweep import _fpga_figure, efficiency_figure

LONG = ("N=8 order=pipelined receive=ordered substitute=off sessions=1 channels=none\n"
        "N=8 L=21 mu=5.3333 E=66.67% used=112")


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def _drawn(fig):
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _texts(fig):
    """The texts that are drawn (tick labels of ticks outside the view are not)."""
    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                loc = tick.get_loc()
                if loc is None or not lo - 1e-9 * max(1, abs(hi)) <= loc <= hi + 1e-9 * max(1, abs(hi)):
                    hidden.update({id(tick.label1), id(tick.label2)})
    return [t for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and id(t) not in hidden]


def _data_points(ax) -> np.ndarray:
    """Display coordinates of the data drawn in ``ax`` (lines, markers, bars)."""
    pts = []
    for line in ax.get_lines():
        xy = np.asarray(line.get_xydata(), dtype=float)
        if len(xy) and line.get_transform().contains_branch(ax.transData):
            pts.append(ax.transData.transform(xy))
    for patch in ax.patches:
        box = patch.get_window_extent()
        pts.append(np.array([[box.x0, box.y1], [box.x1, box.y1], [(box.x0 + box.x1) / 2, box.y1]]))
    for coll in ax.collections:
        if isinstance(coll, LineCollection):
            for seg in coll.get_segments():
                pts.append(ax.transData.transform(seg))
    if not pts:
        return np.zeros((0, 2))
    pts = np.concatenate(pts)
    return pts[np.isfinite(pts).all(axis=1)]


def readable(fig, min_px=(400, 250), max_px=(2400, 2000)) -> None:
    """The checks every picture passes."""
    width, height = _png_size(figure_bytes(fig))
    assert min_px[0] <= width <= max_px[0] and min_px[1] <= height <= max_px[1], (width, height)
    renderer = _drawn(fig)
    page = fig.bbox
    tight = fig.get_tightbbox(renderer)
    assert tight.x0 >= -0.01 and tight.y0 >= -0.01, "something is cut off left or below"
    assert tight.x1 <= fig.get_figwidth() + 0.01 and tight.y1 <= fig.get_figheight() + 0.01, \
        "something is cut off right or above"
    for text in _texts(fig):
        box = text.get_window_extent(renderer)
        assert box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1 and box.y0 >= page.y0 - 1 \
            and box.y1 <= page.y1 + 1, f"text {text.get_text()!r} is clipped"
    legends = [a.get_legend() for a in fig.axes if a.get_legend()] + list(fig.legends)
    for legend in legends:
        box = legend.get_window_extent(renderer)
        mine = [t for t in legend.findobj(Text)]
        for ax in fig.axes:
            pts = _data_points(ax)
            inside = ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
                      & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1))
            assert not inside.any(), f"legend covers data of {ax.get_title()!r}"
            if legend.axes is not ax and legend not in fig.legends:
                assert not box.overlaps(ax.bbox), "legend covers other axes"
        for text in _texts(fig):
            if text in mine or any(text in other.findobj(Text) for other in legends):
                continue
            assert not box.overlaps(text.get_window_extent(renderer)), \
                f"legend covers the text {text.get_text()!r}"


def integer_ticks(axis) -> bool:
    lo, hi = sorted(axis.get_view_interval())
    ticks = [t for t in axis.get_majorticklocs() if lo - 1e-9 <= t <= hi + 1e-9]
    return bool(ticks) and all(float(t).is_integer() for t in ticks)


def _styles(ax) -> list[tuple]:
    legend = ax.get_legend()
    out = []
    for h in legend.legend_handles:
        out.append((str(h.get_color()) if hasattr(h, "get_color") else None,
                    getattr(h, "get_marker", lambda: None)(),
                    getattr(h, "get_linestyle", lambda: None)(),
                    str(getattr(h, "get_markerfacecolor", lambda: None)())))
    return out


# --- run pictures ------------------------------------------------------------------------

def test_utilization():
    r = simulate(RunConfig.family(8, "pipelined"))
    fig = utilization_figure(r.utilization, title=LONG, n=8)
    readable(fig)
    ax = fig.axes[0]
    assert integer_ticks(ax.xaxis) and integer_ticks(ax.yaxis)


@pytest.mark.parametrize("n,order", [(4, "identity"), (8, "pipelined"), (40, "pipelined")])
def test_runtable(n, order):
    t = simulate(RunConfig.family(n, order), table=True).table
    fig = runtable_figure(t, title=LONG)
    readable(fig)
    assert integer_ticks(fig.axes[0].xaxis)
    if n <= 8:  # peers written in the cells, at least 7.5 points (10 px in the report)
        sizes = [x.get_fontsize() for x in fig.axes[0].texts]
        assert sizes and min(sizes) >= 7.5


def test_model_and_dump_pictures_share_one_time_scale():
    short = simulate(RunConfig.family(6, "pipelined"), table=True)
    figs = [runtable_figure(short.table, steps=30), utilization_figure(short.utilization, steps=30),
            runtable_figure(simulate(RunConfig.family(6, "identity"), table=True).table,
                            steps=30)]
    places = []
    for fig in figs:
        _drawn(fig)
        ax = fig.axes[0]
        places.append(tuple(np.round(ax.transData.transform([(1, 0), (30, 0)])[:, 0], 1)))
        assert fig.get_figwidth() == figs[0].get_figwidth()
    assert len(set(places)) == 1, places


def test_scaling_series_differ_in_more_than_colour():
    pts = family_sweep([3, 4, 6, 8], families=("identity", "pipelined"), seeds=(0,))
    fig = scaling_figure(pts, title="N = 2..8, a title long enough to need a second line when "
                         "the figure is narrow, which it is not")
    readable(fig)
    styles = _styles(fig.axes[1])
    assert len(styles) == len(set(styles))
    assert integer_ticks(fig.axes[0].xaxis)


# --- schedules ---------------------------------------------------------------------------

def test_schedule_draws_partners_and_the_goal():
    s = recursive_doubling(8)
    v = validate(s)
    fig = schedule_figure(s, v)
    readable(fig)
    ax, bx = fig.axes[:2]
    (links,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    ends = {(round(float(a[0])), int(a[1]), int(b[1])) for a, b in links.get_segments()}
    # round r pairs node i with node i xor 2^(r-1): partners, not a solid block
    assert ends == {(r, i, i ^ (1 << (r - 1))) for r in (1, 2, 3) for i in range(8)}
    goal = [line for line in bx.get_lines() if "goal:" in str(line.get_label())]
    assert goal and goal[0].get_ydata()[0] == 64
    assert GOAL_TEXT["gossip"] in goal[0].get_label()
    assert integer_ticks(ax.xaxis) and integer_ticks(ax.yaxis) and integer_ticks(bx.xaxis)


def test_polling_is_drawn_against_its_own_goal():
    s = polling_general(12)
    v = validate(s)
    fig = schedule_figure(s, v)
    readable(fig)
    bx = fig.axes[1]
    (goal,) = [line for line in bx.get_lines() if "goal:" in str(line.get_label())]
    assert goal.get_ydata()[0] == 12 and GOAL_TEXT["polling"] in goal.get_label()
    held = [line for line in bx.get_lines() if line is not goal][0].get_ydata()
    assert held[-1] == 12 and held[0] == 1  # the root's own response, then all twelve


# --- sweeps ------------------------------------------------------------------------------

def _kinds_apart(ax) -> None:
    for line in ax.get_lines():
        if not line.get_transform().contains_branch(ax.transData):
            continue  # a reference line across the axes
        xs = [int(x) for x in line.get_xdata() if np.isfinite(x)]
        if len(xs) > 1:  # not size_family: the test states the kinds itself
            kinds = {"2^k" if n & (n - 1) == 0 else "3 x 2^k" if n % 3 == 0 else "other"
                     for n in xs}
            assert len(kinds) == 1, (line.get_label(), xs)


def test_efficiency_sweep_keeps_kinds_of_n_apart_and_marks_failures():
    pts = [(n, 0.7 - 0.004 * n) for n in (2, 3, 4, 6, 8, 12, 16, 24, 32)]
    fig = efficiency_figure({"identity + Algorithm 2 + any": pts}, title="E versus N",
                            failed=[48, 64])
    readable(fig)
    ax = fig.axes[0]
    _kinds_apart(ax)
    (failed,) = [line for line in ax.get_lines() if "failed" in str(line.get_label())]
    assert list(failed.get_xdata()) == [48, 64]
    styles = _styles(ax)
    assert len(styles) == len(set(styles))


def test_sweep_report_cells_figure():
    records = [{"job": "fpga", "result": {"device": "ice40-up5k", "feature": f, "n": n,
                                          "cells": c * n * n}}
               for f, c in (("base", 30), ("channels", 31)) for n in (4, 6, 8, 12, 16)]
    fig = _fpga_figure(records, lambda r: r["cells"], "logic cells", failed=[24])
    readable(fig)
    _kinds_apart(fig.axes[0])


def _fpga_rows():
    rows = []
    for feature in ("base", "sessions4"):
        for width in (8, 16):
            for n in (4, 6, 8, 12, 16, 24):
                status = "ok" if n < 16 else "does not fit" if n == 16 else "timeout"
                r = dict.fromkeys(SWEEP_COLUMNS)
                r.update(device="ice40-up5k", feature=feature, n=n, width=width, status=status,
                         logic_cell="ICESTORM_LC", available=5280, constraint_mhz=12,
                         used=None if status == "timeout" else 3 * n * n * width,
                         fabric=2 * n * n * width + (7 if feature == "base" else 0)
                         if status == "ok" else None,
                         fmax_mhz=90 - 2 * n - width if status == "ok" else None)
                rows.append(r)
    return rows


def test_fpga_sweep_marks_widths_and_missing_points():
    fig = sweep_figure(_fpga_rows())
    readable(fig)
    ax_cells, ax_fmax = fig.axes[:2]
    _kinds_apart(ax_cells)
    _kinds_apart(ax_fmax)
    labels = [t.get_text() for t in ax_fmax.get_legend().get_texts()]
    assert any("does not fit" in t for t in labels)
    assert any("timed out" in t for t in labels)
    styles = _styles(ax_fmax)
    assert len(styles) == len(set(styles))  # every width and feature told apart


# --- literature --------------------------------------------------------------------------

@pytest.mark.parametrize("table,kwargs", [("path-cycle", dict(max_n=14)),
                                          ("polling", dict(max_k=6)),
                                          ("short-messages", dict(max_n=12, max_p=3))])
def test_literature(table, kwargs):
    rows = table_rows(table, **kwargs)
    fig = table_figure(table, json.loads(json.dumps(rows)))
    readable(fig)
    for ax in fig.axes:
        if ax.get_label() != "<colorbar>":
            assert ax.get_yscale() == "linear" and ax.get_xscale() == "linear"


def test_literature_polling_shows_the_off_by_one():
    rows = table_rows("polling", max_k=5)
    dx = table_figure("polling", rows).axes[1]
    diffs = {line.get_label(): list(line.get_ydata()) for line in dx.get_lines()
             if "ours" in str(line.get_label())}
    assert diffs["K_N: ours - Prop. 3 as stated"] == [
        r["complete_messages"] - r["prop3_stated"] for r in rows]
    assert integer_ticks(dx.yaxis)


def test_literature_names_coinciding_series():
    rows = [{"K": k, "N": 1 << k, "complete_messages": 9 << (k - 3),
             "prop3_stated": (9 << (k - 3)) - 1, "hypercube_messages": 9 << (k - 3),
             "cor6_bound": 10 << (k - 3)} for k in (3, 4, 5)]
    ax = table_figure("polling", rows).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "K_N: our messages (= Q_K: our messages)" in labels
    markers = {line.get_label(): line.get_marker() for line in ax.get_lines()}
    assert markers["K_N: our messages (= Q_K: our messages)"] != \
        markers["Q_K: our messages (= K_N: our messages)"]


def test_readable_catches_a_clipped_title_and_a_legend_on_the_data():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3))
    ax = fig.add_subplot()
    ax.set_title("a title far too long for a figure five inches wide, running off both sides")
    with pytest.raises(AssertionError, match="cut off|clipped"):
        readable(fig)
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 1, 2, 3], [3, 3, 3, 3], "o-", label="data under the legend")
    ax.set_ylim(2.9, 3.1)
    ax.legend(loc="center")
    with pytest.raises(AssertionError, match="legend covers"):
        readable(fig)
    assert isinstance(ax.get_legend(), Legend)


def test_report_pictures_share_the_dumps_time_scale():
    import base64
    from types import SimpleNamespace

    from pipegossip.waveforms.report import ReportItem
    from pipegossip.waveforms.report_html import _item_data
    from pipegossip.waveforms.sources import Source

    short = simulate(RunConfig.family(6, "pipelined"), table=True).table
    longer = simulate(RunConfig.family(6, "identity"), table=True).table
    assert longer.length > short.length
    item = ReportItem("t", Source("t", "text", "t", short),
                      readback=SimpleNamespace(table=longer))
    widths = {_png_size(base64.b64decode(png))[0] for png in _item_data(1, item)["figures"]}
    wide = runtable_figure(short, steps=longer.length)
    assert widths == {_png_size(figure_bytes(wide, dpi=100))[0]}
    assert widths != {_png_size(figure_bytes(runtable_figure(short), dpi=100))[0]}
