"""Generators of ``pipegossip schedule reduce|allreduce|all-port``.

* ``reduce --topology T --root R``: one combined word per message up a
  binomial tree (hypercube, complete: ``F1``) or the root's BFS tree
  (``Hstar``);
* ``allreduce --topology T``: recursive doubling (hypercube, complete with
  ``n = 2^k``: ``F1``), the dimension-wise pipeline (cycle, path, mesh,
  torus: ``Fstar``) or a tree (``Hstar``);
* ``all-port --topology T``: ``Fstar``, ``p = 1`` gossip (the pipeline on
  cycles and paths, the greedy elsewhere).

The topology comes from ``--n/--k/--a/--b`` as for ``schedule matching``.
"""

from __future__ import annotations

import argparse

from . import UsageError
from .heuristics import build_topology

__all__ = ["COLLECTIVE_ALGORITHMS", "collective_schedule", "MAX_NODES"]

COLLECTIVE_ALGORITHMS = ("reduce", "allreduce", "all-port")
#: Largest n per generator (schedules hold up to n^2 token entries; the
#: all-port greedy's work grows as n^2 times its rounds).
MAX_NODES = {"reduce": 4096, "allreduce": 4096, "all-port": 1024}
#: Options of other generators (with their defaults) that do not apply here.
_FOREIGN = {"order": None, "seed": None, "receive": "ordered", "substitute": False,
            "sessions": 1, "channels": None, "primitive": "gossip", "tau": None,
            "colors": None, "lookahead": 0, "weights": "bfs", "dist_exp": 4.0,
            "matcher": "auto", "num_exp": None, "tries": 1, "candidates": 4}


def collective_schedule(args: argparse.Namespace):
    """The schedule ``pipegossip schedule reduce|allreduce|all-port`` asked for."""
    from ..model.algorithms.allport import allport_gossip
    from ..model.algorithms.reduce import allreduce_schedule, reduce_schedule
    name = args.algorithm
    given = [k for k, d in _FOREIGN.items() if getattr(args, k, d) != d]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise UsageError(f"{flag} does not apply to 'schedule {name}'")
    if name != "reduce" and args.root is not None:
        raise UsageError(f"--root applies only to 'schedule reduce' ({name} has no root)")
    values = {"n": args.n, "k": args.k, "a": args.a, "b": args.b}
    if args.topology == "explicit":
        raise UsageError("--topology explicit: write the schedule file by hand")
    topo = build_topology(args.topology, values)
    limit = MAX_NODES[name]
    if topo.n > limit:
        raise UsageError(f"schedule {name} is limited to {limit} nodes, got {topo.n}")
    if name == "reduce":
        if args.root is None:
            raise UsageError("schedule reduce needs --root (a node 0..n-1)")
        if not 0 <= args.root < topo.n:
            raise UsageError(f"--root {args.root}: expected a node 0..{topo.n - 1}")
    try:
        if name == "reduce":
            return reduce_schedule(topo, args.root)
        if name == "allreduce":
            return allreduce_schedule(topo)
        return allport_gossip(topo)
    except ValueError as e:
        raise UsageError(f"schedule {name}: {e}") from None
