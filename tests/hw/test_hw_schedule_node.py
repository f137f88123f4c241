# amaranth: UnusedElaboratable=no
"""Amaranth-simulator unit tests of the schedule node and the crossbar it uses."""

import pytest
from amaranth.hdl import Fragment, Module, Shape, Signal
from amaranth.lib.wiring import Flow
from amaranth.sim import Simulator
from combinational import load_node, run_clocked

from pipegossip.hw.fsm.crossbar import Crossbar
from pipegossip.hw.schedule.node import ScheduleNode, one_hot, select_by
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


# The parameters, the port widths the docstring lists, and the idle/out-of-range
# defaults; each test below was checked against a one-token change of node.py.


@pytest.mark.parametrize("n, width, depth, slots", [(1, 8, 4, 4), (2, 0, 4, 4),
                                                    (2, 8, 0, 4), (2, 8, 4, 0)])
def test_parameters_below_their_minimum_are_refused(n, width, depth, slots):
    with pytest.raises(ValueError, match="ScheduleNode"):
        ScheduleNode(n, width, depth, slots)


def test_the_smallest_node_is_built():
    # n=2 and one-bit words, one entry, one slot: each parameter at its minimum
    dut = ScheduleNode(2, 1, 1, 1)
    assert Shape.cast(dut.signature.members["fetch_addr"].shape).width == 1


def _ports(dut):
    return {name: (m.flow, Shape.cast(m.shape).width)
            for name, m in dut.signature.members.items()}


@pytest.mark.parametrize("n, width, depth, slots, aw, sw, pw", [
    (2, 8, 1, 1, 1, 1, 1), (3, 5, 2, 3, 1, 2, 2), (5, 6, 4, 4, 2, 2, 3),
    (4, 8, 5, 5, 3, 3, 2), (8, 3, 8, 9, 3, 4, 3), (9, 3, 9, 8, 4, 3, 4)])
def test_every_port_has_the_documented_direction_and_width(n, width, depth, slots, aw, sw, pw):
    # fetch_addr/prog_addr ceil(log2 depth) (at least 1); slots SW and
    # sources PW as in EntryLayout; strobes one bit
    dut = ScheduleNode(n, width, depth, slots)
    assert (dut.layout.slot_bits, dut.layout.node_bits) == (sw, pw)
    I, O = Flow.In, Flow.Out
    assert _ports(dut) == {
        "fetch_en": (I, 1), "fetch_addr": (I, aw), "clear": (I, 1),
        "prog_we": (I, 1), "prog_addr": (I, aw), "prog_data": (I, dut.layout.width),
        "item_we": (I, 1), "item_slot": (I, sw), "item_data": (I, width),
        "acc_we": (I, 1), "acc_data": (I, width), "rd_slot": (I, sw), "in_word": (I, width),
        "select": (O, n), "out_word": (O, width), "rd_word": (O, width), "rd_held": (O, 1),
        "acc": (O, width), "send_valid": (O, 1), "send_slot": (O, sw), "send_acc": (O, 1),
        "recv_valid": (O, 1), "recv_source": (O, pw), "recv_slot": (O, sw), "recv_comb": (O, 1)}


def test_idle_cycles_after_a_clear_leave_every_slot_unheld():
    # neither a receive nor an item write: no held bit, slot 0 included
    dut = ScheduleNode(2, 4, 2, 3)
    out = {}

    async def bench(ctx):
        _item(ctx, dut, 0, 5)
        await ctx.tick()
        ctx.set(dut.item_we, 0)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        for _ in range(3):
            await ctx.tick()
        got = []
        for s in range(3):
            ctx.set(dut.rd_slot, s)
            await ctx.tick()
            got.append(ctx.get(dut.rd_held))
        out["held"] = got

    _run(dut, bench)
    assert out["held"] == [0, 0, 0]


def test_a_read_back_slot_out_of_range_is_not_held():
    # slots=3 leaves slot code 3 unused: "0 when out of range"
    dut = ScheduleNode(2, 4, 2, 3)
    out = {}

    async def bench(ctx):
        for s in range(3):
            _item(ctx, dut, s, s + 1)
            await ctx.tick()
        ctx.set(dut.item_we, 0)
        ctx.set(dut.rd_slot, 3)
        await ctx.tick()
        out["held"] = ctx.get(dut.rd_held)

    _run(dut, bench)
    assert out["held"] == 0


@pytest.mark.parametrize("count, width", [(3, 2), (5, 3)])
def test_one_hot_and_select_by_give_0_out_of_range(count, width):
    m = Module()
    value = Signal(width)
    hot = one_hot(m, value, count)
    sel = select_by(m, value, [k + 1 for k in range(count)], 4)
    seen = []

    async def bench(ctx):
        for v in range(2 ** width):
            ctx.set(value, v)
            seen.append((ctx.get(hot), ctx.get(sel)))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    assert seen == [((1 << v, v + 1) if v < count else (0, 0)) for v in range(2 ** width)]


