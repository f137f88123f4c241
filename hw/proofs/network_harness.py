"""Property wrapper around the network fabric: load one program, run it, check it.

:class:`NetworkHarness` is the formal test bench of
:class:`~pipegossip.hw.network.NetworkFabric`, built like the schedule
fabric's (:class:`~.schedule_harness.ScheduleHarness`): a driver replays a
compiled program's load writes
(:func:`~pipegossip.hw.network.load.network_writes`) through the load port,
one per cycle, pulses ``start`` and reads back an any-constant victim (a
node and a store slot). Every item word (and so every token an accumulator
starts with) is an any-constant, so one proof covers every word value.
"""

from __future__ import annotations

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assert, Assume, Module, ResetSignal, Signal
from amaranth.lib import wiring

from ...model.schedules.network_program import ACC, NetworkProgram
from ...model.schedules.program import NONE
from ..network.fabric import NetworkFabric
from ..network.load import network_writes
from ..schedule import LATENCY, LoadKind
from .catalog import NETWORK_MUTANTS as CATALOG_MUTANTS
from .schedule_harness import control_asserts, drive_loads

__all__ = ["NetworkHarness", "NETWORK_MUTANTS", "network_proof_depth", "network_harness_writes"]

#: Mutants a proof must fail on: the loaded program altered as the fault
#: injection of ``pipegossip.sim.network.run.faulty_writes`` does.
NETWORK_MUTANTS = tuple(CATALOG_MUTANTS)


def network_harness_writes(program: NetworkProgram, mutant: str | None = None) -> list:
    """The load writes the harness replays (with ``mutant``: one entry altered)."""
    if mutant is None:
        return network_writes(program)
    if mutant not in NETWORK_MUTANTS:
        raise ValueError(f"unknown network mutant {mutant!r} "
                         f"(expected one of {', '.join(NETWORK_MUTANTS)})")
    from ...sim.network.run import faulty_writes
    return faulty_writes(program, mutant)


def network_proof_depth(program: NetworkProgram) -> int:
    """BMC steps: the load writes, the start cycle, the run and two read-back cycles."""
    return len(network_writes(program)) + program.cycles + LATENCY + 4


def _combine(op: str, values: list, width: int):
    out = None
    for v in values:
        out = v if out is None else ((out + v)[:width] if op == "sum" else out ^ v)
    return 0 if out is None else out


