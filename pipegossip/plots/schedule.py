"""Pictures of schedules: who talks to whom in each round, and progress to the goal."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..model.schedules.goal import GOAL_TEXT, goal_pairs, goal_progress
from ..model.schedules.ir import Schedule
from ..model.schedules.validate import Validation
from .figures import fitted_title, integer_ticks, legend_outside

__all__ = ["activity_grid", "schedule_figure", "plot_schedule"]

#: Largest grid drawn cell by cell; bigger schedules are refused (unreadable anyway).
MAX_CELLS = 4_000_000

#: Above this many (sender, receiver) links the lines are drawn without end
#: marks, and above the second not at all (they would fill the grid solid
#: and take minutes to render).
_MARKED_LINKS = 4000
_DRAWN_LINKS = 100_000

_ACTIVITY = ("#f4f4f4", "#fbd3b0", "#bfe6da", "#d5d3ea")
_LINK = "#3b3b3b"


def activity_grid(s: Schedule) -> np.ndarray:
    """``(n, rounds)`` int8: 0 idle, 1 sends, 2 receives, 3 both (port, F1)."""
    rounds = s.rounds_total
    grid = np.zeros((s.n, rounds), dtype=np.int8)
    msg_round = np.repeat(np.arange(rounds), np.diff(s.round_ptr))
    grid[s.src, msg_round] |= 1
    dst_round = np.repeat(msg_round, np.diff(s.dst_ptr))
    grid[s.dst, dst_round] |= 2
    return grid


def _links(s: Schedule, rounds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(round, sender, receiver)`` of every transfer in rounds ``1..rounds``."""
    msg_round = np.repeat(np.arange(1, s.rounds_total + 1), np.diff(s.round_ptr))
    per = np.diff(s.dst_ptr)
    r, src = np.repeat(msg_round, per), np.repeat(s.src, per)
    keep = r <= rounds
    return r[keep], src[keep], s.dst[keep]


def schedule_figure(s: Schedule, v: Validation) -> Figure:
    """Two panels: who sends to whom per round over the activity grid, and the
    goal pairs held after each round against the primitive's goal."""
    rounds = max(v.R, 1)
    grid = activity_grid(s)[:, :rounds]
    width = min(16.0, max(8.0, 4.5 + 0.35 * rounds))
    fig = Figure(figsize=(width, 7.5), layout="constrained")
    ax, bx = fig.subplots(2, 1, height_ratios=(3, 2))
    ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=ListedColormap(_ACTIVITY),
              vmin=0, vmax=3, extent=(0.5, rounds + 0.5, s.n - 0.5, -0.5))
    # Each transfer of round r is a line from its sender at the left of the
    # round's column to its receiver at the right: a matching shows as
    # crossing pairs, a broadcast as a fan, so recursive doubling's partners
    # at distance 1, 2, 4 ... stand out instead of one full block.
    r, src, dst = _links(s, rounds)
    left, right = r - 0.38, r + 0.38
    handles = [Patch(facecolor=c, edgecolor="#999999", label=t) for c, t in
               zip(_ACTIVITY, ("idle", "sends", "receives", "sends and receives"))]
    if len(r) > _DRAWN_LINKS:
        handles.append(Patch(facecolor="none", edgecolor="none",
                             label=f"{len(r):,} transfers: too many to draw"))
    else:
        ax.add_collection(LineCollection(np.stack([np.c_[left, src], np.c_[right, dst]], axis=1),
                                         colors=_LINK, linewidths=1.0 if len(r) < 2000 else 0.4,
                                         alpha=0.85))
        if len(r) <= _MARKED_LINKS:
            ax.plot(left, src, "o", color=_LINK, markersize=3, linestyle="none")
            ax.plot(right, dst, ">", color=_LINK, markersize=4, linestyle="none")
            handles.append(Line2D([], [], color=_LINK, marker=">", markersize=4,
                                  label="sender o -> receiver >"))
        else:
            handles.append(Line2D([], [], color=_LINK, label="sender (left) -> receiver (right)"))
    ax.set_xlim(0.5, rounds + 0.5)
    ax.set_ylim(s.n - 0.5, -0.5)
    name = s.origin.get("algorithm") or "schedule"
    p = s.p if s.p is not None else "unlimited"
    ax.set_title(fitted_title(f"{name}: {s.primitive}, n={s.n}, model {s.model}, p={p}, "
                              f"R={v.R}, efficiency {v.efficiency:.3f}", width - 3.0))
    ax.set_xlabel("round")
    ax.set_ylabel("node")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              fontsize="small")
    integer_ticks(ax.xaxis, ax.yaxis, bx.xaxis, bx.yaxis)

    rows, items = goal_pairs(s, v.items_per_node)
    goal = len(rows) * len(items)
    held = goal_progress(s, v.items_per_node)[:rounds + 1]
    bx.plot(range(len(held)), held, marker="o", markersize=4, color="#1b9e77",
            label="goal pairs held")
    bx.axhline(goal, color="#555555", linestyle=":", label=f"goal: {GOAL_TEXT[s.primitive]}")
    bx.set_xlim(-0.2, rounds + 0.2)
    bx.set_ylim(0, goal * 1.05)
    bx.set_xlabel("after round")
    bx.set_ylabel("(node, item) pairs of the goal")
    legend_outside(bx)
    return fig


def plot_schedule(s: Schedule, v: Validation, fmt: str = "png") -> bytes:
    """:func:`schedule_figure` as PNG or SVG bytes (no time stamp, so reproducible)."""
    buf = io.BytesIO()
    schedule_figure(s, v).savefig(buf, format=fmt, dpi=100,
                                  metadata={"Software": None} if fmt == "png" else {"Date": None})
    return buf.getvalue()
