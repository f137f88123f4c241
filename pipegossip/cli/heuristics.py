"""Gossip on arbitrary networks: ``schedule matching|coloring``, ``network-table``,
``network-bench``.

The heuristics are Beier and Sibeyn's, "A Powerful Heuristic for Telephone
Gossiping" (MPI-I-2000-1-002, 2000); the paper's numbers that the tables print
beside ours are transcribed in ``model/algorithms/beier_sibeyn_tables.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from . import UsageError
from ..infra.budgets import MAX_GOSSIP_NODES, check_schedule_memory, gossip_items
from ..model.errors import FormatError
from .options import (bounded_int, checked_number, decimal, echo, finite_float, list_items,
                      refuse_given)

# Each multiplies the heuristic's work: bounded so a typo cannot run for days.
_TRIES = bounded_int(1, 1000, "tie orders tried")
_CANDIDATES = bounded_int(1, 64, "matchings compared per round")
_LOOKAHEAD = bounded_int(0, 8, "rounds looked ahead")
_BUDGET = checked_number(float, "seconds", lambda v: 0 < v <= 24 * 3600,
                         "must be more than 0 and at most 86400 seconds, got {text}")

__all__ = ["register", "NETWORK_ALGORITHMS", "NETWORK_OPTIONS", "add_network_arguments",
           "network_schedule", "build_topology", "bench_case"]

NETWORK_ALGORITHMS = ("matching", "coloring", "best")
#: ``Dist_Exp`` values the tables try, keeping the best R (the paper reports
#: its best result over tuned parameters).
DIST_EXPS = (2.0, 4.0, 8.0, 16.0)
_BENCH = {"hypercube13": ("hypercube", {"k": 13}), "mesh80": ("mesh", {"a": 80, "b": 80}),
          "knodel8192": ("knodel", {"n": 8192}), "debruijn13": ("debruijn", {"k": 13}),
          "butterfly10": ("butterfly", {"k": 10}), "pancake7": ("pancake", {"k": 7}),
          "debruijn8": ("debruijn", {"k": 8}), "mesh30": ("mesh", {"a": 30, "b": 30})}


# ------------------------------------------------------- schedule options
#: The options of matching only, as ``(flag, attribute, value when not given)``.
MATCHING_OPTIONS = (("--tau", "tau", None), ("--lookahead", "lookahead", 0),
                    ("--weights", "weights", "bfs"), ("--dist-exp", "dist_exp", 4.0),
                    ("--matcher", "matcher", "auto"), ("--num-exp", "num_exp", None),
                    ("--tries", "tries", 1), ("--candidates", "candidates", 4),
                    ("--split", "split", False), ("--primitive", "primitive", "gossip"))
#: Every option of ``add_network_arguments``: none applies to another generator.
NETWORK_OPTIONS = (("--a", "a", None), ("--b", "b", None), ("--colors", "colors", None),
                   *MATCHING_OPTIONS)


def add_network_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``schedule matching`` and ``schedule coloring``."""
    for action in p._actions:  # the shared options take more values here
        if action.dest == "topology":
            action.help += "; matching/coloring: any topology but explicit"
        if action.dest == "k":
            action.help += "; the k of star, pancake, ccc, butterfly, shuffle_exchange, debruijn"
        if action.dest == "seed":
            action.help += "; matching: seed of the --tries tie orders (default 0)"
    g = p.add_argument_group("matching and coloring (Beier and Sibeyn heuristics)")
    g.add_argument("--a", type=decimal, default=None, help="mesh/torus rows")
    g.add_argument("--b", type=decimal, default=None, help="mesh/torus columns")
    g.add_argument("--primitive", choices=("gossip", "broadcast"), default="gossip")
    g.add_argument("--tau", type=finite_float, default=None,
                   help="matching: linear-cost model with this tau (default: unit cost)")
    g.add_argument("--colors", default=None, metavar="STRING",
                   help="coloring: expand this colour string (default: search for one)")
    g.add_argument("--lookahead", type=_LOOKAHEAD, default=0, metavar="L",
                   help="matching: rounds of look-ahead (default 0)")
    g.add_argument("--weights", choices=("bfs", "potential"), default="bfs",
                   help="matching: edge weights (default bfs)")
    g.add_argument("--dist-exp", type=finite_float, default=4.0, help="matching: Dist_Exp, default 4")
    g.add_argument("--matcher", choices=("auto", "exact", "greedy", "networkx"), default="auto",
                   help="matching: auto (exact up to 2500 edges), exact (compiled blossom, "
                   "rustworkx), greedy, or networkx (the pure-Python reference blossom)")
    g.add_argument("--num-exp", type=finite_float, default=None,
                   help="matching: the paper's Num_Exp, an even split over bce_v (default: "
                   "split by shortest paths)")
    g.add_argument("--split", action="store_true",
                   help="matching, with --tau: superpacket splitting (senders of the same new "
                   "items divide them between their calls, as in the paper's Lemma 2)")
    g.add_argument("--tries", type=_TRIES, default=1,
                   help="matching: best of this many tie orders (natural, then random from "
                   "--seed); default 1")
    g.add_argument("--budget", type=_BUDGET, default=60.0, metavar="SECONDS",
                   help="best: CPU seconds for the portfolio after its first candidates "
                   "(default 60)")
    g.add_argument("--candidates", type=_CANDIDATES, default=4,
                   help="matching: matchings compared per round with --lookahead; default 4")


