"""Property wrapper around the schedule fabric: load one program, run it, check it.

:class:`ScheduleHarness` is the formal test bench of
:class:`~pipegossip.hw.schedule.ScheduleFabric`. A driver replays a concrete
compiled program's load writes (:func:`~pipegossip.hw.schedule.load.load_writes`,
held in the harness as a ROM) through the load port, one per cycle, pulses
``start`` and then reads back an any-constant victim (a node and a store
slot, as the FSM harness picks a victim source and session). The item words
are any-constants too (or the tagged words of :mod:`pipegossip.hw.words`),
so one proof covers every word value and every (node, slot) pair.

The crossbar the fabric builds is replaced, only while the harness is
elaborated, by a probe that passes every select through unchanged (or
mutated, for a mutant) and shows it to the harness: the select a node
drives is what the proof checks for "one source at most".
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assert, Assume, Cat, Const, Elaboratable, Fragment, Module, \
    Mux, ResetSignal, Signal
from amaranth.lib import wiring

from ...model.schedules.program import Program
from ..fsm.crossbar import Crossbar
from ..schedule import LATENCY, LoadKind, ScheduleFabric
from ..schedule import fabric as schedule_fabric_module
from ..schedule.load import load_writes
from .catalog import SCHEDULE_MUTANTS, SCHEDULE_WORDS

__all__ = ["ScheduleHarness", "required_pairs", "harness_writes", "proof_depth", "check_mutant",
           "control_asserts", "drive_loads"]


def required_pairs(program: Program) -> set[tuple[int, int]]:
    """(node, slot) pairs the primitive needs held at the end, from its definition alone.

    Gossip: every node holds every item; broadcast: every node holds the
    root's items; gather and polling: the root holds every item. Not read
    from the compiled program, so a compiler that drops a word is caught.
    """
    s, n, h = program.schedule, program.n, program.items
    items = range(n * h)
    if s.primitive == "gossip":
        return {(v, x) for v in range(n) for x in items}
    if s.primitive == "broadcast":
        return {(v, s.root + n * k) for v in range(n) for k in range(h)}
    return {(s.root, x) for x in items}  # gather, polling


def harness_writes(program: Program, mutant: str | None = None) -> list[tuple[int, int, int, int]]:
    """The load writes the harness replays; with ``source-field``, one entry's source is wrong.

    The ``source-field`` mutant changes the source field of node 0's first
    receiving entry to another node (neither the right source nor node 0).

    Raises
    ------
    ValueError
        ``source-field`` on a program in which node 0 never receives, or N < 3.
    """
    writes = load_writes(program)
    if mutant != "source-field":
        return writes
    if program.n < 3:
        raise ValueError("the source-field mutant needs N >= 3")
    lay = program.layout
    for k, (kind, node, addr, data) in enumerate(writes):
        fields = lay.decode(data)
        if kind == LoadKind.PROGRAM and node == 0 and fields["recv"]:
            wrong = next(u for u in range(1, program.n) if u != fields["source"])
            fields["source"] = wrong
            writes[k] = (kind, node, addr, lay.encode(**fields))
            return writes
    raise ValueError("the source-field mutant needs a program in which node 0 receives")


def check_mutant(program: Program, mutant: str | None) -> None:
    """Refuse a mutant name that is unknown or that ``program`` cannot show.

    Raises
    ------
    ValueError
        An unknown name, N < 3, or ``source-field`` where node 0 never receives.
    """
    if mutant is not None and mutant not in SCHEDULE_MUTANTS:
        raise ValueError(f"unknown schedule mutant {mutant!r}")
    if mutant in ("xbar-select", "xbar-double") and program.n < 3:
        raise ValueError(f"the {mutant} mutant needs N >= 3")
    harness_writes(program, mutant)


def proof_depth(program: Program) -> int:
    """BMC steps: the load writes, the start cycle, the run and two read-back cycles.

    Cycles ``0 .. W-1`` load (W writes), cycle ``s = W`` starts, program cycle
    t is exchanged in cycle ``s + t + LATENCY``, ``done`` rises in
    ``s + L + LATENCY + 1`` and the read-back shows the final stores from the
    cycle after; two such cycles are checked.
    """
    return len(load_writes(program)) + program.cycles + LATENCY + 4


class _Probe(Crossbar):
    """The fabric's crossbar, its applied selects copied to ``probe`` (and mutated)."""

    def __init__(self, n: int, width: int, probe: list[Signal], mutant: str | None,
                 used: list[bool]):
        super().__init__(n, width)
        self._probe, self._mutant, self._used = probe, mutant, used

    def elaborate(self, platform) -> Module:
        m = Module()
        inner = m.submodules.inner = Crossbar(self.n, self.width)
        for j in range(self.n):
            select = self.select[j]
            if j == 0 and self._mutant == "xbar-select":
                bits = [select[i] for i in range(self.n)]
                bits[1], bits[2] = bits[2], bits[1]
                select = Cat(*bits)
            elif j == 0 and self._mutant == "xbar-double":
                # also take the input after the selected one: two sources at once
                select = select | Cat(select[-1], select[:-1])
            m.d.comb += [inner.inputs[j].eq(self.inputs[j]), inner.select[j].eq(select),
                         self._probe[j].eq(select), self.outputs[j].eq(inner.outputs[j])]
        self._used.append(True)
        return m


