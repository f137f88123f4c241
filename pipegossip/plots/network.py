"""A picture of one network-fabric run: the schedule's rounds beside the hardware's cycles.

Both panels have one row per directed link ``u -> v`` (the sending port), so
a round of one-word messages and the clock cycle that carries it line up
row by row: the left panel is the schedule file (items per message, per
round), the right one the run's record (the word each port sent in each
clock cycle, and what the far end did with it), and below it every node's
accumulator in every cycle. Everything drawn comes from the schedule and the
record; nothing is recomputed here.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from .figures import fitted_title

__all__ = ["network_run_figure", "plot_network_run", "MAX_LINKS", "MAX_CYCLES",
           "schedule_link_items", "record_link_words"]

#: Largest run drawn (rows x columns of labelled cells stay readable up to this).
MAX_LINKS, MAX_CYCLES = 64, 40

_SENT_SLOT, _SENT_ACC, _ROUND = "#bfe6da", "#fbd3b0", "#d5d3ea"
#: Accumulator values get these in order of first appearance (matplotlib's tab20 with
#: the light shades first: 20 distinct values before a colour repeats).
_ACC_COLOURS = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
                "#c7c7c7", "#dbdb8d", "#9edae5", "#6baed6", "#fd8d3c", "#74c476", "#e377c2",
                "#9e9ac8", "#bcbd22", "#17becf", "#e7ba52", "#d6616b", "#a1d99b")


def schedule_link_items(schedule, program) -> np.ndarray:
    """``(ports, rounds)`` int: items the schedule sends on each directed link per round (0: none)."""
    s = schedule
    grid = np.zeros((program.ports, s.rounds_total), dtype=np.int64)
    for r in range(s.rounds_total):
        for m in range(int(s.round_ptr[r]), int(s.round_ptr[r + 1])):
            u = int(s.src[m])
            count = int(s.item_ptr[m + 1] - s.item_ptr[m])
            for v in s.dst[s.dst_ptr[m]:s.dst_ptr[m + 1]]:
                grid[program.port(u, int(v)), r] = count
    return grid


def record_link_words(record) -> tuple[np.ndarray, ...]:
    """The record's samples per ``(cycle, port)``: sent, accumulator sent, word sent,
    stored on arrival, combined on arrival."""
    lane = record.lane
    valid, acc, word = lane("tx_valid") != 0, lane("tx_acc") != 0, lane("tx_word")
    return valid, acc, word, lane("rx_valid") != 0, lane("rx_comb") != 0


def network_run_figure(schedule, program, record, verdict_line: str) -> Figure:
    """The schedule's rounds, the run's words per link and cycle, and the accumulators.

    ``verdict_line`` heads the figure (the judge's one line: MATCH, R, S, cycles).
    """
    P, n, rounds = program.ports, program.n, schedule.rounds_total
    items = schedule_link_items(schedule, program)
    valid, acc, word, rx_valid, rx_comb = record_link_words(record)
    busy = np.flatnonzero(np.asarray(record.samples["busy"]) != 0)
    first = int(busy[0]) if len(busy) else 0
    last = int(busy[-1]) + 1 if len(busy) else len(valid) - 1
    cycles = list(range(first, min(last, len(valid) - 1) + 1))
    peer = [program.peer(p) for p in range(P)]
    rows = [f"{program.node_of(p)}->{program.node_of(peer[p])}" for p in range(P)]

    width = min(18.0, 3.0 + 0.55 * (rounds + len(cycles)) + 1.5)
    height = 1.6 + 0.22 * (P + n)
    fig = Figure(figsize=(width, height), layout="constrained")
    grid = fig.add_gridspec(2, 2, width_ratios=[max(rounds, 1), max(len(cycles), 1)],
                            height_ratios=[P, n])
    ax_s, ax_h = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    ax_a, ax_k = fig.add_subplot(grid[1, 1]), fig.add_subplot(grid[1, 0])
    ax_k.axis("off")
    fig.suptitle(fitted_title(verdict_line, width), fontsize=10)

    def cell(ax, x, y, colour, text, size=6.5):
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1.0, 1.0, facecolor=colour,
                               edgecolor="white", linewidth=0.6))
        if text:
            ax.text(x, y, text, ha="center", va="center", fontsize=size, family="monospace")

    for r in range(rounds):
        for p in np.flatnonzero(items[:, r]):
            cell(ax_s, r + 1, p, _ROUND, str(items[p, r]))
    accs = record.lane("acc")
    # Equal accumulators share a colour (an allreduce ends in one); colours repeat
    # only after len(_ACC_COLOURS) distinct values.
    colour_of: dict[int, str] = {}
    for k in cycles:
        for v in range(n):
            colour_of.setdefault(int(accs[k, v]), _ACC_COLOURS[len(colour_of) % len(_ACC_COLOURS)])
    for k in cycles:
        for p in np.flatnonzero(valid[k]):
            mark = ("+" if rx_comb[k, peer[p]] else "") + ("s" if rx_valid[k, peer[p]] else "")
            cell(ax_h, k, p, _SENT_ACC if acc[k, p] else _SENT_SLOT,
                 f"{int(word[k, p]):02x}{mark}")
        for v in range(n):
            value = int(accs[k, v])
            cell(ax_a, k, v, colour_of[value], f"{value:02x}")

    for ax, xs, label in ((ax_s, range(1, rounds + 1), "round (schedule file)"),
                          (ax_h, cycles, "clock cycle (hardware record)")):
        ax.set_xlim(min(xs, default=0) - 0.5, max(xs, default=0) + 0.5)
        ax.set_ylim(P - 0.5, -0.5)
        ax.set_xticks(list(xs))
        ax.set_yticks(range(P), rows, fontsize=6.5, family="monospace")
        ax.set_xlabel(label, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    ax_s.set_ylabel("directed link (sender->receiver)", fontsize=8)
    ax_s.set_title("items per message", fontsize=9)
    ax_h.set_title("word sent (s: stored, +: combined at the receiver)", fontsize=9)
    ax_a.set_xlim(cycles[0] - 0.5 if cycles else -0.5, cycles[-1] + 0.5 if cycles else 0.5)
    ax_a.set_ylim(n - 0.5, -0.5)
    ax_a.set_xticks(cycles)
    ax_a.set_yticks(range(n), [f"p{v}" for v in range(n)], fontsize=6.5, family="monospace")
    ax_a.tick_params(axis="x", labelsize=7)
    ax_a.set_title("accumulators (registered)", fontsize=9)
    ax_k.legend(handles=[Patch(color=_ROUND, label="message in the schedule"),
                         Patch(color=_SENT_SLOT, label="store slot sent"),
                         Patch(color=_SENT_ACC, label="accumulator sent")],
                loc="center", fontsize=7, frameon=False)
    return fig


def plot_network_run(schedule, program, record, verdict_line: str, fmt: str = "png") -> bytes:
    """:func:`network_run_figure` as PNG or SVG bytes (no time stamp, so reproducible)."""
    buf = io.BytesIO()
    network_run_figure(schedule, program, record, verdict_line).savefig(
        buf, format=fmt, dpi=100, metadata={"Software": None} if fmt == "png" else {"Date": None})
    return buf.getvalue()
