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
