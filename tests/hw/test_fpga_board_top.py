# amaranth: UnusedElaboratable=no
"""The tops of the FPGA flow in Amaranth's simulator: the measuring boundary,
the self-checking run loop on the real fabric, the UART status line, the PLL
settings and the board build plans (no tool runs here)."""

import json
import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from pipegossip.hw.fpga.bare_top import BareTop
from pipegossip.hw.fpga.flow import board_plan, prepare
from pipegossip.hw.fpga.pll import ecp5_pll_params, ice40_pll_params
from pipegossip.hw.fpga.selftest import TOP_ERROR_BITS, SelfTest
from pipegossip.hw.fpga.uart import StatusLine, UARTTx, status_text
from pipegossip.model import RunConfig, simulate

WORD_ERROR = 1 << TOP_ERROR_BITS.index("word")


class _Sample(wiring.Component):
    """A small stand-in design: combinational and registered outputs."""

    a: In(5)
    b: In(3)
    hold: In(2)
    y: Out(6)
    z: Out(3)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.y.eq(self.a + self.b + self.hold)
        m.d.sync += self.z.eq(self.b ^ self.a[:3])
        return m


def _simulate(dut, bench) -> None:
    """Run testbench ``bench`` on ``dut`` with a 1 MHz clock."""
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def test_bare_top_feeds_every_input_from_the_chain_and_observes_every_output():
    dut = _Sample()
    top = BareTop(dut, name="dut", tied={"hold": 0})
    rng = random.Random(7)
    parities, outs, inputs = [], [], []

    async def bench(ctx):
        for _ in range(200):
            ctx.set(top.serial_in, rng.getrandbits(1))
            await ctx.delay(1e-8)
            inputs.append((ctx.get(dut.a), ctx.get(dut.b), ctx.get(dut.hold)))
            parities.append((ctx.get(dut.y) ^ ctx.get(dut.z)).bit_count() & 1)
            outs.append(ctx.get(top.serial_out))
            await ctx.tick()

    _simulate(top, bench)
    # 9 output bits: one boundary register, then XOR levels of 3 and 1 bits.
    latency = 3
    assert outs[50:] == parities[50 - latency:-latency]
    assert len({a for a, _, _ in inputs}) == 32 and len({b for _, b, _ in inputs}) == 8
    assert {h for _, _, h in inputs} == {0}


def test_bare_top_refuses_to_tie_an_output():
    with pytest.raises(ValueError, match="'y'"):
        BareTop(_Sample(), tied={"y": 0})


def run_selftest(config, cycles, inject_at=None):
    dut = SelfTest(config, 8)
    seen = {}

    async def bench(ctx):
        for t in range(cycles):
            if inject_at is not None and t == inject_at:
                ctx.set(dut.inject, 1)
            await ctx.tick()
        seen.update(runs=ctx.get(dut.runs), error=ctx.get(dut.error), ok=ctx.get(dut.ok))

    _simulate(dut, bench)
    return seen


CONFIGS = [
    RunConfig.family(4, "pipelined"),
    RunConfig.family(5, "identity", sessions=3),
    RunConfig.family(6, "pipelined", receive="any", substitute=True),
    RunConfig.family(6, "random", seed=2, channels=1),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.slug)
def test_selftest_runs_back_to_back_and_every_delivery_checks_out(config):
    run_cycles = simulate(config).length + 3
    seen = run_selftest(config, 4 * run_cycles + 2)
    assert seen["error"] == 0 and seen["ok"] == 1
    assert seen["runs"] == 4


@pytest.mark.parametrize("config", CONFIGS[:2], ids=lambda c: c.slug)
def test_an_injected_fault_is_caught(config):
    run_cycles = simulate(config).length + 3
    seen = run_selftest(config, 4 * run_cycles, inject_at=run_cycles + 1)
    assert seen["ok"] == 0
    assert seen["error"] == WORD_ERROR
    assert seen["runs"] >= 3


