# amaranth: UnusedElaboratable=no
"""The schedule fabric's self-check, platform independent: load an image, run it, check it.

:class:`ScheduleSelfTest` holds a compiled schedule as an image
(:mod:`pipegossip.hw.schedule.image`: the load writes, then the expected
final state) in a memory initialised at build time, replays the load writes
into a :class:`~pipegossip.hw.schedule.ScheduleFabric`'s load port, runs the
program, and reads every node's store, held bits and accumulator back
through the fabric's read port against the image's checks. The image
memory has a write port, so a new schedule of the same fabric size runs
without a new bitstream (:class:`ImageLoader` takes it from a UART).
Tested in Amaranth's simulator (``tests/hw/test_fpga_schedule_board.py``).
"""

# The first line's linter option is Amaranth's documented switch for
# UnusedElaboratable: the fabric is built in the constructor so that a bad
# size is refused before elaboration.

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..ports import ScheduleSize
from ..schedule.fabric import LoadKind, ScheduleFabric
from ..schedule.image import UART_RUN, UART_WRITE, ImageKind, ImageLayout, image_capacity

__all__ = ["ScheduleSelfTest", "ImageLoader", "ScheduleStatusLine", "schedule_status_text"]


def _write_signature(size: ScheduleSize) -> wiring.Signature:
    cap = image_capacity(size)
    return wiring.Signature({"valid": Out(1), "addr": Out(range(cap)),
                             "data": Out(ImageLayout(size).width)})


