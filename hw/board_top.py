# amaranth: UnusedElaboratable=no
"""Top-level designs for the FPGA flow: a measuring boundary and board tops.

* :class:`BareTop` wraps any component (the fabric) in a registered I/O
  boundary with two pins, so that a bare fabric can be placed and routed on a
  real package: every input comes from a serial shift chain, every output is
  registered and folded into one pin by a pipelined XOR tree. Apart from
  the ports explicitly tied or left unobserved, no input is constant and no
  output is unobserved, so synthesis keeps all of the fabric's logic, and
  the boundary adds only register-to-register paths.
* :class:`SelfTest` runs gossip runs back to back on a :class:`Fabric`, feeds
  it words from a generator of (source, session, run value), and checks every
  delivery with one :class:`~pipegossip.hw.checker.DeliveryChecker` per
  receiver. It is platform independent (tested in Amaranth's simulator).
* :class:`BoardTop` puts a :class:`SelfTest` on a board: heartbeat and
  pass/fail on LEDs, a status line on the UART, a button that injects a
  fault, and optionally a PLL for a faster clock than the board's oscillator.
"""


import math

from amaranth.hdl import (Array, Cat, ClockDomain, ClockSignal, Const, Elaboratable, Instance,
                          Module, Mux, Signal)
from amaranth.lib import io, stream, wiring
from amaranth.lib.cdc import FFSynchronizer, ResetSynchronizer
from amaranth.lib.wiring import In, Out

from ..model.config import RunConfig
from ..model.engine import simulate
from .checker import ERROR_BITS, RUN_VALUE_BITS, DeliveryChecker, next_run_value, word_expr
from .fabric import Fabric

__all__ = [
    "BareTop", "SelfTest", "UARTTx", "StatusLine", "BoardTop", "TOP_ERROR_BITS",
    "status_text", "ice40_pll_params", "ecp5_pll_params",
]

#: Sticky error flags of :class:`SelfTest`, by bit position: the checkers'
#: flags OR-ed over all receivers, a receiver that ended a run with a session
#: incomplete, and the fabric's stall watchdog or the top's own run timeout.
TOP_ERROR_BITS = ERROR_BITS + ("missing", "stall")


def _reg(width: int, name: str) -> Signal:
    # Boundary registers need no reset: their contents are don't-care data,
    # and a reset would only add enable/reset logic that is not the fabric's.
    return Signal(width, name=name, reset_less=True)


class _Tied(Elaboratable):
    """``dut`` (as submodule ``core``) with some inputs tied to constants.

    The flow flattens ``core`` into this module but keeps this module apart
    from the measuring registers, so the constants reach the fabric's logic
    and nothing else crosses the boundary.
    """

    def __init__(self, dut: wiring.Component, tied: dict[str, int]):
        self._dut = dut
        self._tied = tied

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.core = self._dut
        for name, value in self._tied.items():
            m.d.comb += getattr(self._dut, name).eq(value)
        return m


