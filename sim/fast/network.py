"""Fast co-simulation of the network fabric: load, run, check and read back in the hardware.

Test infrastructure only (never part of :mod:`pipegossip.hw`). A network run
is mostly load and read-back: hypercube(4) loads about 350 writes and reads
256 store slots back around a 4-cycle gossip, so the trace mode's Python,
which drives or samples every one of those cycles, is the whole cost. Here
:class:`NetworkFastTop` (Verilog ``pg_net_fast_top``) does all of it, on the
sequencer, ROMs and read-back checks it shares with the schedule fabric's
fast top (:class:`~.program_top.ProgramFastTop`):

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

from amaranth.hdl import Const, Module, Mux

from ...hw.network.fabric import LATENCY, NetworkFabric
from ...hw.ports import NetworkSize, network_ports
from ...model.schedules.network_program import links_of
from ..judge.network import CHECKS
from .program_top import (FINAL_CYCLE, INPUTS, NO_PLACE, SUMMARY, ProgramFastTop, field_bits,
                          final_fields, first_set, pack, rom_files, slices)
from .program_top import rom_module as _rom_module

__all__ = ["NetworkFastTop", "FastLayout", "CHECKS", "NET_FAST_TOP", "ROM_FILES", "NO_PLACE",
           "FINAL_CYCLE", "INPUTS", "SUMMARY", "rom_module"]

#: Module name of the wrapper top.
NET_FAST_TOP = "pg_net_fast_top"
#: Module-name prefix of its ROMs.
PREFIX = "pg_net"
#: The ROMs and the files they load (in the simulator's working folder).
ROM_FILES = rom_files(PREFIX)


@dataclass(frozen=True)
class FastLayout:
    """Bit layouts of the three ROMs' rows for a fabric of ``size``.

    * load: ``kind``, ``node``, ``addr``, ``data`` (the load port's widths);
    * expect, per port: send valid, send accumulator, send slot, store valid,
      store slot, combine, the word the port sends; then per node the
      accumulator;
    * final: held, word, must be held (completeness), the node's final
      accumulator, the combination it must hold, and whether it must
      (:func:`~.program_top.final_fields`).
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
        return final_fields(self.size.width)

    bits = staticmethod(field_bits)
    pack = staticmethod(pack)

    def width(self, rom: str) -> int:
        if rom == "load":
            return self.bits(self.load_fields)
        if rom == "final":
            return self.bits(self.final_fields)
        return self.size.ports * self.bits(self.port_fields) + self.size.n * self.size.width


def rom_module(rom: str, width: int, depth: int) -> str:
    """The Verilog of ROM ``rom``: ``depth`` rows, read combinationally, loaded at time 0."""
    return _rom_module(PREFIX, rom, width, depth)


class NetworkFastTop(ProgramFastTop):
    """The network fabric with its load, checker and read-back sequencer around it.

    Parameters
    ----------
    size : NetworkSize
    topology : Topology
    op : str
        The fabric's accumulator operation.
    depths, roms
        As :class:`~.program_top.ProgramFastTop` (its ports and timing too).

    Notes
    -----
    The checks of a cycle: ``trace`` by port (send source, store slot,
    combine), then the lowest node's sent words, received words, the words on
    its links, its accumulator; after a node's last slot its final
    accumulator, then its completeness (:func:`~pipegossip.sim.judge.network.
    judge_network`'s order).
    """

    checks = CHECKS
    final_order = ((("acc",), "final_acc"), (("lack", "want"), "complete"))
    prefix = PREFIX
    fabric_name = "pipegossip_network_fabric"
    latency = LATENCY

    def __init__(self, size: NetworkSize, topology, op: str, depths: dict,
                 roms: dict | None = None):
        self.topology, self.op = topology, op
        self.layout = FastLayout(size)
        super().__init__(size, depths, roms)

    def fabric_ports(self) -> list:
        return network_ports(self.size)

    def fabric_component(self):
        z = self.size
        return NetworkFabric(self.topology, z.width, z.depth, z.slots, self.op,
                             z.bank_depth, store=z.store, node=z.node)

    def widths(self) -> dict[str, int]:
        return {r: self.layout.width(r) for r in ROM_FILES}

    def run_checks(self, m: Module, f: dict, exp_row) -> tuple:
        z, lay = self.size, self.layout
        n, P = z.n, z.ports
        width_p = lay.bits(lay.port_fields)
        ex = [slices(exp_row, lay.port_fields, p * width_p) for p in range(P)]
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
                    first_set([bits[p] for p in range(P) if node_of[p] == v])[0]
                    for v in range(n)]

        t_any, t_port = first_set(trace)
        t_node = first_set(by_node(trace))[1]
        # delivery: the lowest node; in it sent words, received words, links, accumulator
        cands = []
        for code, bits in ((CHECKS.index("tx_word"), txw), (CHECKS.index("rx_word"), rxw),
                           (CHECKS.index("link"), link)):
            a, port = first_set(bits)
            cands.append((a, first_set(by_node(bits))[1], port, code))
        a, node = first_set(accb)
        cands.append((a, node, Const(NO_PLACE, 16), CHECKS.index("acc")))
        d_any, d_node = Const(0, 1), Const(NO_PLACE, 16)
        d_port, d_code = Const(NO_PLACE, 16), Const(0, 4)
        for a, node, port, code in reversed(cands):  # earlier checks win a tie
            take = a & (~d_any | (node <= d_node))
            d_node, d_port = Mux(take, node, d_node), Mux(take, port, d_port)
            d_code, d_any = Mux(take, code, d_code), d_any | a
        return t_any, t_node, t_port, d_any, d_code, d_node, d_port
