"""A program-driven fabric behind its control block: one module with a control bus.

:class:`ControlledFabric` wires a :class:`~.control.ControlBlock` to a
fabric's control ports (``start``, ``busy``, ``done``, ``cycle``,
``length``, ``load__*``, ``read__*``, ``prog_sel``) and passes every other
port of the fabric through unchanged (the per-node ``item``/``own``
inputs, the trace outputs, the accumulators), so a user's top sees the bus,
``irq`` and the fabric's data ports. :func:`controlled_verilog_text` exports it.
"""

from __future__ import annotations

from amaranth.back import verilog
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .. import __version__
from .bus import BUSES
from .control import ControlBlock, fabric_control
from .export import check_module_name, plain_internal_names

__all__ = ["ControlledFabric", "controlled_verilog_text", "CONTROL_PORTS"]

#: The fabric ports the control block drives or reads (not passed through).
CONTROL_PORTS = ("start", "busy", "done", "cycle", "length", "load", "read", "prog_sel")


class ControlledFabric(wiring.Component):
    """``fabric`` with its control ports behind a bus (:mod:`.bus`, :mod:`.regmap`).

    Parameters
    ----------
    fabric : ScheduleFabric or NetworkFabric
        Any fabric with the program-driven fabrics' control ports.
    bus : {"axil", "wishbone"}
    checks : bool
        The self-checking build (:class:`~.control.ControlBlock`).

    Attributes
    ----------
    axil or wb : In(bus signature)
        The control bus.
    irq : Out(1)
        ``CTRL.IRQ_EN & STATUS.DONE``.
    ready : In(1)
        Held low, no start is issued (stream wrappers; tie high otherwise).
    started : Out(1)
        High in the start cycle (cycle 0 of docs/network-fabric.md's latency).
    busy, done, cycle, length : Out
        The fabric's own, passed through (a monitor's view of the run).
    (every other port of the fabric)
        Passed through unchanged, same name, direction and timing.
    """

    def __init__(self, fabric, bus: str = "axil", checks: bool = True):
        fc = fabric_control(fabric)
        self._block = ControlBlock(fc, bus, checks)
        self._fabric = fabric
        port = BUSES[bus][0]
        members = {port: self._block.signature.members[port], "irq": Out(1), "ready": In(1),
                   "started": Out(1), "busy": Out(1), "done": Out(1),
                   "cycle": Out(len(fabric.cycle)), "length": Out(len(fabric.length))}
        for name, member in fabric.signature.members.items():
            if name not in CONTROL_PORTS:
                members[name] = member
        super().__init__(members)

    @property
    def fabric(self):
        return self._fabric

    @property
    def block(self) -> ControlBlock:
        return self._block

    def elaborate(self, platform) -> Module:
        m = Module()
        fab, blk = self._fabric, self._block
        m.submodules.fabric = fab
        m.submodules.control = blk
        port = BUSES[blk.bus][0]
        wiring.connect(m, wiring.flipped(getattr(self, port)), getattr(blk, port))
        c = blk.fabric
        m.d.comb += [fab.start.eq(c.start), c.busy.eq(fab.busy), c.done.eq(fab.done),
                     c.cycle.eq(fab.cycle), c.length.eq(fab.length),
                     fab.read.node.eq(c.read.node), fab.read.slot.eq(c.read.slot),
                     c.read.word.eq(fab.read.word), c.read.held.eq(fab.read.held),
                     c.read.acc.eq(fab.read.acc),
                     blk.ready.eq(self.ready), self.irq.eq(blk.irq),
                     self.started.eq(blk.started), self.busy.eq(fab.busy),
                     self.done.eq(fab.done), self.cycle.eq(fab.cycle), self.length.eq(fab.length)]
        for f in ("valid", "kind", "node", "addr", "data"):
            m.d.comb += getattr(fab.load, f).eq(getattr(c.load, f))
        if "prog_sel" in fab.signature.members:
            m.d.comb += fab.prog_sel.eq(c.prog_sel)
        outer = {path: value for path, _, value in self.signature.flatten(self)}
        for path, member, value in fab.signature.flatten(fab):
            if path[0] in CONTROL_PORTS:
                continue
            # the same port on both: the fabric's output drives ours, ours its input
            m.d.comb += (outer[path].eq(value) if member.flow == Out else value.eq(outer[path]))
        return m


def controlled_verilog_text(fabric, bus: str = "axil", checks: bool = True,
                            name: str = "pipegossip_control_fabric", header: str = "") -> str:
    """The Verilog of ``fabric`` behind its control block (byte-for-byte reproducible).

    ``header`` (comment lines naming the fabric's size) goes first.
    """
    check_module_name(name)
    top = ControlledFabric(fabric, bus, checks)
    text = plain_internal_names(verilog.convert(top, name=name, emit_src=False))
    return (f"// pipegossip {__version__} fabric behind a {bus} control block "
            f"(registers: docs/integration.md), checks={'on' if checks else 'off'}\n"
            + header + text)