class BareTop(wiring.Component):
    """A registered two-pin boundary around a component, for measurement.

    Parameters
    ----------
    dut : wiring.Component
        The design to measure; added as submodule ``name``.
    name : str
        Its submodule name (cells placed for it are named ``name.*``).
    tied : dict of str to int
        Top-level input ports of ``dut`` driven by constants instead of the
        chain (the fabric's debug input ``hold`` is tied to 0, its normal use).
    unobserved : iterable of str
        Top-level output ports of ``dut`` left unconnected (synthesis removes
        the logic only they need), e.g. the fabric's trace outputs for a
        deployment that only consumes deliveries.

    Attributes
    ----------
    serial_in : In(1)
        Shifted into a chain of registers, one per (untied) input bit of
        ``dut``; the chain drives those inputs.
    serial_out : Out(1)
        The XOR of all of ``dut``'s output bits, registered once at the
        boundary and then once per level of a 4-input XOR tree (latency
        ``1 + ceil(log4(output bits))`` cycles).

    Notes
    -----
    Every live ``dut`` input and output crosses one flip-flop at the
    boundary, as a registered bus interface would: the timing paths that
    remain are the design's own (register to register, input register to
    output register through its combinational logic).
    """

    serial_in: In(1)
    serial_out: Out(1)

    def __init__(self, dut: wiring.Component, name: str = "fabric",
                 tied: dict[str, int] | None = None, unobserved: tuple[str, ...] = ()):
        if not isinstance(dut, wiring.Component):
            raise TypeError(f"BareTop needs an amaranth wiring.Component, not {dut!r}")
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"BareTop submodule name must be an identifier, not {name!r}")
        tied = dict(tied or {})
        for port in tied:
            member = dut.signature.members[port] if port in dut.signature.members else None
            if member is None or not member.is_port or member.flow != In:
                raise ValueError(f"BareTop can only tie an input port of {dut!r}, not {port!r}")
        unobserved = tuple(unobserved)
        for port in unobserved:
            member = dut.signature.members[port] if port in dut.signature.members else None
            if member is None or not member.is_port or member.flow != Out:
                raise ValueError(f"BareTop can only leave an output port of {dut!r} "
                                 f"unobserved, not {port!r}")
        self._dut = dut
        self._name = name
        self._tied = tied
        self._unobserved = unobserved
        super().__init__()

    @property
    def dut_name(self) -> str:
        return self._name

    def elaborate(self, platform) -> Module:
        m = Module()
        dut = self._dut
        m.submodules[self._name] = _Tied(dut, self._tied) if self._tied else dut
        inputs, outputs = [], []
        for path, member, value in dut.signature.flatten(dut):
            if member.flow == In:
                if path[0] not in self._tied:
                    inputs.append(value)
            elif path[0] not in self._unobserved:
                outputs.append(value)

        n_in = sum(len(v) for v in inputs)
        chain = _reg(max(1, n_in), "chain")
        m.d.sync += chain.eq(Cat(self.serial_in, chain[:-1]))
        offset = 0
        for v in inputs:
            m.d.comb += v.eq(chain[offset:offset + len(v)])
            offset += len(v)

        level = _reg(sum(len(v) for v in outputs), "outputs")
        m.d.sync += level.eq(Cat(*outputs))
        depth = 0
        while len(level) > 1:
            depth += 1
            groups = range(0, len(level), 4)
            folded = _reg(len(groups), f"xor_{depth}")
            m.d.sync += folded.eq(Cat(*[level[k:k + 4].xor() for k in groups]))
            level = folded
        m.d.comb += self.serial_out.eq(level[0])
        return m


