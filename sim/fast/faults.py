"""Fault-injecting stand-ins of the fabric, for testing both co-simulation modes.

:class:`FaultyFabric` has exactly the fabric's ports (it is exported under
the fabric's module name, so the per-cycle testbench and the fast mode's
wrapper top both take it in place of the fabric) and passes everything
through, except that each of its :class:`Fault`\\ s corrupts one output of
one processor in one cycle (the fabric's ``cycle`` output equal to the
fault's cycle). Fault k is armed by the value k + 1 on the ``hold`` input,
which the stand-in does not pass on (its fabric's ``hold`` is 0): one build
serves up to 2^N - 1 faults, chosen per run through :attr:`RunSpec.hold
<pipegossip.sim.record.RunSpec.hold>` (0: no fault).
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.back import verilog
from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring

from ...hw.export import plain_internal_names
from ...hw.fsm.fabric import Fabric, fabric_signature
from ...model.config import RunConfig
from ..fsm.runner import TOP

__all__ = ["Fault", "FaultyFabric", "FAULT_KINDS", "faulty_verilog"]

#: ``action``: the action code flipped; ``peer``: the peer flipped; ``drop``:
#: the delivery's ``valid`` forced low; ``misroute``: the delivery shown on
#: the next processor instead of its receiver; ``word``, ``source``,
#: ``session``: one bit of that delivery field flipped, the others intact;
#: ``late``: the delivery shown one cycle after its slot (its own cycle shows
#: none); ``miss_take``: the word handshake's ``ready`` hidden (the fabric
#: takes the word, its source does not see it); ``extra_take``: ``ready``
#: shown while the fabric does not take (the source moves on).
FAULT_KINDS = ("action", "peer", "drop", "misroute", "word", "source", "session", "late",
               "miss_take", "extra_take")


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
        if len(self._faults) >= 1 << config.n:
            raise ValueError(f"at most {(1 << config.n) - 1} faults (hold values 1..2^N-1)")
        for fault in self._faults:
            if fault.kind not in FAULT_KINDS:
                raise ValueError(f"fault kind must be one of {FAULT_KINDS}, got {fault.kind!r}")
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
        ready = [f.words[i].ready for i in range(n)]
        for k, fault in enumerate(self._faults):
            armed = self.hold == k + 1
            hit = armed & f.busy & (f.cycle == fault.cycle)
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
            elif fault.kind in ("word", "source", "session"):
                dlv[p] = dict(dlv[p], **{fault.kind: Mux(hit, dlv[p][fault.kind] ^ 1,
                                                        dlv[p][fault.kind])})
            elif fault.kind == "late":
                # the cycle's delivery, kept one cycle and shown then instead
                kept = {key: Signal.like(v, name=f"late{k}_{key}") for key, v in dlv[p].items()}
                was = Signal(name=f"late{k}_hit")
                m.d.sync += [was.eq(hit)] + [kept[key].eq(v) for key, v in dlv[p].items()]
                dlv[p] = {key: Mux(was, kept[key], Mux(hit, 0, v) if key == "valid" else v)
                          for key, v in dlv[p].items()}
            elif fault.kind == "miss_take":
                ready[p] = Mux(hit, 0, ready[p])
            else:  # extra_take
                ready[p] = Mux(hit, 1, ready[p])
        for i in range(n):
            m.d.comb += [self.action[i].eq(action[i]), self.peer[i].eq(peer[i]),
                         self.words[i].ready.eq(ready[i]),
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
