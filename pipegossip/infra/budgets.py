"""The one policy for "this would be too big": budgets checked before the work.

Every command that would simulate, tabulate or allocate something whose size
grows with the configuration asks :func:`check_budget` first, with an
estimate of the work, before it loads its input: an order file's N is
counted from its brackets (``cli.options.orders_in_file``), a schedule's rounds
from a scan of its text (``cli.program.rounds_in_file``), before either is
parsed. Over budget, the command is refused at once with one
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
``fabric-bits``           1,048,576    bits of a generated fabric: the FSM
                                       fabric's crossbar (N x N x width), the
                                       schedule fabric's crossbar, programs and
                                       stores, the network fabric's links,
                                       programs and store banks; generation and
                                       Verilator builds grow with it (N=64,
                                       width 8: about a minute to export)
``memory``                half the     bytes one command needs at its peak,
                          RAM          estimated before anything is allocated:
                                       the golden model (:func:`model_bytes`), a
                                       schedule (:func:`schedule_bytes`), a
                                       schedule-fabric Verilator build
                                       (:func:`verilator_bytes`), the FSM
                                       fabric's generation (:func:`export_bytes`)
``seconds``               600          seconds of work on an idle machine, for
                                       tables whose rows grow with N
                                       (:func:`check_seconds`) and generating
                                       the FSM fabric (:func:`export_seconds`)
========================  ===========  ==========================================

``PIPEGOSSIP_MAX_MEMORY`` takes a number of bytes with an optional ``K``,
``M``, ``G`` or ``T`` suffix (powers of 1024).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from ..model.errors import ConfigError

__all__ = ["Budget", "BUDGETS", "BudgetError", "budget_limit", "check_budget", "model_bytes",
           "check_model_memory", "check_fabric", "schedule_bytes", "check_schedule_memory",
           "gossip_items", "check_seconds", "verilator_bytes", "export_bytes", "export_seconds",
           "check_export_time", "MAX_GOSSIP_NODES",
           "MAX_STREAMED_GOSSIP_NODES"]

#: Gossip keeps an n x n knowledge matrix and its schedule n(n-1) item ids (int64);
#: Table 5's ccc and butterfly k = 11 (22,528 nodes, 4.1 GB of ids) fit, k = 12
#: (49,152 nodes, 19.3 GB) does not.
MAX_GOSSIP_NODES = 32768
#: ``network-table`` gossip rows above :data:`MAX_GOSSIP_NODES` run streamed up to this
#: many nodes (the schedule never held: two n x n bit matrices and one round's int32
#: ids, :mod:`pipegossip.sweeps.heuristics_stream`): Table 5's ccc_12 and butterfly_12, the rows run.
MAX_STREAMED_GOSSIP_NODES = 49152


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
    Budget("fabric-bits", 1 << 20, "bits of crossbar and program memory",
           "PIPEGOSSIP_MAX_FABRIC_BITS"),
    Budget("memory", 0, "bytes", "PIPEGOSSIP_MAX_MEMORY"),  # default: see _default_memory
    Budget("seconds", 600, "seconds", "PIPEGOSSIP_MAX_SECONDS"),
)}

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _default_memory() -> int:
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = 16 << 30
    return physical // 2


def _human(value: int, unit: str) -> str:
    if unit != "bytes":
        return f"{value:,} {unit}"
    for suffix, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)):
        if value >= scale:
            return f"{value / scale:.1f} {suffix}"
    return f"{value:,} bytes"


def model_bytes(n: int, sessions: int = 1, table_cells: int = 0, compiled: bool = False) -> int:
    """Estimated peak memory of one golden-model run.

    Measured with ``/usr/bin/time -f %M pipegossip run --no-table``: about 27
    bytes per N^2 x sessions for pipelined orders and 96 for identity at
    N = 2048 (its longer run keeps more per-step state), plus the interpreter
    and libraries (about 60 MiB); a run-table costs 5 bytes a cell (action +
    peer). The estimate takes the larger per-N^2 figure, rounded up.

    ``compiled``: the compiled loop of identity + Algorithm 2 + ``any``
    (``model/fastpath.py``, what ``conjecture21`` and ``table8`` run), whose
    state is bit sets: ``run --n N --order identity --substitute --receive
    any --no-table`` peaked at 540 MiB for N = 4096 and 1.41 GiB for
    N = 8192: 18.3 bytes per N^2 between the two over about 250 MiB (the
    compiled code and its libraries); 20 bytes per N^2 over 256 MiB.
    """
    if compiled:
        return (256 << 20) + 20 * max(n, 0) ** 2 * max(1, sessions) + 5 * table_cells
    return (64 << 20) + 100 * max(n, 0) ** 2 * max(1, sessions) + 5 * table_cells


def schedule_bytes(messages: int, items: int) -> int:
    """Estimated peak memory of making, validating and writing one schedule.

    Measured with ``/usr/bin/time -f %M`` (load average 9-19 on 2 cores;
    memory does not depend on the load):

    =========================================  ==========  ===========  =======
    command                                    messages    item ids     peak
    =========================================  ==========  ===========  =======
    ``schedule one-factor --n 1024``           1,047,552   1,047,552    512 MiB
    ``schedule one-factor --n 2048``           4,192,256   4,192,256    1.9 GiB
    ``schedule matching --topology hypercube   ~12,000     4,192,256    647 MiB
    --k 11``
    ``schedule matching ... --k 12``           ~25,000     16,773,120   2.0 GiB
    =========================================  ==========  ===========  =======

    That is about 350 bytes a message (its columns, its JSON object and the
    text being built) and 130 bytes an item id (NumPy columns, the
    validator's copies, the JSON digits), over the interpreter's 64 MiB.
    """
    return (64 << 20) + 350 * max(messages, 0) + 130 * max(items, 0)


def verilator_bytes(fabric_bits: int) -> int:
    """Estimated peak memory of a Verilator build of the schedule fabric (C++ compile included).

    Measured with ``/usr/bin/time -f %M pipegossip cosim-schedule csN.json``
    on a fresh build folder (cyclic-shift schedules, width 8, the default
    depth and slots; bits as :func:`~pipegossip.cli.schedule_hw.check_fabric_size`
    counts them): N = 16, 7,936 bits: 299 MiB; N = 32, 34,816 bits:
    368 MiB; N = 64, 151,552 bits: 730 MiB. Above about 250 MiB that is 3.3
    KiB a bit at N = 64 (more per bit at small N); the estimate takes 8 KiB a
    bit, as the compiler's share grows faster than linearly (N = 128,
    655,360 bits: 5.3 GiB estimated).
    """
    return (256 << 20) + 8192 * max(fabric_bits, 0)


def export_bytes(n: int) -> int:
    """Estimated peak memory of generating the FSM fabric (Verilog export, or before a build).

    Measured with ``/usr/bin/time -f %M pipegossip verilog --order pipelined``
    (load average 20-26 on 2 cores; memory does not depend on the load):
    N = 64, width 1: 237 MiB; N = 128, width 1: 759 MiB; N = 362, width 8:
    6.0 GiB. That is 45-48 KiB per (sender, receiver) pair whatever the
    width: Amaranth's netlist holds a few hundred objects for each crossing
    of the arbiter and the crossbar. The estimate takes 48 KiB a pair over
    100 MiB, so N = 1024 at width 1 (inside ``fabric-bits``) is estimated at
    48 GiB and refused on a machine with less than 96 GiB of RAM.
    """
    return (100 << 20) + (48 << 10) * max(n, 0) ** 2


def export_seconds(n: int) -> float:
    """Estimated seconds of generating the FSM fabric's Verilog (before any build).

    About a minute at N = 64 (:func:`export_bytes`): 15 ms per (sender,
    receiver) pair on an idle machine, as the netlist grows with the pairs.
    N = 362 (the largest the ``fabric-bits`` budget allows at width 8) comes
    to about 33 minutes: over the ``seconds`` budget, so it is refused at
    once instead of running silently for half an hour at 6 GB (issue 39).
    """
    return 0.015 * max(n, 0) ** 2


def check_export_time(n: int) -> None:
    """Refuse generating the FSM fabric when it would exceed the ``seconds`` budget."""
    check_seconds(export_seconds(n), f"generating the fabric for N={n:,}")


def gossip_items(n: int) -> int:
    """Item ids of a unit-cost gossip among ``n`` nodes: each node receives the n-1 others once."""
    return n * (n - 1)


def check_schedule_memory(messages: int, items: int, what: str) -> None:
    """Refuse a schedule whose estimated peak (:func:`schedule_bytes`) exceeds ``memory``."""
    check_budget("memory", schedule_bytes(messages, items), what)


def check_seconds(seconds: float, what: str, limit: float | None = None,
                  option: str = "") -> None:
    """Refuse work estimated to take longer than the ``seconds`` budget (or ``limit``).

    ``limit`` is a command's own ``--time-limit``, named by ``option``; it
    replaces the budget.
    """
    if limit is None:
        check_budget("seconds", math.ceil(seconds), what)
    elif seconds > limit:
        raise BudgetError(f"{what} needs about {math.ceil(seconds):,} seconds, over {option} "
                          f"{limit:g}")


def check_fabric(n: int, width: int) -> None:
    """Refuse a fabric over the ``fabric-bits`` budget, or whose generation exceeds ``memory``."""
    check_budget("fabric-bits", n * n * width, f"the fabric for N={n:,}, width {width}")
    check_budget("memory", export_bytes(n), f"generating the fabric for N={n:,}")


def check_model_memory(n: int, sessions: int = 1, what: str | None = None) -> None:
    """Refuse a model run whose estimated memory exceeds the ``memory`` budget."""
    check_budget("memory", model_bytes(n, sessions),
                 what or f"a golden-model run with N={n:,}" +
                 (f" and {sessions} sessions" if sessions > 1 else ""))


class BudgetError(ConfigError):
    """The estimated work exceeds a budget; the message says how to raise it."""


def budget_limit(name: str) -> int:
    """The limit of budget ``name``: its environment variable, else its default."""
    budget = BUDGETS[name]
    text = os.environ.get(budget.env, "").strip()
    if not text:
        return _default_memory() if name == "memory" else budget.default
    m = re.fullmatch(r"([0-9]+)([KMGT]?)", text.upper()) if name == "memory" else \
        re.fullmatch(r"([0-9]+)()", text)
    if not m:
        raise ConfigError(f"{budget.env} must be an integer"
                          + (" with an optional K/M/G/T suffix" if name == "memory" else "")
                          + f", got {text!r}")
    value = int(m.group(1)) * _SUFFIX[m.group(2)]
    if value < 1:
        raise ConfigError(f"{budget.env} must be at least 1, got {value}")
    return value


def check_budget(name: str, estimate: int, what: str, hint: str = "",
                 unit: str | None = None) -> None:
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
    unit : str, optional
        What the estimate counts, when it is not the budget's own unit (the
        network fabric's ``fabric-bits`` are links, programs and banks, no crossbar).

    Raises
    ------
    BudgetError
        With the estimate, the limit and the variable that raises it.
    """
    limit = budget_limit(name)
    if estimate > limit:
        budget = BUDGETS[name]
        unit = unit or budget.unit
        alt = f"; {hint}" if hint else ""
        raise BudgetError(f"{what} needs about {_human(estimate, unit)}, over the "
                          f"limit of {_human(limit, unit)} (set {budget.env} to raise "
                          f"it{alt})")