class SelfTest(wiring.Component):
    """Back-to-back gossip runs on a fabric, every delivery checked on chip.

    Parameters
    ----------
    config : RunConfig
        The fabric's configuration.
    width : int
        Word width.
    timeout : int or None
        Cycles a run may stay busy before the top flags ``stall`` on its own
        (independent of the fabric's watchdog). Default: 4 L + 16, with L the
        run length from the golden model.

    Attributes
    ----------
    inject : In(1)
        A rising edge arms a fault: processor 0's next word is sent with bit 0
        flipped, which the checkers must catch (a "wrong word" error).
    ok : Out(1)
        High while no error flag is set.
    error : Out(6)
        Sticky error flags (cleared only by reset), see :data:`TOP_ERROR_BITS`.
    runs : Out(32)
        Number of completed runs (each of ``sessions`` sessions); wraps.

    Notes
    -----
    One run takes L + 3 cycles: a start cycle, L busy cycles, the first
    cycle with ``done``, and a check cycle in which the top checks that every
    receiver completed all sessions (deliveries are registered once before
    their checkers, so the checks add nothing to the fabric's paths).
    Words: processor i's word of session k is
    ``word_expr(i, k, run_value)``; the run value steps a 32-bit LFSR after
    every run, so consecutive runs carry different words.
    """

    inject: In(1)
    ok: Out(1)
    error: Out(len(TOP_ERROR_BITS))
    runs: Out(32)

    def __init__(self, config: RunConfig, width: int = 8, timeout: int | None = None):
        if not isinstance(config, RunConfig):
            raise TypeError(f"SelfTest config must be a RunConfig, not {config!r}")
        if timeout is None:
            timeout = 4 * simulate(config).length + 16
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
            raise ValueError(f"SelfTest timeout must be a positive integer, not {timeout!r}")
        self._config = config
        self._width = width
        self._timeout = timeout
        # Built here so that bad widths are refused before elaboration.
        self.fabric = Fabric(config, width)
        super().__init__()

    def elaborate(self, platform) -> Module:
        m = Module()
        cfg, width = self._config, self._width
        n, sessions = cfg.n, cfg.sessions
        m.submodules.fabric = fabric = self.fabric
        checkers = [DeliveryChecker(cfg, j, width) for j in range(n)]
        for j, c in enumerate(checkers):
            m.submodules[f"check{j}"] = c

        run_value = Signal(RUN_VALUE_BITS, init=1)
        clear = Signal()
        m.d.comb += fabric.hold.eq(0)

        # Fault injection: arm on a rising edge, spend on processor 0's next word.
        inject_last = Signal()
        armed = Signal()
        m.d.sync += inject_last.eq(self.inject)
        with m.If(self.inject & ~inject_last):
            m.d.sync += armed.eq(1)

        next_session = [Signal(range(sessions + 1), name=f"next_session_{i}") for i in range(n)]
        for i in range(n):
            port = fabric.words[i]
            word = word_expr(i, next_session[i], run_value, n, width)
            if i == 0:
                word = word ^ armed
            m.d.comb += [port.payload.eq(word), port.valid.eq(1)]
            with m.If(clear):
                m.d.sync += next_session[i].eq(0)
            with m.Elif(port.ready & (next_session[i] != sessions)):
                m.d.sync += next_session[i].eq(next_session[i] + 1)
        with m.If(fabric.words[0].ready & armed):
            m.d.sync += armed.eq(0)

        flags = Signal(len(TOP_ERROR_BITS))
        m.d.comb += [self.error.eq(flags), self.ok.eq(~flags.any())]
        for k in range(len(ERROR_BITS)):
            with m.If(Cat(*[c.error[k] for c in checkers]).any()):
                m.d.sync += flags[k].eq(1)
        missing = len(ERROR_BITS)
        stall = missing + 1
        with m.If(fabric.stall):
            m.d.sync += flags[stall].eq(1)

        timer = Signal(range(self._timeout + 1))
        for j, c in enumerate(checkers):
            m.d.comb += [c.clear.eq(clear), c.run_value.eq(run_value)]
            # Deliveries are registered before they are checked, so that the
            # checkers add no logic to the fabric's combinational paths.
            for name in ("valid", "source", "session", "word"):
                m.d.sync += getattr(c.delivery, name).eq(getattr(fabric.delivery[j], name))

        with m.FSM(name="phase"):
            with m.State("Start"):
                m.d.comb += fabric.start.eq(1)
                m.d.sync += timer.eq(0)
                m.next = "Run"
            with m.State("Run"):
                m.d.sync += timer.eq(timer + 1)
                with m.If(fabric.done):
                    m.next = "Check"
                with m.Elif(timer == self._timeout):
                    m.d.sync += flags[stall].eq(1)
                    m.next = "Check"
            with m.State("Check"):
                # The last delivery (cycle L) was registered at the end of
                # cycle L and checked at the end of the done cycle L+1.
                with m.If(~Cat(*[c.complete for c in checkers]).all()):
                    m.d.sync += flags[missing].eq(1)
                m.d.comb += clear.eq(1)
                m.d.sync += [
                    self.runs.eq(self.runs + 1),
                    run_value.eq(next_run_value(run_value)),
                ]
                m.next = "Start"
        return m


class UARTTx(wiring.Component):
    """An 8N1 UART transmitter.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit (clock frequency / baud rate), at least 2.

    Attributes
    ----------
    data : In(stream.Signature(8))
        Bytes to send; taken when ``ready`` (one byte per 10 bit times).
    tx : Out(1, init=1)
        The serial line, idle high.
    """

    data: In(stream.Signature(8))
    tx: Out(1, init=1)

    def __init__(self, divisor: int):
        if isinstance(divisor, bool) or not isinstance(divisor, int) or divisor < 2:
            raise ValueError(f"UARTTx divisor must be an integer >= 2, not {divisor!r}")
        self._divisor = divisor
        super().__init__()

    def elaborate(self, platform) -> Module:
        m = Module()
        shift = Signal(10, init=0x3FF)
        bits_left = Signal(range(11))
        tick = Signal(range(self._divisor))
        m.d.comb += [self.tx.eq(shift[0]), self.data.ready.eq(bits_left == 0)]
        with m.If(self.data.valid & self.data.ready):
            m.d.sync += [shift.eq(Cat(Const(0, 1), self.data.payload, Const(1, 1))),
                         bits_left.eq(10), tick.eq(self._divisor - 1)]
        with m.Elif(bits_left != 0):
            with m.If(tick == 0):
                m.d.sync += [shift.eq(Cat(shift[1:], Const(1, 1))),
                             bits_left.eq(bits_left - 1), tick.eq(self._divisor - 1)]
            with m.Else():
                m.d.sync += tick.eq(tick - 1)
        return m