def build_topology(name: str, values: dict):
    """A topology from the command line's ``--n/--k/--a/--b`` values."""
    from ..model.schedules.topologies import TOPOLOGIES, topology
    if name not in TOPOLOGIES or name == "explicit":
        raise UsageError(f"--topology {name}: expected one of "
                         f"{', '.join(t for t in TOPOLOGIES if t != 'explicit')}")
    want = TOPOLOGIES[name]
    extra = [f"--{k}" for k, v in values.items() if v is not None and k not in want]
    if extra:
        raise UsageError(f"{extra[0]} does not apply to --topology {name} "
                         f"(it takes {', '.join('--' + k for k in want)})")
    missing = [f"--{k}" for k in want if values.get(k) is None]
    if missing:
        raise UsageError(f"--topology {name} needs {missing[0]}")
    try:
        return topology(name, **{k: values[k] for k in want})
    except FormatError as e:
        raise UsageError(str(e)) from None


def network_schedule(args: argparse.Namespace):
    """The schedule ``pipegossip schedule matching|coloring`` asked for."""
    from ..model.algorithms.coloring import color_schedule, search_colors
    from ..model.algorithms.matching import matching_schedule
    if args.p is not None:
        raise UsageError(f"{args.algorithm}: --p does not apply (telephone calls carry any "
                         "number of items; --tau sets the linear cost)")
    topo = build_topology(args.topology, {"n": args.n, "k": args.k, "a": args.a, "b": args.b})
    gossip = args.primitive == "gossip"
    if gossip and args.root is not None:
        raise UsageError("--root applies only to --primitive broadcast")
    if not gossip and args.root is None:
        raise UsageError("--primitive broadcast needs --root")
    if gossip and topo.n > MAX_GOSSIP_NODES:
        raise UsageError(f"gossip is limited to {MAX_GOSSIP_NODES} nodes, got {topo.n}")
    # A round moves at most n/2 messages and needs at least log2 n rounds.
    items = gossip_items(topo.n) if gossip else topo.n - 1
    check_schedule_memory(topo.n // 2 * max(1, (topo.n - 1).bit_length()), items,
                          f"{args.algorithm} {args.primitive} on {args.topology} "
                          f"(n={topo.n:,})")
    if args.algorithm == "best":
        return _best(args, topo)
    if args.algorithm == "coloring":
        refuse_given(args, MATCHING_OPTIONS, "only to 'schedule matching' (coloring is "
                     "unit-cost gossip)")
        try:
            colors = args.colors or search_colors(topo)
            if colors is None:
                raise UsageError("coloring: the search found no string within its budget")
            return color_schedule(topo, colors)
        except ValueError as e:
            raise UsageError(f"coloring: {e}") from None
    if args.colors is not None:
        raise UsageError("--colors applies only to 'schedule coloring'")
    if (args.lookahead < 0 or (args.tau is not None and not args.tau >= 0)
            or not args.dist_exp >= 0 or (args.num_exp is not None and not args.num_exp >= 0)):
        raise UsageError("--lookahead, --tau, --dist-exp and --num-exp must be >= 0")
    if args.tries < 1 or args.candidates < 1:
        raise UsageError("--tries and --candidates must be >= 1")
    if args.split and args.tau is None:
        raise UsageError("--split needs --tau (it divides the items a linear-cost round cuts)")
    try:
        return matching_schedule(topo, primitive=args.primitive, root=args.root, tau=args.tau,
                                 weights=args.weights, dist_exp=args.dist_exp,
                                 matcher=args.matcher, lookahead=args.lookahead,
                                 num_exp=args.num_exp, tries=args.tries,
                                 seed=args.seed or 0, candidates=args.candidates,
                                 split=args.split)
    except ValueError as e:
        raise UsageError(f"matching: {e}") from None


