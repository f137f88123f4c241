# amaranth: UnusedElaboratable=no
"""The schedule board top in Amaranth's simulator: the image (load writes, then checks)
replayed into the fabric, the on-chip verdict and first wrong node, planted faults,
a new image over the UART protocol, and the status line."""

from pathlib import Path

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from pipegossip.hw.fpga.schedule_selftest import (ImageLoader, ScheduleSelfTest,
                                                  ScheduleStatusLine, schedule_status_text)
from pipegossip.hw.fpga.uart import UARTRx, UARTTx
from pipegossip.hw.ports import ScheduleSize
from pipegossip.hw.schedule.image import (FAULTS, ImageKind, ImageLayout, image_capacity,
                                          plant_fault, schedule_image, uart_bytes)
from pipegossip.model.algorithms.limits import one_factor
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.ir import load
from pipegossip.model.schedules.program import compile_schedule

from test_fpga_board_top import decode_uart

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gossip-n4.json"


def _simulate(dut, bench) -> None:
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def _program(schedule, depth=8, slots=None, width=8):
    return compile_schedule(schedule, width=width, depth=depth, slots=slots)


def _size(program) -> ScheduleSize:
    return ScheduleSize(program.n, program.width, program.depth, program.slots)


def _encoded(size, entries):
    lay = ImageLayout(size)
    return [lay.encode(e) for e in entries]


def run_selftest(size, entries, runs=1, writes=(), cycles=400, encoded=None):
    """Run the self-test: ``runs`` verdicts, ``writes`` (addr, word) before a second run.

    ``encoded``: the image's words as a board top holds them (instead of ``entries``).
    """
    dut = ScheduleSelfTest(size, _encoded(size, entries) if encoded is None else encoded)
    verdicts = []

    async def bench(ctx):
        async def verdict():
            for _ in range(cycles):
                await ctx.tick()
                if ctx.get(dut.report):
                    return (ctx.get(dut.ok), ctx.get(dut.node), ctx.get(dut.stall),
                            ctx.get(dut.runs))
            raise AssertionError("no verdict")

        verdicts.append(await verdict())
        for _ in range(runs - 1):
            for addr, word in writes:
                ctx.set(dut.write.valid, 1)
                ctx.set(dut.write.addr, addr)
                ctx.set(dut.write.data, word)
                await ctx.tick()
            ctx.set(dut.write.valid, 0)
            ctx.set(dut.run, 1)
            await ctx.tick()
            ctx.set(dut.run, 0)
            verdicts.append(await verdict())

    _simulate(dut, bench)
    return verdicts


def _cases():
    yield "example", _program(load(EXAMPLE))
    yield "one-factor", _program(one_factor(4))
    yield "one-factor-n5", _program(one_factor(5), depth=12)
    # forwards accumulators: its image loads every node's initial accumulator
    yield "allreduce-hypercube-2", _program(allreduce_schedule(topology("hypercube", k=2)))


@pytest.mark.parametrize("name,program", list(_cases()), ids=[c[0] for c in _cases()])
def test_a_compiled_schedule_passes_on_the_self_test(name, program):
    size = _size(program)
    entries = schedule_image(program)
    assert run_selftest(size, entries, runs=2) == [(1, 0, 0, 1), (1, 0, 0, 2)]


def _fault_cases():
    for name, program in _cases():
        # allreduce only combines (no receive for the program fault to drop)
        for fault in FAULTS if not name.startswith("allreduce") else ("expected",):
            yield name, program, fault


@pytest.mark.parametrize("name,program,fault", list(_fault_cases()),
                         ids=[f"{c[0]}-{c[2]}" for c in _fault_cases()])
def test_a_planted_fault_fails_at_its_node(name, program, fault):
    size = _size(program)
    entries, node = plant_fault(program, schedule_image(program), fault)
    [(ok, got, stall, runs)] = run_selftest(size, entries)
    assert (ok, got, stall, runs) == (0, node, 0, 1)


