# amaranth: UnusedElaboratable=no
"""Streaming on the schedule fabric: store writes while running, judged streaming runs, faults."""

import numpy as np
import pytest
from combinational import load_node, run_clocked

from pipegossip.hw.schedule import LATENCY, LoadKind, ScheduleFabric
from pipegossip.hw.schedule.load import load_writes, stream_writes
from pipegossip.hw.schedule.node import ScheduleNode
from pipegossip.model.algorithms.limits import cyclic_shift, one_factor
from pipegossip.model.schedules.program import EntryLayout, ProgramError, compile_schedule
from pipegossip.model.schedules.stream import (VIA_LOAD, compile_stream, load_timetable,
                                               repeat_schedule)
from pipegossip.sim.judge.schedule import judge_schedule, port_figures
from pipegossip.sim.schedule.cosim import job_for, run_programs_amaranth


_run = run_clocked


def test_node_item_write_while_running_lands_and_a_clash_with_a_receive_loses():
    n, slots = 4, 4
    dut = ScheduleNode(n, 8, 8, slots)
    lay = EntryLayout(n, slots)
    prog = [lay.encode(send=1, send_slot=0), lay.encode(send=1, send_slot=0),
            lay.encode(send=1, send_slot=0, recv=1, source=1, recv_slot=1),
            lay.encode(send=1, send_slot=2)]
    seen = {}

    async def bench(ctx):
        await load_node(ctx, dut, [(0, 0xA0), (1, 0x10), (2, 0x20)], prog)
        # fetch entries 0..3 in cycles 0..3; entry e is read in e+1, exchanged in e+2
        for c in range(len(prog) + 2):
            ctx.set(dut.fetch_en, int(c < len(prog)))
            ctx.set(dut.fetch_addr, min(c, len(prog) - 1))
            # cycle 2: slot 0 gets a new word while entry 0 is exchanged and entry 1 read
            # cycle 3: slot 2, read for entry 3 in cycle 4, gets a new word
            # cycle 4: a write into slot 1, which entry 2's receive fills at the same edge
            writes = {2: (0, 0xB1), 3: (2, 0x2F), 4: (1, 0xEE)}
            ctx.set(dut.item_we, int(c in writes))
            if c in writes:
                ctx.set(dut.item_slot, writes[c][0])
                ctx.set(dut.item_data, writes[c][1])
            if c == 4:
                ctx.set(dut.in_word, 0x77)
            x = c - 2
            if 0 <= x < len(prog):
                seen[x] = (ctx.get(dut.send_slot), ctx.get(dut.out_word), ctx.get(dut.recv_valid))
            await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        ctx.set(dut.item_we, 0)
        for s in range(slots):
            ctx.set(dut.rd_slot, s)
            await ctx.tick()
            seen[f"store{s}"] = (ctx.get(dut.rd_word), ctx.get(dut.rd_held))

    _run(dut, bench)
    assert seen[0] == (0, 0xA0, 0)  # exchanged while the write is taken: the old word
    assert seen[1] == (0, 0xB1, 0)  # read in the write's cycle: the new word (transparent)
    assert seen[2] == (0, 0xB1, 1)
    assert seen[3] == (2, 0x2F, 0)
    assert seen["store1"] == (0x77, 1)  # the receive won, the item write was dropped
    assert seen["store0"] == (0xB1, 1) and seen["store2"] == (0x2F, 1)


