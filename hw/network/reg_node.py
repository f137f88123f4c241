"""A network node with registered link ends: every path is FF -> route -> a mux or an add -> FF.

:class:`RegNode` has the ports, the program entries and the cycle-by-cycle
behaviour at its ports of :class:`~.node.NetworkNode` (the fabric's ``node="wire"``),
so every program, the judge, the fast mode and the proofs run unchanged on
it (``tests/test_hw_network_reg.py`` compares both nodes port by port in every
cycle). What differs is where the clock edges are:

* **The link is a register.** The word a link carries in exchange cycle t
  leaves the sender's ``tx`` register (or, for an accumulator send, the
  accumulator register through one 2:1 multiplexer), so nothing but wire
  lies between a flip-flop and the receiver's bank write port, adder and
  own ``tx`` multiplexer.
* **Sends are chosen a cycle ahead.** The ``tx`` register of exchange cycle t
  is loaded at the edge ending t - 1 from the entry fetched for t (the
  program memory's registered output, the read stage): the word at
  ``txaddr`` of bank ``txbank`` (read without a clock), or, when the entry's
  ``txnew`` says that word is only now arriving (it arrived in t - 1 on link
  ``txbank``, :func:`~pipegossip.model.schedules.network_banks.fresh_sends`),
  the word on that link: the bypass. So a word received in exchange cycle t
  is still sent on in t + 1, as on the wire node.
* **The accumulator adds on carry chains.** The old value and the combined
  arrivals are summed by a balanced tree of two-operand adders whose partial
  sums are kept (``keep``), so that Yosys maps each to a carry chain
  (``CCU2C``/``SB_CARRY``) instead of one multi-operand LUT adder.
* **The lean build** (``trace=False``) keeps the trace-only slot fields
  (``txslot``/``rxslot``) out of the program memory when the banked store
  does not need them; its trace outputs ``tx_slot``/``rx_slot`` read 0. The
  datapath is the same (the fabric's lean build has no trace ports at all).

Latencies, at the ports: those of :class:`~.node.NetworkNode`.
"""

from __future__ import annotations

import re

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib.memory import Memory

from .node import NetworkNode
from .store import banked_store, single_store

__all__ = ["RegNode", "TRACE_ONLY"]

#: Entry fields only the trace outputs read (the banked store finds words by bank/address).
TRACE_ONLY = re.compile(r"(tx|rx)slot\d+$")


def _tree(m: Module, terms: list, width: int, op: str, name: str):
    """Combine ``terms`` pairwise (a balanced tree); each partial result a kept signal."""
    level = 0
    while len(terms) > 1:
        nxt = []
        for k in range(0, len(terms) - 1, 2):
            s = Signal(width, name=f"{name}_l{level}_{k // 2}", attrs={"keep": 1})
            m.d.comb += s.eq((terms[k] + terms[k + 1])[:width] if op == "sum"
                             else terms[k] ^ terms[k + 1])
            nxt.append(s)
        if len(terms) % 2:
            nxt.append(terms[-1])
        terms, level = nxt, level + 1
    return terms[0]


