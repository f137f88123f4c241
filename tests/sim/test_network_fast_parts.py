"""The network fast mode's Python parts (sim/network/fast.py), each against its definition.

The ROMs' rows against the judge's expectations, the run's inputs and its
clock cycles from ``go`` to ``finished`` (the fast top in Amaranth's
simulator, once), the ROM depths and hex images, the top's ports, what a
build and a Verilator run are handed (the toolchain calls replaced: no
build here; tests/sim/test_network_fast_verilator.py runs the real one), and a
summary turned into a record, a place and a verdict. Seconds, so
``dev.py mutate sim/network/fast.py`` runs it first.
"""

from __future__ import annotations

import pytest

from pipegossip.hw.network.export import size_verilog_text
from pipegossip.hw.network.fabric import LATENCY, network_size
from pipegossip.hw.network.load import item_words
from pipegossip.model.algorithms.path_cycle import cycle_gossip
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules.network_program import ACC, compile_network
from pipegossip.model.schedules.program import NONE
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.fsm.runner import CosimError
from pipegossip.sim.fast import network as fast_hw
from pipegossip.sim.fast.native import rom_depths, rom_hex
from pipegossip.sim.judge.network import completion_needs, expected_lanes
from pipegossip.sim.network import fast
from pipegossip.sim.network.run import FAULTS, faulty_writes, network_job

SEED = 3
CYCLE4 = topology("cycle", n=4)
ALLREDUCE = compile_network(allreduce_schedule(CYCLE4), depth=8, slots=6)
GOSSIP = compile_network(cycle_gossip(4, 1), depth=8, slots=6)
SIZE = network_size(CYCLE4, ALLREDUCE.width, ALLREDUCE.depth, ALLREDUCE.slots)
LAY = fast_hw.FastLayout(SIZE)


def _unpack(fields, row: int) -> dict:
    out, at = {}, 0
    for name, w in fields:
        out[name] = (row >> at) & ((1 << w) - 1)
        at += w
    return out


@pytest.mark.parametrize("program", [ALLREDUCE, GOSSIP], ids=["allreduce", "gossip"])
def test_the_rows_hold_the_judges_expectations(program):
    roms, (run,) = fast.rom_rows([program], [network_job("j", program, SEED)], SIZE)
    words = item_words(program, SEED)
    T = fast.span_of(program)
    want = expected_lanes(program, words, T, LATENCY)
    pw = LAY.bits(LAY.port_fields)
    assert len(roms["expect"]) == T and run["span"] == T
    for k, row in enumerate(roms["expect"]):
        for p in range(program.ports):
            got = _unpack(LAY.port_fields, row >> (p * pw))
            tx, rx = int(want["tx"][k, p]), int(want["rx"][k, p])
            assert got["tv"] == (tx != NONE) and got["ta"] == (tx == ACC)
            assert got["ts"] == (tx if tx >= 0 else 0)
            assert got["rv"] == (rx != NONE) and got["rs"] == (rx if rx >= 0 else 0)
            assert got["cb"] == bool(want["comb"][k, p])
            assert got["w"] == (want["sent"][k, p] or 0)
        accs = row >> (program.ports * pw)
        for v in range(program.n):
            assert (accs >> (v * program.width)) & 0xFF == want["acc"][k][v]
        assert accs >> (program.n * program.width) == 0
    need, acc_want = completion_needs(program, words)
    must = {(v, int(x)) for v, xs in need for x in xs}
    slot_word = program.slot_words(words)
    final_acc = program.acc_values(words)[program.cycles]
    assert len(roms["final"]) == program.n * program.slots
    for i, row in enumerate(roms["final"]):
        v, x = divmod(i, program.slots)
        got = _unpack(LAY.final_fields, row)
        assert got == dict(held=int(program.final[v, x]), word=slot_word[x],
                           need=int((v, x) in must), acc=final_acc[v],
                           want=acc_want.get(v, 0), accneed=int(v in acc_want))
    for row, w in zip(roms["load"], network_job("j", program, SEED)["writes"]):
        got = _unpack(LAY.load_fields, row)
        assert (got["kind"], got["node"], got["addr"], got["data"]) == tuple(w)


