"""Fast co-simulation of the network fabric: load, run, check and read back in the hardware.

Test infrastructure only (never part of :mod:`pipegossip.hw`). A network run
is mostly load and read-back: hypercube(4) loads about 350 writes and reads
256 store slots back around a 4-cycle gossip, so the trace mode's Python,
which drives or samples every one of those cycles, is the whole cost. Here
:class:`NetworkFastTop` (Verilog ``pg_net_fast_top``) does all of it:

* the fabric, a Verilog instance of ``pipegossip_network_fabric`` (the very
  text the trace mode builds) or, for Amaranth's simulator, a
  :class:`~pipegossip.hw.network.fabric.NetworkFabric` submodule;
* three ROMs filled at start-up (``$readmemh`` of :data:`ROM_FILES`, or a
  memory's init): the load writes, one expected row per checked clock cycle,
  and one expected row per read-back (node, slot). Their contents come from
  the model through :mod:`pipegossip.sim.network.fast` (never derived here);
* a sequencer: on ``go`` it drives the run's load writes (one per cycle, as
  the trace testbench does), pulses ``start`` (cycle 0), checks cycles
  ``0 .. span-1`` against the expected rows, reads every node's every slot
  back and checks it, then raises ``finished``;
* the checker, which latches the first mismatch in the judge's order
  (:func:`~pipegossip.sim.judge.network.judge_network`): by cycle; in a
  cycle ``trace`` (lowest port), then ``busy``, ``done``, ``cycle``, then the
  delivery checks of the lowest node (its sent words, its received words, the
  words on its links, its accumulator); after the run the read-back, node by
  node (held bit, word, then after the node's last slot its accumulator and
  its completeness). It reports the place as
  :func:`~pipegossip.sim.judge.network.mismatch_place` names a judge's
  mismatch: ``bad_check`` (index in :data:`CHECKS`), ``bad_cycle``,
  ``bad_node``, ``bad_port`` (the port, or the slot of a final-store check).

Row layouts (least significant bit first) are :class:`FastLayout`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from amaranth.hdl import (ClockDomain, ClockSignal, Const, DomainRenamer, Instance, Module, Mux,
                          ResetSignal, Signal)
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ...hw.network.fabric import LATENCY, NetworkFabric
from ...hw.ports import NetworkSize, network_ports
from ...model.schedules.network_program import links_of
from ..judge.network import CHECKS
from .checker import readmem_rom

__all__ = ["NetworkFastTop", "FastLayout", "CHECKS", "NET_FAST_TOP", "ROM_FILES", "NO_PLACE",
           "FINAL_CYCLE", "INPUTS", "SUMMARY", "rom_module"]

#: Module name of the wrapper top.
NET_FAST_TOP = "pg_net_fast_top"
#: The ROMs and the files they load (in the simulator's working folder).
ROM_FILES = {"load": "pg_net_load.hex", "expect": "pg_net_expect.hex",
             "final": "pg_net_final.hex"}
#: ``bad_node``/``bad_port`` when the check names none.
NO_PLACE = 0xFFFF
#: ``bad_cycle`` of a read-back check (the judge's cycle None).
FINAL_CYCLE = 0xFFFFFFFF
#: The top's inputs a testbench sets before each ``go`` (32 bits each).
INPUTS = ("load_base", "load_count", "exp_base", "span", "final_base", "length")
#: The top's outputs a testbench reads once ``finished`` is high.
SUMMARY = ("finished", "bad", "bad_check", "bad_cycle", "bad_node", "bad_port",
           "busy_cycles", "done_at")


@dataclass(frozen=True)
class FastLayout:
    """Bit layouts of the three ROMs' rows for a fabric of ``size``.

    * load: ``kind``, ``node``, ``addr``, ``data`` (the load port's widths);
    * expect, per port: send valid, send accumulator, send slot, store valid,
      store slot, combine, the word the port sends; then per node the
      accumulator;
    * final: held, word, must be held (completeness), the node's final
      accumulator, the combination it must hold, and whether it must.
    """

    size: NetworkSize

    @cached_property
    def _widths(self) -> dict[str, int]:
        # the port table is walked once per layout, not once per packed row
        return {p.name: p.width for p in network_ports(self.size)}

    def _w(self, name: str) -> int:
        return self._widths[name]

    @cached_property
    def load_fields(self) -> tuple[tuple[str, int], ...]:
        return tuple((f, self._w(f"load__{f}")) for f in ("kind", "node", "addr", "data"))

    @cached_property
    def port_fields(self) -> tuple[tuple[str, int], ...]:
        sw, w = self.size.slot_bits, self.size.width
        return (("tv", 1), ("ta", 1), ("ts", sw), ("rv", 1), ("rs", sw), ("cb", 1), ("w", w))

    @cached_property
    def final_fields(self) -> tuple[tuple[str, int], ...]:
        w = self.size.width
        return (("held", 1), ("word", w), ("need", 1), ("acc", w), ("want", w), ("accneed", 1))

    @staticmethod
    def bits(fields) -> int:
        """Bits of a row part made of ``fields``."""
        return sum(w for _, w in fields)

    def width(self, rom: str) -> int:
        if rom == "load":
            return self.bits(self.load_fields)
        if rom == "final":
            return self.bits(self.final_fields)
        return self.size.ports * self.bits(self.port_fields) + self.size.n * self.size.width

    @staticmethod
    def pack(fields, values: dict) -> int:
        """One row (or a part of one) from field values, low field first."""
        out, at = 0, 0
        for name, w in fields:
            out |= (int(values[name]) & ((1 << w) - 1)) << at
            at += w
        return out


def _slices(row, fields, base: int = 0) -> dict:
    out, at = {}, base
    for name, w in fields:
        out[name] = row[at:at + w]
        at += w
    return out


def rom_module(rom: str, width: int, depth: int) -> str:
    """The Verilog of ROM ``rom``: ``depth`` rows, read combinationally, loaded at time 0."""
    return readmem_rom(f"pg_net_{rom}_rom", ROM_FILES[rom], width, depth)


def _first(bits: list, none: int = NO_PLACE):
    """(any, index of the lowest set bit, ``none`` when none) of a list of 1-bit values."""
    index = Const(none, 16)
    for i in reversed(range(len(bits))):
        index = Mux(bits[i], i, index)
    anyb = Const(0, 1)
    for b in bits:
        anyb = anyb | b
    return anyb, index


class NetworkFastTop(wiring.Component):
    """The network fabric with its load, checker and read-back sequencer around it.

    Parameters
    ----------
    size : NetworkSize
    topology : Topology
    op : str
        The fabric's accumulator operation.
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
    Verilator's sake); a ``go`` takes effect two cycles after it is driven.
    """

    def __init__(self, size: NetworkSize, topology, op: str, depths: dict,
                 roms: dict | None = None):
        self.size, self.topology, self.op = size, topology, op
        self.depths, self.roms = dict(depths), roms
        self.layout = FastLayout(size)
        members = {"go": In(1), **{k: In(32) for k in INPUTS},
                   "finished": Out(1), "bad": Out(1), "bad_check": Out(4), "bad_cycle": Out(32),
                   "bad_node": Out(16), "bad_port": Out(16), "busy_cycles": Out(32),
                   "done_at": Out(32)}
        super().__init__(members)

    def _fabric(self, m: Module, dom: str, rst) -> dict:
        """The fabric's ports as signals named like its Verilog ports."""
        z = self.size
        sig = {p.name: Signal(p.width, name=f"f_{p.name}") for p in network_ports(z)}
        if self.roms is None:
            conns = {("i_" if p.direction == "in" else "o_") + p.name: sig[p.name]
                     for p in network_ports(z)}
            m.submodules.fabric = Instance("pipegossip_network_fabric", i_clk=ClockSignal(),
                                           i_rst=rst, **conns)
            return sig
        fabric = NetworkFabric(self.topology, z.width, z.depth, z.slots, self.op,
                               z.bank_depth, store=z.store, node=z.node)
        m.submodules.fabric = DomainRenamer(dom)(fabric)
        for path, member, value in fabric.signature.flatten(fabric):
            name = "__".join(map(str, path))
            m.d.comb += (value.eq(sig[name]) if member.flow == wiring.In
                         else sig[name].eq(value))
        return sig

    def _rom(self, m: Module, rom: str, addr) -> Signal:
        width, depth = self.layout.width(rom), self.depths[rom]
        data = Signal(width, name=f"{rom}_row")
        abits = max(1, (depth - 1).bit_length())
        if self.roms is None:
            m.submodules[f"{rom}_rom"] = Instance(f"pg_net_{rom}_rom", i_addr=addr[:abits],
                                                  o_data=data)
        else:
            mem = m.submodules[f"{rom}_rom"] = Memory(shape=width, depth=depth,
                                                      init=self.roms[rom])
            rd = mem.read_port(domain="comb")
            m.d.comb += [rd.addr.eq(addr[:abits]), data.eq(rd.data)]
        return data

    def elaborate(self, platform) -> Module:
        m = Module()
        z, lay = self.size, self.layout
        n, P = z.n, z.ports
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
        ld = _slices(load_row, lay.load_fields)
        m.d.comb += [f["load__valid"].eq(phase == 1), f["start"].eq((phase == 2) & (cnt == 0)),
                     f["read__node"].eq(rd_node), f["read__slot"].eq(rd_slot)]
        m.d.comb += [f[f"load__{k}"].eq(ld[k]) for k, _ in lay.load_fields]
        reads = n * z.slots
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
        width_p = lay.bits(lay.port_fields)
        ex = [_slices(exp_row, lay.port_fields, p * width_p) for p in range(P)]
        eacc = [exp_row[P * width_p + v * z.width:P * width_p + (v + 1) * z.width]
                for v in range(n)]
        links = links_of(self.topology)  # the model's port numbering
        offsets = [0]
        for x in links:
            offsets.append(offsets[-1] + len(x))
        node_of = [v for v in range(n) for _ in links[v]]
        peer = [offsets[w] + links[w].index(v) for v in range(n) for w in links[v]]

        def g(name: str, p: int):
            return f[name.replace("*", str(p))]

        trace, txw, rxw, link = [], [], [], []
        for p in range(P):
            e, q = ex[p], peer[p]
            tv, ta, ts = g("tx__*__valid", p), g("tx__*__acc", p), g("tx__*__slot", p)
            tw = g("tx__*__word", p)
            rv, rs, rc = g("rx__*__valid", p), g("rx__*__slot", p), g("rx__*__comb", p)
            rw = g("rx__*__word", p)
            # the judge's "send X, store Y, combine": X is none, the accumulator or a slot
            trace.append((tv != e["tv"]) | (tv & (ta != e["ta"])) | (tv & ~ta & (ts != e["ts"]))
                         | (rv != e["rv"]) | (rv & (rs != e["rs"])) | (rc != e["cb"]))
            txw.append(tv & e["tv"] & (tw != e["w"]))
            rxw.append((e["rv"] | e["cb"]) & ex[q]["tv"] & (rw != ex[q]["w"]))
            link.append(g("tx__*__valid", q) & (rw != g("tx__*__word", q)))
        accb = [f[f"acc__{v}"] != eacc[v] for v in range(n)]

        def by_node(bits):
            return [Const(0, 1) if not any(node_of[p] == v for p in range(P)) else
                    _first([bits[p] for p in range(P) if node_of[p] == v])[0]
                    for v in range(n)]

        t_any, t_port = _first(trace)
        t_node = _first(by_node(trace))[1]
        # delivery: the lowest node; in it sent words, received words, links, accumulator
        cands = []
        for code, bits in ((CHECKS.index("tx_word"), txw), (CHECKS.index("rx_word"), rxw),
                           (CHECKS.index("link"), link)):
            a, port = _first(bits)
            cands.append((a, _first(by_node(bits))[1], port, code))
        a, node = _first(accb)
        cands.append((a, node, Const(NO_PLACE, 16), CHECKS.index("acc")))
        d_any, d_node = Const(0, 1), Const(NO_PLACE, 16)
        d_port, d_code = Const(NO_PLACE, 16), Const(0, 4)
        for a, node, port, code in reversed(cands):  # earlier checks win a tie
            take = a & (~d_any | (node <= d_node))
            d_node, d_port = Mux(take, node, d_node), Mux(take, port, d_port)
            d_code, d_any = Mux(take, code, d_code), d_any | a

        L, lat = par["length"], LATENCY
        busy_bad = (k >= 1) & (f["busy"] != ((k >= 1) & (k <= L + lat)))
        done_bad = (k >= 1) & (f["done"] != (k > L + lat))
        cyc_want = Mux((k >= lat + 1) & (k <= L + lat), k - lat, 0)
        cyc_bad = ((k >= 1) & (f["cycle"] != cyc_want)) | ((k == 0) & (f["length"] != L))

        c_any, c_code = Signal(name="c_any"), Signal(4, name="c_code")
        c_node, c_port = Signal(16, name="c_node"), Signal(16, name="c_port")
        with m.If(t_any):
            m.d.comb += [c_any.eq(1), c_code.eq(CHECKS.index("trace")), c_node.eq(t_node),
                         c_port.eq(t_port)]
        with m.Elif(busy_bad | done_bad | cyc_bad):
            code = Mux(busy_bad, CHECKS.index("busy"),
                       Mux(done_bad, CHECKS.index("done"), CHECKS.index("cycle")))
            m.d.comb += [c_any.eq(1), c_code.eq(code), c_node.eq(NO_PLACE),
                         c_port.eq(NO_PLACE)]
        with m.Elif(d_any):
            m.d.comb += [c_any.eq(1), c_code.eq(d_code), c_node.eq(d_node), c_port.eq(d_port)]

        # ------------------------------------------------------------ the read-back's checks
        fe = _slices(fin_row, lay.final_fields)
        held, word, racc = f["read__held"], f["read__word"], f["read__acc"]
        last = px == z.slots - 1
        lack = Signal(name="lack")
        lack_now = lack | (fe["need"] & ~held)
        h_bad = held != fe["held"]
        w_bad = held & fe["held"] & (word != fe["word"])
        a_bad = last & (racc != fe["acc"])
        comp_bad = last & (lack_now | (fe["accneed"] & (racc != fe["want"])))
        r_any = (phase == 3) & (cnt >= 1) & (h_bad | w_bad | a_bad | comp_bad)
        r_code = Mux(h_bad, CHECKS.index("final_held"), Mux(
            w_bad, CHECKS.index("final_word"),
            Mux(a_bad, CHECKS.index("final_acc"), CHECKS.index("complete"))))
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
