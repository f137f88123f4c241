"""The best schedule of everything we have: a portfolio of telephone (``F1``) heuristics.

:func:`best_schedule` runs, within a time budget, and keeps the least
``R + tau S`` (unit cost: the least ``R``), then the least ``S``:

1. the topology's known constructions: dimension order on hypercubes and
   Knödel graphs (round ``r`` uses the perfect matching of dimension
   ``r mod d``; ``k`` rounds on the ``k``-cube, ``log2 n`` on ``W(2^d)``);
2. the paper's own Table 6 colour string where it prints one (unit-cost gossip;
   before any matching run, which on 10^4 nodes takes minutes);
3. the matching heuristic with every weighting of :data:`MATCHING_SETTINGS`,
   on graphs where ``matcher="auto"`` is greedy (over
   :data:`~.matching.EXACT_MAX_EDGES` edges) the exact matcher at the default
   setting first (last, after the greedy settings, over
   :data:`EXACT_FIRST_MAX_EDGES` edges while no candidate is there);
4. the colouring search (the paper's section 6);
   with ``tau``, also ``Dist_Exp`` lowered round by round (:data:`DECAYS`) and
   superpacket splitting (``split``, on the first setting and the decays);
5. look-ahead and random tie orders on the best setting, then up to
   :data:`MAX_RESTARTS` restarts (one tie order each) over the settings that
   reached the best R, while the budget lasts.

Every candidate is validated; the winner's ``origin`` names it.
"""

from __future__ import annotations

import time

import numpy as np

from ..schedules.ir import Schedule
from ..schedules.topologies import Topology
from ..schedules.validate import validate

__all__ = ["best_schedule", "matching_runs", "table6_string", "MATCHING_SETTINGS", "dimension_order", "setting_label",
           "lower_bound", "DECAYS"]

#: The matching heuristic's settings, ``(weights, num_exp, dist_exp)``: BFS weights with
#: Dist_Exp 2, 4, 8, 16; the paper's even split over ``bce_v`` (Num_Exp 0, 1); potential.
MATCHING_SETTINGS = ([("bfs", None, de) for de in (2.0, 4.0, 8.0, 16.0)]
                     + [("bfs", ne, de) for ne in (0.0, 1.0) for de in (2.0, 4.0)]
                     + [("potential", None, 4.0)])


def setting_label(weights: str, num_exp, dist_exp: float) -> str:
    """Short label of a setting: ``bfs de=2``, ``bce ne=0 de=2``, ``potential``."""
    if weights == "potential":
        return "potential"
    return f"bfs de={dist_exp:g}" if num_exp is None else f"bce ne={num_exp:g} de={dist_exp:g}"


def _dimensions(topo: Topology) -> list[np.ndarray] | None:
    """The perfect matchings of the dimensions, for hypercubes and Knödel graphs."""
    n = topo.n
    if topo.name == "hypercube":
        k = topo.params["k"]
        return [np.array([(v, v | 1 << t) for v in range(n) if not v & 1 << t]) for t in range(k)]
    if topo.name == "knodel":
        half, d = n // 2, n.bit_length() - 1
        return [np.array([(j, half + (j + (1 << t) - 1) % half) for j in range(half)])
                for t in range(d)]
    return None


