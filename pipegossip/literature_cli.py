"""The literature's algorithms on the command line.

* generators for ``pipegossip schedule``: ``path-gossip``, ``cycle-gossip``
  (H*, packet size p), ``polling-complete``, ``polling-hypercube``,
  ``polling-general`` (H1 polling), through :func:`literature_schedule`;
* ``literature-table path-cycle|polling``: our validated numbers beside the
  papers' formulas and bounds, as Markdown or JSON, optionally plotted;
* ``polling-search``: the exact minimum number of polling messages (SAT).
"""

from __future__ import annotations

import argparse
import json
import sys

from .cli import UsageError
from .files import atomic_write
from .options import positive_int

__all__ = ["register", "LITERATURE_ALGORITHMS", "literature_schedule", "table_rows"]

LITERATURE_ALGORITHMS = ("path-gossip", "cycle-gossip", "polling-complete",
                         "polling-hypercube", "polling-general")
_TABLES = ("path-cycle", "polling")
_RUN_ONLY = {"order": None, "seed": None, "receive": "ordered", "substitute": False,
             "sessions": 1, "channels": None}
_MAX_PATH_N = 8192
_MAX_POLL_K = 16


def literature_schedule(args: argparse.Namespace):
    """The schedule ``pipegossip schedule ALGORITHM`` asked for (one of :data:`LITERATURE_ALGORITHMS`)."""
    from .model.algorithms import path_cycle, polling
    name = args.algorithm
    given = [f"--{k}" for k, d in _RUN_ONLY.items() if getattr(args, k, d) != d]
    if given:
        raise UsageError(f"{given[0]} applies only to 'schedule run'")
    if args.topology != "complete":
        raise UsageError(f"--topology does not apply to {name} (its graph is fixed)")
    if name in ("path-gossip", "cycle-gossip"):
        if args.k is not None:
            raise UsageError(f"{name} takes --n and --p, not --k")
        if args.n is None or not 3 <= args.n <= _MAX_PATH_N:
            raise UsageError(f"{name}: --n must be between 3 and {_MAX_PATH_N}, got {args.n}")
        return path_cycle.GENERATORS[name](args.n, 1 if args.p is None else args.p)
    if args.p is not None:
        raise UsageError(f"{name}: --p does not apply (polling responses combine)")
    if name == "polling-general":
        if args.k is not None:
            raise UsageError("polling-general takes --n, not --k")
        if args.n is None or not 2 <= args.n <= 1 << _MAX_POLL_K:
            raise UsageError(f"polling-general: --n must be between 2 and {1 << _MAX_POLL_K}, "
                             f"got {args.n}")
        return polling.polling_general(args.n)
    if args.n is not None:
        raise UsageError(f"{name} takes --k (n = 2^k), not --n")
    if args.k is None or not 3 <= args.k <= _MAX_POLL_K:
        raise UsageError(f"{name}: --k must be between 3 and {_MAX_POLL_K}, got {args.k}")
    return polling.GENERATORS[name](args.k)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "literature-table", help="the papers' tables beside our validated schedules",
        description="path-cycle: rounds of path-gossip and cycle-gossip (H*, p = 1, 2 and "
        "unlimited) against Table 1 of 'Optimal gossiping in paths and cycles', N = 3..128. "
        "polling: rounds and messages of polling-complete and polling-hypercube, K = 3..12, "
        "against the formulas and bounds of Czygrinow, Karonski and Sunderam. Every schedule "
        "is checked by the validator first.")
    p.add_argument("table", choices=_TABLES, metavar="TABLE", help=" | ".join(_TABLES))
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--max-n", type=positive_int, default=128,
                   help="path-cycle: largest N (default 128)")
    p.add_argument("--max-k", type=positive_int, default=12,
                   help="polling: largest K (default 12)")
    p.add_argument("--plot", metavar="PNG", help="also draw the table (PNG or SVG)")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser(
        "polling-search", help="exact minimum messages of polling in 2K rounds (SAT)",
        description="Prove the fewest messages that poll K_{2^K} or the hypercube Q_K in 2K "
        "rounds with a SAT solver (needs python-sat). Prints the method, every solver "
        "call and the run time. K = 3 takes well under a second, K = 4 seconds to minutes.")
    p.add_argument("--k", type=positive_int, required=True)
    p.add_argument("--graph", choices=("complete", "hypercube"), required=True)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_search)


