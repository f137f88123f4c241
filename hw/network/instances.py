"""One node module per degree, instanced once per node: the fabric as synthesis sees it.

Amaranth writes one RTLIL module per elaborated submodule, so a fabric of 64
identical nodes reaches Yosys as 64 copies that ``synth_ecp5`` flattens into
one netlist before ABC maps it (81 minutes for hypercube(6) on this machine).
With ``NetworkFabric(..., node_modules=True)`` each node is instead an
:class:`~amaranth.hdl.Instance` of a module that is elaborated once per node
degree (:func:`node_module_name`); the flow converts each of those modules
on its own and keeps it a module of its own in Yosys (``keep_hierarchy``),
so ABC maps one node per degree and nextpnr's frontend flattens the
instances as it reads the netlist. What is built is the same circuit; only
optimisation across a node's ports (constants, unread outputs) is lost.

Amaranth cannot simulate an ``Instance``: such a fabric is for synthesis only.
"""

from __future__ import annotations

from amaranth.hdl import ClockSignal, Instance, ResetSignal
from amaranth.lib import wiring

__all__ = ["NodeInstance", "node_module_name"]


def node_module_name(prefix: str, degree: int) -> str:
    """The module name of the nodes of ``degree`` links (unique within one design)."""
    return f"{prefix}_d{degree}"


class NodeInstance:
    """A node's ports as plain signals, driving an :class:`Instance` of a shared module.

    Parameters
    ----------
    proto : wiring.Component
        One node of the degree (never elaborated here: the flow converts it
        once as module ``module``); its signature gives the instance's ports.
    module : str
        The module the instance names.
    name : str
        The node's name in the fabric (prefix of its port signals).

    Attributes
    ----------
    every member of ``proto``'s signature
        A signal of the same shape and flow, connected to the instance's port
        of the same name (the ``a__0`` names Amaranth gives an array's members).
    layout
        ``proto.layout`` (the fabric reads the entry and directory widths).
    """

    def __init__(self, proto: wiring.Component, module: str, name: str):
        self.layout = proto.layout
        self.module = module
        sig = proto.signature
        self._ports = sig.create(path=(name,))
        self._flat = list(sig.flatten(self._ports))

    def __getattr__(self, name):
        # only reached for the port members (layout and module are set in __init__)
        return getattr(self.__dict__["_ports"], name)

    def instance(self) -> Instance:
        """The instance (the fabric's submodule in place of the node), clocked by ``sync``."""
        ports = [("i", "clk", ClockSignal()), ("i", "rst", ResetSignal())]
        for path, member, value in self._flat:
            ports.append(("i" if member.flow == wiring.In else "o",
                          "__".join(map(str, path)), value))
        return Instance(self.module, *ports)
