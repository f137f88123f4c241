"""One node of the network fabric: item store, held bits, accumulator, program, one port per link."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ...model.schedules.network_program import OPS, NetworkLayout
from ..params import check_int
from ..schedule.node import one_hot, select_by

__all__ = ["NetworkNode"]


class NetworkNode(wiring.Component):
    """A node with ``degree`` links: ``slots`` item words, held bits, an accumulator, a program.

    The same two-stage pipeline behind the fabric's program fetch as the
    schedule fabric's node (all nodes in lockstep):

    * **fetch** (cycle f): ``fetch_en`` high, ``fetch_addr`` = entry address;
    * **read** (f+1): the entry is out of the program memory; each link's
      send slot addresses one read port of the store;
    * **exchange** (f+2): link ``j`` offers ``out_word[j]`` (its slot's word,
      or the accumulator); the word arriving on ``in_word[j]`` is written to
      the entry's receive slot (held bit set) and/or combined into the
      accumulator at the rising edge ending the cycle. The store's read
      ports are transparent for its write ports, so a word received in
      exchange cycle t can be sent in cycle t+1. With ``drain`` the
      accumulator restarts from the identity 0 before that cycle's arrivals
      are combined (the word sent this cycle is the old one).

    Parameters
    ----------
    degree : int
        Links (at least 1).
    width, depth, slots : int
        Word width, program entries, store words.
    op : {"sum", "xor"}
        The accumulator's operation: wrapping sum or xor (identity 0 for both).

    Attributes
    ----------
    fetch_en, fetch_addr : In
        Fetch the entry at ``fetch_addr`` this cycle.
    clear : In(1)
        Clear every held bit and the accumulator at this edge.
    prog_we, prog_addr, prog_data : In
        Program write (taken at the edge; latency 1 to a fetch of it).
    item_we, item_slot, item_data : In
        Store write with held bit set (taken at the edge, idle only).
    acc_we, acc_data : In
        Accumulator write (taken at the edge, idle only; ``clear`` wins).
    rd_slot : In(SW)
        Read-back slot while idle; ``rd_word`` and ``rd_held`` follow one cycle later.
    in_word : In(width).array(degree)
        The word arriving on each link (the neighbour's ``out_word``).
    out_word : Out(width).array(degree)
        The word sent on each link in the exchange stage, 0 when the link
        does not send.
    tx_valid, tx_acc, tx_slot : Out(...).array(degree)
        Exchange-stage trace of the sends (latency 0 within the cycle).
    rx_valid, rx_slot, rx_comb : Out(...).array(degree)
        Exchange-stage trace of the receives.
    acc : Out(width)
        The accumulator (registered).
    rd_word, rd_held : Out
        Read-back, latency 1.
    """

    def __init__(self, degree: int, width: int, depth: int, slots: int, op: str = "sum"):
        check_int("NetworkNode", "degree", degree, 1)
        check_int("NetworkNode", "width", width, 1)
        check_int("NetworkNode", "depth", depth, 1)
        check_int("NetworkNode", "slots", slots, 1)
        if op not in OPS:
            raise ValueError(f"NetworkNode op must be one of {', '.join(OPS)}, not {op!r}")
        self._deg, self._width, self._depth, self._slots, self._op = (degree, width, depth,
                                                                      slots, op)
        self.layout = NetworkLayout(degree, slots)
        aw = max(1, (depth - 1).bit_length())
        sw = self.layout.slot_bits
        super().__init__({
            "fetch_en": In(1), "fetch_addr": In(aw), "clear": In(1),
            "prog_we": In(1), "prog_addr": In(aw), "prog_data": In(self.layout.width),
            "item_we": In(1), "item_slot": In(sw), "item_data": In(width),
            "acc_we": In(1), "acc_data": In(width), "rd_slot": In(sw),
            "in_word": In(width).array(degree), "out_word": Out(width).array(degree),
            "tx_valid": Out(1).array(degree), "tx_acc": Out(1).array(degree),
            "tx_slot": Out(sw).array(degree),
            "rx_valid": Out(1).array(degree), "rx_slot": Out(sw).array(degree),
            "rx_comb": Out(1).array(degree),
            "acc": Out(width), "rd_word": Out(width), "rd_held": Out(1),
        })

    def _field(self, entry, name: str):
        lay = self.layout
        return entry[lay.offset(name):lay.offset(name) + dict(lay.fields)[name]]

    def elaborate(self, platform) -> Module:
        m = Module()
        deg, slots, width = self._deg, self._slots, self._width
        sw = self.layout.slot_bits

        prog = m.submodules.prog = Memory(shape=self.layout.width, depth=self._depth, init=[])
        pwr = prog.write_port()
        prd = prog.read_port()
        m.d.comb += [pwr.en.eq(self.prog_we), pwr.addr.eq(self.prog_addr),
                     pwr.data.eq(self.prog_data), prd.addr.eq(self.fetch_addr)]

        store = m.submodules.store = Memory(shape=width, depth=slots, init=[])
        rwr = [store.write_port() for _ in range(deg)]  # one per link (exchange stage)
        lwr = store.write_port()  # loads, idle only
        rds = [store.read_port(transparent_for=(*rwr, lwr)) for _ in range(deg)]

        r_valid = Signal()
        m.d.sync += r_valid.eq(self.fetch_en)
        entry = prd.data
        for j, rd in enumerate(rds):
            # link 0's read port doubles as the idle read-back port
            idle = self.rd_slot if j == 0 else 0
            m.d.comb += rd.addr.eq(Mux(r_valid, self._field(entry, f"txslot{j}"), idle))

        x_drain = Signal()
        m.d.sync += x_drain.eq(r_valid & self._field(entry, "drain"))
        combined = []
        for j in range(deg):
            x_tx, x_acc, x_rx, x_comb = Signal(), Signal(), Signal(), Signal()
            x_slot, x_rslot = Signal(sw), Signal(sw)
            m.d.sync += [
                x_tx.eq(r_valid & self._field(entry, f"tx{j}")),
                x_acc.eq(self._field(entry, f"txacc{j}")),
                x_slot.eq(self._field(entry, f"txslot{j}")),
                x_rx.eq(r_valid & self._field(entry, f"rx{j}")),
                x_rslot.eq(self._field(entry, f"rxslot{j}")),
                x_comb.eq(r_valid & self._field(entry, f"comb{j}")),
            ]
            m.d.comb += [
                # a link carries 0 unless its sender sends: a receive the sender did
                # not program gets 0, never a stale store word
                self.out_word[j].eq(Mux(x_tx, Mux(x_acc, self.acc, rds[j].data), 0)),
                self.tx_valid[j].eq(x_tx), self.tx_acc[j].eq(x_acc & x_tx),
                self.tx_slot[j].eq(x_slot),
                self.rx_valid[j].eq(x_rx), self.rx_slot[j].eq(x_rslot),
                self.rx_comb[j].eq(x_comb),
                rwr[j].en.eq(x_rx), rwr[j].addr.eq(x_rslot), rwr[j].data.eq(self.in_word[j]),
            ]
            combined.append(Mux(x_comb, self.in_word[j], 0))
        m.d.comb += [lwr.en.eq(self.item_we), lwr.addr.eq(self.item_slot),
                     lwr.data.eq(self.item_data), self.rd_word.eq(rds[0].data)]

        held = Signal(slots)
        acc = Signal(width)
        rd_held = Signal()
        m.d.comb += [self.acc.eq(acc), self.rd_held.eq(rd_held)]
        m.d.sync += rd_held.eq(select_by(m, self.rd_slot, [held[k] for k in range(slots)], 1))
        got = [Mux(p.en, one_hot(m, p.addr, slots, f"write{k}_onehot"), 0)
               for k, p in enumerate((*rwr, lwr))]
        nxt = Mux(x_drain, 0, acc)
        for term in combined:
            # the build-time operation: associative and commutative with identity 0
            nxt = (nxt + term)[:width] if self._op == "sum" else nxt ^ term
        acc_next = Signal(width)
        m.d.comb += acc_next.eq(nxt)
        held_set = held
        for g in got:
            held_set = held_set | g
        with m.If(self.clear):
            # the header clears; a load at the same edge still lands
            m.d.sync += [held.eq(got[-1]), acc.eq(0)]
        with m.Elif(self.acc_we):
            m.d.sync += [held.eq(held_set), acc.eq(self.acc_data)]
        with m.Else():
            m.d.sync += [held.eq(held_set), acc.eq(acc_next)]
        return m
