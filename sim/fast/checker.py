"""Fast co-simulation: the model's expected trace checked beside the fabric, in hardware.

Test infrastructure only: nothing here is part of the synthesised fabric
(:mod:`pipegossip.hw`); it exists to be compiled into a co-simulation.

:class:`FastTop` is the cosim-only wrapper top (Verilog ``pg_fast_top``):

* the fabric, as a Verilog instance of ``pipegossip_fabric`` (the very text
  the per-cycle mode builds, so both modes simulate the same fabric, and a
  fault-injecting stand-in with the same ports can take its place);
* a word source per processor that does what the cocotb driver does in the
  per-cycle mode: offer session 0's tagged word with ``start`` and session
  s+1's right after each handshake (:class:`~pipegossip.hw.words.WordScheme`,
  seed from the ``seed`` input);
* :class:`FastChecker`, comparing every output of every processor with a row
  of the expected trace every cycle;
* the expected trace itself, a ROM (:func:`rom_verilog`) filled by
  ``$readmemh`` from the file :data:`EXPECT_FILE` in the simulator's working
  folder when the simulation starts.
* the batch driver and its log (:mod:`.batch`): many runs back to
  back without Python, one summary line each in a file.

Every input of the top is registered first (see :meth:`FastTop.elaborate`).

Why the expectation is loaded at run time rather than baked in as a memory
init: the fabric already bakes its orders in, so a build serves one
configuration either way, but a memory init puts every expected row into
the Verilog (at N=64 with 100 sessions, 12 861 rows of 1 000 bits), which
Yosys and the C++ compiler would then chew through in every build. Loaded
at start-up, it costs a file write and no build time, and a build's text
does not depend on L beyond the ROM's depth.

Row layout (:class:`ExpectLayout`), least significant bit first: for each
processor ``action`` (3), ``peer`` (PW), ``session`` of the word delivered
(SW, 0 when none), ``take`` (1: the processor takes a word this cycle);
then ``used``. Row t is cycle t of the pinned cycle contract (row 0 the
start cycle); rows after L are all zero (idle).
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import (Cat, ClockDomain, ClockSignal, Const, DomainRenamer, Instance, Module,
                          Mux, ResetSignal, Signal)
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...hw.bits import counter_width, peer_width, session_width, used_width
from ...hw.ports import IN, ports
from ...hw.words import SEED_BITS, WordScheme
from ...model.runtable import R
from .batch import LOG_MODULE, BatchDriver
from .ports import BATCH_PORTS, LOG_FIELDS, SUMMARY_PORTS

__all__ = ["ExpectLayout", "FastChecker", "FastTop", "KIND_BITS", "EXPECT_FILE",
           "FAST_TOP", "ROM_MODULE", "rom_verilog", "SUMMARY_PORTS", "BATCH_PORTS"]

#: File the ROM loads (in the simulator's working folder).
EXPECT_FILE = "pg_expect.hex"
#: Module names of the wrapper top and the ROM.
FAST_TOP = "pg_fast_top"
ROM_MODULE = "pg_expect_rom"
#: Mismatch kinds by bit of ``bad_kinds``; the judge's kinds
#: (:data:`~pipegossip.sim.judge.verdict.KINDS`) in the same order, so the lowest set bit is the judge's first kind of that cycle.
KIND_BITS = ("trace", "used", "busy", "done", "cycle", "stall", "delivery", "handshake")
#: ``bad_proc`` when the first kind is fabric-wide.
NO_PROC = 0xFFFF


@dataclass(frozen=True)
class ExpectLayout:
    """Bit layout of one expected row (see the module notes)."""

    n: int
    sessions: int

    @property
    def pw(self) -> int:
        return peer_width(self.n)

    @property
    def sw(self) -> int:
        return session_width(self.sessions)

    @property
    def uw(self) -> int:
        return used_width(self.n)

    @property
    def lane(self) -> int:
        """Bits per processor."""
        return 3 + self.pw + self.sw + 1

    @property
    def width(self) -> int:
        return self.n * self.lane + self.uw

    def offsets(self, p: int) -> tuple[int, int, int, int]:
        """Offsets of processor ``p``'s action, peer, session and take bits."""
        base = p * self.lane
        return base, base + 3, base + 3 + self.pw, base + 3 + self.pw + self.sw

    @property
    def used_offset(self) -> int:
        return self.n * self.lane