class ScheduleSelfTest(wiring.Component):
    """A schedule fabric that loads, runs and checks the image in its memory.

    Parameters
    ----------
    size : ScheduleSize
        The fabric's size (every image it runs must fit it).
    image : list of int
        Encoded entries (:class:`~pipegossip.hw.schedule.image.ImageLayout`)
        the memory holds after configuration; the rest of the memory holds END.

    Attributes
    ----------
    run : In(1)
        A rising edge runs the image again (remembered while a run is under
        way). The first run starts by itself after reset.
    write : In(Signature(valid, addr, data))
        Image memory write, taken at the rising edge while ``valid``; seen by
        the next run. The last entry (``capacity - 1``) stays END.
    done : Out(1)
        A verdict is in (from the first run's report on).
    ok : Out(1)
        The last run passed (every check matched, no stall).
    node : Out(node bits)
        With ``ok`` low and ``stall`` low: the first node (image order,
        which is node order) whose check failed, or the node field of an
        entry that is neither a load, a check nor the end (the run fails).
    stall : Out(1)
        The last run did not finish within ``depth + 16`` cycles.
    report : Out(1)
        One-cycle pulse in the first cycle that shows a new verdict.
    runs : Out(32)
        Runs checked since reset; wraps.

    Notes
    -----
    One run: the load writes of the image (one per cycle, plus one), a start
    cycle, the program (its length plus 2 cycles), then one cycle per check
    plus one, and a report cycle. Read-back has latency 1, so a check
    entry's read address is driven in one cycle and compared in the next.
    """

    #: The highest image kind this fabric loads: image kinds 0 .. LAST_LOAD are its
    #: ``load__kind`` values, replayed unchanged (a subclass for another fabric raises it).
    LAST_LOAD = ImageKind.ACC

    def __init__(self, size: ScheduleSize, image: list[int], fabric=None):
        self._size = size
        self.capacity = image_capacity(size)
        self.layout = ImageLayout(size)
        if len(image) > self.capacity - 1:
            raise ValueError(f"an image of {len(image)} entries does not fit a fabric "
                             f"of {size}: at most {self.capacity - 1}")
        end = self.layout.encode((int(ImageKind.END), 0, 0, 0))
        self._init = list(image) + [end] * (self.capacity - len(image))
        # ``fabric``: another fabric with the schedule fabric's load, read, start and done
        # ports (the network fabric); its extra load kinds are in LOADS.
        self.fabric = (ScheduleFabric(size.n, size.width, size.depth, size.slots)
                       if fabric is None else fabric)
        super().__init__({"run": In(1), "write": In(_write_signature(size)), "done": Out(1),
                          "ok": Out(1), "node": Out(size.node_bits), "stall": Out(1),
                          "report": Out(1), "runs": Out(32)})

    def _field(self, word, name):
        lay = self.layout
        width = dict(lay.fields)[name]
        return word[lay.offset(name):lay.offset(name) + width]

    def elaborate(self, platform) -> Module:
        m = Module()
        z, cap = self._size, self.capacity
        m.submodules.fabric = fabric = self.fabric
        mem = m.submodules.image = Memory(shape=self.layout.width, depth=cap, init=self._init)
        wr = mem.write_port()
        rd = mem.read_port()
        m.d.comb += [wr.en.eq(self.write.valid & (self.write.addr < cap - 1)),
                     wr.addr.eq(self.write.addr), wr.data.eq(self.write.data)]

        ptr = Signal(range(cap))
        fetched = Signal()      # rd.data is the entry at ptr - 1
        m.d.comb += rd.addr.eq(ptr)
        # Saturates at the last entry, which is always END: every scan ends.
        ptr_next = Mux(ptr == cap - 1, ptr, ptr + 1)
        kind = self._field(rd.data, "kind")
        # one set of kind codes: a load entry's kind is the fabric's load kind
        load_kind = kind
        is_load = kind <= self.LAST_LOAD
        is_check = (kind >= ImageKind.EXPECT_WORD) & (kind <= ImageKind.EXPECT_ACC)

        pending = Signal(init=1)
        run_last = Signal()
        m.d.sync += run_last.eq(self.run)
        with m.If(self.run & ~run_last):
            m.d.sync += pending.eq(1)

        failed = Signal()
        bad = Signal(z.node_bits)
        stalled = Signal()
        timer = Signal(range(z.depth + 17))
        ld = fabric.load
        m.d.comb += [ld.kind.eq(load_kind), ld.node.eq(self._field(rd.data, "node")),
                     ld.addr.eq(self._field(rd.data, "addr")),
                     ld.data.eq(self._field(rd.data, "data")),
                     fabric.read.node.eq(self._field(rd.data, "node")),
                     fabric.read.slot.eq(self._field(rd.data, "addr"))]
        if hasattr(fabric, "item"):  # the schedule fabric's own item ports stay unused
            for i in range(z.n):
                m.d.comb += fabric.item[i].valid.eq(0)

        # Second stage of a check: the read-back of the entry registered here.
        c2 = Signal()
        e2 = Signal(self.layout.width)
        m.d.sync += [e2.eq(rd.data), c2.eq(0)]
        k2 = self._field(e2, "kind")
        want = self._field(e2, "data")[:z.width]
        wrong = Mux(k2 == ImageKind.EXPECT_WORD,
                    ~fabric.read.held | (fabric.read.word != want),
                    Mux(k2 == ImageKind.EXPECT_EMPTY, fabric.read.held,
                        fabric.read.acc != want))
        with m.If(c2 & wrong & ~failed):
            m.d.sync += [failed.eq(1), bad.eq(self._field(e2, "node"))]

        m.d.sync += self.report.eq(0)
        with m.FSM(name="phase"):
            with m.State("Idle"):
                with m.If(pending):
                    m.d.sync += [pending.eq(0), ptr.eq(0), fetched.eq(0), failed.eq(0),
                                 bad.eq(0), stalled.eq(0)]
                    m.next = "Load"
            with m.State("Load"):
                with m.If(fetched & ~is_load):
                    # a check or the end: address it again for after the run
                    m.d.sync += [ptr.eq(ptr - 1), fetched.eq(0)]
                    m.next = "Start"
                with m.Else():
                    m.d.comb += ld.valid.eq(fetched)
                    m.d.sync += [ptr.eq(ptr_next), fetched.eq(1)]
            with m.State("Start"):
                m.d.comb += fabric.start.eq(1)
                m.d.sync += timer.eq(0)
                m.next = "Run"
            with m.State("Run"):
                m.d.sync += timer.eq(timer + 1)
                with m.If(fabric.done):
                    m.d.sync += [ptr.eq(ptr_next), fetched.eq(1)]
                    m.next = "Check"
                with m.Elif(timer == z.depth + 16):
                    m.d.sync += [stalled.eq(1), failed.eq(1)]
                    m.next = "Report"
            with m.State("Check"):
                with m.If(fetched & is_check):
                    m.d.sync += [c2.eq(1), ptr.eq(ptr_next)]
                with m.Else():
                    # Only the end may end the checks: any other entry here (a kind this
                    # fabric does not load) would make a run that checked nothing PASS.
                    with m.If(fetched & (kind != ImageKind.END) & ~failed & ~(c2 & wrong)):
                        m.d.sync += [failed.eq(1), bad.eq(self._field(rd.data, "node"))]
                    m.next = "Report"   # the last check is compared in this cycle
            with m.State("Report"):
                m.d.sync += [self.report.eq(1), self.done.eq(1), self.ok.eq(~failed),
                             self.node.eq(bad),
                             self.stall.eq(stalled), self.runs.eq(self.runs + 1)]
                m.next = "Idle"
        return m


