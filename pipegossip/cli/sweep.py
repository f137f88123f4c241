"""Sweep commands on the Dask runner: ``conjecture21``, ``cosim-sweep`` and ``sweep-report``.

``table8`` (in :mod:`pipegossip.cli.model`) runs on the same runner and the
same job function, :func:`model_point`, so Table 8 and Conjecture 21 share
their cached points; ``fpga-sweep`` (in :mod:`pipegossip.cli.fpga`) too.
``cosim-sweep``'s job is :func:`pipegossip.sim.sweep_job.cosim_point`.
See ``docs/sweeps.md``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from . import typed_command
from ..infra.files import OutputKind, atomic_directory, atomic_write
from ..model.errors import ConfigError
from ..model.config import RECEIVE_DISCIPLINES
from ..model.orders import FAMILIES
from ..infra.budgets import check_budget, model_bytes
from .options import choice_list, decimal, int_list, positive_int, word_width
from ..sweeps.runner import Job, SweepOptions, SweepRun, add_sweep_arguments, run_sweep
from ..sweeps.store import ResultStore

__all__ = ["register", "model_point", "model_jobs", "conjecture21_sizes", "print_failures",
           "efficiency_figure", "cmd_conjecture21", "cmd_cosim_sweep", "cmd_sweep_report"]

#: What model results depend on besides pipegossip itself.
MODEL_TOOLS = ("numpy",)


def model_point(config: dict) -> dict:
    """Job: simulate one configuration (no run-table); L, used slots, mu and E.

    ``config`` holds ``n``, ``order`` (a family), ``receive``, ``substitute``
    and, for random orders, ``seed``.
    """
    from ..model.config import RunConfig
    from ..model.engine import simulate

    run = simulate(RunConfig.family(config["n"], config["order"], config.get("seed"),
                                    receive=config["receive"], substitute=config["substitute"]))
    return {"N": config["n"], "L": run.length, "used": run.used_slots, "mu": run.mu,
            "efficiency": run.efficiency}


def model_jobs(ns: list[int]) -> list[Job]:
    """Identity + Algorithm 2 + ``any`` at each N, largest first (they take longest)."""
    return [Job.of(model_point, {"n": n, "order": "identity", "receive": "any",
                                 "substitute": True}, MODEL_TOOLS, label=f"N={n}")
            for n in sorted(ns, reverse=True)]


def conjecture21_sizes(max_n: int) -> list[int]:
    """Powers of two and their midpoints (2, 3, 4, 6, 8, 12, ...) up to ``max_n``."""
    sizes, p = [], 2
    while p <= max_n:
        sizes += [s for s in (p, 3 * p // 2) if s <= max_n]
        p *= 2
    return sizes


def print_failures(run: SweepRun, command: str) -> int:
    """One stderr line per failed job; return the exit status (1 if any failed)."""
    for o in run.failures:
        print(f"{command}: {o.job.label or o.key}: failed: {o.error}", file=sys.stderr)
    if run.failures:
        print(f"{command}: {len(run.failures)} job(s) failed; run the command again to retry "
              "them", file=sys.stderr)
    return 1 if run.failures else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("conjecture21", help="E versus N for identity + Algorithm 2 + any, "
                       "against the paper's 2/3 (Conjecture 21)",
                       description="Sweep N over powers of two and their midpoints, print E(N), "
                       "name the smallest N where E drops below 2/3, and plot E(N) into "
                       "STORE/conjecture21/efficiency.png.")
    p.add_argument("--max-n", type=positive_int, default=16384,
                   help="largest N; default 16384")
    add_sweep_arguments(p)
    p.set_defaults(func=cmd_conjecture21)

    p = sub.add_parser("cosim-sweep", help="co-simulate a matrix of configurations x word "
                       "seeds against the model",
                       description="One sweep job per configuration (N x order x receive x "
                       "sessions): build the fabric (or reuse its build in build/cosim/), "
                       "simulate one run per word seed back to back and judge each by the "
                       "golden model. Exit 0 when every run matches, 1 on a mismatch or a "
                       "failed job.")
    p.add_argument("--n", dest="ns", type=int_list(minimum=2), default=[4, 8],
                   metavar="N,N,...", help="processor counts; default 4,8")
    p.add_argument("--orders", type=choice_list(FAMILIES), default=["pipelined", "identity"],
                   metavar="ORDER,...", help=f"order families ({', '.join(FAMILIES)}); "
                   "default pipelined,identity")
    p.add_argument("--order-seed", type=decimal, default=0, metavar="S",
                   help="seed of the random order family; default 0")
    p.add_argument("--receive", dest="receives", type=choice_list(RECEIVE_DISCIPLINES),
                   default=["ordered"], metavar="R,...",
                   help=f"receive disciplines ({', '.join(RECEIVE_DISCIPLINES)}); default ordered")
    p.add_argument("--substitute", action="store_true",
                   help="Algorithm 2 in every configuration")
    p.add_argument("--sessions", type=int_list(), default=[1], metavar="K,...",
                   help="streaming sessions; default 1")
    p.add_argument("--word-seeds", type=int_list(minimum=0), default=[0], metavar="S,...",
                   help="one run per word seed, back to back in one simulation; default 0")
    p.add_argument("--width", type=word_width, default=8, metavar="W",
                   help="word width in bits; default 8")
    p.add_argument("--simulator", choices=("verilator", "icarus"), default="verilator")
    add_sweep_arguments(p)
    p.set_defaults(func=cmd_cosim_sweep)

    p = sub.add_parser("sweep-report", help="CSV, JSON and figures from a sweep store",
                       description="Write results.csv, results.json, failures.json and the "
                       "figures (E versus N; cells and Fmax versus N for FPGA results) from "
                       "every result in STORE.")
    p.add_argument("store", metavar="STORE", help="a sweep store (--store of a sweep)")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="folder to write; default STORE/report")
    p.set_defaults(func=cmd_sweep_report)


def cmd_conjecture21(args: argparse.Namespace) -> int:
    if args.max_n < 2:
        raise ConfigError(f"--max-n must be at least 2, got {args.max_n}")
    ns = conjecture21_sizes(args.max_n)
    # Local workers run the largest N side by side (the sweep starts with them).
    side_by_side = 1 if args.workers == 0 or args.scheduler else \
        args.workers or len(os.sched_getaffinity(0))
    check_budget("memory", sum(model_bytes(n, compiled=True) for n in ns[::-1][:side_by_side]),
                 f"conjecture21 up to N={args.max_n:,} ({side_by_side} worker(s) at once)")
    run = run_sweep("conjecture21", model_jobs(ns), SweepOptions.from_args(args))
    rows = sorted((dict(o.result, seconds=o.seconds, status=o.status)
                   for o in run.outcomes if o.result is not None), key=lambda r: r["N"])
    below = [r["N"] for r in rows if _below_two_thirds(r)]
    # The paper states the conjecture over Table 8's powers of two; midpoints
    # behave differently, so both answers are given.
    first = below[0] if below else None
    first_power = next((n for n in below if n & (n - 1) == 0), None)
    figure = run.store.sweep_dir("conjecture21") / "efficiency.png"
    if rows:
        series = {"powers of two": [(r["N"], r["efficiency"]) for r in rows
                                    if r["N"] & (r["N"] - 1) == 0],
                  "midpoints 3 x 2^k": [(r["N"], r["efficiency"]) for r in rows
                                        if r["N"] & (r["N"] - 1)]}
        _save(efficiency_figure({k: v for k, v in series.items() if v},
                                title="Conjecture 21: identity + Algorithm 2 + any, "
                                f"N = 2..{rows[-1]['N']}",
                                failed=[o.job.config.get("n") for o in run.failures]), figure)
    if args.format == "json":
        print(json.dumps({"sweep": "conjecture21", "rows": rows,
                          "smallest_n_below_two_thirds": first,
                          "smallest_power_of_two_below_two_thirds": first_power,
                          "counts": run.counts, "wall_seconds": round(run.wall_seconds, 3),
                          "store": str(run.store.root), "figure": str(figure) if rows else None,
                          "failures": [o.row() for o in run.failures]}))
        return print_failures(run, typed_command())
    print(f"{'N':>6} {'L':>7} {'E %':>7} {'< 2/3':>5} {'job s':>8}")
    for r in rows:
        mark = "yes" if _below_two_thirds(r) else ""
        seconds = "" if r["seconds"] is None else f"{r['seconds']:.2f}"
        print(f"{r['N']:>6} {r['L']:>7} {100 * r['efficiency']:>7.3f} {mark:>5} {seconds:>8}")
    reached = f"N <= {rows[-1]['N']}" if rows else "no N"
    for what, n in (("N", first), ("power of two N", first_power)):
        print(f"# E first drops below 2/3 at {what} = {n}" if n is not None
              else f"# E stays at or above 2/3 for every {what} computed ({reached})")
    if rows:
        print(f"# figure: {figure}")
    return print_failures(run, typed_command())


def cmd_cosim_sweep(args: argparse.Namespace) -> int:
    # Imported here: the command line registers its commands without the simulator stack.
    from ..sim.fsm.runner import check_simulator
    from ..sim.sweep_job import cosim_configs, cosim_jobs

    check_simulator(args.simulator)  # not a job failure to retry: exit 2 like cosim
    configs = cosim_configs(args.ns, args.orders, receives=args.receives,
                            substitute=args.substitute, sessions=args.sessions,
                            order_seed=args.order_seed, width=args.width,
                            simulator=args.simulator, word_seeds=args.word_seeds)
    run = run_sweep("cosim-sweep", cosim_jobs(configs), SweepOptions.from_args(args))
    rows = [dict(o.result, seconds=o.seconds, cache=o.status)
            for o in run.outcomes if o.result is not None]
    mismatches = [r for r in rows if r["status"] == "mismatch"]
    if args.format == "json":
        print(json.dumps({"sweep": "cosim-sweep", "rows": rows, "counts": run.counts,
                          "mismatches": len(mismatches),
                          "wall_seconds": round(run.wall_seconds, 3),
                          "store": str(run.store.root),
                          "failures": [o.row() for o in run.failures]}))
    else:
        print(f"{'configuration':<36} {'seeds':>5} {'L':>5} {'cycles':>11} {'verdict':<11} "
              f"{'job s':>7}")
        for r in rows:
            cycles = "/".join(sorted({str(x["cycles"]) for x in r["runs"]})) or "-"
            seconds = "" if r["seconds"] is None else f"{r['seconds']:.1f}"
            print(f"{r['slug'] + '-w' + str(r['width']):<36} {len(r['runs']):>5} "
                  f"{r.get('L', '-'):>5} {cycles:>11} {r['status']:<11} {seconds:>7}")
        print(f"# {len(rows) - len(mismatches)} of {len(rows)} configuration(s) without a "
              f"mismatch; table: {run.store.sweep_dir('cosim-sweep') / 'table.jsonl'}")
    for r in mismatches:
        first = next(x["first_mismatch"] for x in r["runs"] if not x["match"])
        print(f"{typed_command()}: {r['slug']}-w{r['width']}: MISMATCH, first: {first}",
              file=sys.stderr)
    return max(print_failures(run, typed_command()), 1 if mismatches else 0)


def _below_two_thirds(row: dict) -> bool:
    # Exact integers: E = used / (N L) < 2/3 exactly when 3 used < 2 N L.
    return 3 * row["used"] < 2 * row["N"] * row["L"]


def efficiency_figure(series: dict[str, list[tuple[int, float]]], title: str = "",
                      failed: Sequence[int] = ()):
    """E versus N (log2 axis) per series, against the paper's 2/3 line.

    A series spanning powers of two and 3 x 2^k is drawn as one line per
    kind of N (marker and dash tell them apart); ``failed`` N are marked.
    """
    from matplotlib.figure import Figure

    from ..plots.figures import SIZE_FAMILIES, size_family

    fig = Figure(figsize=(9, 4.4), layout="constrained")
    ax = fig.add_subplot()
    colours = ("#00798c", "#d1495b", "#edae49", "#66a182", "#2e4057", "#8d96a3")
    for k, (label, points) in enumerate(series.items()):
        kinds = {size_family(n) for n, _ in points}
        for kind, marker, style, filled in SIZE_FAMILIES:
            pts = sorted(p for p in points if size_family(p[0]) == kind)
            if not pts:
                continue
            colour = colours[k % len(colours)]
            ax.plot([n for n, _ in pts], [100 * e for _, e in pts], style, marker=marker, ms=4,
                    color=colour, markerfacecolor=colour if filled else "white",
                    label=label if len(kinds) == 1 else f"{label}, N = {kind}")
    ax.axhline(200 / 3, color="#555555", ls="-.", lw=1, label="2/3 (Conjecture 21)")
    _mark_failed(ax, failed)
    return _versus_n(fig, ax, "E (%)", title)


def _mark_failed(ax, failed: Sequence[int]) -> None:
    from ..plots.figures import mark_missing

    mark_missing(ax, sorted(set(failed)), "failed or timed out (no value)")


def _versus_n(fig, ax, ylabel: str, title: str | None = None):
    """Finish a figure of something versus N: log2 N axis, labels, grid, legend."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    from ..plots.figures import fitted_title, legend_outside

    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ScalarFormatter())  # 64, not 2^6: N is read as a count
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("N (processors)")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(fitted_title(title, fig.get_figwidth() - 3.0))
    ax.grid(alpha=0.3)
    legend_outside(ax)
    return fig


