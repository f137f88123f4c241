"""``network-table table1|table3|table4|table5 --best SECONDS``: the portfolio per row, on
the sweep runner.

Every row is one sweep job (:func:`portfolio_row`): ``schedule best``'s portfolio
(:func:`pipegossip.model.algorithms.portfolio.best_schedule`) with ``SECONDS`` of CPU
per row, the winner validated again in the job. Results are cached in the sweep store
(``--store``, keyed by the row and the code it runs; ``--no-cache`` recomputes), the rows run side by side on Dask
(``--workers``, ``--scheduler``; ``--workers 0``: one row at a time, each in a child
process that a signal stops at once) and ``--timeout`` stops a row outright. A failed
or stopped row is printed with its error.
"""

from __future__ import annotations

import dataclasses
import time

from ..infra.budgets import MAX_GOSSIP_NODES
from .heuristics_stream import streamed_colors, streamed_row
from .runner import Job, SweepOptions, run_sweep

__all__ = ["portfolio_row", "best_rows", "node_limit", "table_topology", "row_label", "wanted"]

#: ``--workers 0`` runs each row in a child process with this "timeout": no
#: limit in practice (11 days; the poll under `communicate` takes at most 24), only the
#: child that a signal can stop.
IN_CHILD_S = 1e6

#: What a row's result depends on besides pipegossip itself.
TOOLS = ("numpy", "numba", "rustworkx")


def portfolio_row(config: dict) -> dict:
    """Job: the portfolio on one table row; R, S, what won, CPU seconds.

    ``config``: ``topology`` (``{"name": ..., params}``), ``primitive``, ``root``,
    ``tau`` (None: unit cost) and ``budget`` (CPU seconds).
    """
    from ..model.algorithms.portfolio import best_schedule
    from ..model.schedules.topologies import topology
    from ..model.schedules.validate import validate
    topo = table_topology(config["topology"], node_limit(config["primitive"]))
    c0 = time.process_time()
    s, tried = best_schedule(topo, config["primitive"], config["root"], tau=config["tau"],
                             budget=config["budget"])
    cpu = time.process_time() - c0
    v = validate(s)
    if not v.valid:
        raise AssertionError(f"the portfolio's schedule is invalid: {v.error}")
    return {"R": v.R, "S": v.S, "by": s.origin["source"].split(":")[0],
            "candidates": len(tried), "cpu_s": round(cpu, 1)}


def _specs(name: str, paper: dict, max_k: int, min_k: int, families) -> list[tuple]:
    """``(paper columns, topology, primitive, root, tau)`` per row of table ``name``."""
    out = []
    if name == "table1":
        for p in paper["table1"]:
            if p["n"] <= 1 << max_k and wanted(p, families):
                cols = {"graph": row_label(p), "n": p["n"], "m": p["m"], "LW": p["LW"],
                        "UP": p["UP"], "paper_HR": p["HR"], "paper_s": p["time_s"]}
                out.append((cols, p["topology"], "gossip", None, None))
    elif name == "table3":
        for p in paper["table3"]:
            if p["n"] <= 1 << max_k and wanted(p, families):
                for tau, (pr, ps) in p["RS"].items():
                    cols = {"graph": row_label(p), "n": p["n"], "tau": float(tau), "paper_R": pr,
                            "paper_S": ps, "paper_T": round(pr + float(tau) * ps, 1)}
                    out.append((cols, p["topology"], "gossip", None, float(tau)))
    else:
        bcast = name == "table4"
        for fam in families:
            for k in range(min_k, max_k + 1):
                i = k - paper["k_first"]
                d = paper[name][fam]
                cols = {"graph": f"{fam}_{k}", "LB": d["LB"][i], "UB": d["UB"][i],
                        "paper_HR": d["HR"][i]}
                out.append((cols, {"name": fam, "k": k}, "broadcast" if bcast else "gossip",
                            0 if bcast else None, None))
    return out


def table_topology(spec: dict, max_nodes: int | None = None):
    """The topology of a table row, ``{"name": ..., params}``.

    ``{"name": "random", "n": N, "m": M, "seed": S}`` is the graph
    ``networkx.gnm_random_graph(N, M, seed=S)`` (an explicit topology): the paper's
    Random rows are one graph of G(n, m) each that it does not give, so ours is a
    graph of the same size and density, not the paper's graph (:func:`row_label`).

    Raises
    ------
    ValueError
        If that random graph is not connected (no gossip schedule exists).
    """
    from ..model.schedules.topologies import topology
    params = {k: v for k, v in spec.items() if k != "name"}
    if spec["name"] != "random":
        return topology(spec["name"], **params, max_nodes=max_nodes)
    import networkx as nx
    g = nx.gnm_random_graph(params["n"], params["m"], seed=params["seed"])
    if not nx.is_connected(g):
        raise ValueError(f"G({params['n']}, {params['m']}) with seed {params['seed']} is not "
                         "connected")
    return topology("explicit", n=params["n"], edges=[[u, v] for u, v in g.edges()],
                    max_nodes=max_nodes)


