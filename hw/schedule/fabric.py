"""The schedule fabric: N program-driven nodes on one crossbar, loaded at run time."""

from __future__ import annotations

import enum
from typing import NamedTuple

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..fsm.crossbar import Crossbar
from ..params import check_int
from ..ports import OUT, SCHEDULE_PORTS, Port, ScheduleSize
from .node import ScheduleNode, one_hot, select_by

__all__ = ["ScheduleFabric", "LoadKind", "LATENCY", "schedule_signature",
           "schedule_fabric_ports", "schedule_size", "table_signature", "program_sequencer", "drive_read_back",
           "Sequencer"]

#: Clock cycles between the start cycle (cycle 0) and program cycle 1's exchange,
#: less one: program cycle t is shown in clock cycle ``t + LATENCY``.
LATENCY = 1


class LoadKind(enum.IntEnum):
    """``load.kind`` values."""

    #: ``data`` is the entry at program address ``addr`` of node ``node``.
    PROGRAM = 0
    #: ``data`` is the word of store slot ``addr`` of node ``node``; its held bit is set.
    ITEM = 1
    #: ``data`` is the program length; every held bit and accumulator is cleared.
    HEADER = 2
    #: ``data`` is node ``node``'s initial accumulator (a program that forwards accumulators).
    ACC = 3


def schedule_size(n: int, width: int = 8, depth: int = 64, slots: int | None = None
                  ) -> ScheduleSize:
    """Check the parameters and return the size (``slots`` defaults to ``n``)."""
    check_int("ScheduleFabric", "n", n, 2)
    check_int("ScheduleFabric", "width", width, 1)
    check_int("ScheduleFabric", "depth", depth, 1)
    slots = n if slots is None else slots
    check_int("ScheduleFabric", "slots", slots, 1)
    return ScheduleSize(n, width, depth, slots)


def table_signature(table, count) -> wiring.Signature:
    """A fabric signature built from a port table (``SCHEDULE_PORTS``, ``NETWORK_PORTS``).

    ``count(spec)`` is the array length of a per-node (or per-port) group,
    ``spec.width(size)`` its width (the caller binds the size).
    """
    members: dict[str, dict] = {}
    flat: dict[str, wiring.Member] = {}
    for spec, width in table:
        flow = Out if spec.direction == OUT else In
        if spec.field is None:
            flat[spec.group] = flow(width).array(count(spec)) if spec.per_processor else \
                flow(width)
        else:
            members.setdefault(spec.group, {})[spec.field] = (spec, flow(width))
    for group, fields in members.items():
        first = next(iter(fields.values()))[0]
        # Group members keep their own flows: an Out group of mixed members
        # would flip them, so inner flows are written as seen from outside.
        sig = wiring.Signature({f: m for f, (_, m) in fields.items()})
        flat[group] = Out(sig).array(count(first)) if first.per_processor else Out(sig)
    order = []
    for spec, _ in table:
        if spec.group not in order:
            order.append(spec.group)
    return wiring.Signature({g: flat[g] for g in order})


def schedule_signature(size: ScheduleSize) -> wiring.Signature:
    """The signature of :class:`ScheduleFabric`, built from :data:`~..ports.SCHEDULE_PORTS`."""
    return table_signature([(spec, spec.width(size)) for spec in SCHEDULE_PORTS],
                           lambda spec: size.n)


def schedule_fabric_ports(size: ScheduleSize) -> list[Port]:
    """The fabric's top-level ports, read off its signature (equal to ``schedule_ports``)."""
    sig = schedule_signature(size)
    return [Port("__".join(map(str, path)), "in" if member.flow == In else "out", len(value))
            for path, member, value in sig.flatten(sig.create())]


