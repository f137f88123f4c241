# amaranth: UnusedElaboratable=no
"""The self-checking top on a board: LEDs, a UART status line, a fault button, a PLL.

:class:`BoardTop` puts a :class:`~pipegossip.hw.fpga.selftest.SelfTest` on a
board (iCEBreaker, ULX3S; any amaranth-boards platform with LEDs): heartbeat
and pass/fail on LEDs, a status line on the UART, a button that injects a
fault, and optionally a PLL for a faster clock than the board's oscillator.
"""

# The first line's linter option is Amaranth's documented switch for
# UnusedElaboratable: a BoardTop builds its SelfTest in its constructor (so
# that bad parameters are refused before any tool runs), and a top that is
# prepared but never built leaves it unused on purpose.

import math

from amaranth.hdl import ClockDomain, ClockSignal, Instance, Module, Signal
from amaranth.lib import io, wiring
from amaranth.lib.cdc import FFSynchronizer, ResetSynchronizer

from ...model.config import RunConfig
from ...model.engine import simulate
from .pll import ecp5_pll_params, ice40_pll_params
from .selftest import TOP_ERROR_BITS, SelfTest
from .uart import StatusLine, UARTTx

__all__ = ["BoardTop", "pll_domain", "resource_helpers"]


def pll_domain(m: Module, platform, clock_mhz: float) -> float:
    """Drive ``m``'s ``sync`` domain from a PLL at ``clock_mhz``; returns the frequency in MHz."""
    f_in = platform.default_clk_frequency / 1e6
    clk_port = platform.request(platform.default_clk, dir="-")
    clk = Signal(name="pll_clk")
    lock = Signal(name="pll_lock")
    family = getattr(platform, "family", None)
    if family == "iCE40":
        params, out = ice40_pll_params(f_in, clock_mhz)
        m.submodules.pll = Instance("SB_PLL40_PAD", **params, i_RESETB=1, i_BYPASS=0,
                                    i_PACKAGEPIN=clk_port.io,
                                    o_PLLOUTGLOBAL=clk, o_LOCK=lock)
    elif family == "ecp5":
        params, out = ecp5_pll_params(f_in, clock_mhz)
        m.submodules.osc = osc = io.Buffer("i", clk_port)
        clk_in = osc.i
        m.submodules.pll = Instance(
            "EHXPLLL", **params,
            a_FREQUENCY_PIN_CLKI=str(f_in), a_FREQUENCY_PIN_CLKOP=str(out),
            a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1",
            a_MFG_GMCREF_SEL="2",
            p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_CLKOP_ENABLE="ENABLED",
            p_FEEDBK_PATH="CLKOP",
            i_RST=0, i_STDBY=0, i_CLKI=clk_in, i_CLKFB=clk, o_CLKOP=clk, o_LOCK=lock,
            i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1, i_PHASELOADREG=1,
            i_PLLWAKESYNC=0, i_ENCLKOP=0)
    else:
        raise ValueError(f"no PLL support for platform {type(platform).__name__}")
    m.domains.sync = ClockDomain("sync")
    m.d.comb += ClockSignal("sync").eq(clk)
    m.submodules.reset_sync = ResetSynchronizer(~lock, domain="sync")
    # No explicit constraint on `clk`: nextpnr derives the PLL output's
    # frequency from the oscillator's constraint and the PLL parameters.
    return out


def resource_helpers(m: Module, platform):
    """``has(name, number=0)`` and ``output(name, number, value)`` for a board top's pins."""
    def has(name, number=0):
        return (name, number) in platform.resources

    def output(name, number, value):
        port = platform.request(name, number, dir="-")
        m.submodules[f"{name}_{number}"] = buffer = io.Buffer("o", port)
        m.d.comb += buffer.o.eq(value)

    return has, output


class BoardTop(wiring.Component):
    """A :class:`SelfTest` on a board (iCEBreaker, ULX3S; any board with LEDs).

    Parameters
    ----------
    config, width : RunConfig, int
        The fabric's configuration and word width, as for :class:`SelfTest`.
    clock_mhz : float or None
        Run the design from a PLL at this frequency instead of the board's
        oscillator (iCE40 and ECP5 platforms).

    Notes
    -----
    Has no ports of its own: it requests the platform's resources.

    * LEDs: on a board with ``led_g``/``led_r`` (iCEBreaker) the green LED
      blinks (heartbeat) while all deliveries check out and the red LED lights
      on any error. Otherwise ``led`` 0 is the heartbeat, ``led`` 1 is on while
      passing and ``led`` 2.. show the error flags of :data:`TOP_ERROR_BITS`.
      The heartbeat toggles every 2**k runs (about once a second), so it
      freezes if the fabric hangs.
    * ``uart`` 0 (115200 8N1): :func:`~pipegossip.hw.fpga.uart.status_text` about every second.
    * ``button`` 0: injects a fault (the red/error LEDs must light).
    """

    def __init__(self, config: RunConfig, width: int = 8, clock_mhz: float | None = None):
        if clock_mhz is not None and not (isinstance(clock_mhz, (int, float)) and clock_mhz > 0):
            raise ValueError(f"BoardTop clock_mhz must be a positive number, not {clock_mhz!r}")
        self._config = config
        self._width = width
        self._clock_mhz = clock_mhz
        self.selftest = SelfTest(config, width)
        self.achieved_mhz: float | None = None
        super().__init__({})

    def elaborate(self, platform) -> Module:
        if platform is None:
            raise ValueError("BoardTop needs a platform (simulate SelfTest instead)")
        m = Module()
        m.submodules.selftest = st = self.selftest
        if self._clock_mhz is not None:
            self.achieved_mhz = pll_domain(m, platform, self._clock_mhz)
            clk_hz = self.achieved_mhz * 1e6
        else:
            clk_hz = platform.default_clk_frequency
            self.achieved_mhz = clk_hz / 1e6

        # Heartbeat: a runs-counter bit that toggles about once a second.
        run_cycles = simulate(self._config).length + 3
        beat_bit = max(0, min(31, int(math.log2(max(1.0, clk_hz / run_cycles)))))
        heartbeat = st.runs[beat_bit]

        has, output = resource_helpers(m, platform)

        if has("led_g") and has("led_r"):
            output("led_g", 0, heartbeat & st.ok)
            output("led_r", 0, ~st.ok)
        else:
            status = [heartbeat, st.ok] + [st.error[k] for k in range(len(TOP_ERROR_BITS))]
            count = 0
            while has("led", count) and count < len(status):
                output("led", count, status[count])
                count += 1

        if has("button"):
            port = platform.request("button", 0, dir="-")
            m.submodules.button = button = io.Buffer("i", port)
            m.submodules.button_sync = FFSynchronizer(button.i, st.inject)

        if has("uart"):
            uart = platform.request("uart", 0, dir="-")
            m.submodules.uart_tx = tx_buffer = io.Buffer("o", uart.tx)
            m.submodules.uart = tx = UARTTx(round(clk_hz / 115200))
            m.submodules.status = line = StatusLine(self._config, self._width)
            period = 1 << max(8, math.ceil(math.log2(clk_hz)))
            timer = Signal(range(period))
            m.d.sync += timer.eq(timer + 1)
            m.d.comb += [line.trigger.eq(timer == period - 1), line.runs.eq(st.runs),
                         line.error.eq(st.error), tx_buffer.o.eq(tx.tx)]
            wiring.connect(m, line.out, tx.data)
        return m
