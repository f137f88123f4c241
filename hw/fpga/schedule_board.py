# amaranth: UnusedElaboratable=no
"""The schedule fabric on a board: a compiled schedule in block RAM, run and checked on chip.

:class:`ScheduleBoardTop` puts a
:class:`~pipegossip.hw.fpga.schedule_selftest.ScheduleSelfTest` on a board
(iCEBreaker, ULX3S): PASS/FAIL and the first wrong node on the LEDs, a
status line on the UART after every run, a button that runs the image
again, and the UART upload protocol (:class:`~.schedule_selftest.ImageLoader`)
that replaces the image without a new bitstream.
"""

# The first line's linter option is Amaranth's documented switch for
# UnusedElaboratable: the self-test is built in the constructor (bad sizes
# and images are refused before any tool runs).

from __future__ import annotations

from amaranth.hdl import Module, Mux
from amaranth.lib import io, wiring
from amaranth.lib.wiring import In, Out
from amaranth.lib.cdc import FFSynchronizer

from ..ports import ScheduleSize
from .board_top import pll_domain, resource_helpers
from .schedule_selftest import ImageLoader, ScheduleSelfTest, ScheduleStatusLine
from .uart import UARTRx, UARTTx

__all__ = ["ScheduleBoardTop", "ScheduleBoardCore", "BAUD"]

#: The UART's rate, both directions (8N1).
BAUD = 115200


class ScheduleBoardCore(wiring.Component):
    """The board top's logic without pins: self-test, UART status line and upload, run button.

    Parameters
    ----------
    size, image
        As for :class:`~.schedule_selftest.ScheduleSelfTest`.
    divisor : int
        Clock cycles per UART bit (both directions).
    selftest : callable, optional
        Builds the self-test instead of ``ScheduleSelfTest(size, image)``
        (the network board's :class:`~.network_board.NetworkSelfTest`).
    fabric : str
        The fabric's name in the status line.

    Attributes
    ----------
    button : In(1)
        A rising edge runs the image again (synchronised by the caller).
    rx : In(1, init=1)
        UART receive line (synchronised by the caller): the upload protocol
        of :class:`~.schedule_selftest.ImageLoader`.
    tx : Out(1, init=1)
        UART transmit line: one status line per run.
    passed, failed : Out(1)
        The last run's verdict (both low before the first).
    node : Out(node bits)
        The first wrong node while ``failed`` and no stall, else 0.
    """

    def __init__(self, size: ScheduleSize, image: list[int], divisor: int,
                 selftest=None, fabric: str = "schedule"):
        self._size = size
        self._divisor = divisor
        self._fabric = fabric
        self.selftest = ScheduleSelfTest(size, image) if selftest is None else selftest()
        super().__init__({"button": In(1), "rx": In(1, init=1), "tx": Out(1, init=1),
                          "passed": Out(1), "failed": Out(1), "node": Out(size.node_bits)})

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.selftest = st = self.selftest
        m.submodules.uart_tx = tx = UARTTx(self._divisor)
        m.submodules.uart_rx = rx = UARTRx(self._divisor)
        m.submodules.loader = loader = ImageLoader(self._size)
        m.submodules.status = line = ScheduleStatusLine(self._size.n, self._fabric)
        failed = st.done & ~st.ok
        m.d.comb += [
            self.passed.eq(st.done & st.ok), self.failed.eq(failed),
            self.node.eq(Mux(failed & ~st.stall, st.node, 0)),
            st.run.eq(self.button | loader.run),
            rx.rx.eq(self.rx), self.tx.eq(tx.tx),
            line.trigger.eq(st.report), line.runs.eq(st.runs), line.ok.eq(st.ok),
            line.node.eq(st.node), line.stall.eq(st.stall),
        ]
        wiring.connect(m, line.out, tx.data)
        wiring.connect(m, rx.data, loader.data)
        wiring.connect(m, loader.write, st.write)
        return m


class ScheduleBoardTop(wiring.Component):
    """A :class:`ScheduleSelfTest` on a board.

    Parameters
    ----------
    size : ScheduleSize
        The fabric's size.
    image : list of int
        The encoded image the block RAM holds after configuration.
    clock_mhz : float or None
        Run from a PLL at this frequency instead of the board's oscillator.
    selftest, fabric
        As for :class:`ScheduleBoardCore` (another fabric's self-test).

    Notes
    -----
    Has no ports of its own: it requests the platform's resources.

    * LEDs: ``led_g``/``led_r`` (iCEBreaker) or ``led`` 0/1 (ULX3S): PASS /
      FAIL of the last run, both dark before the first verdict; ``led`` 2..
      (the iCEBreaker's snap-off LEDs, the ULX3S's LED2..7) show the first
      wrong node in binary, bit 0 on ``led`` 2.
    * ``uart`` 0, 115200 8N1: after every run, the line of
      :func:`~.schedule_selftest.schedule_status_text`
      (``PASS schedule n=4 runs=00000001``, ``FAIL node 3 schedule ...``);
      received bytes are the upload protocol of :class:`ImageLoader`.
    * ``button`` 0: runs the image again.
    """

    def __init__(self, size: ScheduleSize, image: list[int], clock_mhz: float | None = None,
                 selftest=None, fabric: str = "schedule"):
        if clock_mhz is not None and not (isinstance(clock_mhz, (int, float)) and clock_mhz > 0):
            raise ValueError(f"ScheduleBoardTop clock_mhz must be a positive number, "
                             f"not {clock_mhz!r}")
        self._size = size
        self._image = image
        self._clock_mhz = clock_mhz
        self._selftest, self._fabric = selftest, fabric
        # refuses an image that does not fit, before any tool
        ScheduleSelfTest(size, image) if selftest is None else selftest()
        self.achieved_mhz: float | None = None
        super().__init__({})

    def elaborate(self, platform) -> Module:
        if platform is None:
            raise ValueError("ScheduleBoardTop needs a platform (simulate ScheduleBoardCore)")
        m = Module()
        if self._clock_mhz is not None:
            self.achieved_mhz = pll_domain(m, platform, self._clock_mhz)
        else:
            self.achieved_mhz = platform.default_clk_frequency / 1e6
        m.submodules.core = core = ScheduleBoardCore(self._size, self._image,
                                                     round(self.achieved_mhz * 1e6 / BAUD),
                                                     self._selftest, self._fabric)

        has, output = resource_helpers(m, platform)

        def synced_input(name, target, init=0, sub=None):
            port = platform.request(name, 0, dir="-")
            pin = io.Buffer("i", getattr(port, sub) if sub else port)
            m.submodules[f"{name}_{sub or 'in'}"] = pin
            m.submodules[f"{name}_{sub or 'in'}_sync"] = FFSynchronizer(pin.i, target, init=init)
            return port

        if has("led_g") and has("led_r"):
            output("led_g", 0, core.passed)
            output("led_r", 0, core.failed)
        else:
            output("led", 0, core.passed)
            output("led", 1, core.failed)
        for bit in range(len(core.node)):
            if has("led", 2 + bit):
                output("led", 2 + bit, core.node[bit])
        if has("button"):
            synced_input("button", core.button)
        if has("uart"):
            uart = synced_input("uart", core.rx, init=1, sub="rx")
            m.submodules.uart_tx_pin = tx_pin = io.Buffer("o", uart.tx)
            m.d.comb += tx_pin.o.eq(core.tx)
        return m