class ScheduleFabric(wiring.Component):
    """A crossbar fabric that runs any loaded schedule program.

    Parameters
    ----------
    n : int
        Nodes, at least 2.
    width : int
        Word width.
    depth : int
        Program entries per node: the longest program it runs.
    slots : int, optional
        Store words per node (default ``n``: one item per node).

    Attributes
    ----------
    start : In(1)
        Sampled at a rising edge while not busy: runs the loaded program.
        Cycle 0 is the start cycle; program cycle t is exchanged in clock
        cycle ``t + LATENCY`` (= t + 1).
    busy : Out(1)
        High from cycle 1 to the last exchange (cycle ``length + 1``).
    done : Out(1)
        High after a run's last exchange until the next start is taken.
    cycle : Out(ceil(log2(depth+1)))
        The program cycle t being exchanged this clock cycle, 0 otherwise.
    length : Out(ceil(log2(depth+1)))
        The loaded program's length (the last header write, at most depth).
    load : Out(Signature) of In members
        A simple write port, taken at the rising edge when ``valid`` is high:
        ``kind`` (a :class:`LoadKind`), ``node``, ``addr``, ``data``. HEADER
        and PROGRAM writes (and ACC writes, a node's initial accumulator) are
        taken only while not busy (ignored while busy); ITEM writes are
        taken idle or running (streaming: the next gossip's words while the
        previous one drains). Write the HEADER
        first (it clears every held bit and accumulator), then ITEM words
        and PROGRAM entries in any order; one write per cycle, no handshake.
        An ITEM write in clock cycle k is seen by sends exchanged in cycle
        k+1 and later; one that hits the slot its node receives into at the
        same edge is dropped (the receive wins).
    read : Out(Signature)
        Read-back while idle: ``node`` and ``slot`` in; ``word``, ``held``
        (the slot of that node) and ``acc`` (that node's accumulator) out,
        latency 1 cycle.
    send : Out(Signature).array(n)
        Per node, in exchange cycles: ``valid`` (it sends), ``slot``, ``word``,
        ``acc`` (the word is its accumulator, not the slot's).
    recv : Out(Signature).array(n)
        Per node, in exchange cycles: ``valid`` (it stores a word), ``source``,
        ``slot`` (where the word is stored), ``word``, ``comb`` (the word is
        added into its accumulator; ``source`` is valid when either is set).
    item : Out(Signature).array(n) of In members
        Per node, a store write of its own: ``valid``, ``slot``, ``word``,
        taken at the rising edge, idle or running, with the timing and the
        receive-wins rule of a load-port ITEM write. It wins over a load-port
        ITEM write to the same node at the same edge (that one is dropped).
        Lets every node take one new word per cycle while the fabric runs.

    Notes
    -----
    ``sync`` domain, synchronous active-high reset (program and store
    contents survive a reset, held bits and the length do not). Trace
    outputs come from registers and memories of the exchange stage; the
    received word passes the crossbar (an AND-OR of n words) combinationally.
    """

    def __init__(self, n: int, width: int = 8, depth: int = 64, slots: int | None = None):
        size = schedule_size(n, width, depth, slots)
        self._size = size
        super().__init__(schedule_signature(size))

    @property
    def size(self) -> ScheduleSize:
        return self._size

    def elaborate(self, platform) -> Module:
        m = Module()
        z = self._size
        n = z.n
        nodes = [ScheduleNode(n, z.width, z.depth, z.slots) for _ in range(n)]
        for i, node in enumerate(nodes):
            m.submodules[f"node{i}"] = node
        xbar = m.submodules.crossbar = Crossbar(n, z.width)

        seq = program_sequencer(m, self, z.count_bits, z.addr_bits, n)
        fetch_en, addr, take, kind, node_sel, header = (seq.fetch_en, seq.addr, seq.take,
                                                        seq.kind, seq.node_sel, seq.header)
        item_any = self.load.valid & kind[LoadKind.ITEM]  # ITEM writes: idle or running
        ld = self.load

        drive_read_back(m, self.read, nodes, z.node_bits, z.width)
        for i, node in enumerate(nodes):
            mine = take & node_sel[i]
            m.d.comb += [
                node.fetch_en.eq(fetch_en),
                node.fetch_addr.eq(addr),
                node.clear.eq(header),
                node.prog_we.eq(mine & kind[LoadKind.PROGRAM]),
                node.prog_addr.eq(ld.addr),
                node.prog_data.eq(ld.data),
                node.item_we.eq(self.item[i].valid | (item_any & node_sel[i])),
                node.item_slot.eq(Mux(self.item[i].valid, self.item[i].slot, ld.addr)),
                node.item_data.eq(Mux(self.item[i].valid, self.item[i].word, ld.data)),
                node.acc_we.eq(mine & kind[LoadKind.ACC]),
                node.acc_data.eq(ld.data[:z.width]),
                node.rd_slot.eq(self.read.slot),
                xbar.inputs[i].eq(node.out_word),
                xbar.select[i].eq(node.select),
                node.in_word.eq(xbar.outputs[i]),
                self.send[i].valid.eq(node.send_valid),
                self.send[i].slot.eq(node.send_slot),
                self.send[i].word.eq(node.out_word),
                self.send[i].acc.eq(node.send_acc),
                self.recv[i].valid.eq(node.recv_valid),
                self.recv[i].source.eq(node.recv_source),
                self.recv[i].slot.eq(node.recv_slot),
                self.recv[i].word.eq(xbar.outputs[i]),
                self.recv[i].comb.eq(node.recv_comb),
            ]
        return m


