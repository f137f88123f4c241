"""The one tagged-word scheme (hw/words.py): the Python function and the
Amaranth expression give the same words, the words of a run are distinct
when the width allows it, and a one-bit change of the tags changes the word."""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from pipegossip.hw.words import (SEED_BITS, WordScheme, distinct_words_possible, seed_key,
                                 seeded_word, seeded_word_expr, tagged_word, tagged_words)

WIDTHS = [1, 8, 13, 32, 70]


def evaluate(pairs):
    """Values of combinational expressions: ``pairs`` of (settings, expr), where
    settings lists the (signal, value) pairs to set before reading ``expr``."""
    got = []

    async def bench(ctx):
        for settings, expr in pairs:
            for signal, value in settings:
                ctx.set(signal, value)
            got.append(ctx.get(expr))

    sim = Simulator(Module())  # only combinational evaluation is needed
    sim.add_testbench(bench)
    sim.run()
    return got


def triples(n, sessions, count, rng):
    """Edge cases plus random (seed, source, session) triples."""
    top = (1 << SEED_BITS) - 1
    out = [(0, 0, 0), (top, n - 1, sessions - 1), (1, n - 1, 0), (top >> 1, 0, sessions - 1)]
    for _ in range(count):
        out.append((rng.getrandbits(SEED_BITS), rng.randrange(n), rng.randrange(sessions)))
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("n,sessions", [(6, 1), (5, 3), (16, 16)])
def test_expression_equals_the_python_function(width, n, sessions):
    rng = random.Random(width * 1000 + n * 10 + sessions)
    seed = Signal(SEED_BITS)
    source = Signal(range(n))
    session = Signal(range(sessions))
    scheme = WordScheme(n, sessions, width)
    checker_form = scheme.expr(seed, source, session)   # everything a signal
    assert len(checker_form) == width
    cases = triples(n, sessions, 120, rng)
    pairs = [([(seed, r), (source, s), (session, k)], checker_form) for r, s, k in cases]
    # A sender's form: constant source; a fixed-seed form: constant seed.
    for r, s, k in cases[:20]:
        pairs.append(([(seed, r), (session, k)], scheme.expr(seed, s, session)))
        fixed_seed = seeded_word_expr(r, source, session, sessions, width)
        pairs.append(([(source, s), (session, k)], fixed_seed))
        pairs.append(([], scheme.expr(r, s, k)))
    want = [seeded_word(r, s, k, sessions, width) for r, s, k in cases]
    want += [seeded_word(r, s, k, sessions, width) for r, s, k in cases[:20] for _ in range(3)]
    assert evaluate(pairs) == want
    assert all(scheme.word(s, k, seed=r) == seeded_word(r, s, k, sessions, width)
               for r, s, k in cases)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_narrow_seed_signal_is_zero_extended(width):
    seed = Signal(7)
    expr = seeded_word_expr(seed, 2, 1, 3, width)
    assert evaluate([([(seed, v)], expr) for v in (0, 1, 99, 127)]) == \
        [seeded_word(v, 2, 1, 3, width) for v in (0, 1, 99, 127)]


@pytest.mark.parametrize("n,sessions,width", [
    (2, 1, 1), (1, 2, 1), (3, 5, 4), (16, 16, 8), (255, 1, 8), (8, 32, 8), (7, 9, 13),
    (100, 40, 13), (6, 5, 5), (40, 3, 32), (9, 4, 70),
])
@pytest.mark.parametrize("seed", [0, 1, 0xDEADBEEF])
def test_words_of_a_run_are_distinct_when_the_width_allows(n, sessions, width, seed):
    assert distinct_words_possible(n, sessions, width)
    words = [w for row in tagged_words(n, sessions, width, seed) for w in row]
    assert len(set(words)) == n * sessions
    assert all(0 <= w < 1 << width for w in words)


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_a_full_run_uses_every_word_once(width):
    # N * sessions == 2**width: the words are a permutation of all values.
    n, sessions = 2, 1 << (width - 1)
    words = sorted(w for row in tagged_words(n, sessions, width, seed=5) for w in row)
    assert words == list(range(1 << width))


@pytest.mark.parametrize("n,sessions,width", [
    (2, 1, 1), (1, 2, 1), (16, 16, 8), (5, 3, 8), (7, 9, 13), (100, 40, 13), (9, 4, 70),
    (33, 7, 32),
])
def test_a_one_bit_change_of_source_or_session_changes_the_word(n, sessions, width):
    scheme = WordScheme(n, sessions, width, seed=0x1234_5678)
    for s in range(n):
        for k in range(sessions):
            w = scheme.word(s, k)
            for b in range(max(n, sessions).bit_length()):
                if (s ^ (1 << b)) < n:
                    assert scheme.word(s ^ (1 << b), k) != w, (s, k, b)
                if (k ^ (1 << b)) < sessions:
                    assert scheme.word(s, k ^ (1 << b)) != w, (s, k, b)


@pytest.mark.parametrize("width", [1, 8, 13, 32, 70])
def test_a_one_bit_change_of_the_session_changes_the_word_even_when_words_repeat(width):
    # More pairs than words: a session bit below the width still always counts.
    sessions = 3 << width
    for b in range(min(width, 12)):
        for k in (0, 5, 1 << b):
            assert (seeded_word(7, 1, k, sessions, width)
                    != seeded_word(7, 1, k ^ (1 << b), sessions, width))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_one_bit_change_of_the_seed_changes_every_word(width):
    for b in range(SEED_BITS):
        assert seed_key(0xCAFE_F00D ^ (1 << b), width) != seed_key(0xCAFE_F00D, width)
    # Seeds are SEED_BITS-bit values, as the board's run-value register holds them.
    assert seeded_word(1 << SEED_BITS | 3, 2, 1, 4, width) == seeded_word(3, 2, 1, 4, width)


def test_python_users_see_the_same_scheme():
    scheme = WordScheme(5, 3, 13, seed=9)
    assert scheme.table() == tagged_words(5, 3, 13, 9)
    assert scheme.table()[4][2] == tagged_word(4, 2, 5, 3, 13, 9) == seeded_word(9, 4, 2, 3, 13)
    assert scheme.tagged(4, 2).word == scheme.word(4, 2)
    # The word does not depend on N.
    assert WordScheme(50, 3, 13, seed=9).word(4, 2) == scheme.word(4, 2)


@pytest.mark.parametrize("bad", [dict(width=0), dict(sessions=0), dict(n=0)])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        WordScheme(**(dict(n=3, sessions=2, width=8) | bad))


@pytest.mark.parametrize("sessions,width", [(0, 8), (2, 0)])
def test_bad_parameters_are_refused_by_the_expression_too(sessions, width):
    with pytest.raises(ValueError):
        seeded_word_expr(Signal(32), 0, Signal(2), sessions, width)
