"""Sweeps over N: the paper's Table 8 and the L/E-versus-N curves (Figs. 5-7, 13-15)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .config import RunConfig
from .engine import simulate
from .paper import PAPER_TABLE8, TABLE8_N

__all__ = [
    "TABLE8_N", "PAPER_TABLE8", "Table8Row", "table8",
    "SweepPoint", "family_sweep",
]


@dataclass(frozen=True)
class Table8Row:
    """One row of our Table 8 beside the paper's."""

    n: int
    length: int
    efficiency: float  #: ours, as a fraction
    paper_efficiency: float | None  #: the paper's, as a fraction

    @property
    def below_two_thirds(self) -> bool:
        """Whether our E falls below 2/3 (the paper's Conjecture 21)."""
        return 3 * self.efficiency < 2


def table8(ns: Iterable[int] = TABLE8_N,
           progress: Callable[[int], None] | None = None) -> list[Table8Row]:
    """Identity order with Algorithm 2 under ``any``, as in the paper's Table 8.

    ``progress(n)`` is called before each N.
    """
    rows = []
    for n in ns:
        if progress is not None:
            progress(n)
        r = simulate(RunConfig.family(n, "identity", receive="any", substitute=True))
        paper = PAPER_TABLE8.get(n)
        rows.append(Table8Row(n, r.length, r.efficiency, None if paper is None else paper / 100))
    return rows


@dataclass(frozen=True)
class SweepPoint:
    """L and E of one family at one N; for random orders, over several seeds."""

    family: str
    substitute: bool
    n: int
    lengths: tuple[int, ...]
    efficiencies: tuple[float, ...]

    @property
    def length(self) -> float:
        return float(np.mean(self.lengths))

    @property
    def efficiency(self) -> float:
        return float(np.mean(self.efficiencies))


def family_sweep(ns: Sequence[int], families: Sequence[str] = ("identity", "random", "pipelined"),
                 seeds: Sequence[int] = tuple(range(8)), substitute: Sequence[bool] = (False, True),
                 progress: Callable[[str], None] | None = None) -> list[SweepPoint]:
    """L and E versus N for order families, with and without Algorithm 2.

    Algorithm 2 runs under the ``any`` discipline, as the paper pairs them
    (docs/reference.md "Algorithm 2"); plain runs use ``ordered``. Random orders are run once
    per seed.
    """
    points = []
    for sub in substitute:
        receive = "any" if sub else "ordered"
        for family in families:
            if progress is not None:
                progress(f"{family}{' + Algorithm 2' if sub else ''}")
            for n in ns:
                runs = []
                for seed in (seeds if family == "random" else (None,)):
                    runs.append(simulate(RunConfig.family(n, family, seed, receive=receive,
                                                          substitute=sub)))
                points.append(SweepPoint(family, sub, n, tuple(r.length for r in runs),
                                         tuple(r.efficiency for r in runs)))
    return points

