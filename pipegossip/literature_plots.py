"""Pictures for ``pipegossip literature-table``: our numbers against the papers'."""

from __future__ import annotations

import io

__all__ = ["plot_table"]


def plot_table(table: str, rows: list[dict], fmt: str = "png") -> bytes:
    """Draw ``literature-table`` rows: R against N (path-cycle), messages against K
    (polling) or calls against n (short-messages)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    if table == "short-messages":
        return _short_messages(plt, rows, fmt)
    fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
    if table == "path-cycle":
        n = [r["N"] for r in rows]
        for key, label, colour in (("path_p1", "path, p=1", "#d95f02"),
                                   ("path_p2", "path, p>=2", "#7570b3"),
                                   ("cycle_p1", "cycle, p=1", "#1b9e77"),
                                   ("cycle_p2", "cycle, p>=2", "#e7298a")):
            ax.plot(n, [r[key] for r in rows], ".", color=colour, label=f"{label}: our R",
                    markersize=4)
            ax.plot(n, [r[key + "_table1"] for r in rows], "-", color=colour, linewidth=0.8,
                    label=f"{label}: Table 1")
        ax.set_xlabel("N (nodes)")
        ax.set_ylabel("rounds R")
        ax.set_title("Gossip on paths and cycles under H*: validated R against Table 1")
    else:
        k = [r["K"] for r in rows]
        for key, label, style in (("complete_messages", "K_N: our messages", "o"),
                                  ("prop3_stated", "K_N: Prop. 3 as stated", "x"),
                                  ("hypercube_messages", "Q_K: our messages", "s"),
                                  ("cor6_bound", "Q_K: Cor. 6 bound", "+")):
            # messages minus N keeps the small differences visible on one axis
            ax.plot(k, [r[key] - r["N"] for r in rows], style + "-", label=label,
                    markersize=5, linewidth=0.8)
        ax.set_yscale("symlog")
        ax.set_xlabel("K (N = 2^K nodes), 2K rounds")
        ax.set_ylabel("messages - N")
        ax.set_title("Polling in 2K rounds: messages beyond N")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=110, metadata={"Software": None} if fmt == "png" else
                {"Creator": None, "Date": None})
    plt.close(fig)
    return buf.getvalue()


def _save(plt, fig, fmt: str) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=110, metadata={"Software": None} if fmt == "png" else
                {"Creator": None, "Date": None})
    plt.close(fig)
    return buf.getvalue()


def _short_messages(plt, rows: list[dict], fmt: str) -> bytes:
    """Left: c(n, p) / (n^2 / 2p) against n; right: our calls above the lower bound."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.8), layout="constrained")
    ps = sorted({r["p"] for r in rows})
    cmap = plt.get_cmap("viridis", max(len(ps), 2))
    for i, p in enumerate(ps):
        mine = [r for r in rows if r["p"] == p]
        n = [r["n"] for r in mine]
        # dividing by n^2/(2p), the leading term, puts every p on one scale
        scale = [x * x / (2 * p) for x in n]
        left.plot(n, [r["calls"] / s for r, s in zip(mine, scale)], ".", color=cmap(i),
                  markersize=3, label=f"p={p}: our calls")
        left.plot(n, [r["lower"] / s for r, s in zip(mine, scale)], "-", color=cmap(i),
                  linewidth=0.7)
        if p > 1:
            right.plot(n, [r["gap"] for r in mine], ".-", color=cmap(i), markersize=3,
                       linewidth=0.6, label=f"p={p}")
            right.plot(n, [r["upper"] - r["lower"] for r in mine], ":", color=cmap(i),
                       linewidth=0.8)
    left.set_xlabel("n (nodes)")
    left.set_ylabel("calls / (n^2 / 2p)")
    left.set_title("c(n,p): our calls (dots) and lower bound (lines)", fontsize=10)
    left.legend(fontsize=6, ncol=2)
    right.set_xlabel("n (nodes)")
    right.set_ylabel("calls above the lower bound")
    right.set_title("gap: ours - lower bound (dots); Theorem 3.1 - lower (dotted)", fontsize=10)
    right.legend(fontsize=6, ncol=2)
    for ax in (left, right):
        ax.grid(alpha=0.3)
    return _save(plt, fig, fmt)