def dimension_order(topo: Topology, primitive: str = "gossip", root: int | None = None,
                    max_rounds: int = 64) -> Schedule | None:
    """Full exchange along dimension ``r mod d`` in round ``r`` until done (F1), or None."""
    dims = _dimensions(topo)
    if dims is None:
        return None
    n = topo.n
    origin = {"algorithm": "best", "source": "dimension order"}
    if primitive == "gossip":  # arrays throughout: Table 1's graphs have 8,192 nodes
        from .coloring import sequence_schedule
        mates = []
        for pairs in dims:
            mate = np.full(n, -1, np.int64)
            mate[pairs[:, 0]], mate[pairs[:, 1]] = pairs[:, 1], pairs[:, 0]
            mates.append(mate)
        try:
            return sequence_schedule(topo, mates, origin=origin, max_rounds=max_rounds)
        except ValueError:  # no completion within max_rounds
            return None
    items = list(range(n)) if primitive == "gossip" else [root]
    know = np.zeros((n, len(items)), bool)
    for i, b in enumerate(items):
        know[b, i] = True
    rounds = []
    while not know.all():
        if len(rounds) == max_rounds:
            return None
        pairs = dims[len(rounds) % len(dims)]
        msgs = []
        a, b = pairs[:, 0], pairs[:, 1]
        for s, d in ((a, b), (b, a)):
            new = know[s] & ~know[d]
            msgs += [(int(x), int(y), tuple(items[i] for i in np.flatnonzero(row)))
                     for x, y, row in zip(s, d, new) if row.any()]
        know[a] |= know[b]
        know[b] = know[a]
        rounds.append([{"src": x, "dst": [y], "items": list(it)} for x, y, it in msgs])
    return Schedule.from_rounds(rounds, topology=topo, model="F1", p=None, primitive=primitive,
                                root=root, origin=origin)


def _published_string(topo: Topology) -> str | None:
    """Beier and Sibeyn's Table 6 colour string for this graph, if they print one."""
    return table6_string(topo.name, topo.params.get("k"))


def table6_string(name: str, k) -> str | None:
    """Beier and Sibeyn's Table 6 colour string for topology ``name`` at ``k``, or None."""
    import json
    from importlib import resources
    text = (resources.files(__package__) / "beier_sibeyn_tables.json").read_text()
    return json.loads(text)["table6"].get(name, {}).get(str(k))


def lower_bound(topo: Topology, primitive: str = "gossip", root: int | None = None) -> int:
    """A proved lower bound on telephone rounds: ``ceil(log2 n)`` (+1 for gossip on odd
    ``n``), and the eccentricity of one node (gossip: node 0's item must reach every
    node; broadcast: the root's)."""
    from ..schedules.distances import eccentricity
    n = topo.n
    bound = (n - 1).bit_length() + (n % 2 if primitive == "gossip" else 0)
    return max(bound, eccentricity(topo, root if primitive == "broadcast" else 0) or 0)


#: Above this many nodes, with no construction, the cheap potential weights run first
#: (without a deadline), so that the budget can stop the BFS weightings after them;
#: not where ``auto`` matching is greedy: the exact run comes first there.
CHEAP_FIRST_NODES = 2048

#: Gossip where ``auto`` matching is greedy runs the exact matcher first, except on
#: graphs of more edges than this while no candidate is there yet: that run would be
#: the one the budget cannot stop, and one blossom a round costs about ``n^2.3``
#: there, far more in the last rounds (G(2000, 16000): 0.9 s a round, 30 s for the
#: last; G(4000, 32000): 5 s, over 190 s). There the greedy settings come first (the
#: first of them without a deadline: a row needs a result) and the exact run last.
#: Table 1's Random(10000, 80000) is over it; every other row that runs the exact
#: matcher first (de Bruijn_13 16,381 edges, de Bruijn_14 32,765) is not.
EXACT_FIRST_MAX_EDGES = 40_000

#: Random restarts (one tie order each) at most, after the other candidates.
MAX_RESTARTS = 64

#: Dist_Exp lowered round by round (``(start, end)``, factor 0.9 per round), tried on
#: linear-cost rows: the paper finds 0.5-2.5 suitable there and decreasing values better.
DECAYS = ((4.0, 1.0), (2.0, 0.5), (8.0, 1.0))


