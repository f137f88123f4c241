"""The fabric's top-level ports, declared once.

:class:`~pipegossip.hw.fsm.fabric.Fabric` builds its signature from :data:`PORTS`
(:func:`pipegossip.hw.fsm.fabric.fabric_signature`); everything that names or
sizes a port derives from this table too: the cocotb testbench's driving and
sampling lists, the trace record's fields, the golden dump's widths, the
waveform read-back and the GTKWave view. ``clk`` and ``rst`` come from the
``sync`` domain and are not in the table.

A port is either fabric-wide (``busy``) or one per processor (``action``,
Verilog ``action__3``); a per-processor port may be a member of a group
(``delivery``: ``delivery__3__word``). Directions are seen from the fabric:
``"in"`` is driven by the testbench, ``"out"`` by the fabric. Widths are
functions of the configuration (N, sessions) and the word width only; the
run's length L never sets a width (``cycle`` is sized for any valid run's L).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .bits import counter_width, peer_width, session_width, used_width

__all__ = ["PortSpec", "Port", "PORTS", "IN", "OUT", "port_spec", "ports",
           "port_widths", "lane_names", "scalar_names", "group_fields", "CLOCK_PORTS",
           "MAX_WIDTH"]

IN = "in"
OUT = "out"

#: Ports the ``sync`` domain adds to the exported module.
CLOCK_PORTS = ("clk", "rst")

#: Widest word a fabric accepts. Far beyond any bus in use (512 bits is the
#: widest common one); past about 65536 bits Yosys's export fails, and long
#: before that the simulators spend minutes per build.
MAX_WIDTH = 4096


@dataclass(frozen=True)
class PortSpec:
    """One port of the table, for every configuration.

    Attributes
    ----------
    key : str
        The port's name in the table: ``"busy"``, ``"action"`` or, inside a
        group, ``"delivery__word"`` (group, then field).
    direction : str
        ``"in"`` or ``"out"``, seen from the fabric.
    width : callable
        ``width(n, sessions, word_width) -> bits``.
    per_processor : bool
        One port per processor (an array of N in the signature).
    doc : str
        What the port carries (docs/hw.md has the timing).
    """

    key: str
    direction: str
    width: Callable[[int, int, int], int]
    per_processor: bool
    doc: str

    @property
    def group(self) -> str:
        """The signature member holding the port (``"delivery"`` for ``delivery__word``)."""
        return self.key.split("__")[0]

    @property
    def field(self) -> str | None:
        """The field inside its group, or None for a port that is no group member."""
        parts = self.key.split("__")
        return parts[1] if len(parts) > 1 else None

    def verilog_name(self, processor: int | None = None) -> str:
        """The exported Verilog name (``delivery__3__word``; ``busy``)."""
        if not self.per_processor:
            return self.key
        if processor is None:
            raise ValueError(f"port {self.key} is per processor: give the processor")
        tail = "" if self.field is None else f"__{self.field}"
        return f"{self.group}__{processor}{tail}"


@dataclass(frozen=True)
class Port:
    """One top-level Verilog port of a fabric (``clk``/``rst`` not included)."""

    name: str  #: Verilog name, e.g. ``delivery__3__word``
    direction: str  #: ``"in"`` or ``"out"``
    width: int
    key: str = ""  #: the :class:`PortSpec` it comes from
    processor: int | None = None  #: for per-processor ports


def _one(n: int, sessions: int, width: int) -> int:
    return 1


#: The table, in signature order.
PORTS: tuple[PortSpec, ...] = (
    PortSpec("start", IN, _one, False, "begin a run (ignored while busy)"),
    PortSpec("words__payload", IN, lambda n, s, w: w, True, "the word of the next session"),
    PortSpec("words__valid", IN, _one, True, "the payload is offered"),
    PortSpec("words__ready", OUT, _one, True, "the fabric takes the payload at this edge"),
    PortSpec("busy", OUT, _one, False, "high in cycles 1..L"),
    PortSpec("done", OUT, _one, False, "high after cycle L until the next start"),
    PortSpec("cycle", OUT, lambda n, s, w: counter_width(n, s), False,
             "the step t in cycles 1..L, else 0"),
    PortSpec("used", OUT, lambda n, s, w: used_width(n), False, "used slots (S plus R) this cycle"),
    PortSpec("action", OUT, lambda n, s, w: 3, True, "action code (docs/reference.md)"),
    PortSpec("peer", OUT, lambda n, s, w: peer_width(n), True, "peer of the action (docs/reference.md)"),
    PortSpec("delivery__valid", OUT, _one, True, "a word arrives (the processor shows R)"),
    PortSpec("delivery__source", OUT, lambda n, s, w: peer_width(n), True,
             "the arriving word's source"),
    PortSpec("delivery__session", OUT, lambda n, s, w: session_width(s), True,
             "the arriving word's session"),
    PortSpec("delivery__word", OUT, lambda n, s, w: w, True, "the arriving word"),
    PortSpec("stall", OUT, _one, False, "watchdog: a busy cycle without a transfer"),
    PortSpec("hold", IN, lambda n, s, w: n, False, "debug: processor i neither sends nor receives"),
)

_BY_KEY = {p.key: p for p in PORTS}


def port_spec(key: str) -> PortSpec:
    """The table entry ``key`` (``"peer"``, ``"delivery__word"``)."""
    return _lookup(_BY_KEY, key, "the fabric")


def _lookup(by_key: dict, key: str, fabric: str):
    try:
        return by_key[key]
    except KeyError:
        raise KeyError(f"{fabric} has no port {key!r}") from None


def ports(n: int, sessions: int = 1, width: int = 8) -> list[Port]:
    """Every Verilog port of a fabric, in signature order (per-processor ports by processor).

    Parameters
    ----------
    n : int
        Processors.
    sessions : int
        Sessions per run.
    width : int
        Word width in bits.
    """
    return _flatten(PORTS, n, lambda s: s.width(n, sessions, width))


def _flatten(specs, n: int, width_of: Callable) -> list[Port]:
    """The Verilog ports of table ``specs`` with ``n`` processors; ``width_of(spec)``."""
    out: list[Port] = []
    groups: dict[str, list] = {}
    for spec in specs:
        groups.setdefault(spec.group, []).append(spec)
    # Arrays flatten processor by processor, each with all its group's fields.
    for members in groups.values():
        if not members[0].per_processor:
            out += [Port(s.key, s.direction, width_of(s), s.key) for s in members]
            continue
        for i in range(n):
            out += [Port(s.verilog_name(i), s.direction, width_of(s), s.key, i) for s in members]
    return out


def port_widths(n: int, sessions: int = 1, width: int = 8) -> dict[str, int]:
    """Width of every table entry, by key (``{"cycle": 5, "delivery__word": 8, ...}``)."""
    return {s.key: s.width(n, sessions, width) for s in PORTS}


def scalar_names(direction: str | None = None) -> tuple[str, ...]:
    """Fabric-wide ports (optionally only ``"in"`` or ``"out"`` ones), in table order."""
    return tuple(s.key for s in PORTS if not s.per_processor
                 and (direction is None or s.direction == direction))


def lane_names(direction: str | None = None) -> tuple[str, ...]:
    """Per-processor table keys (optionally of one direction), in table order."""
    return tuple(s.key for s in PORTS if s.per_processor
                 and (direction is None or s.direction == direction))


def group_fields(group: str) -> tuple[str, ...]:
    """The fields of a per-processor group (``"delivery"`` -> valid, source, session, word)."""
    return tuple(s.field for s in PORTS if s.group == group and s.field is not None)


# ---------------------------------------------------------------------------
# The schedule fabric's ports (pipegossip.hw.schedule.fabric.ScheduleFabric).
# A second table in the same style: same PortSpec fields, but a width is a
# function of the schedule fabric's size (n, word width, depth, slots).


@dataclass(frozen=True)
class ScheduleSize:
    """The parameters that size every port of a schedule fabric.

    Attributes
    ----------
    n : int
        Nodes.
    width : int
        Word width in bits.
    depth : int
        Program-memory entries per node (the longest program).
    slots : int
        Store words per node (``n`` for one item per node).
    """

    n: int
    width: int
    depth: int
    slots: int

    @property
    def node_bits(self) -> int:
        return max(1, (self.n - 1).bit_length())

    @property
    def slot_bits(self) -> int:
        return max(1, (self.slots - 1).bit_length())

    @property
    def addr_bits(self) -> int:
        """Bits of a program address ``0 .. depth-1``."""
        return max(1, (self.depth - 1).bit_length())

    @property
    def count_bits(self) -> int:
        """Bits of a program length or cycle number ``0 .. depth`` (one more than an address)."""
        return self.addr_bits + 1

    @property
    def entry_bits(self) -> int:
        """Bits of one program entry (``EntryLayout`` of the compiler)."""
        return 4 + 2 * self.slot_bits + self.node_bits


@dataclass(frozen=True)
class SchedulePortSpec(PortSpec):
    """One port of :data:`SCHEDULE_PORTS`: as :class:`PortSpec`, ``width(size) -> bits``.

    ``per_processor`` means one port per node (Verilog ``send__3__valid``).
    """


def _s(fn: Callable[[ScheduleSize], int]) -> Callable[[ScheduleSize], int]:
    return fn


#: The schedule fabric's table, in signature order. Latencies: docs/schedule-fabric.md.
SCHEDULE_PORTS: tuple[SchedulePortSpec, ...] = (
    SchedulePortSpec("start", IN, _s(lambda z: 1), False,
                     "begin the loaded program (ignored while busy)"),
    SchedulePortSpec("busy", OUT, _s(lambda z: 1), False,
                     "high from the cycle after the start until the last exchange"),
    SchedulePortSpec("done", OUT, _s(lambda z: 1), False,
                     "high after the last exchange until the next start"),
    SchedulePortSpec("cycle", OUT, _s(lambda z: z.count_bits), False,
                     "program cycle t shown by the trace this clock cycle, else 0"),
    SchedulePortSpec("length", OUT, _s(lambda z: z.count_bits), False,
                     "the loaded program's length in cycles"),
    SchedulePortSpec("load__valid", IN, _s(lambda z: 1), False,
                     "a load write this cycle (taken at the rising edge; while busy only ITEM)"),
    SchedulePortSpec("load__kind", IN, _s(lambda z: 2), False,
                     "0 program entry, 1 item word, 2 header (length; clears held bits), "
                     "3 initial accumulator"),
    SchedulePortSpec("load__node", IN, _s(lambda z: z.node_bits), False,
                     "the node written (program entry, item word)"),
    SchedulePortSpec("load__addr", IN, _s(lambda z: max(z.addr_bits, z.slot_bits)), False,
                     "program address or store slot"),
    SchedulePortSpec("load__data", IN, _s(lambda z: max(z.entry_bits, z.width, z.count_bits)),
                     False, "the entry, the word or the length"),
    SchedulePortSpec("read__node", IN, _s(lambda z: z.node_bits), False,
                     "node whose store is read"),
    SchedulePortSpec("read__slot", IN, _s(lambda z: z.slot_bits), False, "slot read"),
    SchedulePortSpec("read__word", OUT, _s(lambda z: z.width), False,
                     "the slot's word, one cycle after node and slot (idle only)"),
    SchedulePortSpec("read__held", OUT, _s(lambda z: 1), False,
                     "the slot's held bit, one cycle after node and slot"),
    SchedulePortSpec("read__acc", OUT, _s(lambda z: z.width), False,
                     "the node's accumulator, one cycle after node"),
    SchedulePortSpec("send__valid", OUT, _s(lambda z: 1), True, "the node sends this cycle"),
    SchedulePortSpec("send__slot", OUT, _s(lambda z: z.slot_bits), True, "the slot it sends"),
    SchedulePortSpec("send__word", OUT, _s(lambda z: z.width), True, "the word it sends"),
    SchedulePortSpec("send__acc", OUT, _s(lambda z: 1), True,
                     "the word it sends is its accumulator (else the slot's)"),
    SchedulePortSpec("recv__valid", OUT, _s(lambda z: 1), True, "the node receives this cycle"),
    SchedulePortSpec("recv__source", OUT, _s(lambda z: z.node_bits), True,
                     "the node its input selects"),
    SchedulePortSpec("recv__slot", OUT, _s(lambda z: z.slot_bits), True,
                     "the slot it stores the word in"),
    SchedulePortSpec("recv__word", OUT, _s(lambda z: z.width), True, "the word received"),
    SchedulePortSpec("recv__comb", OUT, _s(lambda z: 1), True,
                     "the word is added into its accumulator (source valid, maybe not stored)"),
    SchedulePortSpec("item__valid", IN, _s(lambda z: 1), True,
                     "write the node's store this cycle (taken at the edge, idle or running)"),
    SchedulePortSpec("item__slot", IN, _s(lambda z: z.slot_bits), True, "the slot written"),
    SchedulePortSpec("item__word", IN, _s(lambda z: z.width), True,
                     "the word written (its held bit is set)"),
)

_SCHEDULE_BY_KEY = {p.key: p for p in SCHEDULE_PORTS}


def schedule_port_spec(key: str) -> SchedulePortSpec:
    """The :data:`SCHEDULE_PORTS` entry ``key`` (``"send__word"``)."""
    return _lookup(_SCHEDULE_BY_KEY, key, "the schedule fabric")


def schedule_ports(size: ScheduleSize) -> list[Port]:
    """Every Verilog port of a schedule fabric of ``size``, in signature order."""
    return _flatten(SCHEDULE_PORTS, size.n, lambda s: s.width(size))


__all__ += ["ScheduleSize", "SchedulePortSpec", "SCHEDULE_PORTS", "schedule_port_spec",
            "schedule_ports"]


# ---------------------------------------------------------------------------
# The network fabric's ports (pipegossip.hw.network.fabric.NetworkFabric): the
# schedule fabric's control, load and read ports, then one group per port of a
# node (a node's end of a link: ``tx__5__word``) and one accumulator per node.


#: The network fabric's item stores (``pipegossip.hw.network.store``): ``banks`` (one
#: bank per link and one for the loaded items, RAM with asynchronous reads) or
#: ``single`` (one store of ``slots`` words in flip-flops, for devices without such RAM).
STORES = ("banks", "single")

#: The network fabric's nodes (``pipegossip.hw.network``): ``wire`` (a link is a wire
#: from an unclocked bank read into the neighbour's adder, ``node.NetworkNode``) or
#: ``reg`` (registered link ends, ``reg_node.RegNode``); the ports and every cycle at
#: them are the same.
NODES = ("wire", "reg")


@dataclass(frozen=True)
class NetworkSize(ScheduleSize):
    """The parameters that size every port of a network fabric.

    As :class:`ScheduleSize`, plus ``ports`` (link ends: twice the edges),
    ``entry_width`` (the widest node's program entry), ``bank_depth``
    (words per store bank, ``None`` for ``slots``), ``store`` (the
    nodes' item store, one of :data:`STORES`; the ports do not depend on it),
    ``node`` (one of :data:`NODES`; nor on it) and ``trace`` (``False``: the
    lean build, without the per-port ``tx``/``rx`` trace groups).
    """

    ports: int = 0
    entry_width: int = 1
    bank_depth: int | None = None  # words per store bank; None: ``slots``
    store: str = "banks"  # the nodes' item store (:data:`STORES`)
    node: str = "wire"  # the nodes' design (:data:`NODES`)
    trace: bool = True  # the per-port trace outputs (``tx__*``, ``rx__*``) exist

    @property
    def entry_bits(self) -> int:
        return self.entry_width


@dataclass(frozen=True)
class NetworkPortSpec(SchedulePortSpec):
    """One port of :data:`NETWORK_PORTS`; ``per_link``: one per link end, not per node."""

    per_link: bool = False


def _shared(key: str) -> NetworkPortSpec:
    s = schedule_port_spec(key)
    if key == "load__kind":  # one kind more than the schedule fabric's: the directory
        return NetworkPortSpec(s.key, s.direction, _s(lambda z: 3), s.per_processor,
                               s.doc + ", 4 directory entry of store slot addr")
    return NetworkPortSpec(s.key, s.direction, s.width, s.per_processor, s.doc)


#: The network fabric's table, in signature order. Latencies: docs/network-fabric.md.
NETWORK_PORTS: tuple[NetworkPortSpec, ...] = (
    *(_shared(p.key) for p in SCHEDULE_PORTS if not p.per_processor),
    NetworkPortSpec("tx__valid", OUT, _s(lambda z: 1), True, "the port sends this cycle", True),
    NetworkPortSpec("tx__acc", OUT, _s(lambda z: 1), True,
                    "the word sent is the node's accumulator (else a store slot)", True),
    NetworkPortSpec("tx__slot", OUT, _s(lambda z: z.slot_bits), True, "the slot sent", True),
    NetworkPortSpec("tx__word", OUT, _s(lambda z: z.width), True, "the word sent", True),
    NetworkPortSpec("rx__valid", OUT, _s(lambda z: 1), True,
                    "the arriving word is stored this cycle", True),
    NetworkPortSpec("rx__slot", OUT, _s(lambda z: z.slot_bits), True,
                    "the slot it is stored in", True),
    NetworkPortSpec("rx__comb", OUT, _s(lambda z: 1), True,
                    "the arriving word is combined into the accumulator", True),
    NetworkPortSpec("rx__word", OUT, _s(lambda z: z.width), True,
                    "the word arriving on the link", True),
    NetworkPortSpec("acc", OUT, _s(lambda z: z.width), True,
                    "the node's accumulator (registered)"),
)


def network_ports(size: NetworkSize) -> list[Port]:
    """Every Verilog port of a network fabric of ``size``, in signature order."""
    out: list[Port] = []
    for spec in NETWORK_PORTS:  # one group at a time, array entry by array entry
        if spec.per_link and not size.trace:
            continue  # the lean build has no trace ports
        if any(p.name.startswith(f"{spec.group}__") or p.name == spec.group for p in out):
            continue
        members = [s for s in NETWORK_PORTS if s.group == spec.group]
        count = size.ports if spec.per_link else size.n
        out += _flatten(members, count, lambda s: s.width(size))
    return out


__all__ += ["NetworkSize", "NetworkPortSpec", "NETWORK_PORTS", "network_ports", "STORES",
            "NODES"]
