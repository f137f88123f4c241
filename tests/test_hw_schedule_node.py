# amaranth: UnusedElaboratable=no
"""Amaranth-simulator unit tests of the schedule node and the crossbar it uses."""

from amaranth.sim import Simulator
from combinational import load_node, run_clocked

from pipegossip.hw.crossbar import Crossbar
from pipegossip.hw.schedule.node import ScheduleNode
from pipegossip.model.schedules.program import EntryLayout


_run = run_clocked


def test_node_sends_receives_stores_and_combines():
    n, slots = 4, 4
    dut = ScheduleNode(n, 8, 8, slots)
    lay = EntryLayout(n, slots)
    prog = [lay.encode(send=1, send_slot=2, recv=1, source=3, combine=1, recv_slot=1),
            lay.encode(send=1, send_slot=1),  # sends what it received one cycle earlier
            lay.encode(recv=1, source=0, recv_slot=0)]
    seen = {}

    async def bench(ctx):
        await load_node(ctx, dut, [(2, 0x5A)], prog)
        # fetch entries 0..2 in consecutive cycles; exchange two cycles later
        words_in = [0x11, 0x22, 0x33]
        for c in range(len(prog) + 2):
            ctx.set(dut.fetch_en, int(c < len(prog)))
            ctx.set(dut.fetch_addr, min(c, len(prog) - 1))
            x = c - 2
            if 0 <= x < len(prog):
                ctx.set(dut.in_word, words_in[x])
                seen[x] = dict(send=ctx.get(dut.send_valid), slot=ctx.get(dut.send_slot),
                               word=ctx.get(dut.out_word), select=ctx.get(dut.select),
                               recv=ctx.get(dut.recv_valid), src=ctx.get(dut.recv_source))
            await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        got = {}
        for s in range(slots):
            ctx.set(dut.rd_slot, s)
            await ctx.tick()
            got[s] = (ctx.get(dut.rd_word), ctx.get(dut.rd_held))
        seen["store"] = got
        seen["acc"] = ctx.get(dut.acc)

    _run(dut, bench)
    assert seen[0] == dict(send=1, slot=2, word=0x5A, select=0b1000, recv=1, src=3)
    assert seen[1]["word"] == 0x11 and seen[1]["select"] == 0 and not seen[1]["recv"]
    assert seen[2]["select"] == 0b0001 and not seen[2]["send"]
    assert seen["store"] == {0: (0x33, 1), 1: (0x11, 1), 2: (0x5A, 1), 3: (seen["store"][3][0], 0)}
    assert seen["acc"] == 0x11  # only entry 0 combines


def test_clear_drops_held_bits_and_accumulator():
    dut = ScheduleNode(2, 4, 2, 2)
    out = {}

    async def bench(ctx):
        ctx.set(dut.item_we, 1)
        ctx.set(dut.item_slot, 1)
        ctx.set(dut.item_data, 3)
        await ctx.tick()
        ctx.set(dut.item_we, 0)
        ctx.set(dut.rd_slot, 1)
        await ctx.tick()
        out["before"] = ctx.get(dut.rd_held)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        await ctx.tick()
        out["after"] = ctx.get(dut.rd_held)

    _run(dut, bench)
    assert out == {"before": 1, "after": 0}


def test_crossbar_multicast_is_free():
    xbar = Crossbar(4, 8)
    out = {}

    async def bench(ctx):
        for i in range(4):
            ctx.set(xbar.inputs[i], 0x10 + i)
        for j, sel in enumerate([0b0100, 0b0100, 0b0100, 0b0001]):
            ctx.set(xbar.select[j], sel)
        out["words"] = [ctx.get(xbar.outputs[j]) for j in range(4)]
        ctx.set(xbar.select[3], 0)
        out["none"] = ctx.get(xbar.outputs[3])

    sim = Simulator(xbar)
    sim.add_testbench(bench)
    sim.run()
    assert out == {"words": [0x12, 0x12, 0x12, 0x10], "none": 0}


def _item(ctx, dut, slot, word):
    """Present an item write (taken at the next edge)."""
    ctx.set(dut.item_we, 1)
    ctx.set(dut.item_slot, slot)
    ctx.set(dut.item_data, word)


def test_an_item_write_at_the_clearing_edge_lands():
    # The docstring: item writes are taken at every edge, and the load
    # header's clear drops only what was held before it.
    dut = ScheduleNode(2, 8, 2, 3)
    out = {}

    async def bench(ctx):
        _item(ctx, dut, 0, 0x21)
        await ctx.tick()
        ctx.set(dut.clear, 1)  # same edge: clear, and an item write into slot 2
        _item(ctx, dut, 2, 0x5C)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        ctx.set(dut.item_we, 0)
        got = {}
        for s in range(3):
            ctx.set(dut.rd_slot, s)
            await ctx.tick()
            got[s] = (ctx.get(dut.rd_word), ctx.get(dut.rd_held))
        out["store"], out["acc"] = got, ctx.get(dut.acc)

    _run(dut, bench)
    assert out["store"][2] == (0x5C, 1)
    assert out["store"][0][1] == 0 and out["store"][1][1] == 0
    assert out["acc"] == 0