def test_header_and_program_writes_are_refused_while_busy_items_taken():
    n = 4
    p = compile_schedule(cyclic_shift(n), depth=8)
    dut = ScheduleFabric(n, 8, 8, n)
    lay = p.layout
    junk = lay.encode(send=1, send_slot=3, recv=1, source=2, recv_slot=0)
    got = {}

    async def bench(ctx):
        for kind, node, addr, data in load_writes(p):
            ctx.set(dut.load.valid, 1)
            for f, v in (("kind", kind), ("node", node), ("addr", addr), ("data", data)):
                ctx.set(getattr(dut.load, f), v)
            await ctx.tick()
        ctx.set(dut.load.valid, 0)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        busy_writes = [(LoadKind.PROGRAM, 1, 2, junk), (LoadKind.HEADER, 0, 0, 1),
                       (LoadKind.ITEM, 2, 2, 0x5C)]
        sends, k = [], 0
        while ctx.get(dut.busy):  # cycles 1..L+1; the writes in cycles 1..3
            ctx.set(dut.load.valid, int(k < len(busy_writes)))
            if k < len(busy_writes):
                for f, v in zip(("kind", "node", "addr", "data"), busy_writes[k]):
                    ctx.set(getattr(dut.load, f), v)
            if ctx.get(dut.cycle):
                sends.append(([ctx.get(dut.send[i].slot) for i in range(n)],
                              [ctx.get(dut.recv[i].source) for i in range(n)]))
            await ctx.tick()
            k += 1
        assert k > len(busy_writes)  # every write was made while busy
        ctx.set(dut.load.valid, 0)
        got["length"] = ctx.get(dut.length)
        got["sends"] = sends
        ctx.set(dut.read.node, 2)
        ctx.set(dut.read.slot, 2)
        await ctx.tick()
        got["item"] = (ctx.get(dut.read.word), ctx.get(dut.read.held))

    _run(dut, bench)
    assert got["length"] == p.cycles  # the header was ignored
    # the program was not changed: round r, node i sends its slot i and hears i - r
    assert got["sends"] == [(list(range(n)), [(i - r) % n for i in range(n)])
                            for r in range(1, n)]
    assert got["item"] == (0x5C, 1)  # node 2's slot 2: the ITEM write landed (then no receive)


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
@pytest.mark.parametrize("banks, via", [(1, "item"), (2, "item"), (4, VIA_LOAD)])
def test_streaming_runs_are_judged_and_every_port_is_busy_every_cycle(n, banks, via):
    G = 5
    sp = compile_stream(cyclic_shift(n), G, banks=banks)
    assert sp.program.slots == min(banks, G) * n and sp.cycles == G * (n - 1)
    (r,) = run_programs_amaranth([sp], seed=n, via=via)
    v = judge_schedule(sp, r)
    assert v.match, v.report()
    assert len(r.loads) == (G - min(banks, G)) * n  # every later word written while running
    assert all(1 <= w[0] <= sp.cycles for w in r.loads)
    f = port_figures(sp, r)
    assert f["min_util"] == 1.0 and f["exchange_cycles"] == G * (n - 1)
    assert f["period"] == n - 1 and f["per_1000"] == round(1000 / (n - 1), 1)
    assert r.busy_cycles == sp.cycles + LATENCY


def test_a_schedule_that_is_not_all_ports_streams_at_its_own_utilisation():
    sp = compile_stream(one_factor(6), 3)
    (r,) = run_programs_amaranth([sp], seed=2)
    v = judge_schedule(sp, r)
    assert v.match, v.report()
    f = port_figures(sp, r)
    assert f["min_util"] < 1.0  # H1: a node sends or receives in a round, not both


def _faulty(sp, change):
    job = job_for("fault", sp, 3)
    job["timed"] = change([list(w) for w in job["timed"]])
    (r,) = run_programs_amaranth([sp], jobs=[job])
    return judge_schedule(sp, r)


def test_a_word_loaded_one_cycle_late_is_caught_with_its_cycle_and_node():
    sp = compile_stream(cyclic_shift(6), 4, banks=1)  # windows of one cycle
    ld = sp.loads[7]

    def late(ws):
        w = next(w for w in ws if w[2] == ld.node and w[3] == ld.slot and w[0] == ld.latest)
        w[0] += 1
        return ws

    v = _faulty(sp, late)
    assert not v.match
    first = v.first_mismatch
    assert (first.kind, first.cycle, first.processor) == ("delivery", ld.latest + LATENCY,
                                                          ld.node)
    assert f"gossip {ld.item // 6}" in first.expected
    assert any(m.note == "load timetable" and m.cycle == ld.latest + 1 for m in v.mismatches)


