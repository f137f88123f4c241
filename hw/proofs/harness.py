"""Property wrapper around the fabric: one run, a victim word, its deliveries.

The harness is the formal test bench of :class:`~pipegossip.hw.fsm.fabric.Fabric`.
It starts one run in the first cycle, feeds every processor's word streams
with any-constant words, picks an any-constant victim (a source and a
session, as wb2axip's ``wbxbar.sby`` picks a victim transaction) and counts
that word's deliveries at every other processor. The solver chooses the
victim and the words, so a proof covers every source, session and word.
"""

from __future__ import annotations

from contextlib import contextmanager
from unittest import mock

from amaranth.asserts import AnyConst, Initial
from amaranth.hdl import Array, Assert, Assume, Cat, Module, ResetSignal, Signal
from amaranth.lib import wiring

from ...model.config import RunConfig
from ...model.engine import simulate
from ..fsm import fabric as fabric_module
from ..bits import peer_width, session_width
from ..fsm.crossbar import Crossbar
from ..fsm.fabric import Fabric
from .catalog import FABRIC_MUTANTS

__all__ = ["FabricHarness", "FABRIC_MUTANTS", "mutated", "run_length"]


def run_length(config: RunConfig) -> int:
    """L of ``config`` from the golden model."""
    return int(simulate(config, table=False).length)


class _SwappedCrossbar(Crossbar):
    """Mutant: output 0 reads the select bits of inputs 1 and 2 swapped."""

    def elaborate(self, platform) -> Module:
        m = Module()
        inner = m.submodules.inner = Crossbar(self.n, self.width)
        for j in range(self.n):
            select = self.select[j]
            if j == 0:
                bits = [select[i] for i in range(self.n)]
                bits[1], bits[2] = bits[2], bits[1]
                select = Cat(*bits)
            m.d.comb += [inner.inputs[j].eq(self.inputs[j]), inner.select[j].eq(select),
                         self.outputs[j].eq(inner.outputs[j])]
        return m


@contextmanager
def mutated(name: str | None):
    """Elaborate the fabric with mutant ``name`` in effect (None: the real design).

    The crossbar mutant replaces the crossbar the fabric module builds, only
    while the harness is converted (elaboration happens inside
    :func:`amaranth.back.rtlil.convert`).
    """
    if name == "xbar-select":
        with mock.patch.object(fabric_module, "Crossbar", _SwappedCrossbar):
            yield
    else:
        yield


class FabricHarness(wiring.Component):
    """The fabric with its safety properties (no ports: every input is free or tied).

    Parameters
    ----------
    config : RunConfig
        The configuration under proof.
    width : int
        Word width in bits.
    length : int or None
        L from the model; computed when None.
    mutant : str or None
        A name of :data:`FABRIC_MUTANTS`, to check that the proof fails.

    Notes
    -----
    Cycle 0 is the first cycle after power-up; ``start`` is high in it only
    (``Initial()``), ``rst`` stays low (every flip-flop starts at its reset
    value) and ``hold`` is 0. Properties, with ``t`` the cycle number
    (saturating at L+2):

    * ``busy`` exactly in cycles 1..L and ``done`` from cycle L+1 on;
    * ``stall`` never high;
    * no delivery in cycle 0 or while ``done``; no processor receives its own
      word; a delivered source is a processor id;
    * the victim (source ``vsrc``, session ``vsess``, both any-constant)
      reaches each other processor at most once, each time with the
      victim's word, and exactly once by ``done``; never its own source.
    """

    def __init__(self, config: RunConfig, width: int = 4, length: int | None = None,
                 mutant: str | None = None):
        if mutant is not None and mutant not in FABRIC_MUTANTS:
            raise ValueError(f"unknown fabric mutant {mutant!r}")
        self._config = config
        self._width = width
        self._length = run_length(config) if length is None else length
        self._mutant = mutant
        super().__init__({})

    @property
    def length(self) -> int:
        return self._length

    def elaborate(self, platform) -> Module:
        m = Module()
        cfg = self._config
        n, sessions, width, L = cfg.n, cfg.sessions, self._width, self._length
        dut = m.submodules.dut = Fabric(cfg, width)

        # Tie the protocol: power-up state, no reset, one start, no hold.
        first = Initial()
        m.d.comb += [Assume(~ResetSignal("sync")), dut.start.eq(first), dut.hold.eq(0)]

        # The words: processor i's word of session s is any constant; the
        # harness presents the word of the session its stream is at.
        words = [[Signal(width, name=f"w_{i}_{s}") for s in range(sessions)] for i in range(n)]
        for row in words:
            for w in row:
                m.d.comb += w.eq(AnyConst(width))
        sw = session_width(sessions)
        for i in range(n):
            taken = Signal(range(sessions + 1), name=f"taken_{i}")
            port = dut.words[i]
            m.d.comb += [port.valid.eq(1),
                         port.payload.eq(Array(words[i] + [words[i][-1]])[taken])]
            with m.If(port.ready & (taken < sessions)):
                m.d.sync += taken.eq(taken + 1)

        # The cycle count t, saturating at L+2 (enough to tell every bound).
        t = Signal(range(L + 3), name="t")
        with m.If(t < L + 2):
            m.d.sync += t.eq(t + 1)
        m.d.comb += [
            Assert(dut.busy == ((t >= 1) & (t <= L)), "busy exactly in cycles 1..L"),
            Assert(dut.done == (t >= L + 1), "done from cycle L+1"),
            Assert(~dut.stall, "watchdog quiet"),
        ]

        # The victim: any source and session, fixed for the whole run.
        pw = peer_width(n)
        vsrc = Signal(pw, name="victim_source")
        vsess = Signal(sw, name="victim_session")
        m.d.comb += [vsrc.eq(AnyConst(pw)), vsess.eq(AnyConst(sw)),
                     Assume(vsrc < n), Assume(vsess < sessions)]
        vword = Signal(width, name="victim_word")
        m.d.comb += vword.eq(Array([Array(row) for row in words])[vsrc][vsess])

        for j in range(n):
            d = dut.delivery[j]
            got = Signal(2, name=f"victim_at_{j}")
            hit = Signal(name=f"victim_hit_{j}")
            m.d.comb += [
                hit.eq(d.valid & (d.source == vsrc) & (d.session == vsess)),
                Assert(~(d.valid & (t == 0)), f"p{j}: nothing before the run"),
                Assert(~(d.valid & dut.done), f"p{j}: nothing delivered after done"),
                Assert(~d.valid | (d.source != j), f"p{j}: never its own word"),
                Assert(~d.valid | (d.source < n), f"p{j}: source is a processor"),
                Assert(~hit | (d.word == vword), f"p{j}: victim word intact"),
                Assert(~hit | (got == 0), f"p{j}: victim at most once"),
                Assert(~(dut.done & (vsrc != j)) | (got == 1), f"p{j}: victim exactly once"),
            ]
            with m.If(hit & (got != 3)):
                m.d.sync += got.eq(got + 1)
        return m
