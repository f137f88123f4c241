"""The golden model: composer, run simulator, metrics, formats (docs/reference.md).

Pure Python + NumPy; never imports ``hw`` or ``sim``.
"""

from .closed_forms import (identity_four_steps, identity_length, physical_limit,
                           pipelined_efficiency, pipelined_length, pipelined_mu)
from .composer import Couple, Op, Program, compose, compose_all
from .config import RECEIVE_DISCIPLINES, RunConfig
from .engine import simulate
from .errors import ConfigError, DeadlockError, FormatError
from .metrics import Metrics
from .orders import FAMILIES, identity_orders, pipelined_orders, random_orders
from .reference import simulate_reference
from .result import Deliveries, RunResult
from .runtable import IDLE, R, S, WR, WS, RunTable

__all__ = [
    "Couple", "Op", "Program", "compose", "compose_all",
    "RECEIVE_DISCIPLINES", "RunConfig", "FAMILIES",
    "identity_orders", "pipelined_orders", "random_orders",
    "simulate", "simulate_reference", "Deliveries", "Metrics", "RunResult",
    "RunTable", "IDLE", "WR", "R", "WS", "S",
    "ConfigError", "DeadlockError", "FormatError",
    "identity_length", "identity_four_steps", "pipelined_length", "pipelined_efficiency",
    "pipelined_mu", "physical_limit",
]