def table_rows(table: str, max_n: int = 128, max_k: int = 12) -> list[dict]:
    """The rows of ``literature-table TABLE``; raises AssertionError if a schedule is invalid."""
    from .model.algorithms import path_cycle, polling
    from .model.schedules.validate import validate
    rows = []
    if table == "path-cycle":
        for n in range(3, max_n + 1):
            row = {"N": n}
            for shape, gen in (("path", path_cycle.path_gossip), ("cycle", path_cycle.cycle_gossip)):
                for p, tag in ((1, "p1"), (2, "p2"), (None, "pinf")):
                    v = validate(gen(n, p))
                    if not v.valid:
                        raise AssertionError(f"{shape} n={n} p={p}: {v.error}")
                    row[f"{shape}_{tag}"] = v.R
                    if tag != "pinf":
                        row[f"{shape}_{tag}_table1"] = path_cycle.table1_rounds(shape, n, p)
            rows.append(row)
        return rows
    for k in range(3, max_k + 1):
        vc, vh = validate(polling.polling_complete(k)), validate(polling.polling_hypercube(k))
        if not (vc.valid and vh.valid):
            raise AssertionError(f"polling k={k}: {vc.error or vh.error}")
        rows.append({"K": k, "N": 1 << k, "rounds_bound": 2 * k,
                     "complete_R": vc.R, "complete_messages": vc.messages,
                     "prop3_algorithm": polling.prop3_messages(k),
                     "prop3_stated": polling.prop3_stated(k),
                     "hypercube_R": vh.R, "hypercube_messages": vh.messages,
                     "prop8": polling.prop8_messages(k) if k >= 4 else None, "cor6_bound": polling.cor6_bound(k)})
    return rows


def _markdown(table: str, rows: list[dict]) -> str:
    if table == "path-cycle":
        head = ("| N | path p=1 | Table 1 | path p=2 | Table 1 | path p=inf | cycle p=1 | Table 1 "
                "| cycle p=2 | Table 1 | cycle p=inf |\n|---:|---:|---:|---:|---:|---:|---:|---:"
                "|---:|---:|---:|\n")
        keys = ("path_p1", "path_p1_table1", "path_p2", "path_p2_table1", "path_pinf",
                "cycle_p1", "cycle_p1_table1", "cycle_p2", "cycle_p2_table1", "cycle_pinf")
        return head + "".join(f"| {r['N']} | " + " | ".join(str(r[k]) for k in keys) + " |\n"
                              for r in rows)
    head = ("| K | N | rounds (both) | 2K | K_N messages | Prop. 3 algorithm (r-1) | Prop. 3 "
            "as stated (-2) | Q_K messages | Prop. 8 | Cor. 6 bound |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    out = []
    for r in rows:
        rounds = r["complete_R"] if r["complete_R"] == r["hypercube_R"] else \
            f"{r['complete_R']}/{r['hypercube_R']}"
        cor6 = f"{r['cor6_bound']}" + ("" if r["K"] % 2 == 0 else " (odd K: not claimed)")
        out.append(f"| {r['K']} | {r['N']} | {rounds} | {r['rounds_bound']} | "
                   f"{r['complete_messages']} | {r['prop3_algorithm']} | {r['prop3_stated']} | "
                   f"{r['hypercube_messages']} | {r['prop8'] or '- (needs K >= 4)'} | {cor6} |\n")
    return head + "".join(out)


def cmd_table(args: argparse.Namespace) -> int:
    if args.table == "path-cycle" and not 3 <= args.max_n <= 1024:
        raise UsageError(f"--max-n must be between 3 and 1024, got {args.max_n}")
    if args.table == "polling" and not 3 <= args.max_k <= 14:
        raise UsageError(f"--max-k must be between 3 and 14, got {args.max_k}")
    if args.plot and not args.plot.endswith((".png", ".svg")):
        raise UsageError(f"--plot {args.plot}: give a .png or .svg file name")
    rows = table_rows(args.table, args.max_n, args.max_k)
    if args.plot:
        from .literature_plots import plot_table
        atomic_write(args.plot, plot_table(args.table, rows, "svg" if args.plot.endswith(".svg")
                                           else "png"))
    if args.format == "json":
        print(json.dumps(rows, indent=1))
    else:
        sys.stdout.write(_markdown(args.table, rows))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from .model.algorithms import polling
    from .model.schedules.validate import validate
    if not 3 <= args.k <= 5:
        raise UsageError(f"--k must be between 3 and 5 (the search grows fast), got {args.k}")
    try:
        from .model.algorithms.polling_search import min_polling_messages
        import pysat  # noqa: F401 - a clear message instead of an import error mid-search
    except ImportError:
        raise UsageError("polling-search needs python-sat: pip install python-sat") from None
    gen = polling.polling_complete if args.graph == "complete" else polling.polling_hypercube
    start = validate(gen(args.k)).messages
    r = min_polling_messages(args.graph, args.k, start)
    if args.format == "json":
        print(json.dumps({"graph": r.graph, "k": r.k, "n": r.n, "rounds": r.rounds,
                          "optimum": r.optimum, "constructed": start, "method": r.method,
                          "seconds": round(r.seconds, 3),
                          "steps": [{"at_most": m, "verdict": v, "seconds": round(t, 3)}
                                    for m, v, t in r.steps]}))
        return 0
    print(f"graph {r.graph} K={r.k} (N={r.n}), {r.rounds} rounds")
    print(f"method {r.method}")
    for m, verdict, t in r.steps:
        print(f"  at most {m} messages: {verdict} ({t:.2f} s)")
    print(f"optimum {r.optimum} messages (our construction: {start}); total {r.seconds:.2f} s")
    return 0
