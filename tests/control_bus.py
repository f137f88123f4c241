"""AXI4-Lite and Wishbone masters for Amaranth's simulator, and an image replayed through them.

Test helpers for the control block (``tests/hw/test_hw_control.py``): each
master drives one transaction at a time and returns the response, so a
test sees every OKAY/SLVERR; :func:`replay` issues image entries through
the register map's load window (:func:`pipegossip.hw.regmap.entry_writes`).
"""

from __future__ import annotations

from pipegossip.hw.bus import OKAY
from pipegossip.hw.regmap import entry_writes, register
from pipegossip.hw.schedule.image import ImageKind

#: A transaction that never completes is a failure, not a hang.
LIMIT = 64


class AxiLite:
    """One AXI4-Lite master on ``bus`` (a slave's ``axil`` port) in testbench ``ctx``."""

    def __init__(self, ctx, bus):
        self.ctx, self.bus = ctx, bus
        for s in ("awvalid", "wvalid", "arvalid", "bready", "rready"):
            ctx.set(getattr(bus, s), 0)

    async def _wait(self, signal) -> None:
        for _ in range(LIMIT):
            if self.ctx.get(signal):
                return
            await self.ctx.tick()
        raise AssertionError(f"{signal.name} never rose")

    async def write(self, offset: int, value: int, strb: int = 0xF) -> int:
        """Write ``value`` at byte ``offset``; the response code."""
        ctx, b = self.ctx, self.bus
        ctx.set(b.awaddr, offset)
        ctx.set(b.wdata, value)
        ctx.set(b.wstrb, strb)
        ctx.set(b.awvalid, 1)
        ctx.set(b.wvalid, 1)
        await self._wait(b.awready)
        if not ctx.get(b.wready):
            raise AssertionError("awready without wready")
        await ctx.tick()
        ctx.set(b.awvalid, 0)
        ctx.set(b.wvalid, 0)
        ctx.set(b.bready, 1)
        await self._wait(b.bvalid)
        resp = ctx.get(b.bresp)
        await ctx.tick()
        ctx.set(b.bready, 0)
        return resp

    async def read(self, offset: int) -> tuple[int, int]:
        """``(data, response code)`` of a read at byte ``offset``."""
        ctx, b = self.ctx, self.bus
        ctx.set(b.araddr, offset)
        ctx.set(b.arvalid, 1)
        await self._wait(b.arready)
        await ctx.tick()
        ctx.set(b.arvalid, 0)
        ctx.set(b.rready, 1)
        await self._wait(b.rvalid)
        data, resp = ctx.get(b.rdata), ctx.get(b.rresp)
        await ctx.tick()
        ctx.set(b.rready, 0)
        return data, resp

    async def get(self, name: str) -> int:
        """Register ``name``'s value (OKAY required)."""
        data, resp = await self.read(register(name).offset)
        assert resp == OKAY, f"read of {name}: response {resp}"
        return data

    async def put(self, name: str, value: int) -> None:
        assert await self.write(register(name).offset, value) == OKAY, f"write of {name}"

    async def field(self, reg: str, name: str) -> int:
        f = register(reg).field(name)
        return (await self.get(reg) >> f.lsb) & ((1 << f.width) - 1)

    async def command(self, *names: str) -> None:
        """Write 1 to the CMD fields ``names``."""
        reg = register("CMD")
        await self.put("CMD", sum(1 << reg.field(x).lsb for x in names))


class Wishbone:
    """One Wishbone B4 classic master on ``bus`` (a slave's ``wb`` port)."""

    def __init__(self, ctx, bus):
        self.ctx, self.bus = ctx, bus
        for s in ("cyc", "stb", "we"):
            ctx.set(getattr(bus, s), 0)

    async def _cycle(self, offset: int, we: int, value: int = 0, sel: int = 0xF):
        ctx, b = self.ctx, self.bus
        ctx.set(b.adr, offset >> 2)
        ctx.set(b.we, we)
        ctx.set(b.dat_w, value)
        ctx.set(b.sel, sel)
        ctx.set(b.cyc, 1)
        ctx.set(b.stb, 1)
        for _ in range(LIMIT):
            await ctx.tick()
            if ctx.get(b.ack) or ctx.get(b.err):
                break
        else:
            raise AssertionError("no ack")
        out = (ctx.get(b.dat_r), ctx.get(b.ack), ctx.get(b.err))
        ctx.set(b.cyc, 0)
        ctx.set(b.stb, 0)
        await ctx.tick()
        return out

    async def write(self, offset: int, value: int, sel: int = 0xF) -> tuple[int, int]:
        """``(ack, err)`` of a write."""
        _, ack, err = await self._cycle(offset, 1, value, sel)
        return ack, err

    async def read(self, offset: int) -> tuple[int, int, int]:
        """``(data, ack, err)`` of a read."""
        return await self._cycle(offset, 0)


def split_image(image) -> tuple[list, list]:
    """``(loads, checks)``: the entries before the first check, and the checks."""
    k = next(i for i, e in enumerate(image)
             if ImageKind.EXPECT_WORD <= e[0] <= ImageKind.EXPECT_ACC)
    return list(image[:k]), [e for e in image[k:] if e[0] != ImageKind.END]


async def replay(master: AxiLite, entries, load_words: int) -> None:
    """Issue every entry through LOAD_ADDR/LOAD_DATA/LOAD_GO (all OKAY)."""
    for entry in entries:
        for offset, value in entry_writes(entry, load_words):
            assert await master.write(offset, value) == OKAY


async def wait_done(master: AxiLite, limit: int = 200) -> None:
    """Poll STATUS until DONE (and not BUSY)."""
    for _ in range(limit):
        if await master.field("STATUS", "DONE"):
            return
    raise AssertionError("the fabric never got done")