def drive_read_back(m: Module, read, nodes, node_bits: int, width: int) -> None:
    """The read port: ``read.node`` registered, then that node's word, held bit, accumulator.

    Every node shows ``rd_word``/``rd_held`` for ``read.slot`` one cycle after
    it, so the answer comes one cycle after ``node`` and ``slot``.
    """
    rd_node = Signal(node_bits)
    m.d.sync += rd_node.eq(read.node)
    m.d.comb += [
        read.word.eq(select_by(m, rd_node, [x.rd_word for x in nodes], width, "rd_word")),
        read.held.eq(select_by(m, rd_node, [x.rd_held for x in nodes], 1, "rd_held")),
        read.acc.eq(select_by(m, rd_node, [x.acc for x in nodes], width, "rd_acc")),
    ]



class Sequencer(NamedTuple):
    """What :func:`program_sequencer` gives the fabric around it."""

    fetch_en: Signal  #: every node fetches the entry at ``addr`` this cycle
    addr: Signal  #: the program address fetched
    take: Signal  #: a load write is taken (valid and not busy)
    kind: Signal  #: one-hot of ``load.kind`` (4 bits)
    node_sel: Signal  #: one-hot of ``load.node``
    header: Signal  #: a HEADER write is taken (clear held bits and accumulators)


def program_sequencer(m: Module, fabric, count_bits: int, addr_bits: int, n: int) -> Sequencer:
    """The run control both program-driven fabrics share.

    Drives ``fabric``'s ``busy``, ``done``, ``cycle`` and ``length`` outputs
    from its ``start`` input and its load port's HEADER writes: a start while
    idle fetches entries ``0 .. length-1``, one per cycle, in every node at
    once; an entry reaches the exchange stage two cycles after its fetch
    (program cycle t is exchanged in clock cycle ``t + LATENCY``).
    """
    length = Signal(count_bits)
    m.d.comb += fabric.length.eq(length)
    f_on = Signal()
    fp = Signal(count_bits)
    r_valid = Signal()
    x_valid = Signal()
    r_addr = Signal(addr_bits)
    x_addr = Signal(addr_bits)
    ran = Signal()
    busy = Signal()
    m.d.comb += [busy.eq(f_on | r_valid | x_valid), fabric.busy.eq(busy),
                 fabric.done.eq(ran & ~busy)]
    begin = fabric.start & ~busy
    fetch_en = Signal()
    addr = Signal(addr_bits)
    m.d.comb += [fetch_en.eq((begin & (length != 0)) | f_on),
                 addr.eq(Mux(begin, 0, fp))]
    with m.If(fetch_en):
        m.d.sync += [fp.eq(addr + 1), f_on.eq(addr + 1 < length)]
    with m.If(begin):
        m.d.sync += ran.eq(1)
    m.d.sync += [r_valid.eq(fetch_en), r_addr.eq(addr), x_valid.eq(r_valid),
                 x_addr.eq(r_addr)]
    m.d.comb += fabric.cycle.eq(Mux(x_valid, x_addr + 1, 0))

    ld = fabric.load
    take = ld.valid & ~busy
    kind = one_hot(m, ld.kind, 4, name="load_node_onehot")
    node_sel = one_hot(m, ld.node, n, name="load_node_onehot")
    header = take & kind[LoadKind.HEADER]
    with m.If(header):
        # the driver keeps length <= depth (the compilers refuse longer programs)
        m.d.sync += length.eq(ld.data[:count_bits])
    return Sequencer(fetch_en, addr, take, kind, node_sel, header)
