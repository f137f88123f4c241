"""Figures in the paper's manner (matplotlib, no display needed).

* :func:`utilization_figure`: a run's utilisation profile (paper Figs. 8-12);
* :func:`runtable_figure`: the run-table as a picture (Fig. 4: send, receive
  and wait colours per processor and step);
* :func:`scaling_figure`: L and E versus N for order families with and
  without Algorithm 2 (Figs. 5-7, 13-15), random orders as mean and spread.

Figures are built with :class:`matplotlib.figure.Figure` directly (not
pyplot), so nothing depends on a GUI backend or global state.
"""

from __future__ import annotations

import io
import os
import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..infra.files import atomic_write
from ..model.runtable import IDLE, R, S, WR, WS, RunTable
from ..model.sweeps import SweepPoint

__all__ = [
    "ACTION_COLOURS", "utilization_figure", "runtable_figure", "scaling_figure",
    "save_figure", "figure_bytes", "integer_ticks", "fitted_title", "legend_outside",
    "size_family", "SIZE_FAMILIES", "mark_missing",
]

#: Colours of the run-table picture, by docs/reference.md "Trace codes" code.
ACTION_COLOURS = {
    IDLE: "#ffffff",
    WR: "#f4d35e",  # waiting to receive
    R: "#2a9d8f",   # receive
    WS: "#ee6c4d",  # waiting to send
    S: "#264653",   # send
}
_NAMES = {IDLE: "idle", WR: "WR wait to receive", R: "R receive", WS: "WS wait to send",
          S: "S send"}
_FAMILY_COLOURS = {"identity": "#d1495b", "random": "#edae49", "pipelined": "#00798c"}
_FAMILY_MARKERS = {"identity": "o", "random": "s", "pipelined": "^"}


def integer_ticks(*axes) -> None:
    """Whole-number ticks on each axis (steps, rounds, nodes, N are counts)."""
    for axis in axes:
        axis.set_major_locator(MaxNLocator(integer=True))


def fitted_title(text: str, width_in: float, fontsize: float = 12.0) -> str:
    """``text`` broken at spaces so that no line is wider than ``width_in`` inches.

    matplotlib never wraps a title; a long configuration line would run off
    the figure. A DejaVu Sans character averages about 0.6 em.
    """
    per_line = max(20, int(width_in * 72 / (0.6 * fontsize)))
    return "\n".join(textwrap.fill(line, per_line) for line in text.splitlines())


#: How each kind of N is drawn in sweeps over powers of two and 3 x 2^k:
#: (name, marker, line style, filled marker). Joining both kinds in one line
#: draws a zig-zag that is an artefact of the sizes, not a trend.
SIZE_FAMILIES = (("2^k", "o", "-", True), ("3 x 2^k", "s", "--", False),
                 ("other", "D", ":", False))