def decode_uart(bits, divisor):
    """Bytes of an idle-high 8N1 line sampled once per clock."""
    out, t = [], 0
    while t < len(bits):
        if bits[t] == 0:
            middle = t + divisor // 2
            if middle + 9 * divisor >= len(bits):
                break
            byte = sum(bits[middle + (k + 1) * divisor] << k for k in range(8))
            assert bits[middle + 9 * divisor] == 1, "stop bit"
            out.append(byte)
            t = middle + 9 * divisor
        t += 1
    return bytes(out)


@pytest.mark.parametrize("runs,error", [(0x1234ABCD, 0), (7, 0b100001)])
def test_status_line_goes_out_on_the_uart(runs, error):
    config = RunConfig.family(8, "pipelined")
    m = Module()
    m.submodules.line = line = StatusLine(config, 8)
    m.submodules.tx = tx = UARTTx(4)
    wiring.connect(m, line.out, tx.data)
    text = status_text(config, 8, runs, error)
    bits = []

    async def bench(ctx):
        ctx.set(line.runs, runs)
        ctx.set(line.error, error)
        ctx.set(line.trigger, 1)
        await ctx.tick()
        ctx.set(line.trigger, 0)
        ctx.set(line.runs, 0)   # the line was sampled at the trigger
        for _ in range(len(text) * (10 * 4 + 2) + 40):
            bits.append(ctx.get(tx.tx))
            await ctx.tick()

    _simulate(m, bench)
    assert decode_uart(bits, 4).decode() == text
    assert ("PASS" in text) == (error == 0)


@pytest.mark.parametrize("f_in,f_out", [(12, 30), (12, 48), (12, 50), (12, 24)])
def test_ice40_pll_settings_are_within_limits(f_in, f_out):
    params, out = ice40_pll_params(f_in, f_out)
    pfd = f_in / (params["p_DIVR"] + 1)
    vco = pfd * (params["p_DIVF"] + 1)
    assert 10 <= pfd <= 133 and 533 <= vco <= 1066
    assert out == pytest.approx(vco / 2 ** params["p_DIVQ"])
    assert abs(out - f_out) / f_out < 0.01


@pytest.mark.parametrize("f_in,f_out", [(25, 100), (25, 50), (25, 125), (25, 62.5)])
def test_ecp5_pll_settings_are_within_limits(f_in, f_out):
    params, out = ecp5_pll_params(f_in, f_out)
    assert out == pytest.approx(f_in * params["p_CLKFB_DIV"] / params["p_CLKI_DIV"])
    assert 400 <= out * params["p_CLKOP_DIV"] <= 800
    assert out == pytest.approx(f_out)


def test_pll_refuses_an_impossible_frequency():
    with pytest.raises(ValueError, match="1000 MHz"):
        ice40_pll_params(12, 1000)
    with pytest.raises(ValueError, match="nearest"):
        ecp5_pll_params(25, 450)


@pytest.mark.parametrize("board,pins,tools", [
    ("icebreaker", ["set_io clk12_0__io 35", "set_io led_g_0__io 37", "set_io led_r_0__io 11",
                    "set_io uart_0__tx__io 9", "set_io button_0__io 10"],
     ["yosys", "nextpnr-ice40", "icepack"]),
    ("ulx3s-85f", ['"clk25_0__io" SITE "G2"', '"led_0__io" SITE "B2"', '"led_7__io" SITE "H3"',
                   '"uart_0__tx__io" SITE "L4"', '"button_0__io" SITE "R1"'],
     ["yosys", "nextpnr-ecp5", "ecppack"]),
])
def test_board_plans_use_the_board_resources(board, pins, tools):
    job = prepare(RunConfig.family(4, "pipelined"), 8, board=board)
    plan = board_plan(job)
    constraints = plan.files["top.pcf" if board == "icebreaker" else "top.lpf"]
    for pin in pins:
        assert pin in constraints
    commands = json.loads(plan.files["build_top.json"])["commands"]
    assert [c[0] for c in commands] == tools
    nextpnr = commands[1]
    assert "--report" in nextpnr and "--timing-allow-fail" in nextpnr
    # ECP5: the checkers' multiplications stay in LUTs (DSP blocks cost 40 % of Fmax)
    assert ("-nodsp" in plan.files["top.ys"]) == (board != "icebreaker")
