"""Pictures of schedules: who sends and receives in each round, and knowledge growth."""

from __future__ import annotations

import io

import numpy as np

from .model.schedules.ir import Schedule
from .model.schedules.validate import Validation

__all__ = ["activity_grid", "plot_schedule"]

#: Largest grid drawn cell by cell; bigger schedules are refused (unreadable anyway).
MAX_CELLS = 4_000_000


def activity_grid(s: Schedule) -> np.ndarray:
    """``(n, rounds)`` int8: 0 idle, 1 sends, 2 receives, 3 both (port, F1)."""
    rounds = s.rounds_total
    grid = np.zeros((s.n, rounds), dtype=np.int8)
    msg_round = np.repeat(np.arange(rounds), np.diff(s.round_ptr))
    grid[s.src, msg_round] |= 1
    dst_round = np.repeat(msg_round, np.diff(s.dst_ptr))
    grid[s.dst, dst_round] |= 2
    return grid


def plot_schedule(s: Schedule, v: Validation, fmt: str = "png") -> bytes:
    """A two-panel figure: activity grid (nodes x rounds) and items held per round."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    grid = activity_grid(s)[:, :max(v.R, 1)]
    colours = ["#f4f4f4", "#d95f02", "#1b9e77", "#7570b3"]
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(9, 7), height_ratios=(3, 2),
                                 layout="constrained")
    ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=ListedColormap(colours),
              vmin=0, vmax=3, extent=(0.5, grid.shape[1] + 0.5, s.n - 0.5, -0.5))
    name = s.origin.get("algorithm") or "schedule"
    ax.set_title(f"{name}: n={s.n}, model {s.model}, p={s.p if s.p is not None else 'unlimited'}"
                 f", R={v.R}, efficiency {v.efficiency:.3f}")
    ax.set_xlabel("round")
    ax.set_ylabel("node")
    ax.legend(handles=[Patch(color=c, label=t) for c, t in
                       zip(colours, ("idle", "sends", "receives", "sends and receives"))],
              loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    for axis in (ax.xaxis, ax.yaxis, bx.xaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    total = s.n * s.n * v.items_per_node
    rounds = np.arange(len(v.knowledge))
    bx.plot(rounds, v.knowledge, marker=".", color="#1b9e77")
    bx.axhline(total, color="grey", linestyle=":", label="all nodes hold all items")
    bx.set_xlim(0, max(v.R, 1))
    bx.set_xlabel("after round")
    bx.set_ylabel("items held (sum over nodes)")
    bx.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=100, metadata={"Software": None} if fmt == "png" else None)
    plt.close(fig)
    return buf.getvalue()
