# amaranth: UnusedElaboratable=no
"""The control block in Amaranth's simulator: the map, the load window, runs, counters, checks."""

import pytest
from amaranth.sim import Simulator
from control_bus import AxiLite, Wishbone, replay, split_image, wait_done

from pipegossip.hw.bus import OKAY, SLVERR
from pipegossip.hw.controlled import ControlledFabric
from pipegossip.hw.network import NetworkFabric
from pipegossip.hw.network.image import network_image, network_image_size
from pipegossip.hw.regmap import MAGIC, REGISTERS, VERSION, register
from pipegossip.hw.schedule.fabric import ScheduleFabric
from pipegossip.hw.schedule.image import flip_expected, schedule_image
from pipegossip.model.algorithms.path_cycle import path_gossip
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.program import compile_schedule


def _network(schedule, width=8):
    program = compile_network(schedule, width=width)
    z = network_image_size(program)
    fabric = NetworkFabric(program.topology, z.width, z.depth, z.slots, program.op,
                           z.bank_depth)
    return program, fabric


def _simulate(dut, bench, *procs) -> None:
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    for p in procs:
        sim.add_process(p)
    sim.run()


@pytest.fixture(scope="module")
def path4():
    program, fabric = _network(path_gossip(4, 1))
    return program, ControlledFabric(fabric)


