"""Verilog export of a :class:`~.fabric.NetworkFabric`."""

from __future__ import annotations

from amaranth.back import verilog

from ... import __version__
from ...model.schedules.topologies import Topology
from ..export import check_module_name, plain_internal_names
from .fabric import NetworkFabric

__all__ = ["network_verilog_text", "size_verilog_text", "network_header", "TOP"]

#: The default top-module name.
TOP = "pipegossip_network_fabric"


def network_verilog_text(topology: Topology, width: int = 8, depth: int = 64,
                         slots: int | None = None, op: str = "sum", name: str = TOP,
                         bank_depth: int | None = None, store: str = "banks",
                         node: str = "wire", trace: bool = True) -> str:
    """The Verilog of the network fabric of ``topology`` (byte-for-byte reproducible).

    Ports are those of :data:`~pipegossip.hw.ports.NETWORK_PORTS` with nested
    names joined by ``__`` (``tx__5__word``, ``acc__3``) plus ``clk`` and the
    synchronous active-high ``rst``; ``trace=False`` is the lean build
    (:class:`~pipegossip.hw.lean.Lean`): no ``tx``/``rx`` bundles, the same
    datapath, every other port the same in every cycle. Every module is
    named ``name`` or ``name.<path>``.

    Raises
    ------
    TypeError, ValueError
        A bad size, operation or module name.
    """
    check_module_name(name)
    # The reg node's lean build leaves its trace-only program fields out as well
    # (trace=False in the node); the wire node's is its trace build behind Lean.
    native = node == "reg"
    fabric = NetworkFabric(topology, width, depth, slots, op, bank_depth, store, node,
                           trace or not native)
    top = fabric
    if not trace and not native:
        from ..lean import TRACE_GROUPS, Lean
        top = Lean(fabric, TRACE_GROUPS["network"])
    text = plain_internal_names(verilog.convert(top, name=name, emit_src=False))
    return (f"// pipegossip {__version__} network fabric\n"
            + network_header(fabric, op, trace or native) + text)


def network_header(fabric: NetworkFabric, op: str, trace: bool = True) -> str:
    """The comment line naming a network fabric's topology and size (``trace=False``: the
    wire node's lean build, marked ``trace=0``; the reg node's says ``lean`` itself)."""
    z, topology = fabric.size, fabric.topology
    params = ", ".join(f"{k}={v}" for k, v in topology.params.items() if k != "edges")
    return (f"// topology={topology.name}({params}) n={z.n} ports={z.ports} width={z.width} "
            f"depth={z.depth} slots={z.slots} "
            # the banked store's header is unchanged, so its texts (and build caches) are too
            + (f"bank_depth={z.bank_depth or z.slots} op={op}" if z.store == "banks"
               else f"op={op} store={z.store}")
            # the wire node's header is unchanged, so its texts (and build caches) are too
            + ("" if z.node == "wire" else f" node={z.node}") + ("" if z.trace else " lean")
            + ("" if trace else " trace=0") + "\n")


def size_verilog_text(topology: Topology, size, op: str = "sum", name: str = TOP) -> str:
    """:func:`network_verilog_text` for a :class:`~pipegossip.hw.ports.NetworkSize`.

    The one way a simulation build gets its fabric's text, so that the trace
    and the fast mode compile the same Verilog byte for byte.
    """
    return network_verilog_text(topology, size.width, size.depth, size.slots, op, name=name,
                                bank_depth=size.bank_depth, store=size.store, node=size.node,
                                trace=size.trace)
