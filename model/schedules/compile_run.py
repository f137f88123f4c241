"""Compile a run of the pipelined-gossiping simulator into a schedule.

Step ``t`` becomes round ``t``; every transfer ``i -> j`` of session ``s``
becomes the message ``{src: i, dst: [j], items: [s*n + i]}``. The result is an
H1, ``p = 1``, complete-graph schedule with ``n * sessions`` items whose
per-round ``busy`` list equals the run's utilisation string and whose ``R``
equals the run length ``L``.
"""

from __future__ import annotations

import numpy as np

from ..config import RunConfig
from ..engine import simulate
from ..result import RunResult
from .ir import Schedule, complete

__all__ = ["compile_run", "schedule_of_config"]


def compile_run(run: RunResult) -> Schedule:
    """The schedule of a finished run (any order, discipline, option)."""
    d, n = run.deliveries, run.config.n
    item = np.asarray(d.session, dtype=np.int64) * n + np.asarray(d.src, dtype=np.int64)
    return Schedule.unicast(d.step, d.src, d.dst, item, rounds=run.length,
                            topology=complete(n), model="H1", p=1,
                            origin={"algorithm": "run",
                                    "source": "pipelined-gossiping simulator: "
                                    + run.config.header()})


def schedule_of_config(config: RunConfig) -> Schedule:
    """Simulate ``config`` and compile the run."""
    return compile_run(simulate(config))