def test_each_runs_inputs_and_identical_jobs_share_their_rows():
    clean = network_job("a", ALLREDUCE, SEED)
    faulty = network_job("f", ALLREDUCE, SEED, faulty_writes(ALLREDUCE, "acc", SEED))
    jobs = [clean, network_job("b", ALLREDUCE, SEED), faulty, network_job("g", GOSSIP, SEED),
            network_job("s", ALLREDUCE, SEED + 1)]
    programs = [ALLREDUCE] * 3 + [GOSSIP, ALLREDUCE]
    roms, params = fast.rom_rows(programs, jobs, SIZE)
    assert params[0] == params[1]  # the same job again: the same rows
    T, F = fast.span_of(ALLREDUCE), SIZE.n * SIZE.slots
    nload = len(clean["writes"])
    bases = [(r["load_base"], r["exp_base"], r["final_base"]) for r in params]
    assert bases == [(0, 0, 0), (0, 0, 0), (nload, T, F),
                     (nload + len(faulty["writes"]), 2 * T, 2 * F),
                     (nload + len(faulty["writes"]) + len(jobs[3]["writes"]),
                      2 * T + fast.span_of(GOSSIP), 3 * F)]
    assert len(roms["load"]) == bases[-1][0] + len(jobs[4]["writes"])
    assert len(roms["expect"]) == 3 * T + fast.span_of(GOSSIP) and len(roms["final"]) == 4 * F
    for r, j, q in zip(params, jobs, programs):
        assert r["load_count"] == len(j["writes"]) and r["length"] == q.cycles
        assert r["span"] == fast.span_of(q)
        assert r["cycles"] == r["load_count"] + r["span"] + F + 3
    # a seed of None loads seed 0's words: the same rows as seed 0
    none, zero = (fast.rom_rows([GOSSIP], [dict(network_job("z", GOSSIP, 0), word_seed=s)],
                                SIZE)[0] for s in (None, 0))
    assert none == zero and none != fast.rom_rows([GOSSIP], [network_job("o", GOSSIP, 1)],
                                                  SIZE)[0]


def test_finished_rises_exactly_the_runs_cycles_after_go():
    """As rom_rows counts them: two input registers, the load, the run, the read-back."""
    from amaranth.sim import Simulator

    jobs = [network_job("a", ALLREDUCE, SEED), network_job("g", GOSSIP, SEED),
            network_job("f", ALLREDUCE, SEED, faulty_writes(ALLREDUCE, "drop", SEED)),
            network_job("none", ALLREDUCE, SEED, [])]  # nothing to load: straight to the run
    roms, params = fast.rom_rows([ALLREDUCE, GOSSIP, ALLREDUCE, ALLREDUCE], jobs, SIZE)
    depths = rom_depths(roms)
    dut = fast_hw.NetworkFastTop(SIZE, CYCLE4, ALLREDUCE.op, depths,
                                 {k: v + [0] * (depths[k] - len(v)) for k, v in roms.items()})
    seen = []

    async def bench(ctx):
        for run in params:
            for k in fast_hw.INPUTS:
                ctx.set(getattr(dut, k), run[k])
            ctx.set(dut.go, 1)
            await ctx.tick()
            ctx.set(dut.go, 0)
            ups = [ctx.get(dut.finished)]  # after tick 1: still the last run's
            for _ in range(2 * run["cycles"]):
                await ctx.tick()
                ups.append(ctx.get(dut.finished))
            # finished falls, rises once and holds (until the next go)
            rise = ups.index(1, ups.index(0))
            seen.append((rise + 1, ctx.get(dut.bad), all(ups[rise:])))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert [x[0] for x in seen] == [r["cycles"] for r in params] and params[3]["load_count"] == 0
    assert [x[1:] for x in seen[:3]] == [(0, True), (0, True), (1, True)] and seen[3][2]


@pytest.mark.parametrize("rows, depth", [(0, 1024), (1, 1024), (1024, 1024), (1025, 2048),
                                         (2048, 2048), (2049, 4096)])
def test_rom_depths_are_powers_of_two_of_at_least_1024(rows, depth):
    assert rom_depths({"load": [0] * rows, "expect": [1], "final": []}) == \
        {"load": depth, "expect": 1024, "final": 1024}


def test_hex_images_have_a_digit_per_four_bits():
    assert rom_hex([1, 0xABC], 9) == "001\nabc\n"
    assert rom_hex([0xFF], 8) == "ff\n" and rom_hex([], 8) == ""