def status_text(config: RunConfig, width: int, runs: int, error: int) -> str:
    """The status line :class:`StatusLine` sends (reference, for tests and docs)."""
    verdict = "PASS" if error == 0 else "FAIL"
    return (f"pipegossip n={config.n} w={width} runs={runs & 0xFFFFFFFF:08X} "
            f"{verdict} err={error:02X}\r\n")


class StatusLine(wiring.Component):
    """Formats one status line of :func:`status_text` into a byte stream.

    Parameters
    ----------
    config : RunConfig
        Named in the line (N).
    width : int
        Named in the line.

    Attributes
    ----------
    trigger : In(1)
        Starts a line (ignored while one is being sent); ``runs`` and
        ``error`` are sampled at that edge.
    runs : In(32)
    error : In(6)
    out : Out(stream.Signature(8))
        The characters, one per handshake.
    """

    trigger: In(1)
    runs: In(32)
    error: In(len(TOP_ERROR_BITS))
    out: Out(stream.Signature(8))

    def __init__(self, config: RunConfig, width: int):
        self._prefix = f"pipegossip n={config.n} w={width} runs="
        super().__init__()

    def elaborate(self, platform) -> Module:
        m = Module()
        runs = Signal(32)
        error = Signal(len(TOP_ERROR_BITS))

        def hex_digit(nibble):
            return Mux(nibble < 10, nibble + ord("0"), nibble + (ord("A") - 10))[:8]

        def literal(text):
            return [Const(ord(c), 8) for c in text]

        ok = ~error.any()
        chars = (literal(self._prefix)
                 + [hex_digit(runs[4 * k:4 * k + 4]) for k in reversed(range(8))]
                 + literal(" ")
                 + [Mux(ok, ord(p), ord(f)) for p, f in zip("PASS", "FAIL")]
                 + literal(" err=")
                 + [hex_digit(error[4:]), hex_digit(error[:4])]
                 + literal("\r\n"))
        index = Signal(range(len(chars) + 1), init=len(chars))
        busy = index != len(chars)
        m.d.comb += [self.out.valid.eq(busy), self.out.payload.eq(Array(chars)[index])]
        with m.If(~busy & self.trigger):
            m.d.sync += [index.eq(0), runs.eq(self.runs), error.eq(self.error)]
        with m.Elif(self.out.valid & self.out.ready):
            m.d.sync += index.eq(index + 1)
        return m


def ice40_pll_params(f_in_mhz: float, f_out_mhz: float) -> tuple[dict, float]:
    """SB_PLL40 parameters (simple feedback) closest to ``f_out_mhz``.

    Returns the parameter dict and the achieved output frequency; refuses
    (ValueError) when no setting comes within 1 %. Limits from the iCE40
    sysCLOCK PLL guide (as used by ``icepll``): PFD
    10-133 MHz, VCO 533-1066 MHz, output 16-275 MHz.
    """
    best = None
    for divr in range(16):
        pfd = f_in_mhz / (divr + 1)
        if not 10 <= pfd <= 133:
            continue
        for divf in range(128):
            vco = pfd * (divf + 1)
            if not 533 <= vco <= 1066:
                continue
            for divq in range(1, 7):
                out = vco / 2 ** divq
                if 16 <= out <= 275 and (best is None or abs(out - f_out_mhz) < best[0]):
                    best = (abs(out - f_out_mhz), divr, divf, divq, pfd, out)
    if best is None or best[0] > 0.01 * f_out_mhz:
        nearest = f" (nearest {best[-1]:.3f} MHz)" if best else ""
        raise ValueError(f"the iCE40 PLL cannot make {f_out_mhz} MHz from {f_in_mhz} MHz"
                         f"{nearest}")
    _, divr, divf, divq, pfd, out = best
    filter_range = next(k for k, top in enumerate((17, 26, 44, 66, 101), start=1) if pfd < top) \
        if pfd < 101 else 6
    return (dict(p_FEEDBACK_PATH="SIMPLE", p_DIVR=divr, p_DIVF=divf, p_DIVQ=divq,
                 p_FILTER_RANGE=filter_range), out)


