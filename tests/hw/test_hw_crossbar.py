# amaranth: UnusedElaboratable=no
"""The crossbar switch on its own."""

from __future__ import annotations

import random

import pytest
from combinational import settle

from pipegossip.hw.fsm.crossbar import Crossbar


@pytest.mark.parametrize("n, width", [(1, 1), (2, 8), (5, 3), (8, 16)])
def test_every_output_carries_its_selected_input(n, width):
    rng = random.Random(n * 100 + width)
    dut = Crossbar(n, width)

    def script(ctx):
        for _ in range(20):
            words = [rng.randrange(1 << width) for _ in range(n)]
            picks = [rng.choice([None, *range(n)]) for _ in range(n)]
            for i, w in enumerate(words):
                ctx.set(dut.inputs[i], w)
            for j, p in enumerate(picks):
                ctx.set(dut.select[j], 0 if p is None else 1 << p)
            for j, p in enumerate(picks):
                assert ctx.get(dut.outputs[j]) == (0 if p is None else words[p])

    settle(dut, script)


def test_one_input_can_feed_every_output():
    dut = Crossbar(4, 8)

    def script(ctx):
        ctx.set(dut.inputs[2], 0xA5)
        for j in range(4):
            ctx.set(dut.select[j], 0b0100)
        assert [ctx.get(dut.outputs[j]) for j in range(4)] == [0xA5] * 4

    settle(dut, script)


@pytest.mark.parametrize("n, width, error, text", [
    (0, 8, ValueError, "n must be at least 1, not 0"),
    (4, 0, ValueError, "width must be at least 1, not 0"),
    (4.0, 8, TypeError, "n must be an integer, not 4.0"),
    (4, "8", TypeError, "width must be an integer, not '8'"),
    (True, 8, TypeError, "not True"),
])
def test_bad_parameters(n, width, error, text):
    with pytest.raises(error, match=text):
        Crossbar(n, width)
