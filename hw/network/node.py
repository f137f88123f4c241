"""One node of the network fabric: item store (banked or single), accumulator, program."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ...model.schedules.network_program import OPS, NetworkLayout
from ..params import check_int
from .store import STORES, banked_store, single_store

__all__ = ["NetworkNode"]


class NetworkNode(wiring.Component):
    """A node with ``degree`` links: item store, accumulator, program.

    The same two-stage pipeline behind the fabric's program fetch as the
    schedule fabric's node (all nodes in lockstep):

    * **fetch** (cycle f): ``fetch_en`` high, ``fetch_addr`` = entry address;
    * **read** (f+1): the entry is out of the program memory and registered;
    * **exchange** (f+2): link ``j`` offers ``out_word[j]`` (the word at
      address ``txaddr`` of bank ``txbank``, or the accumulator); the word
      arriving on ``in_word[j]`` is written to link ``j``'s bank and/or
      combined into the accumulator at the rising edge ending the cycle.
      Banks are read asynchronously from registered addresses, so a word
      received in exchange cycle t can be sent in cycle t+1. With ``drain``
      the accumulator restarts from the identity 0 before that cycle's
      arrivals are combined (the word sent this cycle is the old one).

    **Store** (``store``, :mod:`.store`; the ports and latencies are the
    same for both). ``"banks"``: one bank per link and one for the loaded
    items (bank ``degree``), ``bank_depth`` words each, one write port each,
    so that every bank maps to RAM (LUT RAM on ECP5, one copy per read
    port); bank ``b`` is filled in order: its k-th write since ``clear`` goes
    to address k (a counter per bank; the compiler, :func:`~pipegossip.model.
    schedules.network_banks.assign_banks`, places words the same way). The
    **directory** (slot -> valid, bank, address; loaded while idle) serves
    the read-back by slot: a slot is held when its directory entry is valid
    and its bank has had more writes than its address. ``"single"``: one
    store of ``slots`` words in flip-flops, read by ``txslot`` and written by
    ``rxslot`` and by the load at ``item_slot``, a held bit per slot; the
    program's bank fields and the directory writes are ignored (for devices
    without asynchronous RAM, where banks cost more than they save).

    Parameters
    ----------
    degree : int
        Links (at least 1).
    width, depth, slots : int
        Word width, program entries, store slots (read-back addresses).
    op : {"sum", "xor"}
        The accumulator's operation: wrapping sum or xor (identity 0 for both).
    bank_depth : int, optional
        Words per bank (default ``slots``; ``"banks"`` only).
    store : {"banks", "single"}
        The item store (:data:`~pipegossip.hw.ports.STORES`).

    Attributes
    ----------
    fetch_en, fetch_addr : In
        Fetch the entry at ``fetch_addr`` this cycle.
    clear : In(1)
        Empty every bank (write counters to 0) and clear the accumulator at this edge.
    prog_we, prog_addr, prog_data : In
        Program write (taken at the edge; latency 1 to a fetch of it).
    item_we, item_slot, item_data : In
        A loaded item (taken at the edge, idle only): appended to the own bank
        (``"banks"``), written to slot ``item_slot`` (``"single"``).
    dir_we, dir_slot, dir_data : In
        Directory write of slot ``dir_slot`` (taken at the edge, idle only).
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

    def __init__(self, degree: int, width: int, depth: int, slots: int, op: str = "sum",
                 bank_depth: int | None = None, store: str = "banks"):
        check_int("NetworkNode", "degree", degree, 1)
        check_int("NetworkNode", "width", width, 1)
        check_int("NetworkNode", "depth", depth, 1)
        check_int("NetworkNode", "slots", slots, 1)
        if bank_depth is not None:
            check_int("NetworkNode", "bank_depth", bank_depth, 1)
            if store != "banks":
                raise ValueError(f"NetworkNode bank_depth applies to the banked store only, "
                                 f"not store={store!r}")
        if op not in OPS:
            raise ValueError(f"NetworkNode op must be one of {', '.join(OPS)}, not {op!r}")
        if store not in STORES:
            raise ValueError(f"NetworkNode store must be one of {', '.join(STORES)}, "
                             f"not {store!r}")
        self._store = store
        self._deg, self._width, self._depth, self._slots, self._op = (degree, width, depth,
                                                                      slots, op)
        self.layout = NetworkLayout(degree, slots, bank_depth)
        aw = max(1, (depth - 1).bit_length())
        sw = self.layout.slot_bits
        super().__init__({
            "fetch_en": In(1), "fetch_addr": In(aw), "clear": In(1),
            "prog_we": In(1), "prog_addr": In(aw), "prog_data": In(self.layout.width),
            "item_we": In(1), "item_slot": In(sw), "item_data": In(width),
            "dir_we": In(1), "dir_slot": In(sw), "dir_data": In(self.layout.dir_width),
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
        lay, deg, width = self.layout, self._deg, self._width
        sw, bb, ab = lay.slot_bits, lay.bank_bits, lay.addr_bits

        prog = m.submodules.prog = Memory(shape=lay.width, depth=self._depth, init=[])
        pwr = prog.write_port()
        prd = prog.read_port()
        m.d.comb += [pwr.en.eq(self.prog_we), pwr.addr.eq(self.prog_addr),
                     pwr.data.eq(self.prog_data), prd.addr.eq(self.fetch_addr)]

        r_valid = Signal()
        m.d.sync += r_valid.eq(self.fetch_en)
        entry = prd.data

        x_drain = Signal()
        m.d.sync += x_drain.eq(r_valid & self._field(entry, "drain"))
        x_tx = [Signal(name=f"x_tx{j}") for j in range(deg)]
        x_acc = [Signal(name=f"x_acc{j}") for j in range(deg)]
        x_slot = [Signal(sw, name=f"x_slot{j}") for j in range(deg)]
        x_rx = [Signal(name=f"x_rx{j}") for j in range(deg)]
        x_rslot = [Signal(sw, name=f"x_rslot{j}") for j in range(deg)]
        x_comb = [Signal(name=f"x_comb{j}") for j in range(deg)]
        for j in range(deg):
            m.d.sync += [
                x_tx[j].eq(r_valid & self._field(entry, f"tx{j}")),
                x_acc[j].eq(self._field(entry, f"txacc{j}")),
                x_slot[j].eq(self._field(entry, f"txslot{j}")),
                x_rx[j].eq(r_valid & self._field(entry, f"rx{j}")),
                x_rslot[j].eq(self._field(entry, f"rxslot{j}")),
                x_comb[j].eq(r_valid & self._field(entry, f"comb{j}")),
            ]
        if self._store == "banks":
            x_bank = [Signal(bb, name=f"x_bank{j}") for j in range(deg)]
            x_addr = [Signal(ab, name=f"x_addr{j}") for j in range(deg)]
            for j in range(deg):
                m.d.sync += [x_bank[j].eq(self._field(entry, f"txbank{j}")),
                             x_addr[j].eq(self._field(entry, f"txaddr{j}"))]
            words, rd_next, held_next = banked_store(
                m, lay, width, self.clear, x_tx, x_bank, x_addr, x_rx, list(self.in_word),
                self.item_we, self.item_data, self.dir_we, self.dir_slot, self.dir_data,
                self.rd_slot)
        else:
            words, rd_next, held_next = single_store(
                m, lay, width, self.clear, x_tx, x_slot, x_rx, x_rslot, list(self.in_word),
                self.item_we, self.item_slot, self.item_data, self.rd_slot)
        combined = []
        for j in range(deg):
            m.d.comb += [
                # a link carries 0 unless its sender sends: a receive the sender did
                # not program gets 0, never a stale store word
                self.out_word[j].eq(Mux(x_tx[j], Mux(x_acc[j], self.acc, words[j]), 0)),
                self.tx_valid[j].eq(x_tx[j]), self.tx_acc[j].eq(x_acc[j] & x_tx[j]),
                self.tx_slot[j].eq(x_slot[j]),
                self.rx_valid[j].eq(x_rx[j]), self.rx_slot[j].eq(x_rslot[j]),
                self.rx_comb[j].eq(x_comb[j]),
            ]
            combined.append(Mux(x_comb[j], self.in_word[j], 0))

        rd_word, rd_held = Signal(width), Signal()
        m.d.sync += [rd_word.eq(rd_next), rd_held.eq(held_next)]
        acc = Signal(width)
        m.d.comb += [self.acc.eq(acc), self.rd_word.eq(rd_word), self.rd_held.eq(rd_held)]
        nxt = Mux(x_drain, 0, acc)
        for term in combined:
            # the build-time operation: associative and commutative with identity 0
            nxt = (nxt + term)[:width] if self._op == "sum" else nxt ^ term
        acc_next = Signal(width)
        m.d.comb += acc_next.eq(nxt)
        with m.If(self.clear):
            m.d.sync += acc.eq(0)
        with m.Elif(self.acc_we):
            m.d.sync += acc.eq(self.acc_data)
        with m.Else():
            m.d.sync += acc.eq(acc_next)
        return m
