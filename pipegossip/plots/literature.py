"""Pictures for ``pipegossip literature-table``: our numbers against the papers'.

Each figure has a panel of the values and a panel of the differences on a
linear integer axis: the findings are off by one or two, which a log or
symlog axis of the values would hide. Series with equal values keep apart by
marker shape and fill, and their labels say which ones coincide.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.colors import BoundaryNorm
from matplotlib.figure import Figure

from .figures import fitted_title, integer_ticks, legend_outside

__all__ = ["plot_table", "table_figure"]


def plot_table(table: str, rows: list[dict], fmt: str = "png") -> bytes:
    """:func:`table_figure` as PNG or SVG bytes (no time stamp, so reproducible)."""
    buf = io.BytesIO()
    table_figure(table, rows).savefig(
        buf, format=fmt, dpi=110,
        metadata={"Software": None} if fmt == "png" else {"Creator": None, "Date": None})
    return buf.getvalue()


def table_figure(table: str, rows: list[dict]) -> Figure:
    """Draw ``literature-table`` rows: R against N (path-cycle), messages
    against K (polling) or calls against n (short-messages)."""
    if table == "short-messages":
        return _short_messages(rows)
    if table == "path-cycle":
        return _path_cycle(rows)
    return _polling(rows)


def _with_twins(series: dict[str, list]) -> dict[str, str]:
    """Label -> label saying which other series have exactly the same values."""
    out = {}
    for label, values in series.items():
        same = [other for other, v in series.items() if other != label and v == values]
        out[label] = label + (f" (= {', '.join(same)})" if same else "")
    return out


def _zero_line(ax, differences: list[int]) -> None:
    """The 0 line, and room for +-1 even when every difference is 0."""
    ax.axhline(0, color="#555555", linewidth=0.8)
    ax.set_ylim(min([-1.5, *[d - 0.5 for d in differences]]),
                max([1.5, *[d + 0.5 for d in differences]]))


def _path_cycle(rows: list[dict]) -> Figure:
    fig = Figure(figsize=(13, 5), layout="constrained")
    ax, dx = fig.subplots(1, 2, width_ratios=(3, 2))
    n = [r["N"] for r in rows]
    keys = (("path_p1", "path, p=1", "#d95f02", "o", True),
            ("path_p2", "path, p>=2", "#7570b3", "o", False),
            ("cycle_p1", "cycle, p=1", "#1b9e77", "^", True),
            ("cycle_p2", "cycle, p>=2", "#e7298a", "^", False))
    labels = _with_twins({label: [r[key] for r in rows] for key, label, *_ in keys})
    for key, label, colour, marker, filled in keys:
        # hollow markers are drawn larger, so a filled twin stays visible inside
        ax.plot(n, [r[key] for r in rows], marker, color=colour, linestyle="none",
                markersize=3.5 if filled else 6.5,
                markerfacecolor=colour if filled else "none", label=f"{labels[label]}: our R")
        ax.plot(n, [r[key + "_table1"] for r in rows], "-", color=colour, linewidth=0.8,
                label=f"{label}: Table 1")
        dx.plot(n, [r[key] - r[key + "_table1"] for r in rows], marker, color=colour,
                markersize=3.5 if filled else 6.5, markerfacecolor=colour if filled else "none",
                linestyle="none", label=label)
    ax.set_xlabel("N (nodes)")
    ax.set_ylabel("rounds R")
    ax.set_title("Gossip on paths and cycles under H*: validated R and Table 1")
    _zero_line(dx, [r[key] - r[key + "_table1"] for r in rows for key, *_ in keys])
    dx.set_xlabel("N (nodes)")
    dx.set_ylabel("our R - Table 1")
    dx.set_title("Difference (0: as Table 1)")
    for a in (ax, dx):
        integer_ticks(a.xaxis, a.yaxis)
        a.grid(alpha=0.3)
    legend_outside(ax, ncol=1)
    legend_outside(dx)
    return fig


def _polling(rows: list[dict]) -> Figure:
    fig = Figure(figsize=(13, 5), layout="constrained")
    ax, dx = fig.subplots(1, 2)
    k = [r["K"] for r in rows]
    keys = (("complete_messages", "K_N: our messages", "#1b9e77", "o", 7.0, "none"),
            ("prop3_stated", "K_N: Prop. 3 as stated", "#d95f02", "x", 6.0, None),
            ("hypercube_messages", "Q_K: our messages", "#7570b3", "s", 3.5, None),
            ("cor6_bound", "Q_K: Cor. 6 bound", "#e7298a", "+", 8.0, None))
    labels = _with_twins({label: [r[key] for r in rows] for key, label, *_ in keys})
    for key, label, colour, marker, size, face in keys:
        # messages per node: all four on one linear axis without a log scale
        ax.plot(k, [r[key] / r["N"] for r in rows], marker + "-", color=colour,
                markersize=size, linewidth=0.8, label=labels[label],
                **({"markerfacecolor": face} if face else {}))
    ax.set_xlabel("K (N = 2^K nodes), 2K rounds")
    ax.set_ylabel("messages / N")
    ax.set_title("Polling in 2K rounds: messages per node")
    for key, ref, label, colour, marker in (
            ("complete_messages", "prop3_stated", "K_N: ours - Prop. 3 as stated", "#d95f02", "o"),
            ("hypercube_messages", "cor6_bound", "Q_K: ours - Cor. 6 bound", "#7570b3", "s")):
        dx.plot(k, [r[key] - r[ref] for r in rows], marker + "-", color=colour, markersize=5,
                linewidth=0.8, label=label)
    _zero_line(dx, [r[key] - r[ref] for r in rows for key, ref in
                    (("complete_messages", "prop3_stated"), ("hypercube_messages", "cor6_bound"))])
    dx.set_xlabel("K (N = 2^K nodes)")
    dx.set_ylabel("messages")
    dx.set_title("Our count minus the paper's (0: as stated)")
    for a in (ax, dx):
        integer_ticks(a.xaxis)
        a.grid(alpha=0.3)
    integer_ticks(dx.yaxis)
    legend_outside(ax)
    legend_outside(dx)
    return fig


def _short_messages(rows: list[dict]) -> Figure:
    """Left: c(n, p) / (n^2 / 2p) against n; right: our calls above the lower bound."""
    from matplotlib import colormaps

    fig = Figure(figsize=(14, 5), layout="constrained")
    left, right = fig.subplots(1, 2)
    ps = sorted({r["p"] for r in rows})
    cmap = colormaps["viridis"].resampled(max(len(ps), 2))
    for i, p in enumerate(ps):
        mine = [r for r in rows if r["p"] == p]
        n = [r["n"] for r in mine]
        # dividing by n^2/(2p), the leading term, puts every p on one scale
        scale = [x * x / (2 * p) for x in n]
        left.plot(n, [r["calls"] / s for r, s in zip(mine, scale)], ".", color=cmap(i),
                  markersize=4, label=f"p={p}: our calls")
        left.plot(n, [r["lower"] / s for r, s in zip(mine, scale)], "-", color=cmap(i),
                  linewidth=0.7, label=f"p={p}: lower bound")
    left.set_xlabel("n (nodes)")
    left.set_ylabel("calls / (n^2 / 2p)")
    left.set_title(fitted_title("c(n,p): our calls (dots) and the lower bound (lines)", 5.5))
    integer_ticks(left.xaxis)
    left.grid(alpha=0.3)
    legend_outside(left, ncol=1)
    # The gap as a p x n grid: a zig-zag line per p hid which n were off.
    ns = sorted({r["n"] for r in rows})
    gap = np.full((len(ps), len(ns)), np.nan)
    for r in rows:
        gap[ps.index(r["p"]), ns.index(r["n"])] = r["gap"]
    top = int(np.nanmax(gap)) if np.isfinite(gap).any() else 0
    bounds = np.arange(-0.5, top + 1.5)
    image = right.imshow(gap, aspect="auto", interpolation="nearest", origin="lower",
                         cmap=colormaps["magma_r"].resampled(len(bounds) - 1),
                         norm=BoundaryNorm(bounds, len(bounds) - 1),
                         extent=(ns[0] - 0.5, ns[-1] + 0.5, ps[0] - 0.5, ps[-1] + 0.5))
    bar = fig.colorbar(image, ax=right, ticks=range(top + 1))
    bar.set_label("our calls - lower bound")
    right.set_xlabel("n (nodes)")
    right.set_ylabel("p (packet size)")
    right.set_title("Gap to the lower bound (0: optimal)")
    integer_ticks(right.xaxis, right.yaxis)
    return fig