def rom_verilog(width: int, depth: int) -> str:
    """The expected-trace ROM: ``depth`` rows of ``width`` bits, read combinationally.

    Filled by ``$readmemh`` from :data:`EXPECT_FILE` at time 0 (Verilator and
    Icarus both resolve the name against the simulator's working folder).
    """
    return readmem_rom(ROM_MODULE, EXPECT_FILE, width, depth)


def readmem_rom(module: str, file: str, width: int, depth: int) -> str:
    """A Verilog ROM ``module`` of ``depth`` rows of ``width`` bits filled from ``file``.

    Read combinationally; ``$readmemh`` at time 0. The fast tops' ROMs all
    take this one text.
    """
    abits = max(1, (depth - 1).bit_length())
    return (f"module {module}(input wire [{abits - 1}:0] addr, "
            f"output wire [{width - 1}:0] data);\n"
            f"  reg [{width - 1}:0] mem [0:{depth - 1}];\n"
            f"  initial $readmemh(\"{file}\", mem);\n"
            f"  assign data = mem[addr];\n"
            f"endmodule\n")


class FastChecker(wiring.Component):
    """Compares the fabric's outputs with one expected row per cycle and keeps a summary.

    Parameters
    ----------
    n, sessions, width : int
        The fabric's processors, sessions and word width.
    length : int
        The model's L. The check of a run covers cycles 0 .. ``length + tail``.
    tail : int
        Cycles checked after L (``done`` high, everything idle).

    Attributes
    ----------
    begin : In(1)
        The fabric takes ``start`` this cycle (``start & ~busy``): cycle 0.
    seed : In(32)
        Word seed of the run (expected words of the deliveries).
    action, peer, dvalid, dsource, dsession, dword, taken : In(...).array(N)
        The fabric's per-processor outputs; ``taken`` is ``ready & valid``.
    used, busy, done, cycle, stall : In(...)
        The fabric-wide outputs.
    row : In(layout width)
        The expected row at ``addr`` (combinational ROM: latency 0).
    addr : Out(abits)
        The cycle being checked (0 outside a run).
    active : Out(1)
        A run's cycle is being checked (cycle 0 .. L + tail).
    finished : Out(1)
        The last cycle of the run was checked (registered: high from the
        cycle after it until the next ``begin``).
    bad, bad_cycle, bad_proc, bad_kinds : Out
        Latched at the first mismatching cycle: its number, the lowest
        processor of its first kind (``0xFFFF`` for a fabric-wide kind), and
        every kind that differed in it (bit i is :data:`KIND_BITS`\\[i]).
    deliveries, used_sum, busy_cycles : Out(32)
        Words delivered, sum of ``used``, cycles with ``busy``, over the run.
    done_at : Out(32)
        First cycle >= 1 with ``done`` high (0: none yet).
    idle_bad : Out(1)
        Sticky until reset: an output was not at rest outside a run (or
        ``done`` was not what the previous run left).

    Notes
    -----
    Every output is registered (latency 1) except ``addr`` and ``active``.
    """

    def __init__(self, n: int, sessions: int, width: int, length: int, tail: int):
        self.layout = lay = ExpectLayout(n, sessions)
        self.n, self.sessions, self.width_ = n, sessions, width
        self.length, self.tail = length, tail
        self.depth = length + tail + 1
        self.abits = max(1, (self.depth - 1).bit_length())
        cw = counter_width(n, sessions)
        super().__init__({
            "begin": In(1), "seed": In(SEED_BITS),
            "action": In(3).array(n), "peer": In(lay.pw).array(n),
            "dvalid": In(1).array(n), "dsource": In(lay.pw).array(n),
            "dsession": In(lay.sw).array(n), "dword": In(width).array(n),
            "taken": In(1).array(n),
            "used": In(lay.uw), "busy": In(1), "done": In(1), "cycle": In(cw), "stall": In(1),
            "row": In(lay.width), "addr": Out(self.abits), "active": Out(1),
            "finished": Out(1), "bad": Out(1), "bad_cycle": Out(32), "bad_proc": Out(16),
            "bad_kinds": Out(len(KIND_BITS)), "deliveries": Out(32), "used_sum": Out(32),
            "busy_cycles": Out(32), "done_at": Out(32), "idle_bad": Out(1),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        lay, n = self.layout, self.n
        running = Signal()
        t_reg = Signal(32)
        fresh = self.begin & ~running
        active = fresh | running
        t = Mux(running, t_reg, 0)
        m.d.comb += [self.active.eq(active), self.addr.eq(t)]

        row = self.row
        scheme = WordScheme(n, self.sessions, self.width_)
        trace, deliv, shake = [], [], []
        for p in range(n):
            oa, op, os_, ok = lay.offsets(p)
            ea, ep = row[oa:oa + 3], row[op:op + lay.pw]
            es, ek = row[os_:os_ + lay.sw], row[ok]
            trace.append((self.action[p] != ea) | (self.peer[p] != ep))
            exp_dv = ea == R
            # The words of the run come from the same scheme the source uses,
            # with the expected source and session: a word from the wrong
            # sender or session differs (hw/words.py).
            word = scheme.expr(self.seed, ep, es)
            wrong = ((self.dsource[p] != ep) | (self.dsession[p] != es)
                     | (self.dword[p] != word))
            # Deliveries are judged from cycle 1 on (the start cycle is the trace's).
            deliv.append((t != 0) & ((self.dvalid[p] != exp_dv) | (exp_dv & wrong)))
            shake.append(self.taken[p] != ek)
        inside = (t >= 1) & (t <= self.length)
        eu = row[lay.used_offset:lay.used_offset + lay.uw]
        scalar = [self.used != eu, self.busy != inside,
                  (t >= 1) & (self.done != (t > self.length)),
                  self.cycle != Mux(inside, t, 0), self.stall]
        tvec, dvec, hvec = [Signal(n, name=k) for k in ("trace_bad", "deliv_bad", "shake_bad")]
        m.d.comb += [tvec.eq(_cat(trace)), dvec.eq(_cat(deliv)), hvec.eq(_cat(shake))]
        kinds = Signal(len(KIND_BITS))
        m.d.comb += kinds.eq(_cat([tvec.any()] + scalar + [dvec.any(), hvec.any()]))
        # The processor the judge would name first: the lowest one of the
        # first kind in KINDS order, or none when that kind is fabric-wide.
        scalar_any = _cat(scalar).any()
        vec = Mux(tvec.any(), tvec, Mux(scalar_any, 0, Mux(dvec.any(), dvec, hvec)))
        proc = Const(NO_PROC, 16)
        for p in reversed(range(n)):
            proc = Mux(vec[p], p, proc)

        done_seen = Signal()
        with m.If(active):
            first = kinds.any() & (fresh | ~self.bad)
            m.d.sync += self.bad.eq(Mux(fresh, 0, self.bad) | kinds.any())
            with m.If(first):
                m.d.sync += [self.bad_cycle.eq(t), self.bad_proc.eq(proc),
                             self.bad_kinds.eq(kinds)]
            with m.Elif(fresh):
                m.d.sync += [self.bad_cycle.eq(0), self.bad_proc.eq(0), self.bad_kinds.eq(0)]
            got_done = self.done & (t >= 1) & (fresh | ~done_seen)
            m.d.sync += done_seen.eq(Mux(fresh, 0, done_seen) | got_done)
            with m.If(got_done):
                m.d.sync += self.done_at.eq(t)
            with m.Elif(fresh):
                m.d.sync += self.done_at.eq(0)
            delivered = sum(self.dvalid[p] for p in range(n))
            for reg, inc in ((self.deliveries, delivered), (self.used_sum, self.used),
                             (self.busy_cycles, self.busy)):
                m.d.sync += reg.eq(Mux(fresh, 0, reg) + inc)

        last = self.length + self.tail
        with m.If(fresh):
            m.d.sync += [running.eq(1), t_reg.eq(1), self.finished.eq(0)]
        with m.Elif(running):
            with m.If(t_reg == last):
                m.d.sync += [running.eq(0), self.finished.eq(1)]
            with m.Else():
                m.d.sync += t_reg.eq(t_reg + 1)

        # Outside a run every output rests; done shows what the last run left.
        done_expect = Signal()
        with m.If(running & (t_reg == last)):
            m.d.sync += done_expect.eq(1)
        rest = [self.action[p].any() | self.peer[p].any() | self.dvalid[p] for p in range(n)]
        restless = (_cat(rest).any() | self.busy | self.stall | self.cycle.any()
                    | self.used.any() | (self.done != done_expect))
        with m.If(~active & restless):
            m.d.sync += self.idle_bad.eq(1)
        return m


def _cat(bits):
    return Cat(*bits)


class FastTop(wiring.Component):
    """The fast co-simulation's top: fabric instance, word sources, checker, ROM, batch driver.

    Parameters
    ----------
    n, sessions, width, length, tail : int
        As :class:`FastChecker`.

    Attributes
    ----------
    start : In(1)
        As the fabric's ``start`` (a pulse while not busy begins a run).
    seed : In(32)
        The run's word seed; hold it steady during the run.
    hold : In(N)
        Passed to the fabric's ``hold`` (0 in normal use; the fault-injecting
        stand-ins of :mod:`.faults` read it as their fault selector).
    finished, bad, bad_cycle, bad_proc, bad_kinds, deliveries, used_sum, busy_cycles, done_at, idle_bad : Out
        :class:`FastChecker`'s summary (registered, latency 1).
    busy, done, stall : Out(1)
        The fabric's own (latency 0): its final state.
    go, count, idle : In
        Start a batch of ``count`` runs driven by the hardware
        (:class:`~.batch.BatchDriver`; word seeds ``seed``, ``seed + 1``, ...),
        each logged to :data:`~.batch.LOG_FILE`.
    batch_busy, runs_done : Out
        A batch is under way; runs it has logged.

    Notes
    -----
    Every input, ``rst`` included, is registered before use (see
    :meth:`elaborate`): the fabric sees ``start`` one cycle after the top does.
    """

    def __init__(self, n: int, sessions: int, width: int, length: int, tail: int):
        self.n, self.sessions, self.width_ = n, sessions, width
        self.length, self.tail = length, tail
        self.checker = FastChecker(n, sessions, width, length, tail)
        self.driver = BatchDriver(self.checker.depth)
        members = {"start": In(1), "seed": In(SEED_BITS), "hold": In(n), "go": In(1),
                   "count": In(32), "idle": In(8), "batch_busy": Out(1), "runs_done": Out(32)}
        for name in SUMMARY_PORTS:
            if name not in ("busy", "done", "stall"):
                members[name] = Out(len(getattr(self.checker, name)))
        members.update(busy=Out(1), done=Out(1), stall=Out(1))
        super().__init__(members)

    def elaborate(self, platform) -> Module:
        m = Module()
        n, ck, drv = self.n, self.checker, self.driver
        # Every input of the top goes through a register first, reset included:
        # Verilator re-evaluates all logic fed combinationally by a top-level
        # input at every evaluation (its "ico" region: it cannot tell which
        # input changed), and Amaranth's next-state logic of every register
        # reads the reset. Behind registers, a clock edge evaluates only what
        # the edge changes. Everything is one cycle later than its input.
        m.domains.run = ClockDomain("run", local=True)
        rst = Signal(init=1, name="rst_r")
        inputs = {k: Signal.like(getattr(self, k), name=f"{k}_r")
                  for k in ("start", "seed", "hold", "go", "count", "idle")}
        m.d.sync += [rst.eq(ResetSignal())] + [r.eq(getattr(self, k)) for k, r in inputs.items()]
        m.d.comb += [ClockSignal("run").eq(ClockSignal()), ResetSignal("run").eq(rst)]
        m.submodules.checker = DomainRenamer("run")(ck)
        m.submodules.driver = DomainRenamer("run")(drv)
        sig = {p.name: Signal(p.width, name=f"f_{p.name}")
               for p in ports(n, self.sessions, self.width_)}
        direction = {p.name: p.direction for p in ports(n, self.sessions, self.width_)}
        conns = {("i_" if direction[k] == IN else "o_") + k: s for k, s in sig.items()}
        m.submodules.fabric = Instance("pipegossip_fabric", i_clk=ClockSignal(),
                                       i_rst=rst, **conns)
        row = Signal(ck.layout.width)
        m.submodules.rom = Instance(ROM_MODULE, i_addr=ck.addr, o_data=row)

        start = inputs["start"] | drv.start
        begin = start & ~sig["busy"]
        seed = Mux(drv.running, drv.seed, inputs["seed"])
        scheme = WordScheme(n, self.sessions, self.width_)
        m.d.comb += [sig["start"].eq(start), sig["hold"].eq(inputs["hold"]), ck.begin.eq(begin),
                     ck.seed.eq(seed), ck.row.eq(row),
                     drv.go.eq(inputs["go"]), drv.count.eq(inputs["count"]),
                     drv.idle.eq(inputs["idle"]), drv.seed0.eq(inputs["seed"]),
                     drv.began.eq(begin), drv.finished.eq(ck.finished),
                     self.batch_busy.eq(drv.running), self.runs_done.eq(drv.runs_done)]
        logged = dict(run=drv.run, finished=drv.ok, waited=drv.waited, busy=sig["busy"],
                      done=sig["done"], stall=sig["stall"])
        m.submodules.log = Instance(LOG_MODULE, i_clk=ClockSignal(), i_en=drv.log_en, **{
            f"i_{name}": logged[name] if name in logged else getattr(ck, name)
            for name, _ in LOG_FIELDS})
        for i in range(n):
            # The driver of the per-cycle mode, in hardware: session 0's word
            # with start, the next one after each handshake, none left: valid low.
            sess = Signal(range(self.sessions + 1), name=f"sess_{i}")
            idx = Mux(begin, 0, sess)
            valid = ck.active & (idx < self.sessions)
            ready = sig[f"words__{i}__ready"]
            m.d.comb += [sig[f"words__{i}__valid"].eq(valid),
                         sig[f"words__{i}__payload"].eq(scheme.expr(seed, i, idx)),
                         ck.taken[i].eq(ready & valid),
                         ck.action[i].eq(sig[f"action__{i}"]), ck.peer[i].eq(sig[f"peer__{i}"]),
                         ck.dvalid[i].eq(sig[f"delivery__{i}__valid"]),
                         ck.dsource[i].eq(sig[f"delivery__{i}__source"]),
                         ck.dsession[i].eq(sig[f"delivery__{i}__session"]),
                         ck.dword[i].eq(sig[f"delivery__{i}__word"])]
            with m.If(begin):
                m.d.run += sess.eq(1)
            with m.Elif(ready & valid):
                m.d.run += sess.eq(sess + 1)
        m.d.comb += [ck.used.eq(sig["used"]), ck.busy.eq(sig["busy"]), ck.done.eq(sig["done"]),
                     ck.cycle.eq(sig["cycle"]), ck.stall.eq(sig["stall"]),
                     self.busy.eq(sig["busy"]), self.done.eq(sig["done"]),
                     self.stall.eq(sig["stall"])]
        for name in SUMMARY_PORTS:
            if name not in ("busy", "done", "stall"):
                m.d.comb += getattr(self, name).eq(getattr(ck, name))
        return m
