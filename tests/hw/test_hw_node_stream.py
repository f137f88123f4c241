# amaranth: UnusedElaboratable=no
"""The per-node stream wrapper against a stand-in node, with random back-pressure both ways."""

import random

import pytest
from amaranth.sim import Simulator

from pipegossip.hw.node_stream import NodeStream

ITEMS, LANES, WIDTH, SRC, RESULTS, L = 3, 2, 8, 4, 4, 4


def _script(rng, collectives):
    """Per collective, per cycle 1..L+1 after its start: the (lane, src, word) delivered.

    Cycle L+1 is the `end` cycle (a reduce's combined word may come then).
    """
    out = []
    for c in range(collectives):
        left = rng.randint(0, RESULTS)
        cycles = []
        for _ in range(L + 1):
            lanes = []
            for j in range(LANES):
                if left and rng.random() < 0.5:
                    lanes.append((j, rng.randrange(1 << SRC), (c * 16 + len(cycles) * 2 + j) & 0xFF))
                    left -= 1
            cycles.append(lanes)
        out.append(cycles)
    return out


def run(seed=0, collectives=6, p_in=0.6, p_out=0.5, depth=None):
    """Drive the wrapper with a stand-in node; what the node got, what the stream gave."""
    rng = random.Random(seed)
    dut = NodeStream(ITEMS, LANES, WIDTH, SRC, RESULTS, depth)
    script = _script(rng, collectives)
    inputs = [[(c << 4) | i for i in range(ITEMS)] for c in range(collectives)]
    got = {"own": [[] for _ in range(collectives + 1)], "out": [], "starts": [],
           "error": 0, "ready_at_start": []}

    async def bench(ctx):
        fed = 0  # input words handed in so far (all collectives in order)
        starts, phase = 0, None
        for k in range(40 * collectives):
            c_in, i_in = divmod(fed, ITEMS)
            offer = c_in < collectives and rng.random() < p_in
            ctx.set(dut.s_axis.tvalid, offer)
            if offer:
                ctx.set(dut.s_axis.tdata, inputs[c_in][i_in])
                ctx.set(dut.s_axis.tlast, i_in == ITEMS - 1)
            ctx.set(dut.m_axis.tready, rng.random() < p_out)
            lanes = script[starts - 1][phase - 1] if phase else []
            for j in range(LANES):
                hit = [x for x in lanes if x[0] == j]
                ctx.set(dut.deliver[j].valid, bool(hit))
                if hit:
                    ctx.set(dut.deliver[j].src, hit[0][1])
                    ctx.set(dut.deliver[j].data, hit[0][2])
            end = phase == L + 1
            ctx.set(dut.end, end)
            idle = phase is None or end
            go = idle and starts < collectives and ctx.get(dut.ready)
            ctx.set(dut.start, go)
            # what the edge ending this cycle takes: the source's beat goes by its
            # handshake (AXI), the node's write by its own port
            if ctx.get(dut.own.valid):
                got["own"][starts].append((ctx.get(dut.own.index), ctx.get(dut.own.data)))
            if offer and ctx.get(dut.s_axis.tready):
                fed += 1
            if ctx.get(dut.m_axis.tvalid) and ctx.get(dut.m_axis.tready):
                got["out"].append((ctx.get(dut.m_axis.tdata), ctx.get(dut.m_axis.tuser),
                                   ctx.get(dut.m_axis.tlast)))
            if go:
                starts += 1
                got["starts"].append(k)
                phase = 0
            elif end:
                phase = None
            await ctx.tick()
            if phase is not None:
                phase += 1
        got["error"] = ctx.get(dut.error)
        got["left"] = starts

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return got, script, inputs


def _want_out(script):
    out = []
    for cycles in script:
        words = [(w, src, 0) for lanes in cycles for (_, src, w) in lanes]
        if words:
            words[-1] = (*words[-1][:2], 1)
        out += words
    return out


@pytest.mark.parametrize("seed, depth, p_out", [(0, None, 0.5), (1, None, 0.5),
                                                (2, RESULTS, 0.5), (3, RESULTS, 0.1),
                                                (4, RESULTS, 0.2)])