class _Probed(Elaboratable):
    """Elaborates ``fabric`` with :class:`_Probe` as its crossbar."""

    def __init__(self, fabric: ScheduleFabric, probe: list[Signal], mutant: str | None):
        self._fabric, self._probe, self._mutant = fabric, probe, mutant

    def elaborate(self, platform):
        used: list[bool] = []

        def factory(n, width):
            return _Probe(n, width, self._probe, self._mutant, used)

        with mock.patch.object(schedule_fabric_module, "Crossbar", factory):
            fragment = Fragment.get(self._fabric, platform)
        if len(used) != 1:
            raise RuntimeError(f"the schedule fabric built {len(used)} crossbars, expected 1: "
                               "the harness cannot see its selects")
        return fragment


class ScheduleHarness(wiring.Component):
    """The schedule fabric loaded with one program, with its safety properties.

    Parameters
    ----------
    program : Program
        A compiled schedule (``compile_schedule(..., width=width)``); the
        fabric is built with ``depth = program.depth`` and ``slots = program.slots``.
    width : int
        Word width in bits.
    words : str
        ``free``: every slot's word is an any-constant (the solver picks
        them); ``tagged``: the words of :func:`~pipegossip.hw.schedule.load.slot_words`.
    mutant : str or None
        A name of :data:`~.catalog.SCHEDULE_MUTANTS`, to check that the proof fails.

    Notes
    -----
    Power-up state, ``rst`` low. Cycle ``k < W`` writes load write k, cycle
    ``s = W`` pulses ``start``; L is the program length. Inputs the harness
    does not drive (the per-node ``item`` ports of streaming, when the fabric
    has them) stay 0: the run proven is one without store writes while busy. Assertions, with c
    the cycle number (saturating past the bound):

    * ``busy`` exactly in cycles s+1 .. s+L+LATENCY, ``done`` from
      s+L+LATENCY+1 on (never before), ``length`` = L after the header,
      ``cycle`` = the program cycle in exchange cycles, else 0;
    * every node's applied crossbar select is one-hot or zero, and equals the
      one-hot of its ``recv.source`` when it receives, zero otherwise;
    * a node receives only in exchange cycles (so nothing is stored after
      ``done``), and its received word is the word its source sends;
    * from the cycle after ``done`` rose: the victim node's held bit of the
      victim slot equals the model's final held bit, it is set wherever the
      primitive needs it, a held slot holds the slot's loaded word, and the
      accumulator equals the wrapping sum of the words the node combines.
    """

    def __init__(self, program: Program, width: int = 4, words: str = "free",
                 mutant: str | None = None):
        check_mutant(program, mutant)
        if words not in SCHEDULE_WORDS:
            raise ValueError(f"words must be one of {', '.join(SCHEDULE_WORDS)}, not {words!r}")
        self._program, self._width, self._words, self._mutant = program, width, words, mutant
        self._writes = harness_writes(program, mutant)
        super().__init__({})

    @property
    def depth(self) -> int:
        """BMC steps that cover loading, the run and two read-back cycles."""
        return proof_depth(self._program)

    def _slot_words(self, m: Module) -> list:
        prog, width = self._program, self._width
        if self._words == "tagged":
            return [Const(w, width) for w in _tagged(prog)]
        out = []
        for x in range(prog.slots):
            w = Signal(width, name=f"word_{x}")
            m.d.comb += w.eq(AnyConst(width))
            out.append(w)
        return out

    def elaborate(self, platform) -> Module:
        m = Module()
        prog, width = self._program, self._width
        n, L, slots, W = prog.n, prog.cycles, prog.slots, len(self._writes)
        probe = [Signal(n, name=f"select_{j}") for j in range(n)]
        dut = ScheduleFabric(n, width, max(prog.depth, 1), slots)
        m.submodules.dut = _Probed(dut, probe, self._mutant)
        m.d.comb += Assume(~ResetSignal("sync"))
        words = self._slot_words(m)

        c = drive_loads(m, dut, self._writes, L,
                        lambda kind, node, addr, data: words[addr] if kind == LoadKind.ITEM
                        else data)
        s = W
        exchange = control_asserts(m, dut, c, s, L)

        for j in range(n):
            rv, sel = dut.recv[j], probe[j]
            expect = Cat(rv.valid & (rv.source == i) for i in range(n))
            sent = Array(dut.send[i].word for i in range(n))[rv.source]
            m.d.comb += [
                Assert((sel & (sel - 1)) == 0, f"p{j}: one source at most"),
                Assert(sel == expect, f"p{j}: select is the one-hot of recv.source"),
                Assert(~rv.valid | exchange, f"p{j}: receives only in exchange cycles"),
                Assert(~(rv.valid & dut.done), f"p{j}: nothing stored after done"),
                Assert(~dut.send[j].valid | exchange, f"p{j}: sends only in exchange cycles"),
                Assert(~rv.valid | (rv.source < n), f"p{j}: source is a node"),
                Assert(~rv.valid | (rv.word == sent), f"p{j}: received word is the one sent"),
            ]

        self._final_checks(m, dut, words)
        return m

    def _final_checks(self, m: Module, dut: ScheduleFabric, words: list) -> None:
        """The victim (node, slot) read back once the run is over."""
        prog, width = self._program, self._width
        n, slots = prog.n, prog.slots
        vnode = Signal(range(n), name="victim_node")
        vslot = Signal(range(slots), name="victim_slot")
        m.d.comb += [vnode.eq(AnyConst(len(vnode))), vslot.eq(AnyConst(len(vslot))),
                     Assume(vnode < n), Assume(vslot < slots),
                     dut.read.node.eq(vnode), dut.read.slot.eq(vslot)]
        need_pairs = required_pairs(prog)
        held = Signal(name="model_held")
        need = Signal(name="model_needs")
        acc = Signal(width, name="model_acc")
        sums = _accumulator_sums(prog, words, width)
        with m.Switch(vnode):
            for v in range(n):
                with m.Case(v):
                    m.d.comb += acc.eq(sums[v])
                    with m.Switch(vslot):
                        for x in range(slots):
                            with m.Case(x):
                                m.d.comb += [held.eq(bool(prog.final[v, x])),
                                             need.eq((v, x) in need_pairs)]
        done_before = Signal(name="done_before")
        m.d.sync += done_before.eq(dut.done)
        after = dut.done & done_before
        rd = dut.read
        m.d.comb += [
            Assert(~after | (rd.held == held), "final held bits are the model's"),
            Assert(~after | ~need | rd.held, "every item the primitive needs is held"),
            Assert(~after | ~rd.held | (rd.word == Array(words)[vslot]),
                   "a held slot holds its loaded word"),
            Assert(~after | (rd.acc == acc), "accumulator is the sum of the combined words"),
        ]