def test_the_first_wrong_node_is_reported_not_the_last():
    program = _program(one_factor(4))
    entries = schedule_image(program)
    for node in (1, 3):   # both nodes' first expected words wrong
        at = next(i for i, e in enumerate(entries)
                  if e[0] == ImageKind.EXPECT_WORD and e[1] == node)
        k, v, x, d = entries[at]
        entries[at] = (k, v, x, d ^ 0x10)
    [(ok, node, _, _)] = run_selftest(_size(program), entries)
    assert (ok, node) == (0, 1)


def test_a_wrong_accumulator_and_a_missing_item_are_caught():
    program = _program(one_factor(4))
    size = _size(program)
    entries = schedule_image(program)
    acc = [i for i, e in enumerate(entries) if e[0] == ImageKind.EXPECT_ACC]
    bad = list(entries)
    bad[acc[2]] = (ImageKind.EXPECT_ACC, 2, 0, 1)
    assert run_selftest(size, bad)[0][:2] == (0, 2)
    # an item the node must NOT hold, claimed held (word 0): its held bit is checked
    empty = list(entries)
    word = next(i for i, e in enumerate(entries) if e[0] == ImageKind.EXPECT_WORD and e[1] == 3)
    empty[word] = (ImageKind.EXPECT_EMPTY, 3, entries[word][2], 0)
    assert run_selftest(size, empty)[0][:2] == (0, 3)


def test_a_new_image_runs_without_a_new_build():
    """The memory holds a faulty image; writing the good one fixes the next run."""
    program = _program(one_factor(4))
    size = _size(program)
    good = schedule_image(program)
    faulty, node = plant_fault(program, good, "expected")
    writes = list(enumerate(_encoded(size, good)))
    verdicts = run_selftest(size, faulty, runs=2, writes=writes)
    assert verdicts[0][:2] == (0, node)
    assert verdicts[1] == (1, 0, 0, 2)


def test_a_schedule_of_another_length_loads_into_the_same_build():
    big = _program(one_factor(4), depth=8)
    small = compile_schedule(load(EXAMPLE), width=8, depth=8, slots=big.slots)
    size = _size(big)
    writes = list(enumerate(_encoded(size, schedule_image(small))))
    assert run_selftest(size, schedule_image(big), runs=2, writes=writes)[1][0] == 1


def test_images_that_do_not_fit_are_refused():
    program = _program(one_factor(4))
    size = _size(program)
    with pytest.raises(ValueError, match="does not fit"):
        ScheduleSelfTest(size, [0] * image_capacity(size))
    with pytest.raises(ValueError, match="does not fit"):
        ImageLayout(size).encode((ImageKind.ITEM, 4, 0, 0))


def test_the_uart_protocol_writes_the_image_and_runs_it():
    program = _program(one_factor(4))
    size = _size(program)
    entries = schedule_image(program)
    data = uart_bytes(size, entries)
    divisor = 4
    m = Module()
    m.submodules.tx = tx = UARTTx(divisor)
    m.submodules.rx = rx = UARTRx(divisor)
    m.submodules.loader = loader = ImageLoader(size)
    m.d.comb += rx.rx.eq(tx.tx)
    wiring.connect(m, rx.data, loader.data)
    writes, runs = [], []

    async def bench(ctx):
        at = 0
        for _ in range(len(data) * (10 * divisor + 4) + 100):
            if at < len(data) and ctx.get(tx.data.ready):
                ctx.set(tx.data.payload, data[at])
                ctx.set(tx.data.valid, 1)
                at += 1
            else:
                ctx.set(tx.data.valid, 0)
            await ctx.tick()
            if ctx.get(loader.write.valid):
                writes.append((ctx.get(loader.write.addr), ctx.get(loader.write.data)))
            if ctx.get(loader.run):
                runs.append(len(writes))

    _simulate(m, bench)
    assert writes == list(enumerate(_encoded(size, entries)))
    assert runs == [len(entries)]


