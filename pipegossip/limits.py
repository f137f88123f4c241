"""The one policy for "this would be too big": budgets checked before the work.

Every command that would simulate, tabulate or allocate something whose size
grows with the configuration asks :func:`check_budget` first, with an
estimate of the work. Over budget, the command is refused at once with one
line that states the estimate, the budget and how to raise it, instead of
running out of memory or time half-way.

Budgets (defaults, each raised by its environment variable):

========================  ===========  ==========================================
name                      default      what it bounds
========================  ===========  ==========================================
``table-cells``           20,000,000   N x L cells of a run-table held in memory
                                       (about 5 bytes each: 100 MB by default)
``python-sim-slots``      200,000      N x L trace slots simulated by Amaranth's
                                       Python simulator (``hwsim``), about 10 k
                                       slots a second
``readback-cells``        4,000,000    N x L cells of a run-table read back from a
                                       waveform dump or rendered into a report
========================  ===========  ==========================================
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .model.errors import ConfigError

__all__ = ["Budget", "BUDGETS", "BudgetError", "budget_limit", "check_budget"]


@dataclass(frozen=True)
class Budget:
    """One named budget: its default limit, unit and the variable that raises it."""

    name: str
    default: int
    unit: str
    env: str


BUDGETS: dict[str, Budget] = {b.name: b for b in (
    Budget("table-cells", 20_000_000, "run-table cells", "PIPEGOSSIP_MAX_TABLE_CELLS"),
    Budget("python-sim-slots", 200_000, "slots in the Python simulator",
           "PIPEGOSSIP_MAX_PYTHON_SIM_SLOTS"),
    Budget("readback-cells", 4_000_000, "read-back run-table cells",
           "PIPEGOSSIP_MAX_READBACK_CELLS"),
)}


class BudgetError(ConfigError):
    """The estimated work exceeds a budget; the message says how to raise it."""


def budget_limit(name: str) -> int:
    """The limit of budget ``name``: its environment variable, else its default."""
    budget = BUDGETS[name]
    text = os.environ.get(budget.env, "").strip()
    if not text:
        return budget.default
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{budget.env} must be an integer, got {text!r}") from None
    if value < 1:
        raise ConfigError(f"{budget.env} must be at least 1, got {value}")
    return value


def check_budget(name: str, estimate: int, what: str, hint: str = "") -> None:
    """Refuse ``what`` when its ``estimate`` exceeds budget ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`BUDGETS`.
    estimate : int
        The work in the budget's unit (e.g. N x L cells).
    what : str
        The work, as the user would name it (``"N=4096 pipelined"``).
    hint : str
        An alternative worth naming (``"use the co-simulation"``).

    Raises
    ------
    BudgetError
        With the estimate, the limit and the variable that raises it.
    """
    limit = budget_limit(name)
    if estimate > limit:
        budget = BUDGETS[name]
        alt = f"; {hint}" if hint else ""
        raise BudgetError(f"{what} needs {estimate:,} {budget.unit}, over the limit of "
                          f"{limit:,} (set {budget.env} to raise it{alt})")