def test_a_build_is_handed_the_trace_modes_fabric_text_and_the_roms(monkeypatch):
    got = {}

    def build(size, text, ports, slug, kind, top, **kw):
        got.update(size=size, text=text, ports=ports, slug=slug, kind=kind, top=top, **kw)
        return "the build"

    monkeypatch.setattr(fast, "build_program_fabric", build)
    depths = {"load": 1024, "expect": 2048, "final": 1024}
    assert fast.build_network_fast(ALLREDUCE, SIZE, depths, root="R") == "the build"
    assert got["text"].startswith(size_verilog_text(CYCLE4, SIZE, ALLREDUCE.op) + "\n")
    for rom in fast_hw.ROM_FILES:
        assert fast_hw.rom_module(rom, LAY.width(rom), depths[rom]) in got["text"]
    top = got["text"][got["text"].index(f"module {fast_hw.NET_FAST_TOP}("):]
    # the registered reset starts high and resets the fabric instance (see NetworkFastTop)
    assert "reg rst_r = 1'h1;" in top and ".rst(rst_r)" in top
    assert top.count("pipegossip_network_fabric fabric (") == 1
    assert (got["size"], got["kind"], got["top"], got["root"]) == (
        SIZE, "network-fast", fast_hw.NET_FAST_TOP, "R")
    assert got["recipe"] == fast.FAST_RECIPE and got["progress"] is None
    # the top's ports as its signature has them: name, direction, width
    assert {p.name: (p.direction, p.width) for p in got["ports"]} == {
        "go": ("in", 1), **{k: ("in", 32) for k in fast_hw.INPUTS}, "finished": ("out", 1),
        "bad": ("out", 1), "bad_check": ("out", 4), "bad_cycle": ("out", 32),
        "bad_node": ("out", 16), "bad_port": ("out", 16), "busy_cycles": ("out", 32),
        "done_at": ("out", 32)}
    assert got["slug"] == f"netfast-cycle4-sum-w{SIZE.width}-d8-s6-b6"


def test_a_verilator_run_is_handed_the_roms_and_the_runs(monkeypatch):
    calls = []

    class B:
        size = SIZE

    def run_in_build(b, top, module, env, job, files):
        calls.append((top, module, env, job, files))
        return [{"run": i} for i in range(len(job["runs"]))]

    monkeypatch.setattr(fast, "run_in_build", run_in_build)
    jobs = [network_job("a", ALLREDUCE, SEED), network_job("g", GOSSIP, SEED)]
    out = fast.run_fast_build(B, [ALLREDUCE, GOSSIP], jobs)
    assert out == [{"run": 0}, {"run": 1}]
    roms, params = fast.rom_rows([ALLREDUCE, GOSSIP], jobs, SIZE)
    (top, module, env, job, files), = calls
    assert (top, module, env) == (fast_hw.NET_FAST_TOP, "pipegossip.sim.fast.network_testbench",
                                  fast.JOB_ENV)
    assert job == {"runs": params}
    assert files == {name: rom_hex(roms[rom], LAY.width(rom))
                     for rom, name in fast_hw.ROM_FILES.items()}
    monkeypatch.setattr(fast, "run_in_build", lambda *a: [{}])
    with pytest.raises(CosimError, match="reported 1 runs of 2"):
        fast.run_fast_build(B, [ALLREDUCE, GOSSIP], jobs)


SUMMARY = dict(finished=1, bad=0, bad_check=0, bad_cycle=0, bad_node=0, bad_port=0,
               busy_cycles=3, done_at=4)


def _summary(**kw) -> dict:
    return dict(SUMMARY, **kw)


def test_a_summary_becomes_a_record():
    job = network_job("j", ALLREDUCE, SEED, faulty_writes(ALLREDUCE, "acc", SEED))
    r = fast.fast_record(job, ALLREDUCE, _summary(wall_seconds=0.25), "here")
    assert (r.name, r.n, r.ports, r.latency, r.origin) == ("j", 4, ALLREDUCE.ports, LATENCY,
                                                           "here")
    assert r.ended == "done" and r.load_cycles == len(job["writes"]) and r.busy_cycles == 3
    assert r.wall_seconds == 0.25 and r.spec.word_seed == SEED and r.spec.tail == job["tail"]
    assert r.spec.max_cycles == job["max_cycles"] and not r.samples
    late = fast.fast_record(job, ALLREDUCE, _summary(finished=0), "")
    assert late.ended == "timeout" and late.wall_seconds == 0.0 and late.spec.idle == 0
    assert fast.NetworkFastRun(spec=r.spec, n=4, name="x", samples={}, store=[], held=[],
                               acc=[], ended="done").busy_cycles == 0


