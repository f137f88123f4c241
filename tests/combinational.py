"""Test helpers: run a script against a combinational component, or a clocked testbench."""

from amaranth.sim import Simulator


def settle(dut, script) -> None:
    """Run ``script(ctx)`` in a testbench of ``dut`` with no clock: each
    ``ctx.get`` sees the settled outputs of the inputs set before it."""
    sim = Simulator(dut)

    async def bench(ctx):
        script(ctx)

    sim.add_testbench(bench)
    sim.run()


def run_clocked(dut, bench) -> None:
    """Run the async testbench ``bench`` against ``dut`` with a 1 MHz ``sync`` clock."""
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


async def load_node(ctx, dut, items, prog) -> None:
    """Clear a schedule node, then write ``items`` ((slot, word), ...) and program ``prog``.

    One port write per cycle, items first; every write enable is low again at the end.
    """
    ctx.set(dut.clear, 1)
    await ctx.tick()
    ctx.set(dut.clear, 0)
    for slot, word in items:
        ctx.set(dut.item_we, 1)
        ctx.set(dut.item_slot, slot)
        ctx.set(dut.item_data, word)
        await ctx.tick()
    ctx.set(dut.item_we, 0)
    for a, e in enumerate(prog):
        ctx.set(dut.prog_we, 1)
        ctx.set(dut.prog_addr, a)
        ctx.set(dut.prog_data, e)
        await ctx.tick()
    ctx.set(dut.prog_we, 0)
