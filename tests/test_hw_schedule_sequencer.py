# amaranth: UnusedElaboratable=no
"""The run sequencer's two forms (``compare_ahead`` off: the network fabric's; on: the
schedule fabric's) behave alike, cycle by cycle, under random starts and loads."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from pipegossip.hw.ports import ScheduleSize
from pipegossip.hw.schedule.fabric import LoadKind, program_sequencer


class _Run(wiring.Component):
    """The ports ``program_sequencer`` reads and drives, plus its fetch outputs."""

    def __init__(self, size: ScheduleSize, compare_ahead: bool):
        self._z, self._ahead = size, compare_ahead
        cb, ab = size.count_bits, size.addr_bits
        super().__init__({
            "start": In(1), "busy": Out(1), "done": Out(1), "cycle": Out(cb), "length": Out(cb),
            "load": In(wiring.Signature({"valid": Out(1), "kind": Out(2),
                                         "node": Out(size.node_bits), "data": Out(cb)})),
            "fetch_en": Out(1), "addr": Out(ab),
        })

    def elaborate(self, platform):
        m = Module()
        z = self._z
        seq = program_sequencer(m, self, z.count_bits, z.addr_bits, z.n,
                                compare_ahead=self._ahead)
        m.d.comb += [self.fetch_en.eq(seq.fetch_en), self.addr.eq(seq.addr)]
        return m


def _trace(size: ScheduleSize, compare_ahead: bool, seed: int, cycles: int) -> list[tuple]:
    dut = _Run(size, compare_ahead)
    rng = random.Random(seed)
    seen = []

    async def bench(ctx):
        for _ in range(cycles):
            # mostly starts and HEADER writes; lengths 0..depth, 1 and depth often
            ctx.set(dut.start, rng.random() < 0.3)
            ctx.set(dut.load.valid, rng.random() < 0.2)
            ctx.set(dut.load.kind, LoadKind.HEADER if rng.random() < 0.7 else rng.randrange(4))
            ctx.set(dut.load.data, rng.choice([0, 1, min(2, size.depth), size.depth,
                                               rng.randrange(size.depth + 1)]))
            seen.append(tuple(ctx.get(s) for s in (dut.busy, dut.done, dut.cycle, dut.length,
                                                   dut.fetch_en, dut.addr)))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return seen


@pytest.mark.parametrize("depth", [1, 2, 3, 5, 8, 32])
def test_compare_ahead_fetches_as_the_shared_sequencer_does(depth):
    size = ScheduleSize(2, 8, depth, 2)
    shared = _trace(size, False, depth, 1000)
    ahead = _trace(size, True, depth, 1000)
    assert ahead == shared
    # the stimulus reaches what a planted bug would change: runs of length 1,
    # of the whole depth, and a fetch at every address
    lengths = {row[3] for row in shared if row[4]}
    assert {1, depth} <= lengths
    assert {row[5] for row in shared if row[4]} == set(range(depth))