def drive_loads(m: Module, dut, writes: list, L: int, value) -> Signal:
    """Replay ``writes`` on ``dut``'s load port (write k in cycle k), start in cycle W.

    ``value(kind, node, addr, data)`` is the data driven for a write (the
    harness's any-constant words in place of the loaded ones). Returns the
    cycle count c, saturating one past the last cycle any bound names
    (W + L + LATENCY + 4, W = ``len(writes)``).
    """
    W = len(writes)
    last = W + L + LATENCY + 4
    c = Signal(range(last + 1), name="c")
    with m.If(c < last):
        m.d.sync += c.eq(c + 1)
    ld = dut.load
    with m.Switch(c):
        for k, (kind, node, addr, data) in enumerate(writes):
            with m.Case(k):
                m.d.comb += [ld.valid.eq(1), ld.kind.eq(kind), ld.node.eq(node),
                             ld.addr.eq(addr), ld.data.eq(value(kind, node, addr, data))]
        with m.Case(W):
            m.d.comb += dut.start.eq(1)
    return c


def control_asserts(m: Module, dut, c: Signal, s: int, L: int):
    """The run control's properties of a program-driven fabric started in cycle ``s``.

    ``busy`` exactly in cycles s+1..s+L+LATENCY, ``done`` from s+L+LATENCY+1
    on, ``length`` = L after the header, ``cycle`` = the program cycle in
    exchange cycles, else 0. Returns the "exchange cycle" condition.
    """
    exchange = (c >= s + 1 + LATENCY) & (c <= s + L + LATENCY)
    m.d.comb += [
        Assert(dut.busy == ((c >= s + 1) & (c <= s + L + LATENCY)),
               "busy exactly in cycles s+1..s+L+LATENCY"),
        Assert(dut.done == (c >= s + L + LATENCY + 1), "done from cycle s+L+LATENCY+1"),
        Assert((c == 0) | (dut.length == L), "length is L after the header"),
        Assert(dut.cycle == Mux(exchange, c - s - LATENCY, 0)[:len(dut.cycle)],
               "cycle counts the program cycles"),
    ]
    return exchange


def _tagged(program: Program) -> list[int]:
    from ..schedule.load import slot_words
    return slot_words(program)


def _accumulator_sums(program: Program, words: list, width: int) -> list:
    """Per node: the wrapping sum of the words it combines (``Program.combine``)."""
    sums = [Const(0, width) for _ in range(program.n)]
    for c, v in zip(*np.nonzero(program.combine)):
        sums[v] = (sums[v] + words[int(program.recv[c, v])])[:width]
    return sums
