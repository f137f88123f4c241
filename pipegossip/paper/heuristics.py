"""``pipegossip network-table``: Beier and Sibeyn's Tables 1, 3, 4, 5 and 6, ours beside
the paper's. Every schedule is validated; the paper's numbers are references only.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from importlib import resources

from ..cli import UsageError
from ..model.algorithms.portfolio import MATCHING_SETTINGS, setting_label
from ..cli.options import echo, list_items, refuse_given
from ..sweeps.runner import SweepOptions
from ..sweeps.store import DEFAULT_STORE

__all__ = ["PORTFOLIO", "best_matching", "table_rows", "table1_row", "cmd_table",
           "optimum_rows", "OPTIMUM_ROWS", "paper_tables"]

#: The matching heuristic's settings a table row tries, keeping the best R (the paper
#: reports its best result over tuned parameters): ``(weights, num_exp, dist_exp)``.
#: ``num_exp`` None is our shortest-path split of the BFS weight; a number is the
#: paper's even split over ``bce_v`` (equation 9).
PORTFOLIO = MATCHING_SETTINGS
_FAMILIES = ("ccc", "shuffle_exchange", "butterfly", "debruijn")
#: ``network-table table6 --search`` limits: graph size and search nodes per R.
SEARCH_MAX_NODES = 400
SEARCH_BUDGET = 20_000


def paper_tables() -> dict:
    """The paper's Tables 1, 3, 4, 5 and 6 as transcribed in the package data."""
    path = resources.files("pipegossip.model.algorithms") / "beier_sibeyn_tables.json"
    return json.loads(path.read_text())


def _lower(n: int) -> int:
    """Telephone gossip lower bound ``ceil(log2 n) + odd(n)`` (Knodel 1975)."""
    return math.ceil(math.log2(n)) + n % 2


#: Short label of a portfolio entry: ``bfs de=2``, ``bce ne=0 de=2``, ``potential``.
setting_name = setting_label


def best_matching(topo, primitive="gossip", root=None, tau=None, portfolio=PORTFOLIO,
                  matcher="auto", tries=1, lookahead=0):
    """Best validated result over ``portfolio``: (R, S, setting, seconds).

    Best is the least ``R + tau S`` (unit cost: the least R), then the least S.
    """
    from ..model.algorithms.matching import matching_schedule
    from ..model.schedules.validate import check
    best, start = None, time.perf_counter()
    for weights, num_exp, de in portfolio:
        v = check(matching_schedule(topo, primitive=primitive, root=root, tau=tau,
                                    weights=weights, num_exp=num_exp, dist_exp=de,
                                    matcher=matcher, tries=tries, lookahead=lookahead))
        key = (v.R + (tau or 0) * v.S, v.S)
        if best is None or key < best[0]:
            best = (key, v.R, v.S, setting_name(weights, num_exp, de))
    return best[1], best[2], best[3], time.perf_counter() - start


