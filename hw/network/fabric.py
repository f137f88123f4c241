"""The network fabric: one program-driven node per vertex, one full-duplex link per edge."""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from ...model.schedules.network_program import OPS, NetworkLayout, links_of
from ...model.schedules.topologies import Topology
from ..params import check_int
from ..ports import NETWORK_PORTS, NODES, STORES, NetworkSize, Port
from ..schedule.fabric import (LATENCY, LoadKind, drive_read_back, program_sequencer,
                               table_signature)
from .instances import NodeInstance, node_module_name
from .node import NetworkNode
from .reg_node import RegNode

__all__ = ["NetworkFabric", "LATENCY", "network_size", "network_signature",
           "network_fabric_ports", "MAX_PORTS", "DIRECTORY"]

#: ``load.kind`` of a directory write (the network fabric's fifth kind): ``data`` is the
#: entry of store slot ``addr`` of ``node`` (:meth:`NetworkLayout.dir_encode`).
DIRECTORY = 4

#: Most link ends a fabric may have (complete(64) has 4032; hypercube(10) 10240).
MAX_PORTS = 1 << 14


def network_size(topology: Topology, width: int = 8, depth: int = 64,
                 slots: int | None = None, bank_depth: int | None = None,
                 store: str = "banks", node: str = "wire", trace: bool = True) -> NetworkSize:
    """Check the parameters and return the size (``slots`` defaults to ``n``, ``bank_depth``
    to ``slots``; ``node`` one of :data:`~..ports.NODES`; ``trace=False``: the lean build,
    ``reg`` nodes only).

    Raises
    ------
    TypeError, ValueError
        A bad width, depth or slot count, a node without links, too many ports, an
        unknown store or a bank depth for the single store.
    """
    if not isinstance(topology, Topology):
        raise TypeError(f"NetworkFabric topology must be a Topology, not {topology!r}")
    check_int("NetworkFabric", "width", width, 1)
    check_int("NetworkFabric", "depth", depth, 1)
    slots = topology.n if slots is None else slots
    check_int("NetworkFabric", "slots", slots, 1)
    if store not in STORES:
        raise ValueError(f"NetworkFabric store must be one of {', '.join(STORES)}, "
                         f"not {store!r}")
    if bank_depth is not None:
        check_int("NetworkFabric", "bank_depth", bank_depth, 1)
        if store != "banks":
            raise ValueError("NetworkFabric bank depth applies to the banked store only, "
                             f"not store={store!r}")
    if node not in NODES:
        raise ValueError(f"NetworkFabric node must be one of {', '.join(NODES)}, "
                         f"not {node!r}")
    if not isinstance(trace, bool):
        raise TypeError(f"NetworkFabric trace must be a bool, not {trace!r}")
    if not trace and node != "reg":
        raise ValueError("NetworkFabric: the lean build (trace=False) is of the reg node only")
    ports = 2 * topology.m
    if ports > MAX_PORTS:
        raise ValueError(f"NetworkFabric of {topology.name} has {ports} link ends, more than "
                         f"the {MAX_PORTS} supported")
    links = links_of(topology)
    lonely = [v for v, x in enumerate(links) if not x]
    if lonely:
        raise ValueError(f"NetworkFabric: node {lonely[0]} of {topology.name} has no link")
    entry = max(NetworkLayout(len(x), slots, bank_depth).width for x in links)
    return NetworkSize(topology.n, width, depth, slots, ports, entry, bank_depth, store,
                       node, trace)


def network_signature(size: NetworkSize) -> wiring.Signature:
    """The signature of :class:`NetworkFabric`, built from :data:`~..ports.NETWORK_PORTS`."""
    return table_signature([(s, s.width(size)) for s in NETWORK_PORTS
                            if size.trace or not s.per_link],
                           lambda s: size.ports if s.per_link else size.n)


def network_fabric_ports(size: NetworkSize) -> list[Port]:
    """The fabric's top-level ports, read off its signature (equal to ``network_ports``)."""
    sig = network_signature(size)
    return [Port("__".join(map(str, path)), "in" if member.flow == wiring.In else "out",
                 len(value)) for path, member, value in sig.flatten(sig.create())]


