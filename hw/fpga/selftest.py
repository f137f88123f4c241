# amaranth: UnusedElaboratable=no
"""The self-checking run loop of the board tops, platform independent.

:class:`SelfTest` runs gossip runs back to back on a :class:`Fabric`, feeds
it the words of the project's tagged-word scheme (:mod:`pipegossip.hw.words`,
seeded with a per-run value), and checks every delivery with one
:class:`~pipegossip.hw.fpga.checker.DeliveryChecker` per receiver. It is
tested in Amaranth's simulator.
"""

# The first line's linter option is Amaranth's documented switch for
# UnusedElaboratable: a SelfTest builds its Fabric in its constructor (so
# that bad parameters are refused early), and a SelfTest that is only
# inspected, never built, leaves that Fabric unused on purpose.

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.config import RunConfig
from ...model.engine import simulate
from ..fsm.fabric import Fabric
from ..words import WordScheme
from .checker import ERROR_BITS, RUN_VALUE_BITS, DeliveryChecker, next_run_value

__all__ = ["SelfTest", "TOP_ERROR_BITS"]

#: Sticky error flags of :class:`SelfTest`, by bit position: the checkers'
#: flags OR-ed over all receivers, a receiver that ended a run with a session
#: incomplete, and the fabric's stall watchdog or the top's own run timeout.
TOP_ERROR_BITS = ERROR_BITS + ("missing", "stall")


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
    ``WordScheme(N, sessions, width).word(i, k, seed=run_value)``, built on
    chip by :meth:`~pipegossip.hw.words.WordScheme.expr`, the expression the
    checkers use too; the run value (the seed) steps a 32-bit LFSR after
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

        words = WordScheme(n, sessions, width)
        next_session = [Signal(range(sessions + 1), name=f"next_session_{i}") for i in range(n)]
        for i in range(n):
            port = fabric.words[i]
            word = words.expr(run_value, i, next_session[i])
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
        # The delivery port's fields are read off the fabric's own signature:
        # the port list is stated once, next to the Component.
        fields = fabric.signature.members["delivery"].signature.members
        for j, c in enumerate(checkers):
            m.d.comb += [c.clear.eq(clear), c.run_value.eq(run_value)]
            # Deliveries are registered before they are checked, so that the
            # checkers add no logic to the fabric's combinational paths.
            for name in fields:
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
