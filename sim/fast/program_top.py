"""The fast top of a program-driven fabric: load, run, check and read back in the hardware.

Test infrastructure only (never part of :mod:`pipegossip.hw`). The schedule
fabric and the network fabric share a load port (``load__valid/kind/node/
addr/data``), a run control (``start``, ``busy``, ``done``, ``cycle``,
``length``, ``LATENCY = 1``) and a read-back port (``read__node/slot`` ->
``read__word/held/acc``, latency 1); a run of either is mostly load and
read-back, so the trace mode's Python, which drives or samples every one of
those cycles, is the whole cost. :class:`ProgramFastTop` is what both fast
tops share (the network fabric's :class:`~.network.NetworkFastTop`, the
schedule fabric's :class:`~.schedule.ScheduleFastTop`):

* the fabric, a Verilog instance of the very text the trace mode builds or,
  for Amaranth's simulator, the fabric's Amaranth component as a submodule;
* three ROMs filled at start-up (``$readmemh``, or a memory's init): the
  load writes, one expected row per checked clock cycle, and one expected
  row per read-back (node, slot). Their contents come from the model
  (never derived here);
* a sequencer: on ``go`` it drives the run's load writes (one per cycle, as
  the trace testbench does), pulses ``start`` (cycle 0), checks cycles
  ``0 .. span-1`` against the expected rows, reads every node's every slot
  back and checks it, then raises ``finished``;
* the checker, which latches the first mismatch in the judge's order: by
  cycle; in a cycle the subclass's ``trace`` check (:meth:`~ProgramFastTop.
  run_checks`), then ``busy``, ``done``, ``cycle`` (here: the judges share
  :func:`~pipegossip.sim.judge.schedule.control_checks`), then the
  subclass's word checks; after the run the read-back, node by node (held
  bit, word, then after the node's last slot the node's own checks in the
  subclass's order, :attr:`~ProgramFastTop.final_order`). The place is
  ``bad_check`` (an index into the subclass's :attr:`~ProgramFastTop.checks`),
  ``bad_cycle``, ``bad_node``, ``bad_port`` (a port or node, or the slot of
  a final-store check).

The read-back row is the same for both fabrics (:data:`FINAL_FIELDS`):
held, word, must be held (completeness), the node's final accumulator, the
combination it must hold and whether it must.
"""

from __future__ import annotations

from amaranth.hdl import (ClockDomain, ClockSignal, Const, DomainRenamer, Instance, Module, Mux,
                          ResetSignal, Signal)
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .checker import readmem_rom

__all__ = ["ProgramFastTop", "NO_PLACE", "FINAL_CYCLE", "INPUTS", "SUMMARY", "ROMS",
           "first_set", "slices", "pack", "field_bits", "final_fields", "rom_files",
           "rom_module"]

#: ``bad_node``/``bad_port`` when the check names none.
NO_PLACE = 0xFFFF
#: ``bad_cycle`` of a read-back check (the judge's cycle None).
FINAL_CYCLE = 0xFFFFFFFF
#: The top's inputs a driver sets before each ``go`` (32 bits each).
INPUTS = ("load_base", "load_count", "exp_base", "span", "final_base", "length")
#: The top's outputs a driver reads once ``finished`` is high.
SUMMARY = ("finished", "bad", "bad_check", "bad_cycle", "bad_node", "bad_port",
           "busy_cycles", "done_at")
#: The three ROMs.
ROMS = ("load", "expect", "final")


def rom_files(prefix: str) -> dict[str, str]:
    """The files the ROMs of a top whose modules start with ``prefix`` load."""
    return {r: f"{prefix}_{r}.hex" for r in ROMS}


def rom_module(prefix: str, rom: str, width: int, depth: int) -> str:
    """The Verilog of ROM ``rom``: ``depth`` rows, read combinationally, loaded at time 0."""
    return readmem_rom(f"{prefix}_{rom}_rom", rom_files(prefix)[rom], width, depth)


def final_fields(width: int) -> tuple[tuple[str, int], ...]:
    """The read-back row: held, word, need, acc, want, accneed (``width``-bit words)."""
    return (("held", 1), ("word", width), ("need", 1), ("acc", width), ("want", width),
            ("accneed", 1))


def field_bits(fields) -> int:
    """Bits of a row part made of ``fields``."""
    return sum(w for _, w in fields)


