"""The lean build of a program-driven fabric: the same datapath without its trace ports.

The schedule fabric's ``send``/``recv`` bundles and the network fabric's
``tx``/``rx`` bundles (a torus 4x4 has 64 of each) exist for the judge, the
waveforms and the proofs; a design that only loads programs, runs them and
reads results back does not want them on its boundary. :class:`Lean` is a
component with the fabric's signature minus those groups, around the very
fabric the trace build exports: every remaining port is wired straight
through, so each shows the same value in every cycle
(``tests/hw/test_hw_lean.py`` compares both builds cycle by cycle), and the
logic that fed only the trace ports has no load left for synthesis to keep.
It sits at the export level (``hw verilog --no-trace``), so it serves any
fabric whose trace bundles are named in :data:`TRACE_GROUPS`.
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring

__all__ = ["Lean", "TRACE_GROUPS", "lean_signature"]

#: The trace bundles of each program-driven fabric (signature members).
TRACE_GROUPS = {"schedule": ("send", "recv"), "network": ("tx", "rx")}


def lean_signature(signature: wiring.Signature, drop) -> wiring.Signature:
    """``signature`` without the members ``drop``."""
    missing = set(drop) - set(signature.members)
    if missing:
        raise ValueError(f"the fabric has no member {', '.join(sorted(missing))}")
    return wiring.Signature({name: m for name, m in signature.members.items()
                             if name not in drop})


class Lean(wiring.Component):
    """``fabric`` with its trace groups left off the boundary.

    Parameters
    ----------
    fabric : wiring.Component
        A schedule or network fabric (elaborated as submodule ``fabric``).
    drop : sequence of str
        Its signature members to leave unconnected (:data:`TRACE_GROUPS`).

    Attributes
    ----------
    Every member of ``fabric``'s signature but ``drop``, with the same
    direction, width and latency: inputs drive the fabric's, outputs are
    the fabric's, through wires (no register, no cycle added).
    """

    def __init__(self, fabric: wiring.Component, drop):
        self._fabric, self._drop = fabric, tuple(drop)
        super().__init__(lean_signature(fabric.signature, self._drop))

    @property
    def fabric(self) -> wiring.Component:
        return self._fabric

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.fabric = inner = self._fabric
        sig = self.signature
        for path, member, outer in sig.flatten(self):
            value = inner
            for step in path:
                value = value[step] if isinstance(step, int) else getattr(value, step)
            if member.flow == wiring.In:
                m.d.comb += value.eq(outer)
            else:
                m.d.comb += outer.eq(value)
        return m