def _load() -> str:
    """The 1-minute load average (the machine is shared: times depend on it)."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "-"


def table_rows(name: str, max_k: int, search: bool = False, min_k: int = 3, tries: int = 1,
               lookahead: int = 0, row_timeout: float | None = None, families=None,
               portfolio=None, exact: bool = False, budget: float | None = None,
               models: tuple[str, ...] = ("F1",), sweep=None):
    """Rows of ``network-table NAME`` (a generator: each row as soon as it is measured).

    With ``budget``, table1/3/4/5 rows are the portfolio's, run as sweep jobs
    with the :class:`~.sweep.SweepOptions` ``sweep`` (:mod:`pipegossip.sweeps.heuristics`).
    ``families``: only these topology names (None: every row)."""
    from ..model.algorithms.coloring import color_schedule, search_colors
    from ..model.schedules.topologies import _size, topology
    from ..model.schedules.validate import check
    paper = paper_tables()
    from ..sweeps.heuristics_stream import streamed_colors, streamed_row
    from ..sweeps.heuristics import (_not_run, best_rows, node_limit, row_label, table_topology,
                                wanted)
    if name in ("table4", "table5"):
        families = families or _FAMILIES
    if budget is not None:
        yield from best_rows(name, paper, budget, sweep, max_k, min_k, families)
        return
    if portfolio is None:
        # table3: one Dist_Exp (the paper finds 0.5-2.5 suitable for linear cost)
        portfolio = [("bfs", None, 2.0)] if name == "table3" else PORTFOLIO
    if name == "table6":
        for fam, strings in paper["table6"].items():
            for k, colors in strings.items():
                if not min_k <= int(k) <= max_k or (families and fam not in families):
                    continue
                spec = {"name": fam, "k": int(k)}
                start, c0 = time.perf_counter(), time.process_time()
                row = {"graph": f"{fam}_{k}", "n": _size(fam, spec), "colors": colors,
                       "paper_R": len(colors)}
                # past the held limit (star_8, pancake_8, ccc_12, butterfly_12: an n x n
                # schedule of 13-19 GB) the string runs streamed, past the streamed one not
                why = _not_run(spec, "gossip")
                if why:
                    yield dict(row, R=None, S=None, S_lower=row["n"] - 1, seconds=None,
                               cpu_s=None, schedule=f"not run: {why}")
                    continue
                if streamed_colors(spec, "gossip"):
                    got = streamed_row({"topology": spec, "colors": colors})
                    yield dict(row, R=got["R"], S=got["S"], S_lower=row["n"] - 1,
                               seconds=round(time.perf_counter() - start, 2),
                               cpu_s=round(time.process_time() - c0, 1), schedule="streamed")
                    continue
                topo = topology(fam, k=int(k))
                v = check(color_schedule(topo, colors))
                row.update(R=v.R, S=v.S, S_lower=topo.n - 1,
                           seconds=round(time.perf_counter() - start, 2),
                           cpu_s=round(time.process_time() - c0, 1), schedule="held")
                if search:  # from two rounds below the paper's R: lower R exhaust the budget
                    found = (search_colors(topo, max_rounds=len(colors), budget=SEARCH_BUDGET,
                                           min_rounds=len(colors) - 2)
                             if topo.n <= SEARCH_MAX_NODES else None)
                    row["found"] = found or "-"
                yield row
    elif name in ("table5", "table4"):
        data = paper[name]
        bcast = name == "table4"
        for fam in families:
            for k in range(min_k, max_k + 1):
                i = k - paper["k_first"]
                cols = {"graph": f"{fam}_{k}", "n": _size(fam, {"k": k}),
                        "LB": data[fam]["LB"][i], "UB": data[fam]["UB"][i],
                        "paper_HR": data[fam]["HR"][i]}
                why = _not_run({"name": fam, "k": k}, "broadcast" if bcast else "gossip")
                if why:
                    yield dict(cols, R=None, setting=f"not run: {why}", lower=None,
                               seconds=None, load=_load())
                    continue
                colors = None if bcast else streamed_colors({"name": fam, "k": k}, "gossip")
                if colors:  # past the held limit: the Table 6 string, streamed
                    start = time.perf_counter()
                    got = streamed_row({"topology": {"name": fam, "k": k}, "colors": colors})
                    yield {**cols, "R": got["R"], "setting": got["by"],
                           "lower": _lower(cols["n"]),
                           "seconds": round(time.perf_counter() - start, 1), "load": _load()}
                    continue
                topo = topology(fam, k=k, max_nodes=node_limit("broadcast" if bcast
                                                               else "gossip"))
                R, S, how, sec = best_matching(topo, "broadcast" if bcast else "gossip",
                                               0 if bcast else None, portfolio=portfolio,
                                               tries=tries, lookahead=lookahead)
                yield {**cols, "R": R, "setting": how,
                       "lower": math.ceil(math.log2(topo.n)) if bcast else _lower(topo.n),
                       "seconds": round(sec, 1), "load": _load()}
    elif name == "table1":
        for i, p in enumerate(paper["table1"]):
            n = p["n"]
            if n > (1 << max_k) or not wanted(p, families):
                continue
            row = {"graph": row_label(p), "n": n, "m": p["m"], "LW": p["LW"], "UP": p["UP"],
                   "paper_HR": p["HR"], "paper_s": p["time_s"]}
            row.update(_table1_subprocess(i, row_timeout))
            yield row
    elif name == "optimum":
        yield from optimum_rows(row_timeout, models=models)
    elif name == "table3":
        for p in paper["table3"]:
            if p["n"] > (1 << max_k) or not wanted(p, families):
                continue
            topo = table_topology(p["topology"])
            for tau, (pr, ps) in p["RS"].items():
                # Greedy matching unless ``exact``: the blossom takes hours here.
                R, S, how, sec = best_matching(topo, tau=float(tau), portfolio=portfolio,
                                               matcher="exact" if exact else "greedy",
                                               tries=tries)
                yield {"graph": row_label(p), "n": topo.n, "tau": float(tau), "paper_R": pr,
                       "paper_S": ps, "R": R, "S": S, "S_lower": topo.n - 1,
                       "T": round(R + float(tau) * S, 1),
                       "paper_T": round(pr + float(tau) * ps, 1),
                       "matcher": "exact" if exact else "greedy", "setting": how,
                       "seconds": round(sec, 1),
                       "load": _load()}


#: ``network-table optimum``: every family at its two smallest sizes (n <= 64).
OPTIMUM_ROWS = (("path", {"n": 8}), ("path", {"n": 16}), ("cycle", {"n": 8}),
                ("cycle", {"n": 16}), ("complete", {"n": 8}), ("complete", {"n": 16}),
                ("hypercube", {"k": 3}), ("hypercube", {"k": 4}), ("mesh", {"a": 3, "b": 3}),
                ("mesh", {"a": 4, "b": 4}), ("torus", {"a": 3, "b": 3}),
                ("torus", {"a": 4, "b": 4}), ("star", {"k": 3}), ("star", {"k": 4}),
                ("pancake", {"k": 3}), ("pancake", {"k": 4}), ("ccc", {"k": 3}),
                ("ccc", {"k": 4}), ("butterfly", {"k": 3}), ("butterfly", {"k": 4}),
                ("shuffle_exchange", {"k": 3}), ("shuffle_exchange", {"k": 4}),
                ("debruijn", {"k": 3}), ("debruijn", {"k": 4}), ("knodel", {"n": 8}),
                ("knodel", {"n": 16}))


def _named_schedule(topo, name: str | None):
    """Rebuild the portfolio's candidate ``name`` (a plain matching setting or a colour
    string) to hand it to another model; None when there is none."""
    from ..model.algorithms.coloring import color_schedule
    from ..model.algorithms.matching import matching_schedule
    if name is None:
        return None
    if name.startswith("coloring "):
        return color_schedule(topo, name.split()[1])
    for weights, num_exp, de in MATCHING_SETTINGS:
        if name == f"matching {setting_label(weights, num_exp, de)}":
            return matching_schedule(topo, weights=weights, num_exp=num_exp, dist_exp=de)
    raise AssertionError(f"no portfolio candidate named {name!r}")


def optimum_rows(time_limit: float | None = None, budget: float = 60.0,
                 models: tuple[str, ...] = ("F1",), rows=None):
    """Certified gossip optima beside the heuristics' R: the matching portfolio, the
    colouring search and ``schedule best`` (which also has the dimension orders and
    look-ahead); ``*`` marks an optimal one. The best schedule caps the SAT search.

    The heuristics build F1 schedules; under another model each is taken as
    :func:`~pipegossip.model.algorithms.optimum.as_model` makes it (H1, Hstar:
    every round split in two). One row per graph and model; the heuristics run
    once per graph."""
    from ..model.algorithms.optimum import as_model, min_rounds
    from ..model.algorithms.portfolio import best_schedule
    from ..model.schedules.topologies import topology
    from ..model.schedules.validate import check
    for fam, params in OPTIMUM_ROWS if rows is None else rows:
        topo = topology(fam, **params)
        t = time.perf_counter()
        # every heuristic runs (no stop at the bound): the table marks each one
        s, tried = best_schedule(topo, budget=budget, stop_at_bound=False)
        heur = time.perf_counter() - t
        plain = min(((r, name) for name, r, _ in tried if name.startswith("matching")
                     and not any(x in name for x in ("lookahead", "tries", "restart"))),
                    default=None)
        coloring = min(((r, name) for name, r, _ in tried if name.startswith("coloring")),
                       default=None)
        for model in models:
            if model == "F1":
                heuristics = [None if x is None else x[0] for x in (plain, coloring)]
                known = s
            else:
                known = as_model(s, model)
                heuristics = [None if x is None else check(as_model(
                    _named_schedule(topo, x[1]), model)).R for x in (plain, coloring)]
            r = min_rounds(topo, model, known=known, time_limit=time_limit)
            if r.schedule is not None and check(r.schedule).R != r.optimum:
                raise AssertionError(f"{fam} {params} {model}: the optimum schedule does not "
                                     "validate")
            opt = r.optimum

            def mark(x):
                return "-" if x is None else f"{x}*" if x == opt else str(x)
            yield {"graph": f"{fam}_{'x'.join(str(v) for v in params.values())}",
                   "model": model, "n": topo.n, "m": topo.m, "lower": r.bound,
                   "optimum": opt if opt is not None else f">= {r.lower}",
                   "matching": mark(heuristics[0]), "coloring": mark(heuristics[1]),
                   "best": mark(check(known).R), "best_by": s.origin["source"].split(":")[0],
                   "solver_s": round(r.seconds, 1), "heuristics_s": round(heur, 1),
                   "load": _load()}


def table1_row(index: int) -> dict:
    """Table 1's row ``index`` in this process: R, seconds, peak resident MiB.

    One run at the default setting (BFS, Dist_Exp 4; greedy matching above 2,500
    edges): the portfolio costs too much at these sizes.
    """
    from ..model.algorithms.matching import matching_schedule
    from ..model.schedules.validate import validate
    from ..sweeps.heuristics import table_topology
    topo = table_topology(paper_tables()["table1"][index]["topology"])
    t0, c0 = time.perf_counter(), time.process_time()
    s = matching_schedule(topo)
    t1, c1 = time.perf_counter(), time.process_time()
    gen_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    v = validate(s)
    if not v.valid:
        raise AssertionError(f"table1 row {index}: invalid schedule: {v.error}")
    return {"R": v.R, "lower": _lower(topo.n), "seconds": round(t1 - t0, 1),
            "cpu_s": round(c1 - c0, 1), "gen_mib": round(gen_mib),
            "check_s": round(time.perf_counter() - t1, 1),
            "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def _table1_subprocess(index: int, timeout: float | None) -> dict:
    """:func:`table1_row` in a fresh process (its peak memory is its own), or a time-out."""
    code = ("import json; from pipegossip.paper.heuristics import table1_row; "
            f"print(json.dumps(table1_row({index})))")
    load = _load()
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        row = dict.fromkeys(("R", "lower", "seconds", "cpu_s", "gen_mib", "check_s",
                             "peak_mib", "wall_s"))
        row.update(load=f"{load}-{_load()}", note=f"stopped after {timeout:g} s")
        return row
    if out.returncode:
        raise RuntimeError(f"table1 row {index} failed: {out.stderr.strip()[-300:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["wall_s"] = round(time.perf_counter() - start, 1)
    row["load"] = f"{load}-{_load()}"
    return row


#: Which tables each option applies to: ``(tables, ((flag, attribute, unset), ...))``.
_APPLIES = (
    (("table1", "table3", "table4", "table5", "table6"), (("--families", "families", None),)),
    (("table4", "table5"), (("--lookahead", "lookahead", 0),)),
    (("table3", "table4", "table5"), (("--settings", "settings", None), ("--tries", "tries", 1))),
    (("table4", "table5", "table6"), (("--min-k", "min_k", 3),)),
    (("table3",), (("--exact", "exact", False),)),
    (("table1", "optimum"), (("--row-timeout", "row_timeout", None),)),
    (("table6",), (("--search", "search", False),)),
    (("optimum",), (("--models", "models", None),)),
)


#: The sweep runner's options (``--best`` runs the rows as sweep jobs).
_SWEEP_OPTIONS = (("--workers", "workers", None), ("--scheduler", "scheduler", None),
                  ("--store", "store", DEFAULT_STORE), ("--no-cache", "no_cache", False),
                  ("--timeout", "timeout", None))
#: Options that pick one heuristic: the portfolio runs them all.
_NOT_WITH_BEST = (("--settings", "settings", None), ("--tries", "tries", 1),
                  ("--lookahead", "lookahead", 0), ("--exact", "exact", False),
                  ("--row-timeout", "row_timeout", None))


def cmd_table(args: argparse.Namespace) -> int:
    if not 3 <= args.max_k <= 14:
        raise UsageError(f"--max-k must be between 3 and 14, got {args.max_k}")
    if not 3 <= args.min_k <= args.max_k:
        raise UsageError(f"--min-k must be between 3 and --max-k, got {args.min_k}")
    if args.tries < 1 or args.lookahead < 0:
        raise UsageError("--tries must be >= 1 and --lookahead >= 0")
    if args.row_timeout is not None and not args.row_timeout > 0:
        raise UsageError(f"--row-timeout must be > 0, got {args.row_timeout}")
    for tables, options in _APPLIES:
        if args.table not in tables:
            refuse_given(args, options, "only to " + ", ".join(tables))
    families = None
    if args.families is not None:
        families = tuple(list_items(args.families, "--families"))
        known = (_FAMILIES if args.table in ("table4", "table5") else
                 tuple(paper_tables()["table6"]) if args.table == "table6" else
                 tuple(dict.fromkeys(p["topology"]["name"] for p in paper_tables()[args.table])))
        bad = [f for f in families if f not in known]
        if bad:
            raise UsageError(f"--families: unknown {echo(bad[0])} "
                             f"(expected {', '.join(known)})")
    portfolio = None
    if args.settings is not None:
        names = {setting_name(*p): p for p in PORTFOLIO}
        wanted = list_items(args.settings, "--settings")
        bad = [x for x in wanted if x not in names]
        if bad:
            raise UsageError(f"--settings: unknown {echo(bad[0])} "
                             f"(expected some of {', '.join(names)})")
        portfolio = [names[x] for x in wanted]
    if args.best is not None and args.table not in ("table1", "table3", "table4", "table5"):
        raise UsageError("--best applies to table1, table3, table4 and table5")
    sweep = None
    if args.best is None:
        refuse_given(args, _SWEEP_OPTIONS, "only with --best (the rows then run as sweep jobs)")
    else:
        refuse_given(args, _NOT_WITH_BEST, "only without --best (the portfolio tries them all)")
        sweep = SweepOptions.from_args(args)
    models = ("F1",)
    if args.models is not None:
        from ..model.algorithms.optimum import MODELS
        models = tuple(list_items(args.models, "--models"))
        bad = [m for m in models if m not in MODELS]
        if bad or len(set(models)) < len(models):
            raise UsageError(f"--models: {'unknown ' + echo(bad[0]) if bad else 'a repeat'} "
                             f"(expected some of {', '.join(MODELS)})")
    rows = table_rows(args.table, args.max_k, args.search, args.min_k, args.tries,
                      args.lookahead, args.row_timeout, families, portfolio, args.exact,
                      args.best, models, sweep)
    if args.format == "json":
        print(json.dumps(list(rows), indent=1))
        return 0
    keys = None
    for r in rows:
        if keys is None:
            keys = list(r)
            print("| " + " | ".join(keys) + " |")
            print("|" + "---|" * len(keys))
        extra = [k for k in r if k not in keys]  # a stopped table1 row has other columns
        print("| " + " | ".join("-" if r.get(k) is None else str(r.get(k)) for k in keys)
              + " |" + "".join(f" {k}: {r[k]}" for k in extra), flush=True)
    return 0
