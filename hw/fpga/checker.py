"""On-chip delivery checking for the self-checking board tops.

A board top cannot carry the golden model, and it does not need to: SPEC
sections 1-6 promise that in every session each receiver gets the word of
every other processor exactly once. :class:`DeliveryChecker` checks exactly
that for one receiver with a bitmask of the sources seen in the current
session, and checks each delivered word against the project's one
tagged-word scheme, :mod:`pipegossip.hw.words`, that the senders use too:
:func:`word_value` in Python and :func:`word_expr` in Amaranth are thin
wrappers of :func:`~pipegossip.hw.words.seeded_word` and
:meth:`~pipegossip.hw.words.WordScheme.expr`.

The word of source ``s`` in session ``k`` of a run whose run value is ``r``
is the scheme's word with seed ``r``:
``((s * sessions + k) * M mod 2**width) ^ K(r)``, with ``M`` an odd constant
and ``K`` the seed key. The words of one run are distinct whenever
``N * sessions <= 2**width``, so a word routed from the wrong source or from
another session differs from the expected one; a word from a stale run
differs by ``K`` (with fewer word bits than run-value bits, runs are told
apart modulo the fold of ``K``, and the source and session fields are still
checked on their own).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.config import RunConfig
from ..bits import peer_width, session_width
from ..fsm.fabric import DeliverySignature
from ..words import SEED_BITS, WordScheme, multiplier, seeded_word

__all__ = [
    "source_key", "word_value", "word_expr", "next_run_value",
    "RUN_VALUE_BITS", "ERROR_BITS", "DeliveryChecker",
]

#: Width of the per-run pseudo-random value (a Galois LFSR, see
#: :func:`next_run_value`): the seed of the word scheme, all of whose
#: :data:`~pipegossip.hw.words.SEED_BITS` bits enter the words.
RUN_VALUE_BITS = SEED_BITS
# x^32 + x^22 + x^2 + x + 1, a maximal-length polynomial; any non-zero seed cycles
# through all 2**32 - 1 states, so consecutive runs never reuse a run value soon.
_LFSR_TAPS = 0x80200003

#: Names of the checker's error flags, by bit position in ``DeliveryChecker.error``.
ERROR_BITS = ("word", "session", "source", "duplicate")


def source_key(source: int, width: int, sessions: int = 1) -> int:
    """The part of processor ``source``'s words that depends on the source alone.

    ``(source * sessions * M) mod 2**width`` with ``M`` the word scheme's odd
    multiplier (:func:`pipegossip.hw.words.multiplier`): a word is
    ``(source_key + session * M) mod 2**width`` XOR the run's seed key. With
    ``sessions = 1`` it is a bijection of ``width``-bit numbers, so
    processors ``0 .. 2**width - 1`` get distinct keys, and neighbouring ids
    get keys that differ in many bits (``M`` is the golden-ratio constant).
    """
    return (source * sessions * multiplier(width)) & ((1 << width) - 1)


def word_value(source: int, session: int, run_value: int, width: int, sessions: int) -> int:
    """Reference: the word processor ``source`` sends in ``session`` of a run.

    The word scheme's word with the run value as seed:
    ``pipegossip.hw.words.seeded_word(run_value, source, session, sessions, width)``.
    """
    return seeded_word(run_value, source, session, sessions, width)


def word_expr(source: Value | int, session: Value | int, run_value: Value, n: int,
              width: int, sessions: int) -> Value:
    """Amaranth expression of :func:`word_value`; ``source`` may be a signal.

    ``WordScheme(n, sessions, width).expr(run_value, source, session)``: with a
    constant ``source`` (a sender) the word costs a constant multiplication of
    the session number and XORs with the run value's key; with a signal (a
    checker) also a constant multiplication of the source id and an adder.
    """
    return WordScheme(n, sessions, width).expr(run_value, source, session)


def next_run_value(value: int | Value):
    """One step of the run-value LFSR (Galois form, shift right)."""
    if isinstance(value, int):
        return (value >> 1) ^ (_LFSR_TAPS if value & 1 else 0)
    taps = Const(_LFSR_TAPS, RUN_VALUE_BITS)
    return (value >> 1) ^ (taps & value[0].replicate(RUN_VALUE_BITS))


class DeliveryChecker(wiring.Component):
    """Checks the deliveries of one receiver: right source, right session, once.

    Parameters
    ----------
    config : RunConfig
        Gives N and the number of sessions per run.
    pid : int
        The receiver this checker watches, 0 <= pid < N.
    width : int
        Word width in bits.

    Attributes
    ----------
    clear : In(1)
        Start of a run: forget the sources seen and return to session 0
        (takes effect at the rising edge; error flags are kept).
    run_value : In(32)
        The run value of the run in progress: the seed of the word scheme
        (see :func:`word_expr`); must be stable while deliveries arrive.
    delivery : In(DeliverySignature)
        The fabric's ``delivery[pid]`` port: ``valid``, ``source``,
        ``session``, ``word``.
    error : Out(4)
        Sticky error flags (cleared only by reset), bits as in
        :data:`ERROR_BITS`: the word is not the expected word of that source
        in this receiver's current session; the session field is not the
        current session; the source is the receiver itself or not a
        processor; the source was already seen in this session. Set at the
        rising edge ending the cycle of the bad delivery (latency 1).
    complete : Out(1)
        High once all ``sessions`` sessions have received a word from every
        other processor (latency 1 after the last delivery); low after
        ``clear``. A run that ends with ``complete`` low lost a delivery.
    session : Out(session bits)
        The session this receiver is in (number of completed sessions,
        saturating at ``sessions - 1``).

    Notes
    -----
    Only the receiver-side promise of the SPEC is checked, never the
    schedule: the checker does not know when a word should arrive, only that
    each other processor's word arrives once per session, in session order.
    """

    def __init__(self, config: RunConfig, pid: int, width: int = 8):
        if not isinstance(config, RunConfig):
            raise TypeError(f"DeliveryChecker config must be a RunConfig, not {config!r}")
        if isinstance(pid, bool) or not isinstance(pid, int) or not 0 <= pid < config.n:
            raise ValueError(f"DeliveryChecker pid must be in 0..{config.n - 1}, not {pid!r}")
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"DeliveryChecker width must be an integer >= 1, not {width!r}")
        self._n = config.n
        self._sessions = config.sessions
        self._pid = pid
        self._width = width
        super().__init__({
            "clear": In(1),
            "run_value": In(RUN_VALUE_BITS),
            "delivery": In(DeliverySignature(config.n, config.sessions, width)),
            "error": Out(len(ERROR_BITS)),
            "complete": Out(1),
            "session": Out(session_width(config.sessions)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        n, pid = self._n, self._pid
        d = self.delivery
        everyone = ((1 << n) - 1) & ~(1 << pid)

        seen = Signal(n)
        # Counts completed sessions, one more bit than `session` so that
        # "all sessions done" is a value of its own.
        done_sessions = Signal(range(self._sessions + 1))
        current = Signal(session_width(self._sessions))
        m.d.comb += [
            current.eq(Mux(done_sessions == self._sessions, self._sessions - 1, done_sessions)),
            self.session.eq(current),
            self.complete.eq(done_sessions == self._sessions),
        ]

        src = d.source
        in_range = Const(1, 1) if n == 1 << peer_width(n) else (src < n)
        source_bad = (src == pid) | ~in_range
        src_bit = (Const(1, n) << src)[:n]
        duplicate = (seen & src_bit).any()
        session_bad = (d.session != current) | (done_sessions == self._sessions)
        expected = WordScheme(n, self._sessions, self._width).expr(self.run_value, src, current)
        word_bad = d.word != expected

        with m.If(d.valid):
            m.d.sync += self.error.eq(self.error | Cat(word_bad, session_bad, source_bad,
                                                       duplicate & ~source_bad))
        with m.If(self.clear):
            m.d.sync += [seen.eq(0), done_sessions.eq(0)]
        with m.Elif(d.valid & ~source_bad & (done_sessions != self._sessions)):
            now = seen | src_bit
            with m.If(now == everyone):
                m.d.sync += [seen.eq(0), done_sessions.eq(done_sessions + 1)]
            with m.Else():
                m.d.sync += seen.eq(now)
        return m