@pytest.mark.parametrize("ok,node,stall", [(1, 0, 0), (0, 3, 0), (0, 0, 1)])
def test_status_line_goes_out_on_the_uart(ok, node, stall):
    n, runs = 12, 0x2A
    m = Module()
    m.submodules.line = line = ScheduleStatusLine(n)
    m.submodules.tx = tx = UARTTx(4)
    wiring.connect(m, line.out, tx.data)
    text = schedule_status_text(n, runs, ok, node, stall)
    bits = []

    async def bench(ctx):
        for port, value in ((line.runs, runs), (line.ok, ok), (line.node, node),
                            (line.stall, stall), (line.trigger, 1)):
            ctx.set(port, value)
        await ctx.tick()
        ctx.set(line.trigger, 0)
        ctx.set(line.ok, 1 - ok)   # sampled at the trigger
        for _ in range(len(text) * (10 * 4 + 2) + 40):
            bits.append(ctx.get(tx.tx))
            await ctx.tick()

    _simulate(m, bench)
    assert decode_uart(bits, 4).decode() == text
    assert text.startswith({(1, 0, 0): "PASS schedule", (0, 3, 0): "FAIL node 03 schedule",
                            (0, 0, 1): "FAIL stall schedule"}[(ok, node, stall)])


def uart_bits(data: bytes, divisor: int) -> list[int]:
    """An idle-high 8N1 line carrying ``data``, one sample per clock."""
    bits = [1] * divisor
    for byte in data:
        for b in [0] + [(byte >> k) & 1 for k in range(8)] + [1]:
            bits += [b] * divisor
    return bits + [1] * divisor


def test_the_board_core_reports_then_takes_a_new_image_over_the_uart():
    """What the pins show: a status line after reset; an upload then a new verdict."""
    from pipegossip.hw.fpga.schedule_board import ScheduleBoardCore
    program = _program(one_factor(4))
    size = _size(program)
    good = schedule_image(program)
    faulty, node = plant_fault(program, good, "program")
    divisor = 4
    dut = ScheduleBoardCore(size, _encoded(size, good), divisor)
    line = len(schedule_status_text(4, 1, True, 0, False))
    rx = uart_bits(uart_bytes(size, faulty), divisor)
    tx, leds = [], []

    async def bench(ctx):
        for t in range(len(rx) + 2 * (line + 2) * 10 * divisor + 400):
            ctx.set(dut.rx, rx[t] if t < len(rx) else 1)
            tx.append(ctx.get(dut.tx))
            leds.append((ctx.get(dut.passed), ctx.get(dut.failed), ctx.get(dut.node)))
            await ctx.tick()

    _simulate(dut, bench)
    text = decode_uart(tx, divisor).decode()
    assert text == (schedule_status_text(4, 1, True, 0, False)
                    + schedule_status_text(4, 2, False, node, False))
    assert leds[0] == (0, 0, 0) and (1, 0, 0) in leds and leds[-1] == (0, 1, node)


def _board_cli(*args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "pipegossip", "fpga", "--fabric", "schedule",
                           "--schedule", str(EXAMPLE), "--board", "icebreaker", "--simulate",
                           "--quiet", *args], capture_output=True, text=True)


