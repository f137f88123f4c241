"""``schedule best`` on Dask: the portfolio's candidates spread over a cluster's workers.

:func:`~.model.algorithms.portfolio.best_schedule` tries its candidates one after
another in one process. :func:`spread_best` runs its constructions and first matching
run here (as ``best_schedule(budget=0)`` does: they decide whether there is anything
left to search, and the first run's CPU time sizes the search), then hands the other
candidates, in the portfolio's order (its settings, each with one round of
look-ahead, then restarts: tie orders 1, 2, ... over the settings in turn), to the
sweep runner (:func:`~.runner.run_sweep`): one job each, on a local Dask cluster
(``--workers N``) or the one at ``--scheduler ADDRESS``, results cached in the sweep
store under the job's key (:func:`~.store.job_key`: the graph, the setting,
the code), so a second run reads them back.

The budget keeps its meaning, CPU seconds for the search: about ``budget / c``
candidates are sent, ``c`` being the first run's CPU seconds, each stopped past
``budget`` seconds of its own; with ``W`` workers the wall time is then about
``budget / W``. A candidate returns metrics only (a cached row holds no schedule):
the winner is run again here, without a deadline (every run is deterministic), and
validated before it is returned.
"""

from __future__ import annotations

import os
import time

from ..model.algorithms.matching import OutOfTime, matching_schedule
from ..model.algorithms.portfolio import best_schedule, lower_bound, matching_runs
from ..model.schedules.ir import Schedule
from ..model.schedules.topologies import Topology, topology_from_json
from ..model.schedules.validate import validate
from .runner import Job, SweepOptions, run_sweep

__all__ = ["candidate_job", "candidates", "spread_best", "MAX_CANDIDATES"]

#: Most candidates one search sends (the serial portfolio's 64 restarts, and more).
MAX_CANDIDATES = 512


def candidate_job(config: dict) -> dict:
    """One candidate of the portfolio, a job of the sweep runner.

    ``config``: ``topology`` (its JSON), ``primitive``, ``root``, ``tau``, ``name``,
    ``kw`` (matching_schedule's keywords) and ``cap`` (CPU seconds before it stops).
    Returns ``name``, ``R``, ``S``, ``T`` and ``cpu_s``, or ``stopped`` past the cap;
    an invalid schedule raises (the job fails)."""
    topo = topology_from_json(config["topology"])
    start = time.process_time()
    try:
        s = matching_schedule(topo, primitive=config["primitive"], root=config["root"],
                              tau=config["tau"], **config["kw"],
                              deadline=start + config["cap"])
    except OutOfTime:
        return {"name": config["name"], "stopped": True,
                "cpu_s": round(time.process_time() - start, 3)}
    v = validate(s)
    if not v.valid:
        raise AssertionError(f"portfolio candidate {config['name']} is invalid: {v.error}")
    return {"name": config["name"], "R": v.R, "S": v.S, "T": v.R + (config["tau"] or 0) * v.S,
            "cpu_s": round(time.process_time() - start, 3)}


def candidates(topo: Topology, primitive: str = "gossip", tau: float | None = None,
               matcher: str = "auto", seed: int = 0, count: int = MAX_CANDIDATES):
    """The first ``count`` candidates ``(label, keywords)`` of the spread search."""
    runs = matching_runs(topo, primitive, tau, matcher)
    out = list(runs.items())
    out += [(f"{name} lookahead=1", {**kw, "lookahead": 1}) for name, kw in runs.items()]
    run = 1
    while len(out) < count:
        out += [(f"{name} restart={run}", {**kw, "seed": seed, "first_try": run})
                for name, kw in runs.items()]
        run += 1
    return out[:count]


def spread_best(topo: Topology, options: SweepOptions, primitive: str = "gossip",
                root: int | None = None, tau: float | None = None, budget: float = 60.0,
                seed: int = 0, matcher: str = "auto",
                progress=True) -> tuple[Schedule, list, dict]:
    """The portfolio with its candidates spread over Dask workers.

    Returns ``(schedule, tried, info)``: the best validated schedule, ``(name, R, S)``
    per candidate (the local ones first), and ``info`` (``local_cpu_s``, ``sent``,
    ``cached``, ``wall_s``).

    Raises
    ------
    ConfigError
        No scheduler at ``options.scheduler``, or an unusable store.
    """
    start = time.process_time()
    local, tried = best_schedule(topo, primitive, root, tau, budget=0.0, seed=seed,
                                 matcher=matcher)
    first = time.process_time() - start
    weight = tau or 0.0
    v = validate(local)
    best = ((v.R + weight * v.S, v.S), None, local)
    info = {"local_cpu_s": round(first, 3), "sent": 0, "cached": 0, "wall_s": 0.0}
    bound = lower_bound(topo, primitive, root)
    floor = bound + weight * (topo.n - 1 if primitive == "gossip" else bound)
    if best[0][0] <= floor or budget <= 0:
        return local, tried, info
    ran = {t[0] for t in tried}
    workers = options.workers or len(os.sched_getaffinity(0))
    count = min(MAX_CANDIDATES, max(workers, int(budget / max(first, 1e-3))))
    todo = [c for c in candidates(topo, primitive, tau, matcher, seed, count + len(ran))
            if c[0] not in ran][:count]
    jobs = [Job.of(candidate_job, {"topology": topo.to_json(), "primitive": primitive,
                                   "root": root, "tau": tau, "name": name, "kw": kw,
                                   "cap": budget}, label=name) for name, kw in todo]
    sweep = f"best-{topo.name}-{'-'.join(f'{k}{v}' for k, v in sorted(topo.params.items()))}"
    run = run_sweep(sweep, jobs, options, progress=progress)
    info.update(sent=len(jobs), cached=run.counts["cached"], wall_s=round(run.wall_seconds, 3))
    kws = dict(todo)
    for outcome in run.outcomes:
        r = outcome.result
        if r is None or r.get("stopped"):
            continue
        tried.append((r["name"], r["R"], r["S"]))
        if (r["T"], r["S"]) < best[0]:
            best = ((r["T"], r["S"]), r["name"], None)
    key, name, s = best
    if name is not None:  # a worker's candidate won: its schedule, made again here
        s = matching_schedule(topo, primitive=primitive, root=root, tau=tau, **kws[name])
        again = validate(s)
        if not again.valid or (again.R + weight * again.S, again.S) != key:
            raise AssertionError(f"candidate {name} gave another schedule when run again: "
                                 f"{again.error or (again.R, again.S)}")
    else:
        name = local.origin["source"].split(":")[0]
    s.origin = {"algorithm": "best", "source": f"{name}: best of {len(tried)} candidates, "
                f"{info['sent']} on Dask ({', '.join(f'{n} R={r}' for n, r, _ in tried)})"}
    return s, tried, info