class NetworkHarness(wiring.Component):
    """The network fabric loaded with one program, with its safety properties.

    Parameters
    ----------
    program : NetworkProgram
        A compiled schedule (``compile_network(..., width=width)``).
    width : int
        Word width in bits.
    mutant : str or None
        A name of :data:`NETWORK_MUTANTS`: the proof must fail.
    store : {"banks", "single"}
        The fabric's item store (the same assertions hold for both).
    node : {"wire", "reg"}
        The fabric's node design (the same assertions hold for both).

    Notes
    -----
    Power-up state, ``rst`` low; cycle ``k < W`` writes load write k, cycle
    ``s = W`` pulses ``start``. Assertions (c the cycle number, saturating):
    the run control as on the schedule fabric (:func:`control_asserts`);
    in every cycle and at every port, ``tx.valid``, ``tx.acc``, ``rx.valid``
    and ``rx.comb`` are exactly the program's for that cycle (none outside
    the exchange cycles), a stored slot is the program's, a sent slot word
    is that slot's loaded word, and the word arriving at a port is the word
    its link's other end sends; after ``done``: the victim node's held bit of
    the victim slot is the model's, a held slot holds its word, and the
    accumulator is the model's combination of the tokens it holds.
    """

    def __init__(self, program: NetworkProgram, width: int = 4, mutant: str | None = None,
                 store: str = "banks", node: str = "wire"):
        self._writes = network_harness_writes(program, mutant)
        self._program, self._width, self._store, self._node = program, width, store, node
        super().__init__({})

    @property
    def depth(self) -> int:
        return network_proof_depth(self._program)

    def elaborate(self, platform) -> Module:
        m = Module()
        prog, width = self._program, self._width
        n, L, W, P = prog.n, prog.cycles, len(self._writes), prog.ports
        dut = m.submodules.dut = NetworkFabric(prog.topology, width, max(prog.depth, 1),
                                               prog.slots, prog.op, store=self._store,
                                               node=self._node)
        m.d.comb += Assume(~ResetSignal("sync"))
        words = []
        for i in range(n * prog.items):
            w = Signal(width, name=f"word_{i}")
            m.d.comb += w.eq(AnyConst(width))
            words.append(w)
        # a slot holding a forwarded part of an accumulator holds its tokens' combination
        parts = [part for part in prog.slot_sets if part is not None]
        base = prog.slot_words([0] * len(words) if parts else words)
        slot_word = [w if isinstance(w, Signal) else Signal(width, init=w) for w in base]
        for x, part in enumerate(prog.slot_sets):
            if part is not None:
                slot_word[x] = _combine(prog.op, [words[t] for t in sorted(part)], width)

        def value(kind, node, addr, data):
            if kind == LoadKind.ITEM:
                return slot_word[addr]
            if kind == LoadKind.ACC:
                return _combine(prog.op, [words[t] for t in sorted(prog.acc_sets[0][node])],
                                width)
            return data

        c = drive_loads(m, dut, self._writes, L, value)
        s = W
        exchange = control_asserts(m, dut, c, s, L)

        # the program, cycle by cycle and port by port
        for p in range(P):
            tx, rx, q = dut.tx[p], dut.rx[p], prog.peer(p)
            want = {name: Signal(name=f"want_{name}_{p}") for name in ("tx", "acc", "rx", "comb")}
            want_slot = Signal(len(rx.slot), name=f"want_slot_{p}")
            with m.Switch(c):
                for t in range(L):
                    with m.Case(s + 1 + LATENCY + t):
                        x, r = int(prog.tx[t, p]), int(prog.rx[t, p])
                        m.d.comb += [want["tx"].eq(x != NONE), want["acc"].eq(x == ACC),
                                     want["rx"].eq(r != NONE), want_slot.eq(max(r, 0)),
                                     want["comb"].eq(bool(prog.comb[t, p]))]
            m.d.comb += [
                Assert(tx.valid == want["tx"], f"port {p}: sends exactly when programmed"),
                Assert(tx.acc == want["acc"], f"port {p}: sends the accumulator when programmed"),
                Assert(rx.valid == want["rx"], f"port {p}: stores exactly when programmed"),
                Assert(rx.comb == want["comb"], f"port {p}: combines exactly when programmed"),
                Assert(~rx.valid | (rx.slot == want_slot), f"port {p}: stores in its slot"),
                Assert(rx.word == dut.tx[q].word, f"port {p}: the link delivers the word sent"),
                Assert(~tx.valid | tx.acc | (tx.word == Array(slot_word)[tx.slot]),
                       f"port {p}: a sent slot word is the slot's loaded word"),
            ]
        self._final_checks(m, dut, words, slot_word)
        return m

    def _final_checks(self, m: Module, dut: NetworkFabric, words: list, slot_word: list):
        prog, width = self._program, self._width
        n, slots = prog.n, prog.slots
        vnode = Signal(range(n), name="victim_node")
        vslot = Signal(range(slots), name="victim_slot")
        m.d.comb += [vnode.eq(AnyConst(len(vnode))), vslot.eq(AnyConst(len(vslot))),
                     Assume(vnode < n), Assume(vslot < slots),
                     dut.read.node.eq(vnode), dut.read.slot.eq(vslot)]
        held = Signal(name="model_held")
        acc = Signal(width, name="model_acc")
        with m.Switch(vnode):
            for v in range(n):
                with m.Case(v):
                    tokens = [words[t] for t in sorted(prog.acc_sets[-1][v])]
                    m.d.comb += acc.eq(_combine(prog.op, tokens, width))
                    with m.Switch(vslot):
                        for x in range(slots):
                            with m.Case(x):
                                m.d.comb += held.eq(bool(prog.final[v, x]))
        done_before = Signal(name="done_before")
        m.d.sync += done_before.eq(dut.done)
        after = dut.done & done_before
        rd = dut.read
        m.d.comb += [
            Assert(~after | (rd.held == held), "final held bits are the model's"),
            Assert(~after | ~rd.held | (rd.word == Array(slot_word)[vslot]),
                   "a held slot holds its loaded word"),
            Assert(~after | (rd.acc == acc), "the accumulator is the model's combination"),
        ]
