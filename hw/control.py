"""The control block: the register map of :mod:`.regmap` around a fabric's control ports.

:class:`ControlBlock` sits between a bus slave (:mod:`.bus`: AXI4-Lite or
Wishbone) and the control ports every program-driven fabric has
(``start``/``busy``/``done``/``cycle``/``length``, the load port
``load__*``, the read-back ``read__*`` and, where the fabric has resident
programs, ``prog_sel``). Its decode, read multiplexer and field positions
come from :data:`~.regmap.REGISTERS`; what each register does is here.
docs/integration.md has the table and the programming sequence.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .bus import BUSES, REG_PORT
from .params import check_int
from .regmap import DATA_BITS, FABRIC_CODES, MAGIC, REGISTERS, VERSION, register
from .schedule.fabric import LoadKind
from .schedule.image import ImageKind
from .schedule.node import select_by

__all__ = ["ControlBlock", "FabricControl", "control_signature", "fabric_control",
           "LOAD_KINDS", "CHECK_KINDS", "kind_table"]

#: LOAD_GO kinds (the image's codes) that become a write of the fabric's load port,
#: with the load port's kind; the directory only where the load kind has 3 bits.
LOAD_KINDS = {ImageKind.PROGRAM: LoadKind.PROGRAM, ImageKind.ITEM: LoadKind.ITEM,
              ImageKind.HEADER: LoadKind.HEADER, ImageKind.ACC: LoadKind.ACC}
#: LOAD_GO kinds that are checks of the read-back (self-checking build).
CHECK_KINDS = (ImageKind.EXPECT_WORD, ImageKind.EXPECT_EMPTY, ImageKind.EXPECT_ACC)


def kind_table() -> str:
    """The LOAD_GO kinds as docs/integration.md's table (the image's codes, from the enums)."""
    from .network.fabric import DIRECTORY  # noqa: PLC0415
    rows = ["| KIND | entry | what the block does |", "|---|---|---|"]
    for k, v in LOAD_KINDS.items():
        rows.append(f"| {int(k)} {k.name} | load | a load-port write of kind {int(v)} ({v.name}) |")
    rows.append(f"| {int(ImageKind.DIRECTORY)} DIRECTORY | load | network fabric only: a "
                f"load-port write of kind {DIRECTORY} (the directory) |")
    for k in CHECK_KINDS:
        rows.append(f"| {int(k)} {k.name} | check | self-checking build: "
                    + {ImageKind.EXPECT_WORD: "slot `addr` of `node` must hold `data`",
                       ImageKind.EXPECT_EMPTY: "slot `addr` of `node` must be empty",
                       ImageKind.EXPECT_ACC: "the accumulator of `node` must be `data`"}[k]
                    + "; counted in CHECKS, a failure in MISMATCHES |")
    rows.append(f"| {int(ImageKind.END)} END | | ignored |")
    return "\n".join(rows) + "\n"


class FabricControl:
    """The widths of a fabric's control ports, read off the fabric (its signature)."""

    def __init__(self, fabric):
        members = fabric.signature.members
        for name in ("start", "busy", "done", "cycle", "length", "load", "read"):
            if name not in members:
                raise TypeError(f"ControlBlock needs a fabric with a {name} port, not "
                                f"{type(fabric).__name__}")
        self.kind_name = type(fabric).__name__
        z = fabric.size
        self.n, self.width, self.depth, self.slots = z.n, z.width, z.depth, z.slots
        self.count_bits = len(fabric.cycle)
        self.load_bits = {f: len(getattr(fabric.load, f))
                          for f in ("kind", "node", "addr", "data")}
        self.read_bits = {f: len(getattr(fabric.read, f))
                          for f in ("node", "slot", "word", "held", "acc")}
        self.prog_bits = len(fabric.prog_sel) if "prog_sel" in members else 0
        self.programs = getattr(fabric, "programs", 1 if not self.prog_bits else
                                1 << self.prog_bits)
        from .network.fabric import NetworkFabric  # noqa: PLC0415
        # by class: a lean network build has no trace ports to tell it by
        self.fabric_code = FABRIC_CODES["network" if isinstance(fabric, NetworkFabric)
                                        else "schedule"]
        if self.n > 1 << register("LOAD_GO").field("NODE").width:
            raise ValueError(f"ControlBlock: {self.n} nodes do not fit LOAD_GO.NODE")

    @property
    def load_words(self) -> int:
        return -(-self.load_bits["data"] // DATA_BITS)

    def load_kinds(self) -> dict[int, int]:
        """LOAD_GO kind -> load-port kind for this fabric."""
        out = {int(k): int(v) for k, v in LOAD_KINDS.items()}
        if self.load_bits["kind"] >= 3:
            from .network.fabric import DIRECTORY  # noqa: PLC0415 (the network's fifth kind)
            out[int(ImageKind.DIRECTORY)] = DIRECTORY
        return out


def control_signature(fc: FabricControl) -> wiring.Signature:
    """The fabric side of the block, as the block drives it (the fabric's ports flipped)."""
    lb, rb = fc.load_bits, fc.read_bits
    members = {
        "start": Out(1), "busy": In(1), "done": In(1),
        "cycle": In(fc.count_bits), "length": In(fc.count_bits),
        "load": Out(wiring.Signature({f: Out(lb[f]) for f in ("kind", "node", "addr", "data")}
                                     | {"valid": Out(1)})),
        "read": Out(wiring.Signature({"node": Out(rb["node"]), "slot": Out(rb["slot"]),
                                      "word": In(rb["word"]), "held": In(1),
                                      "acc": In(rb["acc"])})),
    }
    if fc.prog_bits:
        members["prog_sel"] = Out(fc.prog_bits)
    return wiring.Signature(members)


def fabric_control(fabric) -> FabricControl:
    """:class:`FabricControl` of ``fabric``."""
    return FabricControl(fabric)


class ControlBlock(wiring.Component):
    """Registers (:data:`~.regmap.REGISTERS`) that load, start, select and count a fabric.

    Parameters
    ----------
    fc : FabricControl
        The fabric's control-port widths and size (:func:`fabric_control`).
    bus : {"axil", "wishbone"}
        The bus slave in front (:data:`~.bus.BUSES`).
    checks : bool
        The self-checking build: LOAD_GO's check kinds read the fabric back
        and count CHECKS and MISMATCHES (without: they are dropped, both read 0).

    Attributes
    ----------
    axil or wb : In(bus signature)
        The control bus (:mod:`.bus`): a write takes 2 cycles, a read 2.
    fabric : Out(control_signature(fc))
        To the fabric's own ports. ``start`` is a one-cycle pulse, issued in
        a cycle where a start is armed, the fabric is not busy and ``ready``
        is high. A LOAD_GO becomes one load-port write in the next cycle
        (dropped, with STATUS.LOAD_ERR, while busy or armed); a check entry
        drives ``read`` in the next cycle and compares its answer one cycle
        later (the bus waits meanwhile).
    ready : In(1)
        Stream side: every node has its inputs and room for a whole
        collective's results (tie high without stream wrappers).
    irq : Out(1)
        ``CTRL.IRQ_EN & STATUS.DONE``.
    started : Out(1)
        The ``start`` pulse (for a monitor or a stream wrapper).
    """

    def __init__(self, fc: FabricControl, bus: str = "axil", checks: bool = True):
        if not isinstance(fc, FabricControl):
            raise TypeError(f"ControlBlock needs a FabricControl, not {fc!r}")
        if bus not in BUSES:
            raise ValueError(f"ControlBlock bus must be one of {', '.join(BUSES)}, not {bus!r}")
        check_int("ControlBlock", "programs", fc.programs, 1, 256)
        self._fc, self._bus, self._checks = fc, bus, bool(checks)
        port, bus_signature, self._slave = BUSES[bus]
        super().__init__({port: In(bus_signature()),
                          "fabric": Out(control_signature(fc)),
                          "ready": In(1), "irq": Out(1), "started": Out(1)})

    @property
    def bus(self) -> str:
        return self._bus

    def elaborate(self, platform) -> Module:
        m = Module()
        fc, fab = self._fc, self.fabric
        port = BUSES[self._bus][0]
        slave = m.submodules.slave = self._slave()
        wiring.connect(m, wiring.flipped(getattr(self, port)), getattr(slave, port))
        regs = slave.regs

        # the decode: one case per register of the map (a complete case: Verilator's lint)
        hit = {r.name: Signal(name=f"hit_{r.name.lower()}") for r in REGISTERS}
        values_of: dict[str, Signal] = {r.name: Signal(DATA_BITS, name=f"value_{r.name.lower()}")
                                        for r in REGISTERS}
        with m.Switch(regs.addr):
            for r in REGISTERS:
                with m.Case(r.offset >> 2):
                    m.d.comb += [hit[r.name].eq(1), regs.r_data.eq(values_of[r.name])]
            with m.Default():  # every signal of the switch: a complete case per signal
                m.d.comb += [regs.error.eq(1), regs.r_data.eq(0),
                             *(h.eq(0) for h in hit.values())]
        byte_mask = Cat(*(b.replicate(8) for b in regs.w_strb))
        wdata = Signal(DATA_BITS)
        m.d.comb += wdata.eq(regs.w_data & byte_mask)

        def wrote(reg: str):
            return regs.w_stb & hit[reg]

        def pulse(reg: str, field: str):
            f = register(reg).field(field)
            return wrote(reg) & wdata[f.lsb]

        def rw(reg: str, field: str, width: int | None = None) -> Signal:
            """A read-write field's flip-flops (``width`` of its bits kept)."""
            f = register(reg).field(field)
            sig = Signal(width or f.width, name=f"{reg.lower()}_{field.lower()}", init=f.reset)
            keep = len(sig)
            with m.If(wrote(reg)):
                sel = byte_mask[f.lsb:f.lsb + keep]
                m.d.sync += sig.eq((sig & ~sel) | (regs.w_data[f.lsb:f.lsb + keep] & sel))
            return sig

        # run control
        auto, irq_en = rw("CTRL", "AUTO"), rw("CTRL", "IRQ_EN")
        prog_sel = rw("PROG_SEL", "SEL", max(1, fc.prog_bits))
        armed, load_err = Signal(), Signal()
        start = Signal()
        m.d.comb += [start.eq(armed & ~fab.busy & self.ready), fab.start.eq(start),
                     self.started.eq(start), self.irq.eq(irq_en & fab.done)]
        if fc.prog_bits:
            m.d.comb += fab.prog_sel.eq(prog_sel)
        disarm = pulse("CMD", "DISARM")
        with m.If(disarm):
            m.d.sync += [armed.eq(0), auto.eq(0)]
        with m.Elif(pulse("CMD", "ARM")):
            m.d.sync += armed.eq(1)
        with m.Elif(start & ~auto):
            m.d.sync += armed.eq(0)

        # counters
        clear = pulse("CMD", "CLEAR")
        busy_q = Signal()
        m.d.sync += busy_q.eq(fab.busy)
        ended = Signal()
        m.d.comb += ended.eq((busy_q & ~fab.busy) | (start & ~fab.length.any()))
        clocks, busy_cycles, collectives, checks, mismatches = (
            Signal(DATA_BITS, name=x) for x in ("clocks", "busy_cycles", "collectives",
                                                "checks", "mismatches"))
        check_done, check_bad = Signal(), Signal()
        with m.If(clear):
            m.d.sync += [c.eq(0) for c in (clocks, busy_cycles, collectives, checks,
                                           mismatches)]
        with m.Else():
            m.d.sync += [clocks.eq(clocks + 1), busy_cycles.eq(busy_cycles + fab.busy),
                         collectives.eq(collectives + ended),
                         checks.eq(checks + check_done),
                         mismatches.eq(mismatches + (check_done & check_bad))]

        # the load window: staged data, then one write per LOAD_GO
        ld = fab.load
        dbits = fc.load_bits["data"]
        load_addr = rw("LOAD_ADDR", "ADDR")
        staged = Signal(dbits)
        go = wrote("LOAD_GO")
        go_kind = regs.w_data[register("LOAD_GO").field("KIND").lsb:][:4]
        nf = register("LOAD_GO").field("NODE")
        go_node = regs.w_data[nf.lsb:nf.lsb + nf.width]
        kinds = fc.load_kinds()
        is_load, is_check, known = Signal(), Signal(), Signal()
        mapped = Signal(max(1, fc.load_bits["kind"]))
        with m.Switch(go_kind):
            for k, v in kinds.items():
                with m.Case(k):
                    m.d.comb += [is_load.eq(1), known.eq(1), mapped.eq(v)]
            for k in CHECK_KINDS:
                with m.Case(int(k)):
                    m.d.comb += [is_check.eq(self._checks), known.eq(1)]
            with m.Case(int(ImageKind.END)):
                m.d.comb += known.eq(1)
            with m.Default():
                m.d.comb += [known.eq(0), is_load.eq(0), is_check.eq(0), mapped.eq(0)]
        refused = fab.busy | armed
        ld_valid = Signal()
        m.d.sync += ld_valid.eq(go & is_load & ~refused)
        m.d.comb += ld.valid.eq(ld_valid)
        with m.If(go):
            m.d.sync += [ld.kind.eq(mapped), ld.node.eq(go_node), ld.addr.eq(load_addr),
                         ld.data.eq(staged), staged.eq(0)]
        with m.Elif(wrote("LOAD_DATA")):
            m.d.sync += staged.eq(Cat(regs.w_data, staged)[:dbits])
        with m.If(clear | pulse("STATUS", "LOAD_ERR")):
            m.d.sync += load_err.eq(0)
        with m.Elif(go & ((refused & (is_load | is_check)) | ~known)):
            m.d.sync += load_err.eq(1)

        # the read-back, and the checks through it
        rd = fab.read
        read_node, read_slot = rw("READ_NODE", "NODE"), rw("READ_SLOT", "SLOT")
        read_part = rw("READ_PART", "PART")
        chk_drive, chk_cmp = Signal(), Signal()
        chk_kind = Signal(4)
        chk_node = Signal(len(rd.node))
        chk_slot = Signal(len(rd.slot))
        chk_data = Signal(fc.width)
        if self._checks:
            with m.If(go & is_check & ~refused):
                m.d.sync += [chk_drive.eq(1), chk_kind.eq(go_kind), chk_node.eq(go_node),
                             chk_slot.eq(load_addr), chk_data.eq(staged)]
            with m.Else():
                m.d.sync += chk_drive.eq(0)
            m.d.sync += chk_cmp.eq(chk_drive)
            ok = Signal()
            with m.Switch(chk_kind):
                with m.Case(ImageKind.EXPECT_WORD):
                    m.d.comb += ok.eq(rd.held & (rd.word == chk_data))
                with m.Case(ImageKind.EXPECT_EMPTY):
                    m.d.comb += ok.eq(~rd.held)
                with m.Default():
                    m.d.comb += ok.eq(rd.acc == chk_data)
            m.d.comb += [check_done.eq(chk_cmp), check_bad.eq(~ok)]
        m.d.comb += [rd.node.eq(Mux(chk_drive, chk_node, read_node)),
                     rd.slot.eq(Mux(chk_drive, chk_slot, read_slot)),
                     regs.hold.eq(chk_drive | chk_cmp)]

        def part(value, name: str) -> Signal:
            parts = -(-len(value) // DATA_BITS)
            padded = Cat(value, Const(0, parts * DATA_BITS - len(value)))
            return select_by(m, read_part, [padded.word_select(i, DATA_BITS)
                                            for i in range(parts)], DATA_BITS, name)

        values = {
            "ID": {"FABRIC": fc.fabric_code, "VERSION": VERSION, "MAGIC": MAGIC},
            "NODES": {"COUNT": fc.n}, "WIDTH": {"BITS": fc.width},
            "DEPTH": {"ENTRIES": fc.depth}, "SLOTS": {"COUNT": fc.slots},
            "PROGRAMS": {"COUNT": fc.programs}, "LOAD_WORDS": {"COUNT": fc.load_words},
            "CTRL": {"AUTO": auto, "IRQ_EN": irq_en},
            "STATUS": {"BUSY": fab.busy, "DONE": fab.done, "ARMED": armed,
                       "READY": self.ready, "LOAD_ERR": load_err},
            "PROG_SEL": {"SEL": prog_sel if fc.prog_bits else 0},
            "LENGTH": {"CYCLES": fab.length}, "CYCLE": {"T": fab.cycle},
            "LOAD_ADDR": {"ADDR": load_addr},
            "READ_NODE": {"NODE": read_node}, "READ_SLOT": {"SLOT": read_slot},
            "READ_PART": {"PART": read_part}, "READ_WORD": {"WORD": part(rd.word, "read_word_part")},
            "READ_ACC": {"ACC": part(rd.acc, "read_acc_part")}, "READ_HELD": {"HELD": rd.held},
            "CLOCKS": {"COUNT": clocks}, "BUSY_CYCLES": {"COUNT": busy_cycles},
            "COLLECTIVES": {"COUNT": collectives},
            "CHECKS": {"COUNT": checks if self._checks else 0},
            "MISMATCHES": {"COUNT": mismatches if self._checks else 0},
        }
        for r in REGISTERS:
            got, word = values.get(r.name, {}), values_of[r.name]
            for f in r.fields:
                if f.access in ("ro", "rw", "w1c") and f.name in got:
                    v = got[f.name]
                    v = Const(v, f.width) if isinstance(v, int) else v[:f.width]
                    m.d.comb += word[f.lsb:f.lsb + len(v)].eq(v)
        return m