def pack(fields, values: dict) -> int:
    """One row (or a part of one) from field values, low field first."""
    out, at = 0, 0
    for name, w in fields:
        out |= (int(values[name]) & ((1 << w) - 1)) << at
        at += w
    return out


def slices(row, fields, base: int = 0) -> dict:
    """The fields of ``row`` from bit ``base`` on, as slices (low field first)."""
    out, at = {}, base
    for name, w in fields:
        out[name] = row[at:at + w]
        at += w
    return out


def first_set(bits: list, none: int = NO_PLACE):
    """(any, index of the lowest set bit, ``none`` when none) of a list of 1-bit values."""
    index = Const(none, 16)
    for i in reversed(range(len(bits))):
        index = Mux(bits[i], i, index)
    anyb = Const(0, 1)
    for b in bits:
        anyb = anyb | b
    return anyb, index


class ProgramFastTop(wiring.Component):
    """A program-driven fabric with its load, checker and read-back sequencer around it.

    Subclasses set :attr:`checks` (the check names, ``trace``, ``busy``,
    ``done``, ``cycle`` among them), :attr:`final_order`, :attr:`prefix` and
    :attr:`fabric_name`, and define :meth:`fabric_ports`,
    :meth:`fabric_component`, :meth:`widths` and :meth:`run_checks`.

    Parameters
    ----------
    size
        The fabric's size (``n``, ``slots``, ``width``).
    depths : dict
        Rows of each ROM (``load``, ``expect``, ``final``).
    roms : dict, optional
        The ROMs' rows (lists of int): the fabric and ROMs are then Amaranth
        submodules (for Amaranth's simulator); by default Verilog instances.

    Attributes
    ----------
    go : In(1)
        Begin a run with the inputs below (ignored while one runs).
    load_base, load_count, exp_base, span, final_base, length : In(32)
        The run's load rows, first expected row and the cycles checked
        (``0 .. span-1``), first read-back row, and the program's length L.
    finished : Out(1)
        The run was loaded, checked and read back (from the cycle after its
        last read-back until the next ``go``).
    bad, bad_check, bad_cycle, bad_node, bad_port : Out
        The first mismatch (see the module notes).
    busy_cycles, done_at : Out(32)
        Cycles with ``busy`` among those checked; the first checked cycle
        >= 1 with ``done`` high (0: none).

    Notes
    -----
    Every input, reset included, is registered before use (as the FSM
    fabric's fast top, :class:`~pipegossip.sim.fast.checker.FastTop`, for
    Verilator's sake: a top-level input feeding logic combinationally is
    re-evaluated at every evaluation); a ``go`` takes effect two cycles after
    it is driven.
    """

    #: Check names; ``bad_check`` is an index into them.
    checks: tuple[str, ...] = ()
    #: The read-back checks of a node after its last slot, in the judge's order:
    #: ``(conditions, check)``, conditions among ``acc`` (the final accumulator
    #: differs), ``lack`` (a needed slot was not held) and ``want`` (the
    #: accumulator is not the combination it must hold).
    final_order: tuple[tuple[tuple[str, ...], str], ...] = ()
    #: Module-name prefix of the top's ROMs; the fabric's Verilog module.
    prefix = "pg_fast"
    fabric_name = ""
    #: The fabric's latency: program cycle t is exchanged in clock cycle t + latency.
    latency = 1

    def __init__(self, size, depths: dict, roms: dict | None = None):
        self.size, self.depths, self.roms = size, dict(depths), roms
        members = {"go": In(1), **{k: In(32) for k in INPUTS},
                   "finished": Out(1), "bad": Out(1), "bad_check": Out(4), "bad_cycle": Out(32),
                   "bad_node": Out(16), "bad_port": Out(16), "busy_cycles": Out(32),
                   "done_at": Out(32)}
        super().__init__(members)

    # ------------------------------------------------------------ what a fabric defines
    def fabric_ports(self) -> list:
        """The fabric's port table (``name``, ``direction``, ``width``)."""
        raise NotImplementedError

    def fabric_component(self) -> wiring.Component:
        """The fabric as an Amaranth component (Amaranth's simulator)."""
        raise NotImplementedError

    def widths(self) -> dict[str, int]:
        """Bits of each ROM's rows."""
        raise NotImplementedError

    def run_checks(self, m: Module, f: dict, row) -> tuple:
        """One checked cycle's checks of the subclass against its expected ``row``.

        Returns ``(t_any, t_node, t_port, d_any, d_code, d_node, d_port)``:
        the trace check (any, its node and port) and the word checks (any,
        their check code, node and port), each the judge's first.
        """
        raise NotImplementedError

    # ------------------------------------------------------------ shared
    def code(self, check: str) -> int:
        return self.checks.index(check)

    def _fabric(self, m: Module, dom: str, rst) -> dict:
        """The fabric's ports as signals named like its Verilog ports."""
        table = self.fabric_ports()
        sig = {p.name: Signal(p.width, name=f"f_{p.name}") for p in table}
        if self.roms is None:
            conns = {("i_" if p.direction == "in" else "o_") + p.name: sig[p.name]
                     for p in table}
            m.submodules.fabric = Instance(self.fabric_name, i_clk=ClockSignal(), i_rst=rst,
                                           **conns)
            return sig
        fabric = self.fabric_component()
        m.submodules.fabric = DomainRenamer(dom)(fabric)
        for path, member, value in fabric.signature.flatten(fabric):
            name = "__".join(map(str, path))
            m.d.comb += (value.eq(sig[name]) if member.flow == wiring.In
                         else sig[name].eq(value))
        return sig

    def _rom(self, m: Module, rom: str, addr) -> Signal:
        width, depth = self.widths()[rom], self.depths[rom]
        data = Signal(width, name=f"{rom}_row")
        abits = max(1, (depth - 1).bit_length())
        if self.roms is None:
            m.submodules[f"{rom}_rom"] = Instance(f"{self.prefix}_{rom}_rom",
                                                  i_addr=addr[:abits], o_data=data)
        else:
            mem = m.submodules[f"{rom}_rom"] = Memory(shape=width, depth=depth,
                                                      init=self.roms[rom])
            rd = mem.read_port(domain="comb")
            m.d.comb += [rd.addr.eq(addr[:abits]), data.eq(rd.data)]
        return data

    def load_fields(self) -> tuple[tuple[str, int], ...]:
        w = {p.name: p.width for p in self.fabric_ports()}
        return tuple((f, w[f"load__{f}"]) for f in ("kind", "node", "addr", "data"))

    def elaborate(self, platform) -> Module:
        m = Module()
        z = self.size
        if self.roms is None:
            # registered reset and inputs: see the class notes
            dom = "run"
            m.domains.run = ClockDomain("run", local=True)
            rst = Signal(init=1, name="rst_r")
            m.d.sync += rst.eq(ResetSignal())
            m.d.comb += [ClockSignal("run").eq(ClockSignal()), ResetSignal("run").eq(rst)]
        else:
            dom, rst = "sync", None
        ins = {k: Signal.like(getattr(self, k), name=f"{k}_r") for k in ("go", *INPUTS)}
        m.d[dom] += [r.eq(getattr(self, k)) for k, r in ins.items()]
        sync = m.d[dom]
        f = self._fabric(m, dom, rst)

        phase = Signal(2, name="phase")  # 0 idle, 1 load, 2 run, 3 read-back
        cnt = Signal(32, name="cnt")
        par = {k: Signal(32, name=f"p_{k}") for k in INPUTS}
        rd_node, rd_slot = Signal(16, name="rd_node"), Signal(16, name="rd_slot")
        pv, px = Signal(16, name="prev_node"), Signal(16, name="prev_slot")

        load_row = self._rom(m, "load", par["load_base"] + cnt)
        exp_row = self._rom(m, "expect", par["exp_base"] + cnt)
        fin_row = self._rom(m, "final", par["final_base"] + cnt - 1)

        # ------------------------------------------------------------ sequencer
        lf = self.load_fields()
        ld = slices(load_row, lf)
        m.d.comb += [f["load__valid"].eq(phase == 1), f["start"].eq((phase == 2) & (cnt == 0)),
                     f["read__node"].eq(rd_node), f["read__slot"].eq(rd_slot)]
        m.d.comb += [f[f"load__{k}"].eq(ld[k]) for k, _ in lf]
        reads = z.n * z.slots
        with m.Switch(phase):
            with m.Case(0):
                with m.If(ins["go"]):
                    sync += [par[k].eq(ins[k]) for k in INPUTS]
                    sync += [cnt.eq(0), phase.eq(Mux(ins["load_count"] == 0, 2, 1)),
                             self.finished.eq(0), self.bad.eq(0), self.busy_cycles.eq(0),
                             self.done_at.eq(0), rd_node.eq(0), rd_slot.eq(0)]
            with m.Case(1):
                sync += cnt.eq(cnt + 1)
                with m.If(cnt + 1 >= par["load_count"]):
                    sync += [cnt.eq(0), phase.eq(2)]
            with m.Case(2):
                sync += cnt.eq(cnt + 1)
                with m.If(cnt + 1 >= par["span"]):
                    sync += [cnt.eq(0), phase.eq(3)]
            with m.Case(3):
                sync += [cnt.eq(cnt + 1), pv.eq(rd_node), px.eq(rd_slot)]
                with m.If(rd_slot == z.slots - 1):
                    sync += [rd_slot.eq(0), rd_node.eq(rd_node + 1)]
                with m.Else():
                    sync += rd_slot.eq(rd_slot + 1)
                with m.If(cnt == reads):
                    sync += [phase.eq(0), self.finished.eq(1)]

        # ------------------------------------------------------------ the run's checks
        k = cnt
        t_any, t_node, t_port, d_any, d_code, d_node, d_port = self.run_checks(m, f, exp_row)
        L, lat = par["length"], self.latency
        busy_bad = (k >= 1) & (f["busy"] != ((k >= 1) & (k <= L + lat)))
        done_bad = (k >= 1) & (f["done"] != (k > L + lat))
        cyc_want = Mux((k >= lat + 1) & (k <= L + lat), k - lat, 0)
        cyc_bad = ((k >= 1) & (f["cycle"] != cyc_want)) | ((k == 0) & (f["length"] != L))

        c_any, c_code = Signal(name="c_any"), Signal(4, name="c_code")
        c_node, c_port = Signal(16, name="c_node"), Signal(16, name="c_port")
        with m.If(t_any):
            m.d.comb += [c_any.eq(1), c_code.eq(self.code("trace")), c_node.eq(t_node),
                         c_port.eq(t_port)]
        with m.Elif(busy_bad | done_bad | cyc_bad):
            code = Mux(busy_bad, self.code("busy"),
                       Mux(done_bad, self.code("done"), self.code("cycle")))
            m.d.comb += [c_any.eq(1), c_code.eq(code), c_node.eq(NO_PLACE),
                         c_port.eq(NO_PLACE)]
        with m.Elif(d_any):
            m.d.comb += [c_any.eq(1), c_code.eq(d_code), c_node.eq(d_node), c_port.eq(d_port)]

        # ------------------------------------------------------------ the read-back's checks
        fe = slices(fin_row, final_fields(z.width))
        held, word, racc = f["read__held"], f["read__word"], f["read__acc"]
        last = px == z.slots - 1
        lack = Signal(name="lack")
        lack_now = lack | (fe["need"] & ~held)
        h_bad = held != fe["held"]
        w_bad = held & fe["held"] & (word != fe["word"])
        node_bad = dict(acc=last & (racc != fe["acc"]), lack=last & lack_now,
                        want=last & fe["accneed"] & (racc != fe["want"]))
        order = [(h_bad, "final_held"), (w_bad, "final_word")]
        for conds, check in self.final_order:
            bad = Const(0, 1)
            for c in conds:
                bad = bad | node_bad[c]
            order.append((bad, check))
        r_bad, r_code = Const(0, 1), Const(0, 4)
        for bad, check in reversed(order):  # the earlier check wins
            r_code = Mux(bad, self.code(check), r_code)
            r_bad = r_bad | bad
        r_any = (phase == 3) & (cnt >= 1) & r_bad
        with m.If((phase == 3) & (cnt >= 1)):
            sync += lack.eq(Mux(last, 0, lack_now))
        with m.Elif(phase == 0):
            sync += lack.eq(0)

        with m.If(phase == 2):
            sync += self.busy_cycles.eq(self.busy_cycles + f["busy"])
            with m.If(f["done"] & (k >= 1) & (self.done_at == 0)):
                sync += self.done_at.eq(k)
            with m.If(c_any & ~self.bad):
                sync += [self.bad.eq(1), self.bad_check.eq(c_code), self.bad_cycle.eq(k),
                         self.bad_node.eq(c_node), self.bad_port.eq(c_port)]
        with m.If(r_any & ~self.bad):
            sync += [self.bad.eq(1), self.bad_check.eq(r_code), self.bad_cycle.eq(FINAL_CYCLE),
                     self.bad_node.eq(pv),
                     self.bad_port.eq(Mux(h_bad | w_bad, px, NO_PLACE))]
        return m