@pytest.mark.parametrize("summary, place", [
    (_summary(), None),
    (_summary(bad=1, bad_check=0, bad_cycle=2, bad_node=1, bad_port=3), ("trace", 2, 1, 3)),
    (_summary(bad=1, bad_check=1, bad_cycle=0, bad_node=fast_hw.NO_PLACE,
              bad_port=fast_hw.NO_PLACE), ("busy", 0, None, None)),
    (_summary(bad=1, bad_check=9, bad_cycle=fast_hw.FINAL_CYCLE, bad_node=3, bad_port=5),
     ("final_word", None, 3, 5)),
    (_summary(bad=1, bad_check=7, bad_cycle=fast_hw.FINAL_CYCLE - 1, bad_node=0,
              bad_port=fast_hw.NO_PLACE - 1), ("acc", fast_hw.FINAL_CYCLE - 1, 0,
                                               fast_hw.NO_PLACE - 1)),
])
def test_fast_place_reads_the_summary(summary, place):
    assert fast.fast_place(summary) == place


def _verdict(**kw):
    job = network_job("j", ALLREDUCE, SEED)
    return fast.judge_fast(ALLREDUCE, fast.fast_record(job, ALLREDUCE, _summary(**kw), "t"))


def test_a_fast_verdict_names_the_checkers_mismatch():
    assert _verdict().match and _verdict().mismatches == []
    port = 5
    (m,) = _verdict(bad=1, bad_check=0, bad_cycle=2, bad_node=2, bad_port=port).mismatches
    peer = ALLREDUCE.node_of(ALLREDUCE.peer(port))
    assert (m.kind, m.cycle, m.processor) == ("trace", 2, 2)
    assert m.note == f"port {port}: p2 -> p{peer}" and m.expected == "trace as the model says"
    (m,) = _verdict(bad=1, bad_check=5, bad_cycle=3, bad_node=1, bad_port=2).mismatches
    peer = ALLREDUCE.node_of(ALLREDUCE.peer(2))
    assert (m.kind, m.note) == ("delivery", f"port 2: p1 -> p{peer}")
    (m,) = _verdict(bad=1, bad_check=9, bad_cycle=fast_hw.FINAL_CYCLE, bad_node=3,
                    bad_port=4).mismatches
    assert (m.kind, m.cycle, m.processor) == ("delivery", None, 3)
    assert m.expected == "final_word as the model says (slot 4)" and m.note == "final_word"
    (m,) = _verdict(bad=1, bad_check=10, bad_cycle=fast_hw.FINAL_CYCLE, bad_node=3,
                    bad_port=fast_hw.NO_PLACE).mismatches
    assert m.expected == "final_acc as the model says" and m.note == "final_acc"
    (m,) = _verdict(bad=1, bad_check=1, bad_cycle=4, bad_node=fast_hw.NO_PLACE,
                    bad_port=fast_hw.NO_PLACE).mismatches
    assert (m.kind, m.processor, m.note) == ("busy", None, "busy")
    first, late = _verdict(bad=1, bad_check=2, bad_cycle=5, bad_node=fast_hw.NO_PLACE,
                           bad_port=fast_hw.NO_PLACE, finished=0).mismatches
    assert first.kind == "done" and late.kind == "timeout" and late.cycle is None
    (m,) = _verdict(finished=0).mismatches
    assert m.kind == "timeout" and m.got == "the fast top never finished"


def test_fast_jobs_load_each_program_or_the_writes_given():
    writes = [faulty_writes(ALLREDUCE, f, SEED) for f in FAULTS[:2]]
    jobs = fast.fast_jobs([ALLREDUCE, ALLREDUCE], ["x", "y"], SEED, writes)
    assert [j["name"] for j in jobs] == ["x", "y"] and [j["writes"] for j in jobs] == writes
    assert fast.fast_jobs([GOSSIP], ["g"], SEED) == [network_job("g", GOSSIP, SEED)]