def test_a_receive_and_an_item_write_into_one_slot_at_one_edge_receive_wins():
    n, slots = 2, 2
    dut = ScheduleNode(n, 8, 4, slots)
    lay = EntryLayout(n, slots)
    out = {}

    async def bench(ctx):
        await load_node(ctx, dut, [], [lay.encode(recv=1, source=1, recv_slot=1)])
        ctx.set(dut.fetch_en, 1)
        ctx.set(dut.fetch_addr, 0)
        await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        await ctx.tick()  # the exchange stage now receives into slot 1
        assert ctx.get(dut.recv_valid)
        ctx.set(dut.in_word, 0x77)
        _item(ctx, dut, 1, 0x99)
        await ctx.tick()
        ctx.set(dut.item_we, 0)
        ctx.set(dut.rd_slot, 1)
        await ctx.tick()
        out["slot1"] = (ctx.get(dut.rd_word), ctx.get(dut.rd_held))

    _run(dut, bench)
    assert out["slot1"] == (0x77, 1)


def test_a_read_sees_an_item_written_at_the_same_edge():
    # "An item write in clock cycle k is seen by a read addressed in cycle k"
    dut = ScheduleNode(2, 8, 2, 2)
    out = {}

    async def bench(ctx):
        _item(ctx, dut, 0, 0x11)
        await ctx.tick()
        ctx.set(dut.item_data, 0x22)
        ctx.set(dut.rd_slot, 0)
        await ctx.tick()
        out["word"] = ctx.get(dut.rd_word)

    _run(dut, bench)
    assert out["word"] == 0x22


def test_a_receive_one_edge_after_an_item_write_into_its_slot_overwrites_it():
    # The later write wins: the item word is taken at edge k, the received word
    # at edge k+1 (the node holds an item write one edge before storing it).
    n, slots = 2, 2
    dut = ScheduleNode(n, 8, 4, slots)
    lay = EntryLayout(n, slots)
    out = {}

    async def bench(ctx):
        await load_node(ctx, dut, [], [lay.encode(recv=1, source=1, recv_slot=1)])
        ctx.set(dut.fetch_en, 1)
        ctx.set(dut.fetch_addr, 0)
        await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        _item(ctx, dut, 1, 0x99)  # taken at this edge, one before the receive's
        await ctx.tick()  # the exchange stage now receives into slot 1
        ctx.set(dut.item_we, 0)
        assert ctx.get(dut.recv_valid)
        ctx.set(dut.in_word, 0x77)
        await ctx.tick()
        ctx.set(dut.rd_slot, 1)
        await ctx.tick()
        out["slot1"] = (ctx.get(dut.rd_word), ctx.get(dut.rd_held))

    _run(dut, bench)
    assert out["slot1"] == (0x77, 1)


def test_a_clear_with_a_receive_and_an_item_write_into_one_slot_holds_nothing():
    # The header's clear keeps only item writes that land; one that loses to a
    # receive at the same edge does not, and the receive's held bit is cleared.
    n, slots = 2, 2
    dut = ScheduleNode(n, 8, 4, slots)
    lay = EntryLayout(n, slots)
    out = {}

    async def bench(ctx):
        await load_node(ctx, dut, [(0, 0x12)], [lay.encode(recv=1, source=1, recv_slot=1)])
        ctx.set(dut.fetch_en, 1)
        ctx.set(dut.fetch_addr, 0)
        await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        await ctx.tick()
        assert ctx.get(dut.recv_valid)
        ctx.set(dut.in_word, 0x77)
        ctx.set(dut.clear, 1)
        _item(ctx, dut, 1, 0x99)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        ctx.set(dut.item_we, 0)
        got = {}
        for s in range(slots):
            ctx.set(dut.rd_slot, s)
            await ctx.tick()
            got[s] = (ctx.get(dut.rd_word), ctx.get(dut.rd_held))
        out["store"] = got

    _run(dut, bench)
    assert out["store"] == {0: (0x12, 0), 1: (0x77, 0)}


def test_a_send_read_at_a_clash_sends_the_received_word():
    # Receive and item write into slot 1 at one edge, while the next entry reads
    # slot 1 to send it: the receive wins in the word sent too, not only in the store.
    n, slots = 2, 2
    dut = ScheduleNode(n, 8, 4, slots)
    lay = EntryLayout(n, slots)
    out = {}

    async def bench(ctx):
        await load_node(ctx, dut, [(1, 0x10)], [lay.encode(recv=1, source=1, recv_slot=1),
                                                lay.encode(send=1, send_slot=1)])
        for c in range(2):
            ctx.set(dut.fetch_en, 1)
            ctx.set(dut.fetch_addr, c)
            await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        assert ctx.get(dut.recv_valid)  # entry 0 exchanged, entry 1 read
        ctx.set(dut.in_word, 0x77)
        _item(ctx, dut, 1, 0x99)
        await ctx.tick()
        ctx.set(dut.item_we, 0)
        out["sent"] = (ctx.get(dut.send_valid), ctx.get(dut.send_slot), ctx.get(dut.out_word))

    _run(dut, bench)
    assert out["sent"] == (1, 1, 0x77)