class ImageLoader(wiring.Component):
    """The UART upload protocol: bytes in, image writes and run requests out.

    ``W a0 a1 d0 .. d(B-1)``: write entry ``a0 + 256 a1`` with the
    little-endian ``B``-byte value ``d`` (``B = ceil(entry bits / 8)``);
    ``R``: run the image. Any other byte between commands is ignored.

    Attributes
    ----------
    data : In(stream.Signature(8))
        Received bytes (always ready).
    write : Out(Signature(valid, addr, data))
        One image write per completed ``W`` command (a one-cycle ``valid``).
    run : Out(1)
        One-cycle pulse per ``R``.
    """

    def __init__(self, size: ScheduleSize):
        self._size = size
        self._bytes = ImageLayout(size).data_bytes
        super().__init__({"data": In(stream.Signature(8)), "write": Out(_write_signature(size)),
                          "run": Out(1)})

    def elaborate(self, platform) -> Module:
        m = Module()
        total = 2 + self._bytes
        buf = Signal(8 * total)
        count = Signal(range(total + 1))
        active = Signal()
        m.d.comb += self.data.ready.eq(1)
        m.d.sync += [self.write.valid.eq(0), self.run.eq(0)]
        m.d.comb += [self.write.addr.eq(buf[:16]), self.write.data.eq(buf[16:])]
        with m.If(self.data.valid):
            with m.If(active):
                m.d.sync += [buf.eq(Cat(buf[8:], self.data.payload)), count.eq(count + 1)]
                with m.If(count == total - 1):
                    m.d.sync += [active.eq(0), self.write.valid.eq(1)]
            with m.Elif(self.data.payload == UART_WRITE):
                m.d.sync += [active.eq(1), count.eq(0)]
            with m.Elif(self.data.payload == UART_RUN):
                m.d.sync += self.run.eq(1)
        return m


def schedule_status_text(n: int, runs: int, ok: bool, node: int, stall: bool,
                         fabric: str = "schedule") -> str:
    """The line :class:`ScheduleStatusLine` sends after every run (reference); ``fabric``
    names the fabric checked (``schedule`` or ``network``)."""
    if ok:
        verdict = "PASS"
    elif stall:
        verdict = "FAIL stall"
    else:
        verdict = f"FAIL node {node:0{len(str(n - 1))}d}"
    return f"{verdict} {fabric} n={n} runs={runs & 0xFFFFFFFF:08X}\r\n"


class ScheduleStatusLine(wiring.Component):
    """Formats :func:`schedule_status_text` into a byte stream.

    Attributes
    ----------
    trigger : In(1)
        Starts a line (ignored while one is being sent); the verdict inputs
        are sampled at that edge.
    runs, ok, node, stall : In
    out : Out(stream.Signature(8))

    Parameters
    ----------
    n : int
        Nodes.
    fabric : str
        The fabric's name in the line (``schedule``, ``network``).
    """

    def __init__(self, n: int, fabric: str = "schedule"):
        self._n = n
        self._fabric = fabric
        self._digits = len(str(n - 1))
        super().__init__({"trigger": In(1), "runs": In(32), "ok": In(1),
                          "node": In(max(1, (n - 1).bit_length())), "stall": In(1),
                          "out": Out(stream.Signature(8))})

    def elaborate(self, platform) -> Module:
        m = Module()
        runs, ok, stall = Signal(32), Signal(), Signal()
        node = Signal(len(self.node))

        def lit(text, when=Const(1)):
            return [(Const(ord(c), 8), when) for c in text]

        def hex_digit(nibble):
            return Mux(nibble < 10, nibble + ord("0"), nibble + (ord("A") - 10))[:8]

        # Decimal digits of the node by table: n is small, the table is n entries.
        names = [f"{k:0{self._digits}d}" for k in range(self._n)]
        node_digits = [(Array(Const(ord(s[d]), 8) for s in names)[node], ~ok & ~stall)
                       for d in range(self._digits)]
        chars = ([(Mux(ok, ord(p), ord(f)), Const(1)) for p, f in zip("PASS", "FAIL")]
                 + lit(" node ", ~ok & ~stall) + node_digits + lit(" stall", ~ok & stall)
                 + lit(f" {self._fabric} n={self._n} runs=")
                 + [(hex_digit(runs[4 * k:4 * k + 4]), Const(1)) for k in reversed(range(8))]
                 + lit("\r\n"))
        index = Signal(range(len(chars) + 1), init=len(chars))
        busy = index != len(chars)
        enabled = Cat(*[e for _, e in chars]).bit_select(index, 1)
        m.d.comb += [self.out.valid.eq(busy & enabled),
                     self.out.payload.eq(Array(c for c, _ in chars)[index])]
        with m.If(~busy & self.trigger):
            m.d.sync += [index.eq(0), runs.eq(self.runs), ok.eq(self.ok), node.eq(self.node),
                         stall.eq(self.stall)]
        with m.Elif(busy & (~enabled | self.out.ready)):
            m.d.sync += index.eq(index + 1)
        return m