def matching_runs(topo: Topology, primitive: str = "gossip", tau: float | None = None,
                  matcher: str = "auto", settings=MATCHING_SETTINGS,
                  exact_first: bool = True) -> dict[str, dict]:
    """The portfolio's matching runs in the order it tries them: ``{label: keywords of
    matching_schedule}`` (without ``tau``, ``primitive`` and ``root``).

    ``exact_first``: on graphs where ``auto`` is greedy, the exact run goes first (else
    last); :func:`best_schedule` decides it from the edges and the candidates so far."""
    from .matching import EXACT_MAX_EDGES
    greedy_auto = matcher == "auto" and topo.m > EXACT_MAX_EDGES
    runs = {f"matching {setting_label(w, ne, de)}": {"weights": w, "num_exp": ne,
                                                   "dist_exp": de}
            for w, ne, de in settings}
    if greedy_auto:
        # "auto" is greedy here; the paper's figures are exact matchings, and on
        # de Bruijn graphs greedy costs rounds (de Bruijn_10: 21 against 18). With
        # no construction, this run is the one the budget cannot stop: minutes on
        # Table 1's de Bruijn_13, where the cheap potential run gave 31 rounds. Past
        # EXACT_FIRST_MAX_EDGES it comes last, under the deadline (one round may
        # still overshoot it: a blossom cannot be stopped halfway).
        exact = {f"matching {setting_label('bfs', None, 4.0)} exact":
                 {"weights": "bfs", "num_exp": None, "dist_exp": 4.0, "matcher": "exact"}}
        runs = {**exact, **runs} if exact_first else {**runs, **exact}
    if tau is not None:  # linear cost: potential, the lowered Dist_Exp, the split, early
        first = list(runs)[:1] + [r for r in runs if r == "matching potential"]
        decays = {f"matching bfs de={a:g}>{b:g}": {"dist_exp": a, "dist_exp_end": b}
                  for a, b in DECAYS}
        split = {f"{name} split": {**kw, "split": True} for name, kw in
                 [*((r, runs[r]) for r in first), *decays.items()]
                 if kw.get("weights") != "potential"}
        runs = {**{r: runs[r] for r in first}, **decays, **split, **runs}
    return runs