def wanted(p: dict, families) -> bool:
    """Whether Table 1/3 row ``p`` is among ``families`` (topology names; None: all)."""
    return families is None or p["topology"]["name"] in families


def row_label(p: dict) -> str:
    """A Table 1/3 row's graph column: a random row says that the graph is ours."""
    spec = p["topology"]
    if spec["name"] != "random":
        return p["graph"]
    return f"{p['graph']} (ours: G(n, m) seed {spec['seed']}, not the paper's graph)"


def node_limit(primitive: str) -> int:
    """The topology builder's node limit for a table row of ``primitive``: broadcast
    rows have their own (:data:`~.model.schedules.topologies.MAX_BROADCAST_NODES`:
    one item, a few words a node), so Table 4 runs its ccc and butterfly k = 13, 14
    (106,496 and 229,376 nodes); every other row keeps the builder's default."""
    from ..model.schedules.topologies import MAX_BROADCAST_NODES, MAX_NODES
    return MAX_BROADCAST_NODES if primitive == "broadcast" else MAX_NODES


def _not_run(spec: dict, primitive: str) -> str | None:
    """Why the row of topology ``spec`` is not run (a row that says so, not a job), or None.

    Past the topology builder's node limit (:func:`node_limit`), and gossip past its
    own: a unit-cost gossip schedule holds ``n(n-1)`` item ids (ccc_12: 49,152
    nodes, 19 GB as int64), unless the row runs streamed (:mod:`.heuristics_stream`)."""
    from ..model.schedules.topologies import _size
    n, limit = _size(spec["name"], spec), node_limit(primitive)
    if n > limit:
        return f"{primitive} topologies are limited to {limit} nodes"
    if primitive == "gossip" and n > MAX_GOSSIP_NODES and not streamed_colors(spec, primitive):
        return (f"gossip is limited to {MAX_GOSSIP_NODES} nodes (its schedule holds n(n-1) "
                f"item ids: {n * (n - 1) * 8 / 1e9:.3g} GB here)")
    return None


def best_rows(name: str, paper: dict, budget: float, options: SweepOptions, max_k: int = 7,
              min_k: int = 3, families=None):
    """The rows of ``network-table NAME --best BUDGET``, the portfolio's beside the paper's."""
    from ..model.algorithms.portfolio import lower_bound
    from ..model.schedules.topologies import _size
    specs = _specs(name, paper, max_k, min_k, families)
    big = [_not_run(spec, prim) for _, spec, prim, _, _ in specs]
    jobs = [Job.of(portfolio_row, {"topology": topo, "primitive": prim, "root": root,
                                   "tau": tau, "budget": budget}, TOOLS,
                   label=cols["graph"] + ("" if tau is None else f" tau={tau:g}"))
            if tau is not None or not streamed_colors(topo, prim) else
            # past the held limit: the Table 6 string, streamed, whatever the budget
            Job.of(streamed_row, {"topology": topo, "colors": streamed_colors(topo, prim)},
                   TOOLS, label=cols["graph"] + " streamed")
            for (cols, topo, prim, root, tau), over in zip(specs, big) if not over]
    if options.workers == 0 and options.timeout is None:
        # A row's search can sit for minutes in compiled code that holds the
        # interpreter (a matcher, a kernel), where no signal handler runs: a
        # SIGTERM was seen ignored for 20 s. In a child process of its own
        # (the sweep's --timeout path, here without a limit) the row is killed
        # with its process group the moment this process takes the signal.
        options = dataclasses.replace(options, timeout=IN_CHILD_S)
    outcomes = iter(run_sweep(f"network-{name}", jobs, options).outcomes if jobs else ())
    for (cols, spec, prim, root, tau), over in zip(specs, big):
        if over:
            yield dict(cols, n=_size(spec["name"], spec), R=None, S=None, status="not run",
                       error=over)
            continue
        outcome = next(outcomes)
        topo = table_topology(spec, node_limit(prim))
        row = dict(cols, n=topo.n)
        r = outcome.result or {}
        row.update(R=r.get("R"), S=r.get("S"))
        if tau is not None:
            row["T"] = None if not r else round(r["R"] + tau * r["S"], 1)
        # wall_s: the job's own wall time (of the run that made it, for a cached row)
        row.update(lower=lower_bound(topo, prim, root), by=r.get("by"), cpu_s=r.get("cpu_s"),
                   wall_s=None if outcome.seconds is None else round(outcome.seconds, 1),
                   status=outcome.status)
        if outcome.error:
            row["error"] = outcome.error
        yield row