def size_family(n: int) -> str:
    """``"2^k"``, ``"3 x 2^k"`` or ``"other"``."""
    if n > 0 and n & (n - 1) == 0:
        return "2^k"
    if n > 0 and n % 3 == 0 and size_family(n // 3) == "2^k":
        return "3 x 2^k"
    return "other"


def mark_missing(ax, ns: Sequence[int], label: str, marker: str = "x",
                 colour: str = "#a0321c", hollow: bool = False) -> None:
    """Points without a value (failed, timed out, did not fit) as marks on the
    bottom edge of ``ax`` at their N, so a gap in a line is explained."""
    if len(ns):
        ax.plot(list(ns), [0.03] * len(ns), linestyle="none", marker=marker, markersize=7,
                markeredgewidth=1.6, color=colour, label=label, clip_on=False,
                markerfacecolor="white" if hollow else colour,
                transform=ax.get_xaxis_transform())


def legend_outside(ax, **kwargs) -> None:
    """The axes' legend to the right of it, where it cannot cover the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              fontsize="small", **kwargs)


#: Time-axis figures (run-table, utilisation) share fixed margins in inches,
#: so two of the same width draw step t at the same place: the report shows
#: the model and the dump on one time scale. The right margin holds the legend.
_LEFT, _RIGHT, _BOTTOM = 0.85, 2.0, 0.55
#: Inches per step while annotated cells still fit, and the widest figure
#: (13.5 in at the report's 100 dpi is no wider than its page, so the browser
#: does not scale the 7.5-point labels below 10 px).
_STEP_IN, _MAX_WIDTH = 0.26, 13.5


def _time_figure(span: int, height: float, title: str) -> tuple[Figure, object, float]:
    """A figure with one axes whose time axis spans ``span`` steps, and its step width."""
    width = min(_MAX_WIDTH, max(7.0, _LEFT + _RIGHT + _STEP_IN * span))
    title = fitted_title(title, width - _LEFT - _RIGHT + 1.0)
    top = 0.25 + 0.22 * (title.count("\n") + 1)
    height = height + top
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=_LEFT / width, right=1 - _RIGHT / width,
                        bottom=_BOTTOM / height, top=1 - top / height)
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlim(0.5, span + 0.5)
    integer_ticks(ax.xaxis)
    ax.set_xlabel("time step")
    return fig, ax, (width - _LEFT - _RIGHT) / span


def utilization_figure(utilization: Sequence[int] | np.ndarray, title: str | None = None,
                       n: int | None = None, steps: int | None = None) -> Figure:
    """Used slots per step, with the average mu (and N, the ceiling, if given).

    ``steps`` fixes the time axis at that many steps (at least the run's
    length): pictures of one width then share one time scale.
    """
    u = np.asarray(utilization)
    span = max(len(u), steps or 0, 1)
    fig, ax, _ = _time_figure(span, 2.6, title or f"Utilisation profile, L = {len(u)}")
    t = np.arange(1, len(u) + 1)
    ax.bar(t, u, width=1.0, color="#00798c", edgecolor="white", linewidth=0.3 if len(u) < 200 else 0)
    mu = u.sum() / len(u) if len(u) else 0.0
    ax.axhline(mu, color="#d1495b", linestyle="--", linewidth=1.2, label=f"mu = {mu:.3f}")
    if n is not None:
        ax.axhline(n, color="#555555", linestyle=":", linewidth=1.0, label=f"N = {n}")
    ax.set_ylabel("used slots u_t")
    ax.set_ylim(0, max([int(u.max()) if len(u) else 0] + ([n] if n else [])) * 1.08 + 0.5)
    integer_ticks(ax.yaxis)
    legend_outside(ax)
    return fig


def runtable_figure(table: RunTable, title: str | None = None,
                    annotate: bool | None = None, steps: int | None = None) -> Figure:
    """The run-table as coloured cells; peers written in the cells when they fit.

    ``steps`` fixes the time axis as in :func:`utilization_figure`.
    """
    n, length = table.n, table.length
    span = max(length, steps or 0, 1)
    if annotate is None:
        # 7.5-point peers ("S12") need about a quarter inch per cell.
        annotate = n <= 64 and _STEP_IN * span <= _MAX_WIDTH - _LEFT - _RIGHT
    row = 0.3 if annotate else 0.14
    fig, ax, _ = _time_figure(span, min(11.0, max(2.6, 0.6 + row * n)),
                              title or f"Run-table, N = {n}, L = {length}")
    cmap = ListedColormap([ACTION_COLOURS[c] for c in (IDLE, WR, R, WS, S)])
    ax.imshow(table.actions, cmap=cmap, vmin=-0.5, vmax=4.5, aspect="auto",
              interpolation="nearest", extent=(0.5, length + 0.5, n - 0.5, -0.5))
    ax.set_xlim(0.5, span + 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    if annotate:
        for p in range(n):
            for t in range(length):
                a = int(table.actions[p, t])
                if a in (R, S):
                    ax.text(t + 1, p, f"{'S' if a == S else 'R'}{int(table.peers[p, t])}",
                            ha="center", va="center", fontsize=7.5,
                            color="white" if a == S else "black")
    shown = range(0, n, max(1, -(-n // 24)))  # at most 24 row labels
    ax.set_yticks(list(shown))
    ax.set_yticklabels([f"p{p}" for p in shown], fontsize=8)
    ax.legend(handles=[Patch(facecolor=ACTION_COLOURS[c], edgecolor="#999999", label=_NAMES[c])
                       for c in (S, R, WS, WR, IDLE)],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              fontsize="small", frameon=False)
    return fig


def scaling_figure(points: Sequence[SweepPoint], title: str | None = None) -> Figure:
    """L (log scale) and E versus N, one line per family and Algorithm 2 setting.

    Random orders are drawn as the mean over seeds with a band from the
    smallest to the largest value.
    """
    fig = Figure(figsize=(12.5, 4.2), layout="constrained")
    ax_l, ax_e = fig.subplots(1, 2)
    keys = sorted({(p.family, p.substitute) for p in points},
                  key=lambda k: (k[1], list(_FAMILY_COLOURS).index(k[0])
                                 if k[0] in _FAMILY_COLOURS else 9))
    for family, sub in keys:
        pts = sorted((p for p in points if p.family == family and p.substitute == sub),
                     key=lambda p: p.n)
        ns = np.array([p.n for p in pts])
        colour = _FAMILY_COLOURS.get(family, "#555555")
        # Algorithm 2 differs in dash, marker fill and label, not in colour alone.
        style = "--" if sub else "-"
        marker = _FAMILY_MARKERS.get(family, "D")
        label = family + (" + Alg. 2 (any)" if sub else "")
        for ax, values in ((ax_l, [p.lengths for p in pts]), (ax_e, [p.efficiencies for p in pts])):
            scale = 100.0 if ax is ax_e else 1.0
            mean = np.array([np.mean(v) for v in values]) * scale
            ax.plot(ns, mean, style, color=colour, label=label, marker=marker, markersize=4,
                    markerfacecolor="white" if sub else colour, markeredgewidth=1.0)
            if any(len(v) > 1 for v in values):
                lo = np.array([np.min(v) for v in values]) * scale
                hi = np.array([np.max(v) for v in values]) * scale
                ax.fill_between(ns, lo, hi, color=colour, alpha=0.18, linewidth=0)
    ax_l.set_yscale("log")
    ax_l.set_xlabel("N")
    ax_l.set_ylabel("L (steps)")
    ax_l.set_title("Run length")
    ax_e.axhline(200 / 3, color="#555555", linestyle=":", linewidth=1.0, label="2/3")
    ax_e.set_xlabel("N")
    ax_e.set_ylabel("E (%)")
    ax_e.set_title("Efficiency")
    integer_ticks(ax_l.xaxis, ax_e.xaxis)
    legend_outside(ax_e)
    if title:
        fig.suptitle(fitted_title(title, 10.0))
    return fig


def figure_bytes(fig: Figure, fmt: str = "png", dpi: int = 120) -> bytes:
    """The figure rendered as PNG or SVG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    return buf.getvalue()


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 120) -> None:
    """Write PNG or SVG, chosen by the suffix, atomically."""
    suffix = os.fspath(path).rsplit(".", 1)[-1].lower()
    if suffix not in ("png", "svg"):
        raise ValueError(f"plot file must end in .png or .svg, got {os.fspath(path)!r}")
    atomic_write(path, figure_bytes(fig, suffix, dpi))
