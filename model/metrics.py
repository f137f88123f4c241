"""L, mu and E of a run (docs/reference.md "Measures"), from its utilisation string.

Every place that reports these figures (the model's results, run-tables read
from files or waveforms, the hardware's own ``used`` output) computes them
here, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Metrics"]


@dataclass(frozen=True)
class Metrics:
    """The figures of one run.

    Attributes
    ----------
    n : int
        Processors.
    length : int
        L, the number of steps.
    used_slots : int
        ``sum(u)`` over the run.
    """

    n: int
    length: int
    used_slots: int

    @classmethod
    def of(cls, n: int, utilization) -> Metrics:
        """The metrics of the utilisation string ``u_1..u_L`` of an N-processor run."""
        u = np.asarray(utilization)
        return cls(int(n), int(u.shape[0]), int(u.sum()))

    @property
    def mu(self) -> float | None:
        """Average utilisation ``sum(u)/L``; None for an empty run."""
        return self.used_slots / self.length if self.length else None

    @property
    def efficiency(self) -> float | None:
        """``E = sum(u)/(N*L)``; None for an empty run."""
        return self.used_slots / (self.n * self.length) if self.length else None

    def summary(self) -> str:
        """``N=.. L=.. mu=.. E=..% used=..`` (one line)."""
        if not self.length:
            return f"N={self.n} L=0 (empty run)"
        return (f"N={self.n} L={self.length} mu={self.mu:.4f} "
                f"E={100 * self.efficiency:.2f}% used={self.used_slots}")