def ecp5_pll_params(f_in_mhz: float, f_out_mhz: float) -> tuple[dict, float]:
    """EHXPLLL parameters (CLKOP feedback) closest to ``f_out_mhz``.

    Returns the parameter dict and the achieved output frequency; refuses
    (ValueError) when no setting comes within 1 %. Limits as in ``ecppll``:
    PFD 3.125-400 MHz, VCO 400-800 MHz, output 3.125-400 MHz.
    """
    best = None
    for clki_div in range(1, 129):
        pfd = f_in_mhz / clki_div
        if not 3.125 <= pfd <= 400:
            continue
        for clkfb_div in range(1, 81):
            out = pfd * clkfb_div
            if not 3.125 <= out <= 400:
                continue
            for clkop_div in range(1, 129):
                if 400 <= out * clkop_div <= 800:
                    if best is None or abs(out - f_out_mhz) < best[0]:
                        best = (abs(out - f_out_mhz), clki_div, clkfb_div, clkop_div, out)
                    break
    if best is None or best[0] > 0.01 * f_out_mhz:
        nearest = f" (nearest {best[-1]:.3f} MHz)" if best else ""
        raise ValueError(f"the ECP5 PLL cannot make {f_out_mhz} MHz from {f_in_mhz} MHz"
                         f"{nearest}")
    _, clki_div, clkfb_div, clkop_div, out = best
    return (dict(p_CLKI_DIV=clki_div, p_CLKFB_DIV=clkfb_div, p_CLKOP_DIV=clkop_div,
                 p_CLKOP_CPHASE=clkop_div - 1, p_CLKOP_FPHASE=0), out)


class BoardTop(wiring.Component):
    """A :class:`SelfTest` on a board (iCEBreaker, ULX3S; any board with LEDs).

    Parameters
    ----------
    config : RunConfig
        The fabric's configuration.
    width : int
        Word width.
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
    * ``uart`` 0 (115200 8N1): :func:`status_text` about every second.
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

    def _pll_domain(self, m: Module, platform) -> float:
        """Drive the ``sync`` domain from a PLL; returns its frequency in Hz."""
        f_in = platform.default_clk_frequency / 1e6
        clk_port = platform.request(platform.default_clk, dir="-")
        clk = Signal(name="pll_clk")
        lock = Signal(name="pll_lock")
        family = getattr(platform, "family", None)
        if family == "iCE40":
            params, out = ice40_pll_params(f_in, self._clock_mhz)
            m.submodules.pll = Instance("SB_PLL40_PAD", **params, i_RESETB=1, i_BYPASS=0,
                                        i_PACKAGEPIN=clk_port.io,
                                        o_PLLOUTGLOBAL=clk, o_LOCK=lock)
        elif family == "ecp5":
            params, out = ecp5_pll_params(f_in, self._clock_mhz)
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
        self.achieved_mhz = out
        return out * 1e6

    def elaborate(self, platform) -> Module:
        if platform is None:
            raise ValueError("BoardTop needs a platform (simulate SelfTest instead)")
        m = Module()
        m.submodules.selftest = st = self.selftest
        if self._clock_mhz is not None:
            clk_hz = self._pll_domain(m, platform)
        else:
            clk_hz = platform.default_clk_frequency
            self.achieved_mhz = clk_hz / 1e6

        # Heartbeat: a runs-counter bit that toggles about once a second.
        run_cycles = simulate(self._config).length + 3
        beat_bit = max(0, min(31, int(math.log2(max(1.0, clk_hz / run_cycles)))))
        heartbeat = st.runs[beat_bit]

        def has(name, number=0):
            return (name, number) in platform.resources

        def output(name, number, value):
            port = platform.request(name, number, dir="-")
            m.submodules[f"{name}_{number}"] = buffer = io.Buffer("o", port)
            m.d.comb += buffer.o.eq(value)

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

