"""``pipegossip optimum``: the certified fewest rounds of gossip or broadcast on a small network.

The search is :func:`pipegossip.model.algorithms.optimum.min_rounds` (SAT):
rounds rise from a lower bound; the first satisfiable count is the optimum
and every smaller one is proved impossible. Under ``F1`` with unlimited
packets the matching heuristic's schedule caps the search (reaching its R
proves it optimal). The optimal schedule goes through the validator before
``-o`` writes it.
"""

from __future__ import annotations

import argparse
import json

from . import UsageError
from ..infra.files import atomic_write
from .options import decimal, positive_int, time_limit_seconds

__all__ = ["register", "solve"]

_time_limit = time_limit_seconds


def solve(topo, model: str, primitive: str = "gossip", root: int | None = None,
          p: int | None = None, time_limit: float | None = None, heuristic: bool = True):
    """The search, capped by the matching heuristic where it applies (``F1``, unlimited p).

    Returns ``(OptimumSearch, heuristic R or None)``; the found schedule is validated.
    """
    from ..model.algorithms.optimum import min_rounds
    from ..model.schedules.validate import validate
    known = None
    if heuristic and model == "F1" and p is None:
        from ..model.algorithms.matching import matching_schedule
        known = matching_schedule(topo, primitive=primitive, root=root)
    r = min_rounds(topo, model, primitive, root, p, known, time_limit)
    if r.schedule is not None:
        v = validate(r.schedule)
        if not v.valid or v.R != r.optimum:
            raise AssertionError(f"optimum schedule rejected: {v.error or v.R}")
    return r, None if known is None else validate(known).R


def cmd_optimum(args: argparse.Namespace) -> int:
    from .heuristics import build_topology
    topo = build_topology(args.topology, {"n": args.n, "k": args.k, "a": args.a, "b": args.b})
    broadcast = args.primitive == "broadcast"
    if broadcast != (args.root is not None):
        raise UsageError("--root is needed by --primitive broadcast and taken by nothing else")
    if args.root is not None and not 0 <= args.root < topo.n:
        raise UsageError(f"--root must be in 0..{topo.n - 1}, got {args.root}")
    if args.output is not None:
        from ..infra.files import check_output_file
        check_output_file(args.output)
    try:
        r, heuristic = solve(topo, args.model, args.primitive, args.root, args.p,
                             args.time_limit)
    except ValueError as e:  # over the budget, or a topology the search cannot take
        raise UsageError(f"--topology {args.topology}: {e}") from None
    if r.schedule is not None and args.output is not None:
        from ..model.schedules.ir import dumps
        atomic_write(args.output, dumps(r.schedule, gz=str(args.output).endswith(".gz")))
    if args.format == "json":
        print(json.dumps({"topology": topo.to_json(), "n": topo.n, "model": args.model,
                          "primitive": args.primitive, "p": args.p, "optimum": r.optimum,
                          "proved_lower": r.lower, "lower_bound": r.bound,
                          "heuristic": heuristic, "method": r.method,
                          "seconds": round(r.seconds, 3),
                          "steps": [{"rounds": m, "verdict": v, "seconds": round(t, 3)}
                                    for m, v, t in r.steps]}))
    else:
        print(f"{topo.name} n={topo.n} m={topo.m}, {args.model} {args.primitive}, "
              f"p={'unlimited' if args.p is None else args.p}: lower bound {r.bound}"
              + ("" if heuristic is None else f", matching heuristic {heuristic} rounds"))
        print(f"method {r.method}")
        for m, verdict, t in r.steps:
            print(f"  {m} rounds: {verdict} ({t:.2f} s)")
        if r.optimum is None:
            print(f"time limit: R >= {r.lower} proved, not settled; total {r.seconds:.2f} s")
        else:
            how = ("found by the solver" if r.steps and r.steps[-1][1] == "SAT" else
                   "the matching heuristic meets the lower bound" if not r.steps else
                   "the matching heuristic is optimal")
            print(f"optimum R = {r.optimum} ({how}); total {r.seconds:.2f} s")
    return 0 if r.optimum is not None else 1


def register(sub: argparse._SubParsersAction) -> None:
    from ..model.algorithms.optimum import MODELS
    from ..model.schedules.topologies import TOPOLOGIES
    p = sub.add_parser(
        "optimum", help="certified fewest rounds on a small network (SAT)",
        description="Prove the fewest rounds of gossip (or broadcast from --root) on a "
        "topology under F1, H1, Hstar or Fstar, with packets of --p items (default "
        "unlimited): rounds rise from a lower bound until a SAT solver (CaDiCaL, python-sat) "
        "finds a schedule; every smaller count is proved impossible. Under F1 with unlimited "
        "packets the matching heuristic caps the search. The optimal schedule is validated "
        "and written with -o. Exit 1 when --time-limit stops the search first. Instances "
        "past a size budget (rounds x arcs x items) are refused.")
    p.add_argument("--topology", required=True,
                   choices=[t for t in TOPOLOGIES if t != "explicit"], metavar="NAME",
                   help="one of " + ", ".join(t for t in TOPOLOGIES if t != "explicit"))
    for opt, what in (("--n", "nodes (complete, path, cycle, knodel)"),
                      ("--k", "the k of hypercube, star, pancake, ccc, butterfly, "
                       "shuffle_exchange, debruijn"), ("--a", "mesh/torus rows"),
                      ("--b", "mesh/torus columns")):
        p.add_argument(opt, type=decimal, default=None, help=what)
    p.add_argument("--model", required=True, choices=MODELS)
    p.add_argument("--primitive", choices=("gossip", "broadcast"), default="gossip")
    p.add_argument("--root", type=decimal, default=None, help="broadcast root")
    p.add_argument("--p", type=positive_int, default=None,
                   help="items per message (default unlimited)")
    p.add_argument("--time-limit", type=_time_limit, default=None, metavar="SECONDS",
                   help="interrupt the solver after this long (default: none)")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write the optimal schedule (FILE.json or FILE.json.gz)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_optimum)
