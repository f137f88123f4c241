"""Fault-injecting stand-ins of the fabric, for testing both co-simulation modes.

:class:`FaultyFabric` has exactly the fabric's ports (it is exported under
the fabric's module name, so the per-cycle testbench and the fast mode's
wrapper top both take it in place of the fabric) and passes everything
through, except that each of its :class:`Fault`\\ s corrupts one output of
one processor in one cycle (the fabric's ``cycle`` output equal to the
fault's cycle). Fault k is armed by bit k of the ``hold`` input, which the
stand-in does not pass on (its fabric's ``hold`` is 0): one build serves
every fault, chosen per run through :attr:`RunSpec.hold
<pipegossip.sim.record.RunSpec.hold>`.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.back import verilog
from amaranth.hdl import Module, Mux
from amaranth.lib import wiring

from ..hw.export import plain_internal_names
from ..hw.fabric import Fabric, fabric_signature
from ..model.config import RunConfig
from .runner import TOP

__all__ = ["Fault", "FaultyFabric", "FAULT_KINDS", "faulty_verilog"]

#: ``action``: the action code flipped; ``peer``: the peer flipped; ``drop``:
#: the delivery's ``valid`` forced low; ``misroute``: the delivery shown on
#: the next processor instead of its receiver.
FAULT_KINDS = ("action", "peer", "drop", "misroute")


@dataclass(frozen=True)
class Fault:
    """Corrupt ``kind`` of processor ``processor`` in cycle ``cycle`` (>= 1)."""

    kind: str
    cycle: int
    processor: int


class FaultyFabric(wiring.Component):
    """The fabric with injectable faults (see the module notes); same signature."""

    def __init__(self, config: RunConfig, width: int, faults: tuple[Fault, ...]):
        self._config, self._width, self._faults = config, width, tuple(faults)
        if len(self._faults) > config.n:
            raise ValueError(f"at most {config.n} faults (one per hold bit)")
        super().__init__(fabric_signature(config, width))

    def elaborate(self, platform) -> Module:
        m = Module()
        n = self._config.n
        f = m.submodules.fabric = Fabric(self._config, self._width)
        m.d.comb += [f.start.eq(self.start), f.hold.eq(0), self.busy.eq(f.busy),
                     self.done.eq(f.done), self.cycle.eq(f.cycle), self.used.eq(f.used),
                     self.stall.eq(f.stall)]
        action = [f.action[i] for i in range(n)]
        peer = [f.peer[i] for i in range(n)]
        dlv = [{k: getattr(f.delivery[i], k) for k in ("valid", "source", "session", "word")}
               for i in range(n)]
        for k, fault in enumerate(self._faults):
            hit = self.hold[k] & f.busy & (f.cycle == fault.cycle)
            p = fault.processor
            if fault.kind == "action":
                action[p] = Mux(hit, action[p] ^ 1, action[p])
            elif fault.kind == "peer":
                peer[p] = Mux(hit, peer[p] ^ 1, peer[p])
            elif fault.kind == "drop":
                dlv[p] = dict(dlv[p], valid=Mux(hit, 0, dlv[p]["valid"]))
            elif fault.kind == "misroute":
                q = (p + 1) % n
                src, dst = dlv[p], dlv[q]
                dlv[q] = {key: Mux(hit, src[key], dst[key]) for key in src}
                dlv[p] = dict(src, valid=Mux(hit, 0, src["valid"]))
            else:
                raise ValueError(f"fault kind must be one of {FAULT_KINDS}, got {fault.kind!r}")
        for i in range(n):
            m.d.comb += [self.action[i].eq(action[i]), self.peer[i].eq(peer[i]),
                         self.words[i].ready.eq(f.words[i].ready),
                         f.words[i].payload.eq(self.words[i].payload),
                         f.words[i].valid.eq(self.words[i].valid)]
            for key, value in dlv[i].items():
                m.d.comb += getattr(self.delivery[i], key).eq(value)
        return m


def faulty_verilog(config: RunConfig, width: int, faults: tuple[Fault, ...]) -> str:
    """Verilog of :class:`FaultyFabric`, named like the fabric (``pipegossip_fabric``)."""
    top = FaultyFabric(config, width, faults)
    text = plain_internal_names(verilog.convert(top, name=TOP, emit_src=False))
    return (f"// pipegossip fault-injecting stand-in, width={width}\n// {config.header()}\n"
            f"// faults: {'; '.join(f'{x.kind}@{x.cycle}/p{x.processor}' for x in faults)}\n"
            + text)
