"""Verilog export of a :class:`~.fabric.ScheduleFabric`."""

from __future__ import annotations

from amaranth.back import verilog

from ... import __version__
from ..export import check_module_name, plain_internal_names
from .fabric import ScheduleFabric, schedule_size

__all__ = ["schedule_verilog_text", "TOP"]

#: The default top-module name.
TOP = "pipegossip_schedule_fabric"


def schedule_verilog_text(n: int, width: int = 8, depth: int = 64, slots: int | None = None,
                          name: str = TOP, trace: bool = True) -> str:
    """The Verilog of the schedule fabric of this size (byte-for-byte reproducible).

    Ports are those of :data:`~pipegossip.hw.ports.SCHEDULE_PORTS` with nested
    names joined by ``__`` (``send__3__word``, ``load__data``) plus ``clk`` and
    the synchronous active-high ``rst``; ``trace=False`` is the lean build
    (:class:`~pipegossip.hw.lean.Lean`): no ``send``/``recv`` bundles, the
    same datapath, every other port the same in every cycle. Every module is
    named ``name`` or ``name.<path>``.

    Raises
    ------
    TypeError, ValueError
        A bad size or module name.
    """
    check_module_name(name)
    size = schedule_size(n, width, depth, slots)
    fabric = ScheduleFabric(size.n, size.width, size.depth, size.slots)
    if not trace:
        from ..lean import TRACE_GROUPS, Lean
        fabric = Lean(fabric, TRACE_GROUPS["schedule"])
    text = plain_internal_names(verilog.convert(fabric, name=name, emit_src=False))
    return (f"// pipegossip {__version__} schedule fabric\n"
            f"// n={size.n} width={size.width} depth={size.depth} slots={size.slots}"
            + ("" if trace else " trace=0") + "\n" + text)
