"""The board tops' serial line: an 8N1 UART (transmit, receive) and the status line sent."""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ...model.config import RunConfig
from .selftest import TOP_ERROR_BITS

__all__ = ["UARTTx", "UARTRx", "StatusLine", "status_text"]


def _check_divisor(who: str, divisor) -> None:
    if isinstance(divisor, bool) or not isinstance(divisor, int) or divisor < 2:
        raise ValueError(f"{who} divisor must be an integer >= 2, not {divisor!r}")


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
        _check_divisor("UARTTx", divisor)
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


class UARTRx(wiring.Component):
    """An 8N1 UART receiver.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit (clock frequency / baud rate), at least 2.

    Attributes
    ----------
    rx : In(1, init=1)
        The serial line, idle high (synchronised by the caller).
    data : Out(stream.Signature(8))
        Each received byte, ``valid`` for one cycle about half a bit time
        after its stop bit's middle; a byte whose stop bit is low is dropped.
        ``ready`` is not looked at (the consumer must take every byte).
    """

    rx: In(1, init=1)
    data: Out(stream.Signature(8))

    def __init__(self, divisor: int):
        _check_divisor("UARTRx", divisor)
        self._divisor = divisor
        super().__init__()

    def elaborate(self, platform) -> Module:
        m = Module()
        tick = Signal(range(self._divisor))
        bits = Signal(range(10))
        shift = Signal(8)
        m.d.sync += self.data.valid.eq(0)
        m.d.comb += self.data.payload.eq(shift)
        with m.FSM(name="rx"):
            with m.State("Idle"):
                with m.If(~self.rx):
                    m.d.sync += tick.eq(self._divisor // 2)
                    m.next = "Start"
            with m.State("Start"):   # to the middle of the start bit
                with m.If(tick != 0):
                    m.d.sync += tick.eq(tick - 1)
                with m.Elif(self.rx):
                    m.next = "Idle"  # a glitch, not a start bit
                with m.Else():
                    m.d.sync += [tick.eq(self._divisor - 1), bits.eq(0)]
                    m.next = "Bits"
            with m.State("Bits"):    # one sample in the middle of every bit
                with m.If(tick != 0):
                    m.d.sync += tick.eq(tick - 1)
                with m.Elif(bits == 8):
                    m.d.sync += self.data.valid.eq(self.rx)
                    m.next = "Idle"
                with m.Else():
                    m.d.sync += [shift.eq(Cat(shift[1:], self.rx)), bits.eq(bits + 1),
                                 tick.eq(self._divisor - 1)]
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