def test_a_wrong_word_a_missing_load_and_a_clash_are_caught():
    sp = compile_stream(cyclic_shift(5), 4)

    def wrong(ws):
        ws[0][4] ^= 1
        return ws

    v = _faulty(sp, wrong)
    assert any(m.note == "load" and m.cycle == sp.loads[0].earliest for m in v.mismatches)
    assert any("sends" in m.expected and m.processor == sp.loads[0].node for m in v.mismatches)

    v = _faulty(sp, lambda ws: ws[1:])
    assert any(m.note == "load timetable" and m.got == "none" for m in v.mismatches)

    # node 2 receives p1's gossip-0 word into slot 1 in program cycle 1 (edge ending cycle 2)
    assert sp.program.recv[0, 2] == 1
    v = _faulty(sp, lambda ws: [[2, 1, 2, 1, 0xEE]] + ws)
    notes = {(m.cycle, m.processor, m.note) for m in v.mismatches}
    assert (2, 2, "load") in notes  # the clash, named
    assert not [m for m in v.mismatches if m.kind == "trace" or "sends" in m.expected
                or "receives" in m.expected]  # the exchange was not disturbed


def test_streaming_refusals_name_the_limit():
    with pytest.raises(ProgramError, match="one item per node"):
        repeat_schedule(repeat_schedule(cyclic_shift(4), 2), 2)
    with pytest.raises(ProgramError, match="gossips"):
        compile_stream(cyclic_shift(4), 0)
    with pytest.raises(ProgramError, match="banks"):
        compile_stream(cyclic_shift(4), 3, banks=0)
    with pytest.raises(ProgramError, match="load port cannot write"):
        load_timetable(compile_stream(cyclic_shift(8), 8, banks=2), VIA_LOAD)
    with pytest.raises(ProgramError, match="depth"):
        compile_stream(cyclic_shift(4), 8, depth=16)


def test_stream_writes_load_the_first_banks_before_the_start():
    sp = compile_stream(cyclic_shift(4), 6, banks=2)
    before, timed = stream_writes(sp, seed=1)
    items = [w for w in before if w[0] == LoadKind.ITEM]
    assert len(items) == 2 * 4 and len(timed) == 4 * 4
    want = np.arange(8)[None, :] % 4 == np.arange(4)[:, None]  # node v: slots v and v + 4
    assert np.array_equal(sp.program.initial, want)
    assert {(w[2], w[3]) for w in timed} <= {(v, x) for v in range(4) for x in (v, v + 4)}


def test_a_node_item_port_wins_over_a_load_port_item_write_in_the_same_cycle():
    dut = ScheduleFabric(3, 8, 4, 4)
    got = {}

    async def bench(ctx):
        ctx.set(dut.load.valid, 1)
        ctx.set(dut.load.kind, LoadKind.HEADER)
        ctx.set(dut.load.data, 1)
        await ctx.tick()
        for f, v in (("kind", LoadKind.ITEM), ("node", 1), ("addr", 0), ("data", 0x11)):
            ctx.set(getattr(dut.load, f), v)
        ctx.set(dut.item[1].valid, 1)
        ctx.set(dut.item[1].slot, 2)
        ctx.set(dut.item[1].word, 0x22)
        ctx.set(dut.item[2].valid, 1)  # another node's port at the same edge: independent
        ctx.set(dut.item[2].slot, 0)
        ctx.set(dut.item[2].word, 0x33)
        await ctx.tick()
        ctx.set(dut.load.valid, 0)
        ctx.set(dut.item[1].valid, 0)
        ctx.set(dut.item[2].valid, 0)
        for node, slot in ((1, 0), (1, 2), (2, 0)):
            ctx.set(dut.read.node, node)
            ctx.set(dut.read.slot, slot)
            await ctx.tick()
            got[node, slot] = (ctx.get(dut.read.word), ctx.get(dut.read.held))

    _run(dut, bench)
    assert got[1, 0][1] == 0  # the load-port write was dropped
    assert got[1, 2] == (0x22, 1) and got[2, 0] == (0x33, 1)
