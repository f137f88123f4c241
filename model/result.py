"""The outcome of one run: transfers, utilisation string and metrics."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .config import RunConfig
from .metrics import Metrics
from .runtable import RunTable

__all__ = ["RunResult", "Deliveries"]


@dataclass(frozen=True)
class Deliveries:
    """Every transfer of a run, in firing order (step, then sender id).

    All four arrays have one entry per transfer: the 1-based ``step``, the
    sender ``src`` (whose word it is), the receiver ``dst`` and the 0-based
    ``session`` the word belongs to.
    """

    step: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    session: np.ndarray

    def __len__(self) -> int:
        return len(self.step)

    def rows(self) -> list[tuple[int, int, int, int]]:
        return list(zip(self.step.tolist(), self.src.tolist(), self.dst.tolist(),
                        self.session.tolist()))


@dataclass
class RunResult:
    """A completed run (steps 1..L).

    Attributes
    ----------
    config : RunConfig
    deliveries : Deliveries
    utilization : numpy.ndarray
        ``u_t`` for t = 1..L (docs/reference.md "Measures").
    table : RunTable or None
        Present only when the run was asked to record it.
    """

    config: RunConfig
    deliveries: Deliveries
    utilization: np.ndarray
    table: RunTable | None = field(default=None, repr=False)

    @property
    def length(self) -> int:
        """L, the last step with a transfer."""
        return int(self.utilization.shape[0])

    @property
    def metrics(self) -> Metrics:
        return Metrics.of(self.config.n, self.utilization)

    @property
    def used_slots(self) -> int:
        return self.metrics.used_slots

    @property
    def mu(self) -> float:
        """Average utilisation ``sum(u)/L``."""
        return self.metrics.mu

    @property
    def efficiency(self) -> float:
        """``E = sum(u)/(N*L)``."""
        return self.metrics.efficiency

    def to_json(self, table: bool = True) -> dict:
        out = {
            "N": self.config.n,
            "L": self.length,
            "mu": self.mu,
            "efficiency": self.efficiency,
            "used_slots": self.used_slots,
            "utilization": self.utilization.tolist(),
            "config": self.config.to_json(),
        }
        if table and self.table is not None:
            out["table"] = self.table.rows()
            out["deliveries"] = [list(r) for r in self.deliveries.rows()]
        return out

    def summary(self) -> str:
        return self.metrics.summary()
