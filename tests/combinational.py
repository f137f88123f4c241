"""Test helper: run a script once against a purely combinational component."""

from amaranth.sim import Simulator


def settle(dut, script) -> None:
    """Run ``script(ctx)`` in a testbench of ``dut`` with no clock: each
    ``ctx.get`` sees the settled outputs of the inputs set before it."""
    sim = Simulator(dut)

    async def bench(ctx):
        script(ctx)

    sim.add_testbench(bench)
    sim.run()
