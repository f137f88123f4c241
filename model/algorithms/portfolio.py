"""The best schedule of everything we have: a portfolio of telephone (``F1``) heuristics.

:func:`best_schedule` runs, within a time budget, and keeps the least
``R + tau S`` (unit cost: the least ``R``), then the least ``S``:

1. the topology's known constructions: dimension order on hypercubes and
   Knödel graphs (round ``r`` uses the perfect matching of dimension
   ``r mod d``; ``k`` rounds on the ``k``-cube, ``log2 n`` on ``W(2^d)``);
2. the matching heuristic with every weighting of :data:`MATCHING_SETTINGS`;
3. colour strings (unit-cost gossip): the paper's own Table 6 string where it
   prints one, and the colouring search (its section 6);
4. look-ahead and random tie orders (restarts) on the best setting, while
   the budget lasts.

Every candidate is validated; the winner's ``origin`` names it.
"""

from __future__ import annotations

import time

import numpy as np

from ..schedules.ir import Schedule
from ..schedules.topologies import Topology
from ..schedules.validate import validate

__all__ = ["best_schedule", "MATCHING_SETTINGS", "dimension_order", "setting_label"]

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
                                root=root, origin={"algorithm": "best",
                                                   "source": "dimension order"})


def _published_string(topo: Topology) -> str | None:
    """Beier and Sibeyn's Table 6 colour string for this graph, if they print one."""
    import json
    from importlib import resources
    k = topo.params.get("k")
    text = (resources.files(__package__) / "beier_sibeyn_tables.json").read_text()
    return json.loads(text)["table6"].get(topo.name, {}).get(str(k))


def best_schedule(topo: Topology, primitive: str = "gossip", root: int | None = None,
                  tau: float | None = None, budget: float = 60.0, seed: int = 0,
                  settings=MATCHING_SETTINGS, matcher: str = "auto") -> tuple[Schedule, list]:
    """The best validated schedule of the portfolio within ``budget`` seconds (wall).

    Returns ``(schedule, tried)``; ``tried`` lists ``(name, R, S)`` per candidate.
    Constructions and the first matching setting always run; the rest stop
    when the budget is spent.
    """
    from .coloring import color_schedule, search_colors
    from .matching import matching_schedule
    t0 = time.monotonic()
    best, tried = None, []

    def consider(name: str, s: Schedule | None) -> None:
        nonlocal best
        if s is None:
            return
        v = validate(s)
        if not v.valid:
            raise AssertionError(f"portfolio candidate {name} is invalid: {v.error}")
        tried.append((name, v.R, v.S))
        key = (v.R + (tau or 0) * v.S, v.S)
        if best is None or key < best[0]:
            best = (key, name, s)

    def left() -> bool:
        return time.monotonic() - t0 < budget

    if tau is None:
        consider("dimension order", dimension_order(topo, primitive, root))
    for weights, num_exp, de in settings:
        if any(name.startswith("matching") for name, _, _ in tried) and not left():
            break
        consider(f"matching {setting_label(weights, num_exp, de)}",
                 matching_schedule(topo, primitive=primitive, root=root, tau=tau,
                                   weights=weights, num_exp=num_exp, dist_exp=de,
                                   matcher=matcher))
    published = _published_string(topo) if tau is None and primitive == "gossip" else None
    if published:
        consider(f"coloring {published} (the paper's Table 6)", color_schedule(topo, published))
    if tau is None and primitive == "gossip" and left():
        try:
            colors = search_colors(topo, budget=20_000)
        except ValueError:  # no edge colouring of this family
            colors = None
        if colors:
            consider(f"coloring {colors}", color_schedule(topo, colors))
    best_setting = min((t for t in tried if t[0].startswith("matching")),
                       key=lambda t: (t[1] + (tau or 0) * t[2], t[2]), default=None)
    if best_setting is not None:
        label = best_setting[0].removeprefix("matching ")
        weights, num_exp, de = next(s for s in settings if setting_label(*s) == label)
        for extra in ({"lookahead": 1}, {"tries": 8, "seed": seed}, {"lookahead": 2}):
            if not left():
                break
            consider(f"matching {label} " + " ".join(f"{k}={v}" for k, v in extra.items()),
                     matching_schedule(topo, primitive=primitive, root=root, tau=tau,
                                       weights=weights, num_exp=num_exp, dist_exp=de,
                                       matcher=matcher, **extra))
    _, name, s = best
    s.origin = {"algorithm": "best", "source": f"{name}: best of {len(tried)} candidates "
                f"({', '.join(f'{n} R={r}' for n, r, _ in tried)})"}
    return s, tried
