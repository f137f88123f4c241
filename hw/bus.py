"""Control-bus slaves: AXI4-Lite and Wishbone B4 (classic) in front of one register port.

Both turn bus transactions into the same single-cycle register accesses
(:data:`REG_PORT`), so the register block behind them
(:class:`~pipegossip.hw.control.ControlBlock`) is written once. Reads have
no side effects; a write or read to an address outside the map answers
SLVERR (AXI) or ``err`` (Wishbone) and changes nothing.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .regmap import ADDR_BITS, DATA_BITS

__all__ = ["REG_PORT", "axi_lite_signature", "wishbone_signature", "AxiLiteSlave",
           "WishboneSlave", "BUSES", "OKAY", "SLVERR"]

#: AXI response codes.
OKAY, SLVERR = 0, 2
#: Word-address bits of the register port.
WORD_BITS = ADDR_BITS - 2

#: The register port, as the bus slave drives it (Out) and the block answers (In):
#: ``addr`` the word address; ``w_stb`` one write this cycle of ``w_data`` under byte
#: enables ``w_strb``; ``r_data`` and ``error`` (no register there) answer ``addr``
#: without a clock; ``hold`` high: take no transaction this cycle.
REG_PORT = wiring.Signature({
    "addr": Out(WORD_BITS), "w_stb": Out(1), "w_data": Out(DATA_BITS),
    "w_strb": Out(DATA_BITS // 8), "r_data": In(DATA_BITS), "error": In(1), "hold": In(1),
})


def axi_lite_signature() -> wiring.Signature:
    """AXI4-Lite as the master drives it (a slave's port is ``In`` of this)."""
    return wiring.Signature({
        "awvalid": Out(1), "awready": In(1), "awaddr": Out(ADDR_BITS), "awprot": Out(3),
        "wvalid": Out(1), "wready": In(1), "wdata": Out(DATA_BITS),
        "wstrb": Out(DATA_BITS // 8),
        "bvalid": In(1), "bready": Out(1), "bresp": In(2),
        "arvalid": Out(1), "arready": In(1), "araddr": Out(ADDR_BITS), "arprot": Out(3),
        "rvalid": In(1), "rready": Out(1), "rdata": In(DATA_BITS), "rresp": In(2),
    })


def wishbone_signature() -> wiring.Signature:
    """Wishbone B4 classic, 32-bit data, word addresses, as the master drives it."""
    return wiring.Signature({
        "cyc": Out(1), "stb": Out(1), "we": Out(1), "adr": Out(WORD_BITS),
        "dat_w": Out(DATA_BITS), "sel": Out(DATA_BITS // 8),
        "dat_r": In(DATA_BITS), "ack": In(1), "err": In(1),
    })


class AxiLiteSlave(wiring.Component):
    """AXI4-Lite slave: one write and one read in flight, OKAY or SLVERR.

    Attributes
    ----------
    axil : In(axi_lite_signature())
        The bus. A write is taken (``awready`` and ``wready`` together) in a
        cycle where both ``awvalid`` and ``wvalid`` are high and no response
        waits; its response comes the next cycle and is held until
        ``bready``. A read is taken (``arready``) when no read data waits;
        ``rvalid`` and the data follow one cycle later, held until ``rready``.
        So a write takes 2 cycles, a read 2, back to back with the
        responses taken at once. ``awprot``/``arprot`` are ignored.
    regs : Out(REG_PORT)
        The register port; a write's ``w_stb`` is the cycle it is taken.
    """

    def __init__(self):
        super().__init__({"axil": In(axi_lite_signature()), "regs": Out(REG_PORT)})

    def elaborate(self, platform) -> Module:
        m = Module()
        bus, regs = self.axil, self.regs
        bvalid, bresp = Signal(), Signal(2)
        rvalid, rresp, rdata = Signal(), Signal(2), Signal(DATA_BITS)
        take_w = Signal()
        take_r = Signal()
        # writes have the port first; a read waits for a cycle without one
        m.d.comb += [
            take_w.eq(bus.awvalid & bus.wvalid & ~bvalid & ~regs.hold),
            take_r.eq(bus.arvalid & ~rvalid & ~regs.hold & ~take_w),
            bus.awready.eq(take_w), bus.wready.eq(take_w), bus.arready.eq(take_r),
            regs.addr.eq(Mux(take_w, bus.awaddr[2:], bus.araddr[2:])),
            regs.w_stb.eq(take_w), regs.w_data.eq(bus.wdata), regs.w_strb.eq(bus.wstrb),
            bus.bvalid.eq(bvalid), bus.bresp.eq(bresp),
            bus.rvalid.eq(rvalid), bus.rresp.eq(rresp), bus.rdata.eq(rdata),
        ]
        with m.If(take_w):
            m.d.sync += [bvalid.eq(1), bresp.eq(Mux(regs.error, SLVERR, OKAY))]
        with m.Elif(bus.bready):
            m.d.sync += bvalid.eq(0)
        with m.If(take_r):
            m.d.sync += [rvalid.eq(1), rresp.eq(Mux(regs.error, SLVERR, OKAY)),
                         rdata.eq(Mux(regs.error, 0, regs.r_data))]
        with m.Elif(bus.rready):
            m.d.sync += rvalid.eq(0)
        return m


class WishboneSlave(wiring.Component):
    """Wishbone B4 classic slave: ``ack`` (or ``err``) one cycle after ``cyc & stb``.

    Attributes
    ----------
    wb : In(wishbone_signature())
        The bus; ``adr`` is a word address (byte offset / 4), ``sel`` the
        byte enables of a write. Each access is answered in the next cycle
        with ``ack`` (``dat_r`` valid with it) or, outside the map, ``err``.
    regs : Out(REG_PORT)
    """

    def __init__(self):
        super().__init__({"wb": In(wishbone_signature()), "regs": Out(REG_PORT)})

    def elaborate(self, platform) -> Module:
        m = Module()
        bus, regs = self.wb, self.regs
        ack, err, dat_r = Signal(), Signal(), Signal(DATA_BITS)
        take = Signal()
        m.d.comb += [
            take.eq(bus.cyc & bus.stb & ~ack & ~err & ~regs.hold),
            regs.addr.eq(bus.adr), regs.w_stb.eq(take & bus.we & ~regs.error),
            regs.w_data.eq(bus.dat_w), regs.w_strb.eq(bus.sel),
            bus.ack.eq(ack), bus.err.eq(err), bus.dat_r.eq(dat_r),
        ]
        m.d.sync += [ack.eq(take & ~regs.error), err.eq(take & regs.error)]
        with m.If(take):
            m.d.sync += dat_r.eq(Mux(regs.error, 0, regs.r_data))
        return m


#: The control buses: the block's port name, the bus signature and the slave that serves it.
BUSES = {"axil": ("axil", axi_lite_signature, AxiLiteSlave),
         "wishbone": ("wb", wishbone_signature, WishboneSlave)}
