# amaranth: UnusedElaboratable=no
"""Bit-level building blocks, exhaustively on small sizes."""

from __future__ import annotations

import contextlib
import inspect
import itertools
import sys

import pytest
from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.back import verilog
from amaranth.sim import Simulator

from pipegossip.hw.bits import (count_ones, counter_width, first_set, one_hot_to_binary, or_tree, peer_width,
                                prefix_exclusive, prefix_inclusive, session_width,
                                thermometer_add, used_width)


def evaluate(build, inputs: list[Signal], stimuli) -> list[int]:
    """Drive each stimulus onto ``inputs`` and read the output ``build`` makes."""
    m = Module()
    out = build(m)
    y = Signal(len(out))
    m.d.comb += y.eq(out)
    results = []

    async def bench(ctx):
        for values in stimuli:
            for s, v in zip(inputs, values):
                ctx.set(s, v)
            results.append(ctx.get(y))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    return results


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_prefix_or_and_first_set(n):
    bits = [Signal(name=f"b{i}") for i in range(n)]
    stimuli = list(itertools.product([0, 1], repeat=n))
    inc = evaluate(lambda m: Cat(*prefix_inclusive(m, bits, lambda a, b: a | b)), bits, stimuli)
    exc = evaluate(lambda m: Cat(*prefix_exclusive(m, bits, lambda a, b: a | b, Const(0, 1))),
                   bits, stimuli)
    first = evaluate(lambda m: Cat(*first_set(m, bits)), bits, stimuli)
    for values, i, e, f in zip(stimuli, inc, exc, first):
        assert [(i >> k) & 1 for k in range(n)] == [int(any(values[:k + 1])) for k in range(n)]
        assert [(e >> k) & 1 for k in range(n)] == [int(any(values[:k])) for k in range(n)]
        low = next((k for k, v in enumerate(values) if v), None)
        assert f == (0 if low is None else 1 << low)


@pytest.mark.parametrize("limit", [1, 2, 3, 4])
def test_thermometer_add_saturates(limit):
    a, b = Signal(limit), Signal(limit)
    codes = [(1 << c) - 1 for c in range(limit + 1)]  # 0, 1, 3, 7, ...: "at least c"
    stimuli = list(itertools.product(codes, codes))
    got = evaluate(lambda m: thermometer_add(limit)(a, b), [a, b], stimuli)
    for (x, y), z in zip(stimuli, got):
        assert z == codes[min(bin(x).count("1") + bin(y).count("1"), limit)]


def test_prefix_count_of_thermometer_codes():
    n, limit = 7, 3
    bits = [Signal(name=f"w{i}") for i in range(n)]
    stimuli = list(itertools.product([0, 1], repeat=n))

    def build(m):
        codes = [Cat(b, Const(0, limit - 1)) for b in bits]
        return Cat(*prefix_exclusive(m, codes, thermometer_add(limit), Const(0, limit)))

    for values, out in zip(stimuli, evaluate(build, bits, stimuli)):
        for i in range(n):
            code = (out >> (limit * i)) & ((1 << limit) - 1)
            assert code == (1 << min(sum(values[:i]), limit)) - 1


def test_one_hot_to_binary_and_or_tree():
    bits = [Signal(name=f"h{i}") for i in range(5)]
    stimuli = [[int(k == i) for k in range(5)] for i in range(5)] + [[0] * 5]
    got = evaluate(lambda m: one_hot_to_binary(bits, 3, [4, 0, 3, 1, 2]), bits, stimuli)
    assert got == [4, 0, 3, 1, 2, 0]
    words = [Signal(4, name=f"v{i}") for i in range(3)]
    assert evaluate(lambda m: or_tree(words), words, [[1, 2, 8], [0, 0, 0]]) == [11, 0]
    with pytest.raises(ValueError):
        or_tree([])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7])
def test_count_ones_counts(n):
    bits = [Signal(name=f"c{i}") for i in range(n)]
    stimuli = list(itertools.product([0, 1], repeat=n))
    assert evaluate(lambda m: count_ones(bits), bits, stimuli) == [sum(v) for v in stimuli]


@contextlib.contextmanager
def shallow_stack(frames: int):
    """Allow only ``frames`` Python frames beyond the caller's."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def convert_count(total) -> str:
    """The Verilog of a module whose output is ``total`` of its 362 input bits."""
    m = Module()
    bits = Signal(362)
    y = Signal(10)
    m.d.comb += y.eq(total(list(bits)))
    return verilog.convert(m, ports=[bits, y], emit_src=False)


def test_count_ones_is_shallow():
    # The old ``sum(grants)`` was a chain N adds deep, three Python frames an
    # add in Amaranth's Verilog back-end: RecursionError at N=362 (issue 25).
    # The balanced tree converts within 150 frames; the chain does not.
    with shallow_stack(150):
        convert_count(count_ones)
    with pytest.raises(RecursionError), shallow_stack(150):
        convert_count(sum)


def test_widths():
    assert [peer_width(n) for n in (2, 3, 4, 5, 8, 9, 16, 17)] == [1, 2, 2, 3, 3, 4, 4, 5]
    assert [session_width(k) for k in (1, 2, 3, 4, 5)] == [1, 1, 2, 2, 3]
    assert [used_width(n) for n in (2, 3, 4, 7, 8)] == [2, 2, 3, 3, 4]
    assert counter_width(5, 3) == (3 * 5 * 4).bit_length()