def test_forwarding_combines_without_storing_and_sends_the_accumulator():
    # the accumulator forwarding of a reduce program: acc_we loads the
    # initial token, a combine entry without recv adds the input into the
    # accumulator (selected, not stored), a send_acc entry sends it
    n, slots = 3, 2
    dut = ScheduleNode(n, 8, 4, slots)
    lay = EntryLayout(n, slots)
    prog = [lay.encode(combine=1, source=2, recv_slot=1),
            lay.encode(send=1, send_acc=1, send_slot=0),
            lay.encode(send=1, send_slot=0),
            lay.encode(send_acc=1, send_slot=0)]  # send_acc without send sends nothing
    seen = {}

    async def bench(ctx):
        await load_node(ctx, dut, [(0, 0x40)], prog)
        ctx.set(dut.acc_we, 1)
        ctx.set(dut.acc_data, 0x10)
        await ctx.tick()
        ctx.set(dut.acc_we, 0)
        seen["loaded"] = ctx.get(dut.acc)
        for c in range(len(prog) + 2):
            ctx.set(dut.fetch_en, int(c < len(prog)))
            ctx.set(dut.fetch_addr, min(c, len(prog) - 1))
            x = c - 2
            if 0 <= x < len(prog):
                ctx.set(dut.in_word, 0x05 if x == 0 else 0x70)
                seen[x] = dict(word=ctx.get(dut.out_word), select=ctx.get(dut.select),
                               send=ctx.get(dut.send_valid), sacc=ctx.get(dut.send_acc),
                               recv=ctx.get(dut.recv_valid), comb=ctx.get(dut.recv_comb),
                               src=ctx.get(dut.recv_source))
            await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        ctx.set(dut.rd_slot, 1)
        await ctx.tick()
        seen["slot1_held"] = ctx.get(dut.rd_held)
        seen["acc"] = ctx.get(dut.acc)

    _run(dut, bench)
    assert seen["loaded"] == 0x10
    assert seen[0] == dict(word=seen[0]["word"], select=0b100, send=0, sacc=0, recv=0, comb=1,
                           src=2)
    assert seen[1] == dict(word=0x15, select=0, send=1, sacc=1, recv=0, comb=0, src=0)
    assert (seen[2]["word"], seen[2]["send"], seen[2]["sacc"]) == (0x40, 1, 0)
    assert (seen[3]["send"], seen[3]["sacc"], seen[3]["word"]) == (0, 0, 0x40)
    assert seen["slot1_held"] == 0 and seen["acc"] == 0x15


def test_an_accumulator_write_keeps_item_writes_and_loses_to_clear():
    dut = ScheduleNode(2, 8, 2, 2)
    out = {}

    async def bench(ctx):
        ctx.set(dut.acc_we, 1)
        ctx.set(dut.acc_data, 0x33)
        _item(ctx, dut, 1, 0x44)  # same edge as the accumulator write
        await ctx.tick()
        ctx.set(dut.item_we, 0)
        out["acc"] = ctx.get(dut.acc)
        ctx.set(dut.acc_data, 0x55)
        ctx.set(dut.clear, 1)  # clear wins over the accumulator write
        await ctx.tick()
        ctx.set(dut.clear, 0)
        ctx.set(dut.acc_we, 0)
        out["cleared"] = ctx.get(dut.acc)
        ctx.set(dut.rd_slot, 1)
        await ctx.tick()
        out["held_after_clear"] = ctx.get(dut.rd_held)

    _run(dut, bench)
    assert out["acc"] == 0x33 and out["cleared"] == 0 and out["held_after_clear"] == 0


def test_an_accumulator_write_keeps_the_held_bits():
    # items held before it, and one written at the same edge, stay held
    dut = ScheduleNode(2, 8, 2, 2)
    out = {}

    async def bench(ctx):
        _item(ctx, dut, 0, 0x22)
        await ctx.tick()
        ctx.set(dut.acc_we, 1)
        ctx.set(dut.acc_data, 0x33)
        _item(ctx, dut, 1, 0x44)
        await ctx.tick()
        ctx.set(dut.item_we, 0)
        ctx.set(dut.acc_we, 0)
        for s in range(2):
            ctx.set(dut.rd_slot, s)
            await ctx.tick()
            out[s] = (ctx.get(dut.rd_word), ctx.get(dut.rd_held))

    _run(dut, bench)
    assert out == {0: (0x22, 1), 1: (0x44, 1)}

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


def test_a_read_one_edge_after_an_item_write_sees_the_pending_word():
    # The item write waits one edge in a register before the store takes it; a
    # read addressed meanwhile (read-back, or a send's read stage) gets that word.
    n, slots = 4, 4
    dut = ScheduleNode(n, 8, 4, slots)
    lay = EntryLayout(n, slots)
    out = {}

    async def bench(ctx):
        await load_node(ctx, dut, [(2, 0x10), (3, 0x30)], [lay.encode(send=1, send_slot=2)])
        _item(ctx, dut, 2, 0x21)
        await ctx.tick()  # pending now
        ctx.set(dut.item_we, 0)
        ctx.set(dut.rd_slot, 2)
        await ctx.tick()
        out["read"] = ctx.get(dut.rd_word)
        ctx.set(dut.fetch_en, 1)
        ctx.set(dut.fetch_addr, 0)
        _item(ctx, dut, 2, 0x22)  # taken at the fetch's edge, pending in the read stage
        await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        ctx.set(dut.item_we, 0)
        await ctx.tick()
        out["sent"] = (ctx.get(dut.send_valid), ctx.get(dut.send_slot), ctx.get(dut.out_word))

    _run(dut, bench)
    assert out == {"read": 0x21, "sent": (1, 2, 0x22)}


@pytest.mark.parametrize("n, width, depth, slots", [(2, 1, 1, 1), (8, 8, 32, 8), (5, 3, 7, 12)])
def test_the_fabric_bits_estimate_counts_the_program_memory_as_built(n, width, depth, slots):
    from pipegossip.cli.schedule_hw import fabric_bits
    m = ScheduleNode(n, width, depth, slots).elaborate(None)
    prog = m.submodules.prog
    Fragment.get(m, None)  # the module is used: no UnusedElaboratable warning
    assert prog.depth == depth
    entry = Shape.cast(prog.shape).width
    assert fabric_bits(n, width, depth, slots) == n * n * width + n * depth * entry + n * slots * width