def test_the_id_and_size_registers_describe_the_build(path4):
    program, dut = path4
    got = {}

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        for r in ("ID", "NODES", "WIDTH", "DEPTH", "SLOTS", "PROGRAMS", "LOAD_WORDS"):
            got[r] = await m.get(r)

    _simulate(dut, bench)
    data_bits = len(dut.fabric.load.data)
    assert got == {"ID": MAGIC << 16 | VERSION << 8 | 2, "NODES": 4, "WIDTH": 8,
                   "DEPTH": dut.fabric.size.depth, "SLOTS": program.slots, "PROGRAMS": 1,
                   "LOAD_WORDS": -(-data_bits // 32)}


def test_an_address_outside_the_map_answers_slverr_and_changes_nothing(path4):
    _, dut = path4
    mapped = {r.offset for r in REGISTERS}
    hole = next(a for a in range(0, 4096, 4) if a not in mapped)
    out = {}

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        before = [await m.get(r.name) for r in REGISTERS if r.name not in ("CLOCKS",)]
        out["w"] = await m.write(hole, 0xFFFF_FFFF)
        out["r"] = await m.read(hole)
        out["ok"] = await m.read(register("NODES").offset)
        after = [await m.get(r.name) for r in REGISTERS if r.name not in ("CLOCKS",)]
        out["same"] = before == after

    _simulate(dut, bench)
    assert out["w"] == SLVERR and out["r"] == (0, SLVERR)
    assert out["ok"] == (4, OKAY) and out["same"]


def test_read_write_fields_keep_their_bits_under_byte_enables(path4):
    _, dut = path4
    out = {}

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        a = register("LOAD_ADDR").offset
        await m.write(a, 0x1122_3344)
        await m.write(a, 0xAABB_CCDD, strb=0b0101)
        out["addr"] = await m.get("LOAD_ADDR")
        await m.put("CTRL", 0xFFFF_FFFF)
        out["ctrl"] = await m.get("CTRL")
        await m.put("CTRL", 0)
        await m.put("PROG_SEL", 0xFF)  # one program: SEL reads 0
        out["sel"] = await m.get("PROG_SEL")
        await m.put("READ_PART", 3)
        out["part"] = await m.get("READ_PART")

    _simulate(dut, bench)
    assert out == {"addr": 0x11BB_33DD, "ctrl": 0b11, "sel": 0, "part": 3}


def _run_image(dut, image, runs=1, auto=False):
    """Replay the loads, run ``runs`` collectives, replay the checks; registers after."""
    loads, checks = split_image(image)
    words = -(-len(dut.fabric.load.data) // 32)
    out = {"starts": 0}

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        ctx.set(dut.ready, 1)
        await replay(m, loads, words)
        await m.command("CLEAR")
        if auto:
            await m.put("CTRL", 1)
        await m.command("ARM")
        if auto:
            while out["starts"] < runs:
                await ctx.tick()
            await m.command("DISARM")
        await wait_done(m)
        await replay(m, checks, words)
        for r in ("STATUS", "LENGTH", "BUSY_CYCLES", "COLLECTIVES", "CHECKS", "MISMATCHES"):
            out[r] = await m.get(r)

    async def count(ctx):
        async for _, _, started in ctx.tick().sample(dut.started):
            out["starts"] += started

    _simulate(dut, bench, count)
    return out


@pytest.mark.parametrize("fabric", ["network", "schedule"])
def test_an_image_loaded_through_the_window_runs_and_passes_every_check(fabric):
    if fabric == "network":
        program, f = _network(allreduce_schedule(topology("path", n=4)))
        image = network_image(program)
    else:
        program = compile_schedule(path_gossip(4, 1))
        f = ScheduleFabric(program.n, program.width, program.depth, program.slots)
        image = schedule_image(program)
    dut = ControlledFabric(f)
    out = _run_image(dut, image)
    L = program.cycles
    checks = len(split_image(image)[1])
    assert out["starts"] == 1
    assert (out["LENGTH"], out["BUSY_CYCLES"], out["COLLECTIVES"]) == (L, L + 1, 1)
    assert (out["CHECKS"], out["MISMATCHES"]) == (checks, 0)
    assert out["STATUS"] & 0b11 == 0b10  # done, not busy


def test_a_wrong_expected_word_is_one_mismatch(path4):
    program, dut = path4
    image, _ = flip_expected(network_image(program))
    out = _run_image(dut, image)
    assert out["MISMATCHES"] == 1 and out["CHECKS"] == len(split_image(image)[1])


def test_auto_runs_collectives_back_to_back_and_counts_each(path4):
    program, dut = path4
    out = _run_image(dut, network_image(program), runs=5, auto=True)
    L = program.cycles
    # the disarm lands while the last run (or one more) is under way
    assert out["starts"] in (5, 6)
    assert out["COLLECTIVES"] == out["starts"]
    assert out["BUSY_CYCLES"] == out["starts"] * (L + 1)
    # a run after the first leaves the stores as the checks want them
    assert out["MISMATCHES"] == 0


def test_back_to_back_starts_leave_one_idle_cycle(path4):
    """A start is issued in the first cycle the fabric is not busy: one cycle between runs."""
    program, dut = path4
    starts = []

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        ctx.set(dut.ready, 1)
        await replay(m, split_image(network_image(program))[0], 2)
        await m.put("CTRL", 1)
        await m.command("ARM")
        for _ in range(40):
            await ctx.tick()

    async def watch(ctx):
        k = 0
        async for _, _, started in ctx.tick().sample(dut.started):
            k += 1
            if started:
                starts.append(k)

    _simulate(dut, bench, watch)
    gaps = {b - a for a, b in zip(starts, starts[1:])}
    assert len(starts) >= 3 and gaps == {program.cycles + 2}


def test_ready_low_holds_the_start_and_a_load_while_armed_is_refused(path4):
    program, dut = path4
    out = {}

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        ctx.set(dut.ready, 0)
        await replay(m, split_image(network_image(program))[0], 2)
        await m.command("CLEAR")
        await m.command("ARM")
        for _ in range(10):
            await ctx.tick()
        out["held"] = await m.get("STATUS")
        await replay(m, [(0, 0, 0, 0)], 2)  # a program write while armed
        out["err"] = await m.field("STATUS", "LOAD_ERR")
        await m.write(register("STATUS").offset, 1 << register("STATUS").field("LOAD_ERR").lsb)
        out["cleared"] = await m.field("STATUS", "LOAD_ERR")
        ctx.set(dut.ready, 1)
        await wait_done(m)
        out["runs"] = await m.get("COLLECTIVES")

    _simulate(dut, bench)
    st = register("STATUS")
    assert out["held"] >> st.field("ARMED").lsb & 1 and not out["held"] & 0b11
    assert (out["err"], out["cleared"], out["runs"]) == (1, 0, 1)


def test_clocks_counts_every_cycle_since_clear(path4):
    _, dut = path4
    out = {}

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        k = 0

        async def tick():
            nonlocal k
            await ctx.tick()
            k += 1

        # the CLEAR takes effect at the edge it is taken; CLOCKS is latched at the read's
        ctx.set(dut.axil.awaddr, register("CMD").offset)
        ctx.set(dut.axil.wdata, 1 << register("CMD").field("CLEAR").lsb)
        ctx.set(dut.axil.wstrb, 0xF)
        ctx.set(dut.axil.awvalid, 1)
        ctx.set(dut.axil.wvalid, 1)
        ctx.set(dut.axil.bready, 1)
        await tick()
        cleared = k
        ctx.set(dut.axil.awvalid, 0)
        ctx.set(dut.axil.wvalid, 0)
        for _ in range(7):
            await tick()
        ctx.set(dut.axil.araddr, register("CLOCKS").offset)
        ctx.set(dut.axil.arvalid, 1)
        ctx.set(dut.axil.rready, 1)
        assert ctx.get(dut.axil.arready)
        await tick()
        out["want"] = k - cleared - 1
        ctx.set(dut.axil.arvalid, 0)
        out["got"] = ctx.get(dut.axil.rdata)

    _simulate(dut, bench)
    assert out["got"] == out["want"] == 7


def test_the_wishbone_slave_reads_writes_and_errs():
    program, fabric = _network(path_gossip(4, 1))
    dut = ControlledFabric(fabric, bus="wishbone")
    out = {}

    async def bench(ctx):
        m = Wishbone(ctx, dut.wb)
        out["id"] = await m.read(register("ID").offset)
        out["w"] = await m.write(register("LOAD_ADDR").offset, 0x1234_5678, sel=0b0011)
        out["r"] = await m.read(register("LOAD_ADDR").offset)
        out["hole"] = await m.read(0xFFC)

    _simulate(dut, bench)
    assert out["id"] == (MAGIC << 16 | VERSION << 8 | 2, 1, 0)
    assert out["w"] == (1, 0) and out["r"] == (0x5678, 1, 0)
    assert out["hole"] == (0, 0, 1)


def _expand(wave: str, data=()) -> list:
    """A WaveDrom wave string as one value per cycle (levels, data values, ``x``)."""
    out, values, last = [], iter(data), None
    for ch in wave:
        if ch == ".":
            out.append(last)
            continue
        last = next(values) if ch in "2345" else (None if ch == "x" else int(ch))
        out.append(last)
    return out


def test_the_docs_timing_diagram_is_what_the_block_and_fabric_do():
    """docs/img/integration-collective.json, cycle by cycle, from the simulated ports."""
    import json
    from pathlib import Path
    drawing = json.loads((Path(__file__).resolve().parents[2] / "docs" / "img"
                          / "integration-collective.json").read_text())
    want = {s["name"]: _expand(s["wave"], [int(x[2:]) if x.startswith("t=") else int(x)
                                           for x in s.get("data", [])])
            for s in drawing["signal"] if s["name"] != "clk"}
    program, fabric = _network(allreduce_schedule(topology("hypercube", k=3)))
    assert program.cycles == 3
    dut = ControlledFabric(fabric)
    got = {name: [] for name in want}

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        ctx.set(dut.ready, 1)
        await replay(m, split_image(network_image(program))[0], 2)
        await m.put("CTRL", 2)  # IRQ_EN
        b = dut.axil
        ctx.set(b.awaddr, register("CMD").offset)
        ctx.set(b.wdata, 1 << register("CMD").field("ARM").lsb)
        ctx.set(b.wstrb, 0xF)
        ctx.set(b.bready, 1)
        for k in range(len(want["busy"])):
            ctx.set(b.awvalid, k == 1)
            ctx.set(b.wvalid, k == 1)
            # the word cycle t exchanges: the program cycle on `cycle`, else none
            t = ctx.get(dut.cycle)
            row = {"axil aw/wvalid (CMD.ARM)": ctx.get(b.awvalid),
                   "axil aw/wready": ctx.get(b.awready), "axil bvalid": ctx.get(b.bvalid),
                   "started (start)": ctx.get(dut.started), "busy": ctx.get(dut.busy),
                   "cycle": t, "rx__p__word": t if t else None,
                   "done / irq": ctx.get(dut.done) & ctx.get(dut.irq)}
            for name, v in row.items():
                got[name].append(v)
            await ctx.tick()

    _simulate(dut, bench)
    assert got == want