class NetworkFabric(wiring.Component):
    """A fabric shaped like its topology that runs any loaded network program.

    Node ``v``'s link ``j`` goes to its ``j``-th neighbour in ascending order;
    port ``offset[v] + j`` (``offset`` the running sum of degrees) is that
    link's end at ``v``
    (:class:`~pipegossip.model.schedules.network_program.NetworkProgram`).
    Each link carries one word each way per cycle, wired straight from one
    node's ``out_word`` to the other's ``in_word``: no crossbar.

    Parameters
    ----------
    topology : Topology
        Every node needs a link.
    width : int
        Word width.
    depth : int
        Program entries per node.
    slots : int, optional
        Store slots per node (default ``n``).
    op : {"sum", "xor"}
        Every accumulator's operation (chosen at build time).
    bank_depth : int, optional
        Words per store bank (default ``slots``): each node keeps what
        arrives on a link in that link's bank, its loaded items in its own
        (:class:`~.node.NetworkNode`); programs must be compiled with the same.
    store : {"banks", "single"}
        The nodes' item store (:mod:`.store`): banks (RAM with asynchronous
        reads, e.g. ECP5's LUT RAM) or one flip-flop store per node (iCE40).
        Ports, latencies and what the fabric computes are the same.
    node : {"wire", "reg"}
        The nodes' design (:data:`~..ports.NODES`): ``wire``
        (:class:`~.node.NetworkNode`, a link is a wire from an unclocked bank
        read into the neighbour's adder) or ``reg`` (:class:`~.reg_node.RegNode`,
        registered link ends, carry-chain accumulators). The same programs run
        on both with the same samples at every port in every cycle.
    trace : bool
        ``False`` (``reg`` only): the lean build, without the ``tx``/``rx``
        trace ports and with the trace-only entry fields kept out of the
        banked nodes' program memories; the datapath is the trace build's.
    node_modules : bool
        ``True`` (synthesis only: Amaranth cannot simulate it): every node is
        an ``Instance`` of one module per node degree, whose components
        :meth:`node_modules` gives, so that Yosys maps one node per degree
        instead of the flattened fabric (:mod:`.instances`). The same circuit.

    Attributes
    ----------
    start, busy, done, cycle, length : as the schedule fabric
        Program cycle t is exchanged in clock cycle ``t + LATENCY`` (= t + 1)
        after the start cycle 0; busy in cycles 1 .. length + 1.
    load : Out(Signature) of In members
        ``valid``, ``kind``, ``node``, ``addr``, ``data``, taken at the
        rising edge while not busy (ignored while busy): HEADER (empties
        every store and clears every accumulator; ``data`` the program
        length), then ITEM (store slot ``addr`` of ``node``: appended to its
        own bank, so in ascending slot order), DIRECTORY (kind 4: where
        ``node`` keeps slot ``addr``, one write per slot), ACC (``node``'s
        accumulator) and PROGRAM (entry ``addr`` of ``node``) writes, one per
        cycle: the schedule fabric's load scheme plus the directory.
    read : Out(Signature)
        Read-back while idle: ``node``, ``slot`` in; ``word``, ``held``,
        ``acc`` out, latency 1.
    tx : Out(Signature).array(ports)
        Per port, in exchange cycles: ``valid`` (it sends), ``acc`` (the
        word is the accumulator), ``slot``, ``word``.
    rx : Out(Signature).array(ports)
        Per port, in exchange cycles: ``valid`` (the arriving word is stored),
        ``slot``, ``comb`` (it is combined), ``word`` (what arrives).
    acc : Out(width).array(n)
        Every node's accumulator (registered: the value at the start of the cycle).

    Notes
    -----
    ``sync`` domain, synchronous active-high reset. Trace outputs come from
    registers and memories of the exchange stage; a link is a wire.
    """

    def __init__(self, topology: Topology, width: int = 8, depth: int = 64,
                 slots: int | None = None, op: str = "sum", bank_depth: int | None = None,
                 store: str = "banks", node: str = "wire", trace: bool = True,
                 node_modules: bool = False):
        if op not in OPS:
            raise ValueError(f"NetworkFabric op must be one of {', '.join(OPS)}, not {op!r}")
        self._size = network_size(topology, width, depth, slots, bank_depth, store, node,
                                  trace)
        if not isinstance(node_modules, bool):
            raise TypeError(f"NetworkFabric node_modules must be a bool, not {node_modules!r}")
        self._topology, self._op = topology, op
        self._node_modules = node_modules
        self._protos: dict[str, wiring.Component] | None = None
        super().__init__(network_signature(self._size))

    def _node(self, degree: int) -> wiring.Component:
        z = self._size
        if z.node == "reg":
            return RegNode(degree, z.width, z.depth, z.slots, self._op, z.bank_depth,
                           z.store, z.trace)
        return NetworkNode(degree, z.width, z.depth, z.slots, self._op, z.bank_depth,
                           z.store)

    def node_modules(self) -> dict[str, wiring.Component]:
        """``node_modules=True``: module name -> one node of that degree, to convert alone.

        The names are :func:`~.instances.node_module_name` of ``network_node`` (or
        ``network_reg_node``) and the degree, one per degree the topology has.
        """
        if not self._node_modules:
            raise ValueError("NetworkFabric.node_modules() needs node_modules=True")
        if self._protos is None:
            prefix = "network_reg_node" if self._size.node == "reg" else "network_node"
            self._protos = {node_module_name(prefix, d): self._node(d)
                            for d in sorted({len(x) for x in links_of(self._topology)})}
        return self._protos

    @property
    def size(self) -> NetworkSize:
        return self._size

    @property
    def topology(self) -> Topology:
        return self._topology

    def elaborate(self, platform) -> Module:
        m = Module()
        z = self._size
        n = z.n
        links = links_of(self._topology)
        offsets = [0]
        for x in links:
            offsets.append(offsets[-1] + len(x))
        if self._node_modules:
            protos = self.node_modules()
            named = {len(p.in_word): name for name, p in protos.items()}  # degree -> module
            nodes = [NodeInstance(protos[named[len(x)]], named[len(x)], f"node{v}")
                     for v, x in enumerate(links)]
            for v, node in enumerate(nodes):
                m.submodules[f"node{v}"] = node.instance()
        else:
            nodes = [self._node(len(links[v])) for v in range(n)]
            for v, node in enumerate(nodes):
                m.submodules[f"node{v}"] = node
        seq = program_sequencer(m, self, z.count_bits, z.addr_bits, n)
        ld = self.load
        directory = Signal(name="load_directory")
        m.d.comb += directory.eq(seq.take & (ld.kind == DIRECTORY))
        drive_read_back(m, self.read, nodes, z.node_bits, z.width)
        for v, node in enumerate(nodes):
            mine = seq.take & seq.node_sel[v]
            m.d.comb += [
                node.fetch_en.eq(seq.fetch_en), node.fetch_addr.eq(seq.addr),
                node.clear.eq(seq.header),
                node.prog_we.eq(mine & seq.kind[LoadKind.PROGRAM]),
                node.prog_addr.eq(ld.addr), node.prog_data.eq(ld.data),
                node.item_we.eq(mine & seq.kind[LoadKind.ITEM]), node.item_data.eq(ld.data),
                node.item_slot.eq(ld.addr),
                node.dir_we.eq(directory & seq.node_sel[v]), node.dir_slot.eq(ld.addr),
                node.dir_data.eq(ld.data[:node.layout.dir_width]),
                node.acc_we.eq(mine & seq.kind[LoadKind.ACC]), node.acc_data.eq(ld.data),
                node.rd_slot.eq(self.read.slot),
                self.acc[v].eq(node.acc),
            ]
            for j, w in enumerate(links[v]):
                p = offsets[v] + j
                back = nodes[w].out_word[links[w].index(v)]  # the link: a wire each way
                m.d.comb += node.in_word[j].eq(back)
                if not z.trace:
                    continue
                m.d.comb += [
                    self.tx[p].valid.eq(node.tx_valid[j]), self.tx[p].acc.eq(node.tx_acc[j]),
                    self.tx[p].slot.eq(node.tx_slot[j]), self.tx[p].word.eq(node.out_word[j]),
                    self.rx[p].valid.eq(node.rx_valid[j]), self.rx[p].slot.eq(node.rx_slot[j]),
                    self.rx[p].comb.eq(node.rx_comb[j]), self.rx[p].word.eq(back),
                ]
        return m
