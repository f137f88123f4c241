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
from collections.abc import Sequence

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .files import atomic_write
from .model.runtable import IDLE, R, S, WR, WS, RunTable
from .model.sweeps import SweepPoint

__all__ = [
    "ACTION_COLOURS", "utilization_figure", "runtable_figure", "scaling_figure",
    "save_figure", "figure_bytes",
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


def utilization_figure(utilization: Sequence[int] | np.ndarray, title: str | None = None,
                       n: int | None = None) -> Figure:
    """Used slots per step, with the average mu (and N, the ceiling, if given)."""
    u = np.asarray(utilization)
    steps = np.arange(1, len(u) + 1)
    fig = Figure(figsize=(min(14.0, 4.0 + 0.12 * len(u)), 3.2), layout="constrained")
    ax = fig.add_subplot()
    ax.bar(steps, u, width=1.0, color="#00798c", edgecolor="white", linewidth=0.3 if len(u) < 200 else 0)
    mu = u.sum() / len(u) if len(u) else 0.0
    ax.axhline(mu, color="#d1495b", linestyle="--", linewidth=1.2, label=f"mu = {mu:.3f}")
    if n is not None:
        ax.axhline(n, color="#555555", linestyle=":", linewidth=1.0, label=f"N = {n}")
    ax.set_xlabel("time step")
    ax.set_ylabel("used slots u_t")
    ax.set_xlim(0.5, len(u) + 0.5)
    ax.set_ylim(0, max([int(u.max()) if len(u) else 0] + ([n] if n else [])) * 1.12 + 0.5)
    ax.legend(loc="upper right", fontsize="small")
    ax.set_title(title or f"Utilisation profile, L = {len(u)}")
    return fig


def runtable_figure(table: RunTable, title: str | None = None,
                    annotate: bool | None = None) -> Figure:
    """The run-table as coloured cells; peers written in the cells when it fits."""
    n, length = table.n, table.length
    if annotate is None:
        annotate = n * length <= 1500
    cell = 0.32 if annotate else max(0.02, min(0.2, 12.0 / max(length, 1)))
    width = min(18.0, 1.5 + cell * length)
    height = min(12.0, 1.6 + max(cell, 0.12) * n)
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot()
    cmap = ListedColormap([ACTION_COLOURS[c] for c in (IDLE, WR, R, WS, S)])
    ax.imshow(table.actions, cmap=cmap, vmin=-0.5, vmax=4.5, aspect="auto",
              interpolation="nearest", extent=(0.5, length + 0.5, n - 0.5, -0.5))
    if annotate:
        for p in range(n):
            for t in range(length):
                a = int(table.actions[p, t])
                if a in (R, S):
                    ax.text(t + 1, p, f"{'S' if a == S else 'R'}{int(table.peers[p, t])}",
                            ha="center", va="center", fontsize=6,
                            color="white" if a == S else "black")
    ax.set_yticks(range(n))
    ax.set_yticklabels([f"p{p}" for p in range(n)], fontsize=7 if n > 16 else 9)
    if n > 32:
        ax.set_yticks(range(0, n, max(1, n // 16)))
        ax.set_yticklabels([f"p{p}" for p in range(0, n, max(1, n // 16))])
    ax.set_xlabel("time step")
    ax.set_title(title or f"Run-table, N = {n}, L = {length}")
    ax.legend(handles=[Patch(facecolor=ACTION_COLOURS[c], edgecolor="#999999", label=_NAMES[c])
                       for c in (S, R, WS, WR, IDLE)],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return fig


def scaling_figure(points: Sequence[SweepPoint], title: str | None = None) -> Figure:
    """L (log scale) and E versus N, one line per family and Algorithm 2 setting.

    Random orders are drawn as the mean over seeds with a band from the
    smallest to the largest value.
    """
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    ax_l, ax_e = fig.subplots(1, 2)
    keys = sorted({(p.family, p.substitute) for p in points},
                  key=lambda k: (k[1], list(_FAMILY_COLOURS).index(k[0])
                                 if k[0] in _FAMILY_COLOURS else 9))
    for family, sub in keys:
        pts = sorted((p for p in points if p.family == family and p.substitute == sub),
                     key=lambda p: p.n)
        ns = np.array([p.n for p in pts])
        colour = _FAMILY_COLOURS.get(family, "#555555")
        style = "--" if sub else "-"
        label = family + (" + Alg. 2 (any)" if sub else "")
        for ax, values in ((ax_l, [p.lengths for p in pts]), (ax_e, [p.efficiencies for p in pts])):
            scale = 100.0 if ax is ax_e else 1.0
            mean = np.array([np.mean(v) for v in values]) * scale
            ax.plot(ns, mean, style, color=colour, label=label, marker="o", markersize=2.5)
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
    ax_e.legend(fontsize="small")
    if title:
        fig.suptitle(title)
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