def test_every_word_in_reaches_the_node_once_and_every_result_leaves_once(seed, depth, p_out):
    got, script, inputs = run(seed, depth=depth, p_out=p_out, collectives=8)
    assert got["left"] == len(script), "every collective started"
    # collective c's words all went in before its start, index by index, each once
    for c, words in enumerate(inputs):
        assert got["own"][c] == list(enumerate(words)), c
    assert got["own"][len(inputs)] == []
    assert got["out"] == _want_out(script)
    assert got["error"] == 0


@pytest.mark.parametrize("seed", range(3))
def test_without_back_pressure_room_for_two_collectives_never_stalls_a_start(seed):
    """At ``end`` at most one collective's words wait, so 2 x results of room always
    leaves room for the next: a start every L + 1 cycles (the `end` cycle starts it)."""
    got, script, _ = run(seed=seed, p_in=1.0, p_out=1.0, depth=2 * RESULTS)
    gaps = {b - a for a, b in zip(got["starts"], got["starts"][1:])}
    assert gaps == {L + 1} and got["out"] == _want_out(script)


def test_a_buffer_of_just_the_results_stalls_a_start_until_its_words_drain():
    got, script, _ = run(seed=1, p_in=1.0, p_out=1.0, depth=RESULTS)
    gaps = [b - a for a, b in zip(got["starts"], got["starts"][1:])]
    assert min(gaps) >= L + 1 and max(gaps) > L + 1 and got["out"] == _want_out(script)


def test_a_slow_sink_holds_the_start_until_there_is_room():
    got, script, _ = run(seed=2, p_out=0.1)
    assert got["out"] == _want_out(script) and got["error"] == 0
    gaps = [b - a for a, b in zip(got["starts"], got["starts"][1:])]
    assert max(gaps) > L + 1


@pytest.mark.parametrize("lasts, error", [((0, 0, 1), 0), ((1, 0, 1), 1), ((0, 0, 0), 1)])
def test_a_misplaced_or_missing_tlast_is_an_error(lasts, error):
    dut = NodeStream(ITEMS, LANES, WIDTH, SRC, RESULTS)
    out = {}

    async def bench(ctx):
        for last in lasts:
            ctx.set(dut.s_axis.tvalid, 1)
            ctx.set(dut.s_axis.tlast, last)
            await ctx.tick()
        ctx.set(dut.s_axis.tvalid, 0)
        await ctx.tick()
        out["error"] = ctx.get(dut.error)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert out["error"] == error


def test_a_delivery_into_a_full_buffer_is_an_error():
    dut = NodeStream(ITEMS, LANES, WIDTH, SRC, RESULTS, depth=RESULTS)
    out = []

    async def bench(ctx):
        ctx.set(dut.m_axis.tready, 0)
        ctx.set(dut.deliver[0].valid, 1)
        for k in range(6):  # one word a cycle into 4 places: the fifth overflows
            await ctx.tick()
            out.append(ctx.get(dut.error))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert out == [0, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("word_at_end", [False, True])
def test_a_word_delivered_in_the_end_cycle_counts_against_the_room(word_at_end):
    """depth = results, sink stalled: the start may go at `end` only if nothing is buffered."""
    dut = NodeStream(ITEMS, LANES, WIDTH, SRC, RESULTS, depth=RESULTS)
    out = {}

    async def bench(ctx):
        ctx.set(dut.m_axis.tready, 0)
        for i in range(ITEMS):
            ctx.set(dut.s_axis.tvalid, 1)
            ctx.set(dut.s_axis.tlast, i == ITEMS - 1)
            await ctx.tick()
        ctx.set(dut.s_axis.tvalid, 0)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        await ctx.tick()
        for i in range(ITEMS):  # the next collective's words, while this one runs
            ctx.set(dut.s_axis.tvalid, 1)
            ctx.set(dut.s_axis.tlast, i == ITEMS - 1)
            await ctx.tick()
        ctx.set(dut.s_axis.tvalid, 0)
        ctx.set(dut.end, 1)
        ctx.set(dut.deliver[0].valid, word_at_end)
        out["ready"] = ctx.get(dut.ready)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert out["ready"] == (not word_at_end)


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="depth"):
        NodeStream(ITEMS, LANES, WIDTH, SRC, RESULTS, depth=RESULTS - 1)
    with pytest.raises(TypeError, match="items"):
        NodeStream(1.5, LANES, WIDTH, SRC, RESULTS)
