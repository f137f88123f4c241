"""A known gossip construction on meshes and tori, as a fixed matching sequence.

Beier and Sibeyn, "A Powerful Heuristic for Telephone Gossiping"
(MPI-I-2000-1-002), section 3: gossip first within the rows, then within the
columns, each line alternating its two matchings (edges ``(2i, 2i+1)``, then
``(2i+1, 2i+2)``). A path of even length ``n`` gossips in ``n - 1`` such
rounds, so an ``a x b`` mesh with even sides takes ``a + b - 2`` rounds, its
diameter (optimal in the unit-cost model).

It is expanded by :func:`~.coloring.sequence_schedule` (every matched pair
exchanges everything new), which repeats the sequence until gossip completes;
the validator judges the result like any other schedule.
"""

from __future__ import annotations

import numpy as np

from ..schedules.ir import Schedule
from ..schedules.topologies import Topology
from .coloring import sequence_schedule

__all__ = ["line_phases", "grid_constructions"]


def _alternating(n: int, lines: list[list[int]]) -> list[np.ndarray]:
    """The two mate arrays alternating along every path: edges ``(2i, 2i+1)``, then
    ``(2i+1, 2i+2)``."""
    mates = [np.full(n, -1, np.int64), np.full(n, -1, np.int64)]
    for line in lines:
        for i in range(len(line) - 1):
            a, b = line[i], line[i + 1]
            mates[i % 2][a], mates[i % 2][b] = b, a
    return mates


def _rows(a: int, b: int) -> list[list[int]]:
    return [[i * b + j for j in range(b)] for i in range(a)]


def _cols(a: int, b: int) -> list[list[int]]:
    return [[i * b + j for i in range(a)] for j in range(b)]


def _phase(mates: list[np.ndarray], rounds: int) -> list[np.ndarray]:
    """``rounds`` rounds alternating the two matchings, the first one first."""
    return [mates[t % 2] for t in range(rounds)]


def line_phases(topo: Topology, columns_first: bool = False) -> Schedule:
    """Rows as paths (``b - 1`` rounds, ``b`` if odd), then columns (likewise)."""
    a, b = topo.params["a"], topo.params["b"]
    rows = _phase(_alternating(topo.n, _rows(a, b)), b - 1 + b % 2)
    cols = _phase(_alternating(topo.n, _cols(a, b)), a - 1 + a % 2)
    order = "columns, then rows" if columns_first else "rows, then columns"
    return sequence_schedule(topo, cols + rows if columns_first else rows + cols,
                             origin={"algorithm": "construction",
                                     "source": f"line phases: {order} as paths"})


def grid_constructions(topo: Topology):
    """Each construction above that applies to ``topo`` (a mesh or torus), labelled:
    ``(label, schedule)`` pairs, each built only when the caller asks for it."""
    if topo.name in ("mesh", "torus"):
        yield "line phases", line_phases(topo)
        yield "line phases, columns first", line_phases(topo, columns_first=True)