def _best(args: argparse.Namespace, topo):
    """``schedule best``: the portfolio of :mod:`.model.algorithms.portfolio`, in this
    process or, with ``--workers``/``--scheduler``, spread over Dask
    (:mod:`..sweeps.portfolio`)."""
    from ..model.algorithms.portfolio import best_schedule
    from ..sweeps.store import DEFAULT_STORE
    given = [o for o, bad in (("--colors", args.colors is not None),
                              ("--lookahead", args.lookahead), ("--num-exp", args.num_exp
                                                                 is not None),
                              ("--tries", args.tries != 1), ("--weights", args.weights != "bfs"),
                              ("--split", args.split),
                              ("--dist-exp", args.dist_exp != 4.0)) if bad]
    if given:
        raise UsageError(f"best: {given[0]} does not apply (the portfolio tries every setting)")
    if args.tau is not None and not args.tau >= 0:
        raise UsageError("--tau must be >= 0")
    if args.workers is not None and args.scheduler is not None:
        raise UsageError("best: --workers sizes a local cluster; it cannot be combined with "
                         "--scheduler")
    spread = args.workers is not None or args.scheduler is not None
    if not spread and (args.no_cache or args.store != DEFAULT_STORE):
        raise UsageError("best: --store and --no-cache apply with --workers or --scheduler")
    try:
        if spread:
            from pathlib import Path

            from ..sweeps.portfolio import spread_best
            from ..sweeps.runner import SweepOptions
            options = SweepOptions(store=Path(args.store), workers=args.workers,
                                   scheduler=args.scheduler, cache=not args.no_cache)
            s, _, info = spread_best(topo, options, primitive=args.primitive, root=args.root,
                                     tau=args.tau, budget=args.budget, seed=args.seed or 0,
                                     matcher=args.matcher)
            return s
        return best_schedule(topo, primitive=args.primitive, root=args.root, tau=args.tau,
                             budget=args.budget, seed=args.seed or 0, matcher=args.matcher)[0]
    except ValueError as e:
        raise UsageError(f"best: {e}") from None


# ----------------------------------------------------------------- tables
def cmd_table(args: argparse.Namespace) -> int:
    from ..paper.heuristics import cmd_table as run
    return run(args)