@pytest.mark.fpga
def test_the_example_becomes_a_bitstream_whose_routed_netlist_passes(tmp_path):
    run = _board_cli("-o", str(tmp_path / "b"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "PASS"
    assert 100_000 < (tmp_path / "b" / "top.bin").stat().st_size < 110_000


@pytest.mark.parametrize("fault", [None, *FAULTS])
def test_the_board_command_plants_the_fault_in_the_image_it_builds(tmp_path, monkeypatch, fault):
    """``hw fpga --fabric schedule --schedule EXAMPLE --board icebreaker --simulate
    [--fault F]`` up to the build, in seconds: the image handed to the board top runs
    in the self-test to PASS, or to FAIL at the node the command reports. (The routed
    netlist of the same builds: the fpga tests below, the faulty ones slow.)"""
    from types import SimpleNamespace
    from pipegossip.cli import fpga as fpga_cli
    from pipegossip.cli import build_parser
    from pipegossip.cli.spellings import respell
    built = []

    def prepare_schedule(n, width, depth, slots, **kw):
        built.append((ScheduleSize(n, width, depth, slots), kw))
        return SimpleNamespace()

    monkeypatch.setattr(fpga_cli, "prepare_schedule", prepare_schedule)
    argv, _ = respell(["hw", "fpga", "--fabric", "schedule", "--schedule", str(EXAMPLE),
                       "--board", "icebreaker", "--simulate", "-o", str(tmp_path / "b"),
                       *(["--fault", fault] if fault else [])])
    job, node = fpga_cli._prepare_job(build_parser(argv).parse_args(argv))
    [(size, kw)] = built
    assert job.netlist and kw["board"] == "icebreaker"
    [(ok, got, stall, runs)] = run_selftest(size, None, encoded=kw["image"])
    assert (ok, got, stall, runs) == ((1, 0, 0, 1) if fault is None else (0, node, 0, 1))
    if fault is not None:
        program = _program(load(EXAMPLE), depth=size.depth, slots=size.slots)
        assert node == plant_fault(program, schedule_image(program), fault)[1]


@pytest.mark.fpga
@pytest.mark.slow  # covered in seconds: test_the_board_command_plants_the_fault_in_the_image_it_builds
@pytest.mark.parametrize("fault", FAULTS)  # and test_a_planted_fault_fails_at_its_node[example-*]
def test_a_planted_fault_fails_in_the_routed_netlist_at_its_node(tmp_path, fault):
    import json
    run = _board_cli("-o", str(tmp_path / "b"), "--fault", fault, "--format", "json")
    assert run.returncode == 1, run.stderr
    sim = json.loads(run.stdout)["simulation"]
    assert sim["verdict"] == f"FAIL node {sim['fault_node']}"
    assert sim["line"].startswith(f"FAIL node {sim['fault_node']} schedule n=4 runs=00000001")


@pytest.mark.parametrize("board,pins", [
    ("icebreaker", ["set_io uart_0__rx__io 6", "set_io led_g_0__io 37", "set_io led_r_0__io 11",
                    "set_io led_2__io 26", "set_io button_0__io 10"]),
    ("ulx3s-85f", ['"uart_0__rx__io" SITE "M1"', '"led_0__io" SITE "B2"', '"led_3__io" SITE "D2"',
                   '"button_0__io" SITE "R1"']),
])
def test_schedule_board_plans_use_the_uart_both_ways_and_the_node_leds(board, pins):
    import json
    from pipegossip.hw.fpga.flow import board_plan, prepare_schedule
    program = compile_schedule(load(EXAMPLE), width=8)
    size = _size(program)
    job = prepare_schedule(4, 8, size.depth, size.slots, board=board,
                           image=_encoded(size, schedule_image(program)))
    job.netlist = True
    plan = board_plan(job)
    constraints = plan.files["top.pcf" if board == "icebreaker" else "top.lpf"]
    for pin in pins:
        assert pin in constraints
    nextpnr = json.loads(plan.files["build_top.json"])["commands"][1]
    assert nextpnr[nextpnr.index("--write") + 1] == "top.routed.json"
    with pytest.raises(ValueError, match="needs an image"):
        prepare_schedule(4, 8, size.depth, size.slots, board=board)


@pytest.mark.fpga
@pytest.mark.slow
@pytest.mark.parametrize("fault", [None, "word"])
def test_the_fsm_board_top_simulates_as_routed(tmp_path, fault):
    """The FSM top's verdict is its red LED after 16 runs; the button's wrong word lights it."""
    import json
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-m", "pipegossip", "fpga", "--n", "4", "--order",
                          "pipelined", "--board", "icebreaker", "--simulate", "--quiet",
                          "--format", "json", "-o", str(tmp_path / "b"),
                          *(["--fault", fault] if fault else [])],
                         capture_output=True, text=True)
    assert run.returncode == (1 if fault else 0), run.stderr
    sim = json.loads(run.stdout)["simulation"]
    assert sim["verdict"] == ("FAIL" if fault else "PASS") and sim["runs"] == 16