def _save(fig, path: Path) -> None:
    from ..plots.figures import save_figure

    save_figure(fig, path)


def _n(result: dict) -> int | None:
    n = result.get("N", result.get("n"))
    return n if isinstance(n, int) else None


def _cells(result: dict) -> float | None:
    # fpga-sweep rows call the logic-cell count "used"
    value = result.get("cells", result.get("used"))
    return value if isinstance(value, (int, float)) else None


def _fpga_figure(records: list[dict], value: Callable[[dict], float], ylabel: str,
                 failed: Sequence[int] = ()):
    """``value(result)`` versus N, one curve per device, feature and kind of N."""
    from matplotlib.figure import Figure

    from ..plots.figures import SIZE_FAMILIES, size_family

    series = defaultdict(list)
    for r in records:
        res = r["result"]
        label = " ".join(str(res[k]) for k in ("device", "feature") if k in res) or r["job"]
        series[label].append((_n(res), value(res)))
    fig = Figure(figsize=(9, 4.4), layout="constrained")
    ax = fig.add_subplot()
    colours = ("#00798c", "#d1495b", "#edae49", "#66a182", "#2e4057", "#8d96a3")
    for k, (label, points) in enumerate(sorted(series.items())):
        colour = colours[k % len(colours)]
        kinds = {size_family(n) for n, _ in points}
        for kind, marker, style, filled in SIZE_FAMILIES:
            pts = sorted(p for p in points if size_family(p[0]) == kind)
            if pts:
                ax.plot([n for n, _ in pts], [v for _, v in pts], style, marker=marker, ms=4,
                        color=colour, markerfacecolor=colour if filled else "white",
                        label=label if len(kinds) == 1 else f"{label}, N = {kind}")
    _mark_failed(ax, failed)
    return _versus_n(fig, ax, ylabel)


