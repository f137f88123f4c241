"""The one tagged-word scheme: the word each processor broadcasts in each session.

Every processor broadcasts one word per session. Whoever drives a fabric
(the Amaranth-simulator runner, the cocotb testbench, the golden dump, the
self-checking board top) and whoever judges it (:mod:`pipegossip.sim.judge.fsm`,
the on-chip :class:`~pipegossip.hw.fpga.checker.DeliveryChecker`) derive those
words from the one function defined here, so a word that reaches the wrong
processor, carries the wrong session or comes from the wrong source is caught
by value, not only by the fabric's own ``source``/``session`` fields.

A :class:`TaggedWord` carries its tags in named fields, as verilog-axis does
with ``tid`` (here ``source``) and ``tuser`` (here ``session``) beside
``tdata`` (here ``word``); the fabric's ``delivery`` ports show the same
three fields.

Notes
-----
The word of processor ``source`` in session ``session`` of a run with seed
``seed`` and ``sessions`` sessions per run, ``width`` bits wide, is::

    index = source * sessions + session
    word  = ((index * M) mod 2**width) ^ K(seed)

``M`` is the Fibonacci-hashing constant ``0x9E3779B97F4A7C15`` (``2**64``
over the golden ratio) repeated to ``width`` bits (:func:`multiplier`). It
is odd, so multiplying by it is a bijection of the ``width``-bit numbers,
and neighbouring indices get words that differ in many bits, not one.
``K(seed)`` is the seed key (:func:`seed_key`): the low :data:`SEED_BITS`
bits of the seed XOR a fixed salt, repeated to ``width`` bits when the word
is at least that wide and XOR-folded into ``width`` bits when it is
narrower. XOR with a key is a bijection too.

Why this construction:

* Bijective. ``index`` numbers the (source, session) pairs of a run
  ``0 .. N*sessions - 1`` without gaps, and both steps after it are
  bijections of ``width``-bit numbers, so all ``N * sessions`` words of a
  run are distinct whenever ``N * sessions <= 2**width``
  (:func:`distinct_words_possible`): a misrouted or duplicated word, or one
  of another session, can never look right by accident, and changing one
  bit of the source or of the session (within the run) changes the word.
  A one-bit change of the session below bit ``width`` changes the word in
  any run, and a one-bit change of the seed changes every word.
  With narrower words some words repeat, and the tag fields still catch a
  misrouting between equal words.
* Cheap in hardware. No table and no state: a sender's source is a
  constant, so its word is its few-bit session counter times a constant (a
  few adders) XOR the seed key; a checker, whose source is a signal, also
  multiplies the ``log2 N``-bit source id by a constant and adds. The seed
  key costs only XORs and inverters, so the seed may be a signal that
  changes every run (the board top's 32-bit run LFSR).
* Defined once for both sides. :func:`seeded_word` (Python integers) and
  :func:`seeded_word_expr` (an Amaranth :class:`~amaranth.hdl.Value`, built
  with the public ``amaranth.hdl`` API only) are the same formula, and
  ``tests/hw/test_hw_words.py`` simulates one against the other. The Python
  users (:class:`WordScheme`, :func:`tagged_word`, :func:`tagged_words`)
  and the board's senders and checkers (:meth:`WordScheme.expr`) all go
  through them.

A word does not depend on ``N``. The seed is a :data:`SEED_BITS`-bit value
(Python seeds are taken modulo ``2**SEED_BITS``, as a register holds them);
with words narrower than :data:`SEED_BITS` bits different seeds can give the
same words.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Value

__all__ = [
    "TaggedWord", "WordScheme", "tagged_words", "tagged_word", "distinct_words_possible",
    "seeded_word", "seeded_word_expr", "multiplier", "seed_key", "SEED_BITS",
]

#: Bits of the seed that enter a word (the board top's run value is this wide).
SEED_BITS = 32
#: ``2**64`` over the golden ratio (odd): the Fibonacci-hashing multiplier.
_GOLDEN = 0x9E3779B97F4A7C15
#: Salt of the seed key, so that seed 0 does not give word 0 (the first
#: 32 fraction bits of sqrt(2)).
_SEED_SALT = 0x6A09E667


def _check_width(width: int) -> None:
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"word width must be an integer >= 1, got {width!r}")


def _check_sessions(sessions: int) -> None:
    if isinstance(sessions, bool) or not isinstance(sessions, int) or sessions < 1:
        raise ValueError(f"sessions must be an integer >= 1, got {sessions!r}")


def _tile(pattern: int, bits: int, width: int) -> int:
    """``pattern`` (``bits`` bits) repeated to ``width`` bits."""
    value = 0
    for k in range(0, width, bits):
        value |= pattern << k
    return value & ((1 << width) - 1)


def multiplier(width: int) -> int:
    """``M``: the odd multiplier of ``width``-bit words (golden-ratio bits repeated)."""
    _check_width(width)
    return _tile(_GOLDEN, 64, width)


def seed_key(seed: int, width: int) -> int:
    """``K(seed)``: the key XOR-ed into every word of a run with seed ``seed``.

    The low :data:`SEED_BITS` bits of ``seed`` XOR the salt, repeated to
    ``width`` bits (``width >= SEED_BITS``) or XOR-folded into ``width`` bits
    (narrower words), so a one-bit change of the seed changes the key.
    """
    _check_width(width)
    s = (seed ^ _SEED_SALT) & ((1 << SEED_BITS) - 1)
    if width >= SEED_BITS:
        return _tile(s, SEED_BITS, width)
    mask, key = (1 << width) - 1, 0
    for k in range(0, SEED_BITS, width):
        key ^= (s >> k) & mask
    return key


def seeded_word(seed: int, source: int, session: int, sessions: int, width: int) -> int:
    """The word of (``source``, ``session``) in a run with ``seed``, as a Python int.

    ``((source * sessions + session) * multiplier(width)) mod 2**width
    ^ seed_key(seed, width)``; see the module docstring.
    """
    _check_sessions(sessions)
    mask = (1 << width) - 1
    index = source * sessions + session
    return ((index * multiplier(width)) & mask) ^ seed_key(seed, width)


def _seed_key_expr(seed: Value, width: int) -> Value:
    seed = Value.cast(seed)
    bits = Cat(seed, Const(0, max(0, SEED_BITS - len(seed))))[:SEED_BITS]
    s = bits ^ Const(_SEED_SALT, SEED_BITS)
    if width >= SEED_BITS:
        return Cat(*([s] * -(-width // SEED_BITS)))[:width]
    key = s[:width]
    for k in range(width, SEED_BITS, width):
        chunk = s[k:k + width]
        key = key ^ Cat(chunk, Const(0, width - len(chunk)))
    return key[:width]


def seeded_word_expr(seed: Value | int, source: Value | int, session: Value | int,
                     sessions: int, width: int) -> Value:
    """Amaranth expression of :func:`seeded_word`; any argument may be a signal.

    Parameters
    ----------
    seed, source, session : Value or int
        Unsigned values (a signal, or a constant known at elaboration). A
        seed wider than :data:`SEED_BITS` bits is truncated, as in Python.
    sessions : int
        Sessions per run (a constant of the design).
    width : int
        Word width in bits.

    Returns
    -------
    Value
        ``width`` bits, unsigned. Constant inputs fold into constants: a
        sender (constant ``source``) costs a multiplication of its session
        counter by a constant; a checker (``source`` a signal) also a
        multiplication of the source id by a constant and an adder.
    """
    _check_width(width)
    _check_sessions(sessions)
    mask = (1 << width) - 1
    m = multiplier(width)
    # (source * sessions + session) * M == source * (sessions * M) + session * M (mod 2**width)
    src_term = source * ((sessions * m) & mask)
    ses_term = session * m
    if isinstance(src_term, int) and isinstance(ses_term, int):
        index_term: Value = Const((src_term + ses_term) & mask, width)
    elif isinstance(src_term, int):
        index_term = (ses_term + (src_term & mask))[:width]
    elif isinstance(ses_term, int):
        index_term = (src_term + (ses_term & mask))[:width]
    else:
        index_term = (src_term + ses_term)[:width]
    index_term = Cat(index_term, Const(0, width))[:width]   # at least `width` bits
    if isinstance(seed, int):
        key: Value = Const(seed_key(seed, width), width)
    else:
        key = _seed_key_expr(seed, width)
    return (index_term ^ key)[:width]


@dataclass(frozen=True)
class TaggedWord:
    """A word with its tags (verilog-axis: ``tid`` = source, ``tuser`` = session).

    Attributes
    ----------
    source : int
        The processor that broadcasts it, ``0 .. N-1``.
    session : int
        The session it belongs to, ``0 .. sessions-1``.
    word : int
        The payload, ``0 .. 2**width - 1``.
    """

    source: int
    session: int
    word: int


def distinct_words_possible(n: int, sessions: int, width: int) -> bool:
    """Whether ``n * sessions`` words of ``width`` bits can all differ.

    When it holds, the words of :class:`WordScheme` do all differ.
    """
    return n * sessions <= 1 << width


@dataclass(frozen=True)
class WordScheme:
    """The words of one run: every (source, session) pair's word.

    Parameters
    ----------
    n : int
        Number of processors.
    sessions : int
        Number of sessions.
    width : int
        Word width in bits (>= 1).
    seed : int
        Word seed; the same arguments always give the same words (see the
        module docstring for the formula).
    """

    n: int
    sessions: int
    width: int
    seed: int = 0

    def __post_init__(self) -> None:
        _check_width(self.width)
        _check_sessions(self.sessions)
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise ValueError(f"number of processors must be an integer >= 1, got {self.n!r}")

    def word(self, source: int, session: int, seed: int | None = None) -> int:
        """The word processor ``source`` broadcasts in ``session``.

        ``seed`` overrides the scheme's seed (a board runs many seeds).
        """
        return seeded_word(self.seed if seed is None else seed, source, session,
                           self.sessions, self.width)

    def expr(self, seed: Value | int, source: Value | int, session: Value | int) -> Value:
        """Amaranth expression of :meth:`word`: the same word, computed in hardware.

        ``seed`` is a value of up to :data:`SEED_BITS` bits (the board top's
        run value; an int for a fixed seed), ``source`` and ``session``
        signals or constants; returns a ``width``-bit :class:`~amaranth.hdl.Value`.
        """
        return seeded_word_expr(seed, source, session, self.sessions, self.width)

    def tagged(self, source: int, session: int) -> TaggedWord:
        """The word of (``source``, ``session``) with its tags."""
        return TaggedWord(source, session, self.word(source, session))

    def table(self) -> list[list[int]]:
        """``words[source][session]`` for every processor and session."""
        return [[self.word(s, k) for k in range(self.sessions)] for s in range(self.n)]


def tagged_word(source: int, session: int, n: int, sessions: int, width: int,
                seed: int = 0) -> int:
    """The word of (``source``, ``session``): ``WordScheme(n, sessions, width, seed).word``."""
    return WordScheme(n, sessions, width, seed).word(source, session)


def tagged_words(n: int, sessions: int, width: int, seed: int = 0) -> list[list[int]]:
    """The word of every processor in every session: ``WordScheme(...).table()``.

    The parameters are :class:`WordScheme`'s. Returns ``words[src][session]``,
    each in ``0 .. 2**width - 1``.
    """
    return WordScheme(n, sessions, width, seed).table()
