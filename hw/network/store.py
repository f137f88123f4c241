"""The two item stores a network node may be built with: banks, or one flip-flop store.

Both answer the same questions in the same cycles, so a node's behaviour at
its ports does not depend on the choice (``NetworkNode(store=...)``):

* in an exchange cycle, link ``j`` reads the word it sends without a clock,
  from an address registered at the end of the read stage, so a word that
  arrived in exchange cycle t can be sent in t+1;
* a word arriving on link ``j`` with ``x_rx[j]`` is written at the edge ending
  the cycle, a loaded item at the edge that takes it;
* the read-back (``rd_slot`` while idle) returns the slot's word and held
  bit one cycle later (the node registers what the store returns).

**Banks** (:func:`banked_store`): one bank per link and one for the loaded
items, one write port each, filled in arrival order; every bank maps to RAM
with asynchronous reads (LUT RAM on ECP5), and a loaded directory serves
the read-back. **Single** (:func:`single_store`): one store of ``slots``
words addressed by slot, written by every link and by the load, in
flip-flops: the choice for devices without asynchronous RAM (iCE40), where
banks would be flip-flops too and hold more words than the slots
(measured in docs/network-fabric.md). Its sends read by ``txslot``, its
receives write by ``rxslot``; the program's bank fields and the directory
are not used.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib.memory import Memory

from ...model.schedules.network_program import NetworkLayout
from ..ports import STORES
from ..schedule.node import one_hot, select_by

__all__ = ["STORES", "banked_store", "single_store"]


def banked_store(m: Module, lay: NetworkLayout, width: int, clear, x_tx, x_bank, x_addr,
                 x_rx, in_word, item_we, item_data, dir_we, dir_slot, dir_data, rd_slot):
    """Banks with write counters and the read-back's directory.

    Returns ``(words, rd_word, rd_held)``: per link the word its send reads,
    and the read-back's word and held bit for ``rd_slot`` (unregistered).
    """
    deg, ab, slots = lay.degree, lay.addr_bits, lay.slots
    bb = lay.bank_bits
    # the read-back's directory: written by the load only, read without a clock so
    # that the bank read behind it still answers one cycle after rd_slot
    dirm = m.submodules.dir = Memory(shape=lay.dir_width, depth=slots, init=[])
    dwr = dirm.write_port()
    drd = dirm.read_port(domain="comb")
    m.d.comb += [dwr.en.eq(dir_we), dwr.addr.eq(dir_slot), dwr.data.eq(dir_data),
                 drd.addr.eq(rd_slot)]
    d_valid, d_bank, d_addr = drd.data[0], drd.data[1:1 + bb], drd.data[1 + bb:]

    # write counters: bank b's next address (bank deg: the loaded items)
    count = [Signal(ab + 1, name=f"count{b}") for b in range(deg + 1)]
    wen = [*x_rx, item_we]
    wdata = [*in_word, item_data]
    banks = []
    for b in range(deg + 1):
        bank = m.submodules[f"bank{b}"] = Memory(shape=width, depth=lay.depth_of_bank, init=[])
        wr = bank.write_port()
        # the compiler keeps every count below the bank depth, so the top bit is 0 here
        m.d.comb += [wr.en.eq(wen[b]), wr.addr.eq(count[b][:ab]), wr.data.eq(wdata[b])]
        # one read port per link (link 0's doubles as the read-back's while idle)
        rds = [bank.read_port(domain="comb") for _ in range(deg)]
        for j, rd in enumerate(rds):
            m.d.comb += rd.addr.eq(Mux(x_tx[j], x_addr[j], d_addr[:ab]) if j == 0
                                   else x_addr[j])
        banks.append(rds)
    words = [select_by(m, x_bank[j], [banks[b][j].data for b in range(deg + 1)], width,
                       f"bank_word{j}") for j in range(deg)]
    rd_word = select_by(m, d_bank, [banks[b][0].data for b in range(deg + 1)], width,
                        "rd_bank_word")
    rd_held = d_valid & (d_addr < select_by(m, d_bank, count, len(count[0]), "rd_count"))
    with m.If(clear):
        # the header empties the banks; a load at the same edge still lands
        m.d.sync += [c.eq(w) for c, w in zip(count, wen)]
    with m.Else():
        m.d.sync += [c.eq(c + w) for c, w in zip(count, wen)]
    return words, rd_word, rd_held


def single_store(m: Module, lay: NetworkLayout, width: int, clear, x_tx, x_slot, x_rx,
                 x_rslot, in_word, item_we, item_slot, item_data, rd_slot):
    """One store of ``slots`` words in flip-flops, a held bit per slot.

    Returns ``(words, rd_word, rd_held)`` as :func:`banked_store`. Several
    writes of one slot at one edge carry the same word in a valid program;
    the last link in link order wins otherwise (a link's arrival wins over a
    load, which the fabric takes only while idle).
    """
    deg, slots = lay.degree, lay.slots
    # no reset: a slot's word counts only while its held bit (reset by clear) is set
    store = [Signal(width, name=f"slot{k}", reset_less=True) for k in range(slots)]
    held = Signal(slots)
    # the load writes items while idle, links write while running: sharing link 0's
    # write path saves a multiplexer input per stored bit (a LUT4 per bit on iCE40)
    load0 = Signal(name="load0")
    m.d.comb += load0.eq(item_we & ~x_rx[0])
    sources = [(x_rx[0] | item_we, Mux(load0, item_slot, x_rslot[0]),
                Mux(load0, item_data, in_word[0]))]
    sources += [(x_rx[j], x_rslot[j], in_word[j]) for j in range(1, deg)]
    # one decoder per source, shared by the slot's width bits: the write enables
    hits = [Mux(en, one_hot(m, addr, slots, f"write{k}_slot"), 0)
            for k, (en, addr, _) in enumerate(sources)]
    for k in range(slots):
        for hit, (_, _, data) in zip(hits, sources):
            with m.If(hit[k]):
                m.d.sync += store[k].eq(data)
    written = hits[0]
    for hit in hits[1:]:
        written = written | hit
    with m.If(clear):
        # the header empties the store; a load at the same edge still lands
        m.d.sync += held.eq(written)
    with m.Else():
        m.d.sync += held.eq(held | written)
    # link 0's read doubles as the read-back's while idle (no send then)
    addr0 = Mux(x_tx[0], x_slot[0], rd_slot)
    words = [select_by(m, addr0 if j == 0 else x_slot[j], store, width, f"slot_word{j}")
             for j in range(deg)]
    rd_held = select_by(m, rd_slot, [held[k] for k in range(slots)], 1, "rd_held_bit")
    return words, words[0], rd_held