def _csv(records: list[dict]) -> str:
    # One column per configuration and scalar result field, across all jobs.
    rows = []
    for r in records:
        row = {"job": r["job"], "key": r["key"], "seconds": r.get("seconds")}
        row.update({f"config.{k}": v for k, v in r["config"].items()
                    if not isinstance(v, (dict, list))})
        row.update({k: v for k, v in r["result"].items() if not isinstance(v, (dict, list))})
        rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


#: sweep-report's folder (STORE/report by default).
REPORT_OUTPUT = OutputKind("sweep-report",
                           signature=("results.csv", "results.json", "failures.json"),
                           extra=("efficiency.png", "cells.png", "fmax.png"))


def cmd_sweep_report(args: argparse.Namespace) -> int:
    store = ResultStore(args.store, create=False)
    records = list(store.records())
    failures = [row for rows in store.tables().values() for row in rows
                if row.get("status") == "failed"]
    efficiency = defaultdict(list)
    fpga = []
    for r in records:
        res, n = r["result"], _n(r["result"])
        if n is None:
            continue
        if "efficiency" in res:
            c = r["config"]
            label = " + ".join(str(x) for x in (c.get("order"), "Algorithm 2" if c.get("substitute")
                                                else None, c.get("receive")) if x)
            efficiency[label or r["job"]].append((n, res["efficiency"]))
        if isinstance(res.get("fmax_mhz"), (int, float)):
            fpga.append(r)
    output = Path(args.output) if args.output else store.root / "report"
    written = ["results.csv", "results.json", "failures.json"]
    with atomic_directory(output, REPORT_OUTPUT) as tmp:
        atomic_write(tmp / "results.csv", _csv(records))
        atomic_write(tmp / "results.json", json.dumps(records, indent=1, sort_keys=True) + "\n")
        atomic_write(tmp / "failures.json", json.dumps(failures, indent=1, sort_keys=True) + "\n")
        failed_n = [n for n in (_n(row.get("config") or {}) for row in failures) if n]
        if efficiency:
            _save(efficiency_figure(efficiency, title="E versus N", failed=failed_n),
                  tmp / "efficiency.png")
            written.append("efficiency.png")
        cells = [r for r in fpga if _cells(r["result"]) is not None]
        if cells:
            _save(_fpga_figure(cells, _cells, "logic cells", failed_n), tmp / "cells.png")
            written.append("cells.png")
        if fpga:
            _save(_fpga_figure(fpga, lambda res: res["fmax_mhz"], "Fmax (MHz)", failed_n),
                  tmp / "fmax.png")
            written.append("fmax.png")
    print(f"sweep-report: {len(records)} result(s), {len(failures)} failure(s) -> "
          f"{output}: {', '.join(written)}", file=sys.stderr)
    return 0
