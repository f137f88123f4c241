"""One node of the schedule fabric: item store, held bits, accumulator, program memory."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ...model.schedules.program import EntryLayout
from ..params import check_int

__all__ = ["ScheduleNode", "one_hot", "select_by"]


class ScheduleNode(wiring.Component):
    """A node: ``slots`` item words, a held bit each, an accumulator and ``depth`` program entries.

    The node runs a two-stage pipeline behind its program fetch (all nodes of
    a fabric in lockstep, addresses from the fabric):

    * **fetch** (cycle f): ``fetch_en`` high, ``fetch_addr`` = entry address;
    * **read** (f+1): the entry is out of the program memory; its send slot
      addresses the store;
    * **exchange** (f+2): the slot's word (or, with ``send_acc``, the
      accumulator) is on ``out_word``; ``select`` picks the entry's source at
      the crossbar; the word on ``in_word`` is written to the entry's receive
      slot (held bit set) and/or added into the accumulator when the entry
      says combine, at the rising edge ending the cycle. The store behaves
      as a memory whose read (addressed in the read stage) is transparent
      for its writes, so a word received in exchange cycle t can be sent in
      exchange cycle t+1.

    The store has two write ports: the exchange stage's receive, and the item
    write (``item_we``), which is taken at every rising edge, running or not.
    An item write in clock cycle k is seen by a read addressed in cycle k (a
    send exchanged in cycle k+1) and later. When the item write and the
    receive hit the same slot at the same edge, the **receive wins** and the
    item write is dropped (a valid streaming timetable never does this; the
    compiler refuses one that would and the judge flags it).

    Inside (for timing; the observable behaviour is the one above): the item
    word waits in a register for one edge before the store takes it (a read
    meanwhile is served from that register; a receive at that next edge
    still wins, being the later write), so the item port ends at flip-flops
    rather than at every store word's enable; and the slot a send needs is
    read in the read stage into a register, with what the same edge writes
    forwarded into it, so the exchange stage's path (word -> crossbar ->
    receiving node's store and accumulator) starts at a flip-flop.

    Parameters
    ----------
    n : int
        Nodes of the fabric (sizes ``select`` and the source field).
    width : int
        Word width.
    depth : int
        Program entries.
    slots : int
        Store words.

    Attributes
    ----------
    fetch_en : In(1)
        Fetch the entry at ``fetch_addr`` this cycle.
    fetch_addr : In(ceil(log2 depth))
    clear : In(1)
        Clear every held bit and the accumulator at this edge.
    prog_we, prog_addr, prog_data : In
        Program write (taken at the edge; latency 1 to a fetch of it).
    item_we, item_slot, item_data : In
        Store write with held bit set, taken at the edge, idle or running
        (latency 1 to a read of it; dropped when the exchange stage receives
        into the same slot at the same edge).
    acc_we, acc_data : In
        Accumulator write (the initial token of a forwarding program), taken
        at the edge; ``clear`` wins. Driven by the fabric while idle only.
    rd_slot : In(SW)
        Read-back slot while idle; ``rd_word`` and ``rd_held`` follow one cycle later.
    in_word : In(width)
        The crossbar's output for this node (exchange stage).
    select : Out(n)
        One-hot source select for the crossbar, 0 when not receiving (registered).
    out_word : Out(width)
        The word the node offers (exchange stage; the read-back word when idle).
    rd_word, rd_held : Out
        Read-back, latency 1.
    acc : Out(width)
        The accumulator (registered).
    send_valid, send_slot, send_acc, recv_valid, recv_source, recv_slot, recv_comb : Out
        The exchange stage's trace (latency 0 within the exchange cycle):
        ``send_acc`` the word sent is the accumulator, ``recv_valid`` the
        input is stored, ``recv_comb`` it is combined (``recv_source`` is
        the source when either is set).
    """

    def __init__(self, n: int, width: int, depth: int, slots: int):
        check_int("ScheduleNode", "n", n, 2)
        check_int("ScheduleNode", "width", width, 1)
        check_int("ScheduleNode", "depth", depth, 1)
        check_int("ScheduleNode", "slots", slots, 1)
        self._n, self._width, self._depth, self._slots = n, width, depth, slots
        self.layout = EntryLayout(n, slots)
        aw = max(1, (depth - 1).bit_length())
        sw, pw = self.layout.slot_bits, self.layout.node_bits
        super().__init__({
            "fetch_en": In(1), "fetch_addr": In(aw), "clear": In(1),
            "prog_we": In(1), "prog_addr": In(aw), "prog_data": In(self.layout.width),
            "item_we": In(1), "item_slot": In(sw), "item_data": In(width),
            "acc_we": In(1), "acc_data": In(width),
            "rd_slot": In(sw), "in_word": In(width),
            "select": Out(n), "out_word": Out(width),
            "rd_word": Out(width), "rd_held": Out(1), "acc": Out(width),
            "send_valid": Out(1), "send_slot": Out(sw), "send_acc": Out(1),
            "recv_valid": Out(1), "recv_source": Out(pw), "recv_slot": Out(sw),
            "recv_comb": Out(1),
        })

    def _field(self, entry: Signal, name: str):
        lay = self.layout
        width = dict(lay.fields)[name]
        return entry[lay.offset(name):lay.offset(name) + width]

    def elaborate(self, platform) -> Module:
        m = Module()
        n, slots = self._n, self._slots
        lay = self.layout
        sw, pw = lay.slot_bits, lay.node_bits

        prog = m.submodules.prog = Memory(shape=lay.width, depth=self._depth, init=[])
        pwr = prog.write_port()
        prd = prog.read_port()
        m.d.comb += [pwr.en.eq(self.prog_we), pwr.addr.eq(self.prog_addr),
                     pwr.data.eq(self.prog_data), prd.addr.eq(self.fetch_addr)]

        # The store is flip-flops (two write ports and a transparent read do not
        # map to block RAM), written out here so that the item write can be
        # registered: see the receive-wins rule below. Reset-less, as a memory
        # is: the store survives a reset, and so does a write taken at its edge.
        words = [Signal(self._width, name=f"store{k}", reset_less=True) for k in range(slots)]

        # read stage
        r_valid = Signal()
        m.d.sync += r_valid.eq(self.fetch_en)
        entry = prd.data
        r_addr = Signal(sw)  # the store slot read in this cycle (read stage, or read-back)
        m.d.comb += r_addr.eq(Mux(r_valid, self._field(entry, "send_slot"), self.rd_slot))

        # exchange stage registers
        x_send = Signal()
        x_sacc = Signal()
        x_recv = Signal()
        x_comb = Signal()
        x_slot = Signal(sw)
        x_rslot = Signal(sw)
        x_src = Signal(pw)
        onehot = Signal(n)
        x_recv_oh = Signal(slots)  # the receive slot, one-hot: the store's enables are flip-flops
        recv = r_valid & self._field(entry, "recv")
        comb = r_valid & self._field(entry, "combine")
        source = self._field(entry, "source")
        m.d.sync += [
            x_send.eq(r_valid & self._field(entry, "send")),
            x_sacc.eq(r_valid & self._field(entry, "send") & self._field(entry, "send_acc")),
            x_recv.eq(recv),
            # a combined accumulator word is selected but not stored
            x_comb.eq(comb),
            x_slot.eq(self._field(entry, "send_slot")),
            x_rslot.eq(self._field(entry, "recv_slot")),
            x_recv_oh.eq(Mux(recv, one_hot(m, self._field(entry, "recv_slot"), slots,
                                           "recv_onehot"), 0)),
            x_src.eq(source),
            # decoded here, a cycle early, so the crossbar sees flip-flops
            onehot.eq(Mux(recv | comb, one_hot(m, source, n), 0)),
        ]
        # The item write is registered (``pend``) and written into the store
        # one edge later; a read addressed in the cycle it was taken reads it
        # from the register. Contract unchanged (seen by a read addressed in
        # the same cycle), but the item port now ends at flip-flops: it used
        # to reach every store word's enable through the receive-wins compare
        # (the fabric's critical path on iCE40, docs/fpga.md). Same slot at
        # the same edge: the receive wins, so that item write is not pended.
        item_oh = Mux(self.item_we, one_hot(m, self.item_slot, slots, "item_onehot"), 0)
        landed = Signal(slots)  # the item writes of this edge that the receive does not beat
        m.d.comb += landed.eq(item_oh & ~x_recv_oh)
        pend = Signal(slots, reset_less=True)
        pend_data = Signal(self._width, reset_less=True)
        m.d.sync += [pend.eq(landed), pend_data.eq(self.item_data)]
        for k, word in enumerate(words):
            # a receive wins over a pending item write: it came later
            with m.If(x_recv_oh[k]):
                m.d.sync += word.eq(self.in_word)
            with m.Elif(pend[k]):
                m.d.sync += word.eq(pend_data)
        # The store is read in the read stage and the word registered (``rdata``),
        # so the exchange stage starts at a flip-flop: store word -> crossbar
        # -> the receiving node was the fabric's longest path once the item
        # port was registered. What the edge ending the read stage writes is
        # forwarded into the register instead, latest first: the receive into
        # the slot read (the word on ``in_word``), an item write into it, the
        # pending item write, else the store.
        r_recv = select_by(m, r_addr, [x_recv_oh[k] for k in range(slots)], 1, "r_recv")
        r_item = Signal()
        m.d.comb += r_item.eq(self.item_we & (self.item_slot == r_addr))
        r_pend = select_by(m, r_addr, [pend[k] for k in range(slots)], 1, "r_pend")
        stored = select_by(m, r_addr, words, self._width, "stored")
        rdata = Signal(self._width, reset_less=True)
        with m.If(r_recv):
            m.d.sync += rdata.eq(self.in_word)
        with m.Elif(r_item):
            m.d.sync += rdata.eq(self.item_data)
        with m.Elif(r_pend):
            m.d.sync += rdata.eq(pend_data)
        with m.Else():
            m.d.sync += rdata.eq(stored)

        acc = Signal(self._width)
        m.d.comb += [
            self.select.eq(onehot),
            self.out_word.eq(Mux(x_sacc, acc, rdata)),
            self.rd_word.eq(rdata),
            self.send_valid.eq(x_send),
            self.send_slot.eq(x_slot),
            self.send_acc.eq(x_sacc),
            self.recv_valid.eq(x_recv),
            self.recv_source.eq(x_src),
            self.recv_slot.eq(x_rslot),
            self.recv_comb.eq(x_comb),
        ]
        held = Signal(slots)
        rd_held = Signal()
        m.d.comb += [self.acc.eq(acc), self.rd_held.eq(rd_held)]
        m.d.sync += rd_held.eq(select_by(m, self.rd_slot, [held[k] for k in range(slots)], 1))
        with m.If(self.clear):
            # the header clears; an item write at the same edge still lands
            m.d.sync += [held.eq(landed), acc.eq(0)]
        with m.Elif(self.acc_we):
            m.d.sync += [held.eq(held | x_recv_oh | item_oh), acc.eq(self.acc_data)]
        with m.Else():
            m.d.sync += held.eq(held | x_recv_oh | item_oh)
            with m.If(x_comb):
                # wrapping add: the documented associative combine operator
                m.d.sync += acc.eq(acc + self.in_word)
        return m


def one_hot(m: Module, value: Value, count: int, name: str | None = None) -> Signal:
    """One-hot of ``value`` over ``count`` bits, as a case statement.

    ``1 << value`` or ``value == k`` would do too, but Amaranth emits their
    constants at minimal width, which Verilator's WIDTH lint flags. ``name``
    names the signal (default ``out``).
    """
    out = Signal(count, name=name)
    with m.Switch(value):
        for k in range(count):
            with m.Case(k):
                m.d.comb += out.eq(1 << k)
        with m.Default():  # a complete case: Verilator's CASEINCOMPLETE lint
            m.d.comb += out.eq(0)
    return out


def select_by(m: Module, index: Value, values, width: int, name: str = "sel") -> Signal:
    """``values[index]`` (0 when out of range) as a complete case statement.

    Amaranth's ``Array`` indexing emits a case without a default for a count
    that is not a power of two, which Verilator's CASEINCOMPLETE lint flags.
    """
    out = Signal(width, name=name)
    with m.Switch(index):
        for k, v in enumerate(values):
            with m.Case(k):
                m.d.comb += out.eq(v)
        with m.Default():
            m.d.comb += out.eq(0)
    return out