def best_schedule(topo: Topology, primitive: str = "gossip", root: int | None = None,
                  tau: float | None = None, budget: float = 60.0, seed: int = 0,
                  settings=MATCHING_SETTINGS, matcher: str = "auto",
                  improve: bool = True, stop_at_bound: bool = True) -> tuple[Schedule, list]:
    """The best validated schedule of the portfolio within ``budget`` seconds of CPU.

    CPU time (this process, all its threads), not wall time: on a shared machine
    the wall clock says more about the other jobs than about this one.

    Returns ``(schedule, tried)``; ``tried`` lists ``(name, R, S)`` per candidate.
    The constructions always run, then the first matching setting unless a
    construction meets :func:`lower_bound` (it is then optimal and the search
    stops). Later candidates start only while the budget lasts, and a matching
    run that passes the budget is stopped between two rounds. With ``tau``
    (linear cost), unit-cost candidates count too, by their ``R + tau S``, and
    every candidate also enters after :func:`~.improve.improve_schedule`.
    ``stop_at_bound=False`` runs on past a schedule that meets the bound, for
    tables that mark each heuristic (the optimum table).
    """
    from .coloring import color_schedule, search_colors
    from .constructions import grid_constructions
    from .improve import improve_schedule
    from .matching import EXACT_MAX_EDGES, OutOfTime, matching_schedule
    deadline = time.process_time() + budget
    best, tried = None, []
    bound = lower_bound(topo, primitive, root)
    # The least R + tau S: S >= n - 1 for gossip (a node receives n - 1 items, at most
    # a round's largest message per round); a broadcast message holds the one item,
    # so there S = R >= bound (n - 1 let a 6-round broadcast on star(4) stop the search
    # as optimal, at tau = 4, where 5 rounds exist).
    floor = bound if tau is None else bound + tau * (topo.n - 1 if primitive == "gossip"
                                                     else bound)

    def judged(name: str, s: Schedule) -> tuple:
        v = validate(s)
        if not v.valid:
            raise AssertionError(f"portfolio candidate {name} is invalid: {v.error}")
        return (v.R + (tau or 0) * v.S, v.S), v

    def consider(name: str, s: Schedule | None) -> None:
        nonlocal best
        if s is None:
            return
        key, v = judged(name, s)
        tried.append((name, v.R, v.S))
        if tau is not None and improve:
            better = improve_schedule(s)
            if better is not s:
                key2, v2 = judged(name + " improved", better)
                if key2 < key:
                    key, s, name = key2, better, name + " improved"
                    tried.append((name, v2.R, v2.S))
        if best is None or key < best[0]:
            best = (key, name, s)

    def unproved() -> bool:  # no candidate meets the lower bound yet
        return not stop_at_bound or best is None or best[0][0] > floor

    def left() -> bool:
        return time.process_time() < deadline and unproved()

    def matching(name: str, **kw) -> None:
        kw.setdefault("matcher", matcher)
        try:  # the first run of all may finish past the deadline: a row needs a result
            consider(name, matching_schedule(topo, primitive=primitive, root=root, **kw,
                                             deadline=deadline if best else None))
        except OutOfTime:
            pass

    consider("dimension order", dimension_order(topo, primitive, root))
    if primitive == "gossip":
        for label, s in grid_constructions(topo):
            if unproved():
                consider(label, s)
    gossip_strings = primitive == "gossip"
    published = _published_string(topo) if gossip_strings else None
    if published and unproved():  # a construction too: one pass over the string
        consider(f"coloring {published} (the paper's Table 6)", color_schedule(topo, published))
    greedy_auto = matcher == "auto" and topo.m > EXACT_MAX_EDGES
    # Broadcast moves one item: one BFS a round, and the greedy matcher is "even
    # more suited for broadcasting" (the paper: quality almost the same), while an
    # exact blossom a round on Table 4's 49,152-node butterfly_12 takes hours. So
    # there the plain settings come first (greedy) and the exact run last.
    exact_first = greedy_auto and primitive == "gossip" and (
        best is not None or topo.m <= EXACT_FIRST_MAX_EDGES)
    if (best is None and topo.n > CHEAP_FIRST_NODES and not greedy_auto
            and primitive == "gossip"):
        matching("matching potential", tau=tau, weights="potential")  # the budget cannot stop it
    runs = matching_runs(topo, primitive, tau, matcher, settings, exact_first)
    for name, kw in runs.items():
        if any(t[0] == name for t in tried):  # the cheap first run
            continue
        if not left() and (not unproved()
                           or any(t[0].startswith("matching") for t in tried)):
            break
        matching(name, tau=tau, **kw)
    if gossip_strings and left():
        try:
            colors = search_colors(topo, budget=20_000)
        except ValueError:  # no edge colouring of this family
            colors = None
        if colors:
            consider(f"coloring {colors}", color_schedule(topo, colors))
    ran = [t for t in tried if t[0] in runs]
    best_run = min(ran, key=lambda t: (t[1] + (tau or 0) * t[2], t[2]), default=None)
    if best_run is not None:
        name, kw = best_run[0], runs[best_run[0]]
        extras = [{"lookahead": 1}, {"tries": 8, "seed": seed}, {"lookahead": 2}]
        if tau is not None:  # the unit-cost schedule, its S cut by the improvement pass
            extras.insert(0, {"unit cost": True})
        for extra in extras:
            if not left():
                break
            label = name + " " + " ".join(k if v is True else f"{k}={v}"
                                          for k, v in extra.items())
            unit = "unit cost" in extra  # (splitting divides what a linear-cost cut leaves)
            matching(label, tau=None if unit else tau,
                     **{k: v for k, v in kw.items() if not (unit and k == "split")},
                     **{k: v for k, v in extra.items() if k != "unit cost"})
        # Random restarts while the budget lasts, one tie order at a time (runs 8,
        # 9, ... of the sequence whose runs 0-7 were the 8 tries above), taking turns
        # over the settings that reached the best plain R: on shuffle-exchange_8 one
        # of them reaches the paper's 17 where the nine settings and 8 tries give 18.
        ties = [t[0] for t in sorted(ran, key=lambda t: t[2])
                if t[1] + (tau or 0) * t[2] == best_run[1] + (tau or 0) * best_run[2]]
        for i in range(MAX_RESTARTS):
            if not left():
                break
            name = ties[i % len(ties)]
            run = 8 + i // len(ties)
            matching(f"{name} restart={run}", tau=tau, **runs[name], seed=seed, first_try=run)
    _, name, s = best
    s.origin = {"algorithm": "best", "source": f"{name}: best of {len(tried)} candidates "
                f"({', '.join(f'{n} R={r}' for n, r, _ in tried)})"}
    return s, tried