# ------------------------------------------------------------------ bench
def bench_case(case: str) -> dict:
    """Generate and validate one case in this process; time and peak memory."""
    from ..model.algorithms.matching import matching_schedule
    from ..model.schedules.topologies import topology
    from ..model.schedules.validate import validate
    name, params = _BENCH[case]
    topo = topology(name, **params)
    t0, c0 = time.perf_counter(), time.process_time()
    s = matching_schedule(topo)
    t1, c1 = time.perf_counter(), time.process_time()
    peak_gen = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    v = validate(s)
    t2 = time.perf_counter()
    return {"case": case, "n": topo.n, "m": topo.m, "R": v.R, "valid": v.valid,
            "generate_s": round(t1 - t0, 1), "generate_cpu_s": round(c1 - c0, 1),
            "generate_peak_mib": round(peak_gen),
            "validate_s": round(t2 - t1, 1),
            "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def matching_bench(case: str, seed: int = 1) -> list[dict]:
    """One maximum-weight matching of the case's graph (random integer weights below
    2^40, ``seed``) by each backend, CPU seconds side by side; the weights must agree."""
    import numpy as np

    from ..model.algorithms.matching import max_weight_pairs
    from ..model.schedules.topologies import topology
    name, params = _BENCH[case]
    topo = topology(name, **params)
    rng = np.random.default_rng(seed)
    weighted = [(u, v, int(w)) for (u, v), w in zip(topo.edges.tolist(),
                                                   rng.integers(1, 1 << 40, size=topo.m))]
    weight = {(u, v): w for u, v, w in weighted}
    out = []
    for backend in ("rustworkx", "networkx"):
        c0 = time.process_time()
        pairs = max_weight_pairs(topo.n, weighted, backend)
        out.append({"case": case, "n": topo.n, "m": topo.m, "backend": backend,
                    "cpu_s": round(time.process_time() - c0, 2),
                    "weight": sum(weight[min(p), max(p)] for p in pairs)})
    if out[0]["weight"] != out[1]["weight"]:
        raise AssertionError(f"{case}: rustworkx and networkx matchings differ in weight")
    return out


def cmd_bench(args: argparse.Namespace) -> int:
    cases = list_items(args.cases, "--cases")
    bad = [c for c in cases if c not in _BENCH]
    if bad:
        raise UsageError(f"--cases: unknown case {echo(bad[0])} (expected {', '.join(_BENCH)})")
    if args.matching:
        print(f"{'case':<12} {'n':>6} {'m':>6} {'rustworkx cpu s':>16} {'networkx cpu s':>15} "
              f"{'speed-up':>9}", flush=True)
        for case in cases:
            fast, slow = matching_bench(case)
            print(f"{case:<12} {fast['n']:>6} {fast['m']:>6} {fast['cpu_s']:>16} "
                  f"{slow['cpu_s']:>15} {slow['cpu_s'] / max(fast['cpu_s'], 0.01):>8.1f}x",
                  flush=True)
        return 0
    print(f"{'case':<12} {'n':>6} {'m':>6} {'R':>4} {'gen s':>7} {'gen cpu':>8} {'gen MiB':>8} "
          f"{'check s':>8} {'peak MiB':>9}", flush=True)
    for case in cases:  # a fresh process per case: its peak memory is its own
        code = f"import json; from pipegossip.cli.heuristics import bench_case; " \
               f"print(json.dumps(bench_case({case!r})))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"bench case {case} failed: {out.stderr.strip()[-300:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if not r["valid"]:
            raise AssertionError(f"{case}: the schedule is invalid")
        print(f"{case:<12} {r['n']:>6} {r['m']:>6} {r['R']:>4} {r['generate_s']:>7} "
              f"{r['generate_cpu_s']:>8} "
              f"{r['generate_peak_mib']:>8} {r['validate_s']:>8} {r['peak_mib']:>9}", flush=True)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "network-table", help="reproduce Beier and Sibeyn's tables (ours beside the paper's)",
        description="table6: every colour string expanded and validated (R, S; streamed, "
        "schedule not held, past the held gossip limit); table5: gossip by the matching "
        "heuristic (best over nine settings: BFS weights with "
        "Dist_Exp 2, 4, 8, 16, the paper's even bce split with Num_Exp 0 and 1, potential) "
        "beside the paper's LB, UB, HR; table4: broadcast from node 0; table1: the large "
        "graphs, one process per row with its time and peak memory (minutes each); table3: "
        "linear cost, R and S per tau; optimum: the certified fewest gossip rounds "
        "(pipegossip schedule optimum; F1, or each of --models) of every family at its two smallest "
        "sizes, beside the matching portfolio's, the colouring search's and their best R "
        "(* marks an optimal one; under H1/Hstar each F1 round split in two). "
        "Every schedule is validated.")
    p.add_argument("table", choices=("table6", "table5", "table4", "table1", "table3", "optimum"))
    p.add_argument("--max-k", type=decimal, default=7,
                   help="largest k (table1/table3: largest n = 2^k); default 7")
    p.add_argument("--min-k", type=decimal, default=3, help="smallest k (table4/5/6); default 3")
    p.add_argument("--families", default=None, metavar="FAM,...",
                   help="table4/table5: only these of ccc, shuffle_exchange, butterfly, "
                   "debruijn; table1/table3: only the rows of these topologies (mesh, "
                   "hypercube, knodel, butterfly, debruijn, pancake, random; table3: mesh, "
                   "torus, ccc, shuffle_exchange, butterfly, debruijn, random); table6: "
                   "only these of ccc, butterfly, star, pancake")
    p.add_argument("--settings", default=None, metavar="NAME,...",
                   help="table3/4/5: only these settings, named as in the setting column "
                   "(e.g. 'bfs de=2,bce ne=0 de=2,potential'); default all nine (table3: "
                   "'bfs de=2')")
    p.add_argument("--tries", type=_TRIES, default=1,
                   help="table3/4/5: tie orders per setting (schedule matching --tries)")
    p.add_argument("--lookahead", type=_LOOKAHEAD, default=0, metavar="L",
                   help="table4/table5: look-ahead rounds for every setting; default 0")
    p.add_argument("--exact", action="store_true",
                   help="table3: exact (blossom) matching instead of greedy (hours)")
    p.add_argument("--row-timeout", type=finite_float, default=None, metavar="SECONDS",
                   help="table1: stop a row (a separate process) after this long; optimum: "
                   "the SAT search's time limit per row")
    p.add_argument("--models", default=None, metavar="MODEL,...",
                   help="optimum: one row per graph and model, of F1, H1, Hstar, Fstar "
                   "(default F1)")
    p.add_argument("--search", action="store_true",
                   help="table6: also run the colour-string search")
    p.add_argument("--best", type=_BUDGET, default=None, metavar="SECONDS",
                   help="table1/3/4/5: each row by 'schedule best' with this many CPU "
                   "seconds (constructions, every setting, colouring, Dist_Exp lowered per "
                   "round, look-ahead, restarts, the improvement pass), the rows run as "
                   "sweep jobs (the sweep options below) and cached in the store")
    p.add_argument("--format", choices=("md", "json"), default="md")
    from ..sweeps.runner import add_sweep_arguments
    add_sweep_arguments(p, formats=None)
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("network-bench", help="time and peak memory of the matching heuristic "
                       "on the paper's large graphs",
                       description="One fresh process per case: wall and CPU seconds of the "
                       "heuristic (CPU counts every thread, so it exceeds wall time when both "
                       "cores are free), its peak resident memory, then the validator's time "
                       "and the case's overall peak (the schedule's item arrays dominate).")
    p.add_argument("--cases", default="hypercube13,mesh80", metavar="CASE,...",
                   help=f"any of {', '.join(_BENCH)}; default hypercube13,mesh80")
    p.add_argument("--matching", action="store_true",
                   help="time one maximum-weight matching (random integer weights) by the "
                   "compiled rustworkx blossom and by networkx's, side by side; the weights "
                   "must agree")
    p.set_defaults(func=cmd_bench)