class RegNode(NetworkNode):
    """A network node with registered link ends (same ports as :class:`~.node.NetworkNode`).

    Parameters
    ----------
    degree, width, depth, slots, op, bank_depth, store
        As :class:`~.node.NetworkNode`.
    trace : bool
        Keep the trace-only entry fields (``txslot``/``rxslot``) in the
        program memory (default). ``False``: the banked store's lean build
        drops them and its ``tx_slot``/``rx_slot`` outputs read 0; the
        single store needs them and keeps them (and drops the ``txaddr``
        fields, which it never reads, in either build).

    Notes
    -----
    Pipeline (all nodes in lockstep): fetch (f), read (f + 1: the entry is
    the program memory's registered output; every link's next word is chosen
    and registered), exchange (f + 2: the registered words are on the links;
    arrivals are written to the banks and combined at the edge ending it).
    """

    def __init__(self, degree: int, width: int, depth: int, slots: int, op: str = "sum",
                 bank_depth: int | None = None, store: str = "banks", trace: bool = True):
        super().__init__(degree, width, depth, slots, op, bank_depth, store)
        if not isinstance(trace, bool):
            raise TypeError(f"RegNode trace must be a bool, not {trace!r}")
        self._trace = trace
        keep_slots = trace or store == "single"
        # the single store finds words by slot: the bank addresses are not read
        self.kept_fields = tuple((f, w) for f, w in self.layout.fields
                                 if (keep_slots or not TRACE_ONLY.match(f))
                                 and not (store == "single" and f.startswith("txaddr")))

    def elaborate(self, platform) -> Module:
        m = Module()
        lay, deg, width = self.layout, self._deg, self._width
        sw, bb, ab = lay.slot_bits, lay.bank_bits, lay.addr_bits
        kept = self.kept_fields
        offs, at = {}, 0
        for f, w in kept:
            offs[f], at = (at, w), at + w

        # the program memory holds the kept fields only (what the loaded entry carries
        # beyond them is dropped at the write)
        prog = m.submodules.prog = Memory(shape=at, depth=self._depth, init=[])
        pwr, prd = prog.write_port(), prog.read_port()
        m.d.comb += [pwr.en.eq(self.prog_we), pwr.addr.eq(self.prog_addr),
                     pwr.data.eq(Cat(*(self.prog_data[lay.offset(f):lay.offset(f) + w]
                                       for f, w in kept))),
                     prd.addr.eq(self.fetch_addr)]
        entry = prd.data

        def field(name):
            o, w = offs[name]
            return entry[o:o + w]

        r_valid = Signal()
        m.d.sync += r_valid.eq(self.fetch_en)
        # read stage: what each link sends in the next (exchange) cycle
        r_tx = [Signal(name=f"r_tx{j}") for j in range(deg)]
        r_acc = [Signal(name=f"r_acc{j}") for j in range(deg)]
        for j in range(deg):
            m.d.comb += [r_tx[j].eq(r_valid & field(f"tx{j}")),
                         r_acc[j].eq(r_valid & field(f"tx{j}") & field(f"txacc{j}"))]
        # exchange stage: the receives, the drain and the trace
        x_drain = Signal()
        m.d.sync += x_drain.eq(r_valid & field("drain"))
        x_rx = [Signal(name=f"x_rx{j}") for j in range(deg)]
        x_comb = [Signal(name=f"x_comb{j}") for j in range(deg)]
        x_tx = [Signal(name=f"x_tx{j}") for j in range(deg)]
        x_acc = [Signal(name=f"x_acc{j}") for j in range(deg)]
        x_slot = [Signal(sw, name=f"x_slot{j}") for j in range(deg)]
        x_rslot = [Signal(sw, name=f"x_rslot{j}") for j in range(deg)]
        for j in range(deg):
            m.d.sync += [x_rx[j].eq(r_valid & field(f"rx{j}")),
                         x_comb[j].eq(r_valid & field(f"comb{j}")),
                         x_tx[j].eq(r_tx[j]), x_acc[j].eq(r_acc[j])]
            if f"txslot{j}" in offs:
                m.d.sync += [x_slot[j].eq(field(f"txslot{j}")),
                             x_rslot[j].eq(field(f"rxslot{j}"))]
        r_bank = [field(f"txbank{j}") for j in range(deg)]
        if self._store == "banks":
            words, rd_next, held_next = banked_store(
                m, lay, width, self.clear, r_tx, r_bank,
                [field(f"txaddr{j}") for j in range(deg)], x_rx, list(self.in_word),
                self.item_we, self.item_data, self.dir_we, self.dir_slot, self.dir_data,
                self.rd_slot)
        else:
            words, rd_next, held_next = single_store(
                m, lay, width, self.clear, r_tx, [field(f"txslot{j}") for j in range(deg)],
                x_rx, x_rslot, list(self.in_word), self.item_we, self.item_slot,
                self.item_data, self.rd_slot)

        tx_reg = [Signal(width, name=f"tx_reg{j}") for j in range(deg)]
        acc = Signal(width)
        for j in range(deg):
            # a word first stored in this cycle is still on its link: take it from there
            fresh = Signal(width, name=f"fresh{j}")
            m.d.comb += fresh.eq(Cat(*self.in_word).word_select(r_bank[j], width)
                                 if deg > 1 else self.in_word[0])
            nxt = Mux(field(f"txnew{j}"), fresh, words[j])
            # a link carries 0 unless its sender sends (an accumulator send: the
            # register holds 0 and the accumulator is ORed in by the 2:1 below)
            m.d.sync += tx_reg[j].eq(Mux(r_tx[j] & ~r_acc[j], nxt, 0))
            m.d.comb += [
                self.out_word[j].eq(Mux(x_acc[j], acc, tx_reg[j])),
                self.tx_valid[j].eq(x_tx[j]), self.tx_acc[j].eq(x_acc[j]),
                self.tx_slot[j].eq(x_slot[j]),
                self.rx_valid[j].eq(x_rx[j]), self.rx_slot[j].eq(x_rslot[j]),
                self.rx_comb[j].eq(x_comb[j]),
            ]

        rd_word, rd_held = Signal(width), Signal()
        m.d.sync += [rd_word.eq(rd_next), rd_held.eq(held_next)]
        m.d.comb += [self.acc.eq(acc), self.rd_word.eq(rd_word), self.rd_held.eq(rd_held)]
        terms = [Mux(x_drain, 0, acc), *(Mux(x_comb[j], self.in_word[j], 0)
                                         for j in range(deg))]
        acc_next = _tree(m, terms, width, self._op, "acc_sum")
        with m.If(self.clear):
            m.d.sync += acc.eq(0)
        with m.Elif(self.acc_we):
            m.d.sync += acc.eq(self.acc_data)
        with m.Else():
            m.d.sync += acc.eq(acc_next)
        return m
