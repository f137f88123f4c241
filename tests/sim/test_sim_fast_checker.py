"""The fast mode's in-hardware checker, judged without a Verilator build.

:class:`~pipegossip.sim.fast.checker.FastChecker` runs in Amaranth's
simulator beside a ROM of the expected rows (:func:`expected_hex`), fed
cycle by cycle from a trace record of the fabric (Amaranth's simulator, once)
into which one mismatch is planted: a wrong word, source or session, a word
in the wrong slot, a dropped or extra delivery, a missing or extra take, a
wrong action or peer alone, the fabric-wide outputs, the start cycle and the
run's last cycle. Each test asserts the exact first mismatch the checker
latches (cycle, processor, every kind of that cycle) and that the per-cycle
judge names the same one in the planted record. So a mutant of the checker
costs seconds, not a build (``python3 dev.py mutate sim/fast/checker.py``);
tests/sim/test_sim_fast.py keeps the real path (both modes on Verilator).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib.memory import Memory
from amaranth.sim import Simulator

from pipegossip.model.config import RunConfig
from pipegossip.model.runtable import R
from pipegossip.sim.fsm.amaranth_run import run_fabric
from pipegossip.sim.fast.checker import KIND_BITS, ExpectLayout, FastChecker, rom_verilog
from pipegossip.sim.fast.mode import TAIL, expected_hex, fast_record
from pipegossip.sim.judge.fsm import judge, model_result, session_ends
from pipegossip.sim.record import HwRun, RunSpec

CONFIG = RunConfig.family(5, "pipelined", sessions=2)
SEED = 3
WIDTH = 8
LENGTH = model_result(CONFIG).length
LAST = LENGTH + TAIL
SUMMARY = ("finished", "bad", "bad_cycle", "bad_proc", "bad_kinds", "deliveries", "used_sum",
           "busy_cycles", "done_at", "idle_bad")
LANES = ("action", "peer", "dvalid", "dsource", "dsession", "dword")
SCALARS = ("used", "busy", "done", "cycle", "stall")


@pytest.fixture(scope="module")
def clean() -> HwRun:
    """One correct run of the fabric, cycles -2 .. L + tail + 3."""
    run = run_fabric(CONFIG, WIDTH, word_seed=SEED, idle=2, tail=TAIL + 4)
    assert judge(CONFIG, WIDTH, run).match
    assert run.last_cycle >= LAST + 2
    return run


def _planted(run: HwRun, plant) -> HwRun:
    samples = {k: v.copy() for k, v in run.samples.items()}
    plant(samples, lambda t: t - run.first_cycle)
    return replace(run, samples=samples)


def check(*runs: HwRun, seed: int = SEED) -> list[dict]:
    """The checker's summary after each of ``runs`` (back to back, no reset between)."""
    n = CONFIG.n
    ck = FastChecker(n, CONFIG.sessions, WIDTH, LENGTH, TAIL)
    rows = [int(r, 16) for r in expected_hex(CONFIG).split()]
    m = Module()
    m.submodules.checker = ck
    m.submodules.rom = rom = Memory(shape=ck.layout.width, depth=len(rows), init=rows)
    read = rom.read_port(domain="comb")
    m.d.comb += [read.addr.eq(ck.addr), ck.row.eq(read.data)]
    out: list[dict] = []

    async def bench(ctx) -> None:
        ctx.set(ck.seed, seed)
        for run in runs:
            s = run.samples
            for i in range(len(s["busy"])):
                ctx.set(ck.begin, int(s["start"][i] and not s["busy"][i]))
                for k in SCALARS:
                    ctx.set(getattr(ck, k), int(s[k][i]))
                for p in range(n):
                    for k in LANES:
                        ctx.set(getattr(ck, k)[p], int(s[k][i][p]))
                    ctx.set(ck.taken[p], int(s["ready"][i][p] and s["valid"][i][p]))
                await ctx.tick()
            out.append({k: ctx.get(getattr(ck, k)) for k in SUMMARY})

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return out


def _again(run: HwRun) -> HwRun:
    """``run`` as the fabric shows it after an earlier run: ``done`` high until the start."""
    return _planted(run, lambda s, at: s["done"].__setitem__(slice(0, at(0)), 1))


def _kinds(*names: str) -> int:
    return sum(1 << KIND_BITS.index(k) for k in names)


def _receives(run: HwRun) -> list[tuple[int, int]]:
    """(cycle, processor) of every delivery of the run, in cycle order."""
    a = run.window("dvalid", 1, LENGTH)
    return [(t + 1, int(p)) for t in range(LENGTH) for p in np.flatnonzero(a[t])]


def test_a_correct_run_passes_with_the_models_totals(clean):
    (s,) = check(clean)
    model = model_result(CONFIG)
    assert s == dict(finished=1, bad=0, bad_cycle=0, bad_proc=0, bad_kinds=0,
                     deliveries=len(model.deliveries), used_sum=int(model.utilization.sum()),
                     busy_cycles=LENGTH, done_at=LENGTH + 1, idle_bad=0)
    record = fast_record(RunSpec(word_seed=SEED), CONFIG.n, dict(
        s, busy=0, done=1, stall=0, wall_seconds=0.0, waited=LAST + 2, wakes=1),
        True, False, "test")
    assert judge(CONFIG, WIDTH, record).match


def test_another_word_seed_is_a_wrong_word_at_the_first_delivery(clean):
    (s,) = check(clean, seed=SEED + 1)
    t, p = _receives(clean)[0]
    assert (s["bad"], s["bad_cycle"], s["bad_proc"], s["bad_kinds"]) == (
        1, t, p, _kinds("delivery"))


# Each plant: (name, function(samples, index_of_cycle, run) -> (cycle, processor, kinds)).
def _flip(field: str, bit: int = 1, which: int = 3):
    def plant(s, at, run):
        t, p = _receives(run)[which]
        s[field][at(t), p] ^= bit
        return t, p, ("delivery",)
    return plant


def _late(s, at, run):
    t, p = _receives(run)[4]
    for k in ("dvalid", "dsource", "dsession", "dword"):
        s[k][at(t + 1), p] = s[k][at(t), p]
    s["dvalid"][at(t), p] = 0
    return t, p, ("delivery",)


def _drop(s, at, run):
    t, p = _receives(run)[5]
    s["dvalid"][at(t), p] = 0
    return t, p, ("delivery",)


def _extra_delivery(s, at, run):
    # a processor that does not receive in cycle 1 shows a delivery there
    p = int(np.flatnonzero(run.window("action", 1, 1)[0] != R)[-1])
    s["dvalid"][at(1), p] = 1
    return 1, p, ("delivery",)


def _take_cycle(run: HwRun, p: int) -> int:
    return int(session_ends(model_result(CONFIG).table, CONFIG.sessions)[p, 0])


def _miss_take(s, at, run):
    t = _take_cycle(run, 2)
    assert s["ready"][at(t), 2] == 1
    s["ready"][at(t), 2] = 0
    return t, 2, ("handshake",)


def _extra_take(s, at, run):
    t = _take_cycle(run, 2) - 1
    assert s["ready"][at(t), 2] == 0
    s["ready"][at(t), 2] = 1
    return t, 2, ("handshake",)


def _lane(field: str, t: int, p: int, value=None, bit: int = 1, kind: str = "trace"):
    def plant(s, at, run):
        s[field][at(t), p] = s[field][at(t), p] ^ bit if value is None else value
        return t, p, (kind,)
    return plant


def _scalar(field: str, t: int, value=None, bit: int = 1):
    def plant(s, at, run):
        s[field][at(t)] = s[field][at(t)] ^ bit if value is None else value
        return t, None, (field,)
    return plant


def _peer_alone(s, at, run):
    # the peer of the highest processor that acts in cycle 2, its action intact
    p = int(np.flatnonzero(run.window("action", 2, 2)[0])[-1])
    s["peer"][at(2), p] ^= 1
    return 2, p, ("trace",)


def _both(first, second, kinds, proc=None):
    """Two plants in one cycle: every kind of it latched, the processor of the first kind."""
    def plant(s, at, run):
        t1, p1, _ = first(s, at, run)
        t2, p2, _ = second(s, at, run)
        assert t1 == t2
        return t1, p1 if proc is None else proc(p1, p2), kinds
    return plant


PLANTS = {
    "word": _flip("dword"),
    "word-top-bit": _flip("dword", 1 << (WIDTH - 1), which=6),
    "source": _flip("dsource"),
    "source-top-bit": _flip("dsource", 4, which=1),
    "session": _flip("dsession", which=-1),
    "late": _late,
    "drop": _drop,
    "extra-delivery": _extra_delivery,
    "miss-take": _miss_take,
    "extra-take": _extra_take,
    "action": _lane("action", 3, 1),
    "action-top-bit": _lane("action", 3, 4, bit=4),
    "peer-alone": _peer_alone,
    "peer-top-bit": _lane("peer", 2, 0, bit=4),
    "used": _scalar("used", 2),
    "used-top-bit": _scalar("used", 3, bit=4),
    "busy-low": _scalar("busy", LENGTH, 0),
    "done-early": _scalar("done", LENGTH, 1),
    "done-in-cycle-1": _scalar("done", 1, 1),
    "done-late": _scalar("done", LENGTH + 1, 0),
    "done-dropped": _scalar("done", LAST, 0),
    "cycle": _scalar("cycle", 4),
    "cycle-after-L": _scalar("cycle", LENGTH + 1, 1),
    "stall": _scalar("stall", 2, 1),
    "busy-after-L": _scalar("busy", LAST, 1),
    "action-at-start": _lane("action", 0, 2),
    "miss-take-at-start": _lane("ready", 0, 3, value=0, kind="handshake"),
    "used-at-start": _scalar("used", 0, 1),
    "cycle-at-start": _scalar("cycle", 0, 1),
    "action-in-last-cycle": _lane("action", LAST, 4),
    "take-in-last-cycle": _lane("ready", LAST, 1, value=1, kind="handshake"),
    "trace-and-delivery": _both(_lane("action", 3, 4), _lane("dvalid", 3, 0),
                                ("trace", "delivery")),
    "used-and-trace": _both(_scalar("used", 3), _lane("peer", 3, 2), ("trace", "used"),
                            proc=lambda a, b: b),
    "used-and-delivery": _both(_scalar("used", 3), _lane("dvalid", 3, 1), ("used", "delivery")),
    "stall-and-take": _both(_scalar("stall", 3), _lane("ready", 3, 0, value=1),
                            ("stall", "handshake")),
    "delivery-and-take": _both(_lane("dvalid", 3, 4), _lane("ready", 3, 1, value=1),
                               ("delivery", "handshake")),
    "two-deliveries": _both(_lane("dvalid", 3, 4), _lane("dvalid", 3, 2), ("delivery",),
                            proc=min),
    "two-takes": _both(_lane("ready", 3, 3, value=1), _lane("ready", 3, 4, value=1),
                       ("handshake",), proc=min),
}


@pytest.mark.parametrize("name", PLANTS)
def test_a_planted_mismatch_is_latched_as_the_judge_names_it(clean, name):
    found = {}

    def plant(s, at):
        found["want"] = PLANTS[name](s, at, clean)

    run = _planted(clean, plant)
    t, p, kinds = found["want"]
    (s,) = check(run)
    assert (s["bad"], s["bad_cycle"], s["bad_proc"], s["bad_kinds"]) == (
        1, t, 0xFFFF if p is None else p, _kinds(*kinds)), s
    assert s["finished"] == 1 and s["idle_bad"] == 0
    # The per-cycle judge of the same (planted) record names the same first mismatch.
    first = judge(CONFIG, WIDTH, run).first_mismatch
    kind = min(kinds, key=KIND_BITS.index)
    assert (first.cycle, first.processor, first.kind) == (t, p if kind in (
        "trace", "delivery", "handshake") else None, kind)


def test_the_first_mismatching_cycle_is_kept(clean):
    t, p = _receives(clean)[2]

    def plant(s, at):
        s["dword"][at(t), p] ^= 1
        s["action"][at(t + 1), 0] ^= 1
        s["used"][at(t + 2)] ^= 1

    (s,) = check(_planted(clean, plant))
    assert (s["bad"], s["bad_cycle"], s["bad_proc"], s["bad_kinds"]) == (
        1, t, p, _kinds("delivery"))


def test_a_delivery_in_the_start_cycle_is_the_traces_business(clean):
    """Deliveries are judged from cycle 1 on: a word shown in cycle 0 is no mismatch."""
    def plant(s, at):
        s["dvalid"][at(0), 1] = 1
        s["dword"][at(0), 1] = 0x5A

    (s,) = check(_planted(clean, plant))
    assert s["bad"] == 0 and s["idle_bad"] == 0 and s["deliveries"] == len(
        model_result(CONFIG).deliveries) + 1


@pytest.mark.parametrize("cycle, field, value", [
    (-1, "action", 1), (-2, "peer", 2), (-1, "dvalid", 1), (-1, "busy", 1), (-1, "stall", 1),
    (-1, "cycle", 3), (-2, "used", 1), (-1, "done", 1), ("after", "action", 2),
    ("after", "done", 0), ("after", "used", 1)])
def test_outputs_not_at_rest_outside_the_run_are_seen(clean, cycle, field, value):
    at_cycle = LAST + 1 if cycle == "after" else cycle

    def plant(s, at):
        if s[field].ndim == 2:
            s[field][at(at_cycle), 3] = value
        else:
            s[field][at(at_cycle)] = value

    (s,) = check(_planted(clean, plant))
    assert s["idle_bad"] == 1 and s["bad"] == 0 and s["finished"] == 1


def test_runs_back_to_back_start_afresh(clean):
    t, p = _receives(clean)[1]

    def plant(s, at):
        s["dsession"][at(t), p] ^= 1
        s["done"][at(t + 1)] = 1  # done seen early: done_at of this run only

    bad = _planted(clean, plant)
    first, second, third = check(bad, _again(clean), _again(bad))
    (alone,) = check(clean)
    assert second == alone
    assert (first["bad"], first["bad_cycle"], first["bad_proc"]) == (1, t, p)
    assert first["done_at"] == t + 1 and third == first
    # counters start again at every run
    assert first["deliveries"] == alone["deliveries"]
    assert first["busy_cycles"] == alone["busy_cycles"] == LENGTH


def test_a_clean_run_after_a_bad_one_clears_every_field(clean):
    def plant(s, at):
        s["stall"][at(LENGTH)] = 1

    first, second = check(_planted(clean, plant), _again(clean))
    assert (first["bad"], first["bad_cycle"], first["bad_proc"], first["bad_kinds"]) == (
        1, LENGTH, 0xFFFF, _kinds("stall"))
    assert (second["bad"], second["bad_cycle"], second["bad_proc"], second["bad_kinds"]) == (
        0, 0, 0, 0)


@pytest.mark.parametrize("cycle", [1, 2, LENGTH])
def test_the_first_cycle_with_done_is_reported(clean, cycle):
    def plant(s, at):
        s["done"][at(cycle):at(LENGTH + 1)] = 1

    (s,) = check(_planted(clean, plant))
    assert s["done_at"] == cycle and s["bad_cycle"] == cycle


def test_a_run_without_done_reports_no_done_cycle(clean):
    def plant(s, at):
        s["done"][at(LENGTH + 1):] = 0

    (s,) = check(_planted(clean, plant))
    assert s["done_at"] == 0 and s["bad_cycle"] == LENGTH + 1
    assert s["bad_kinds"] == _kinds("done")


def test_the_expected_row_layout():
    lay = ExpectLayout(5, 2)
    assert (lay.pw, lay.sw, lay.uw) == (3, 1, 3)
    assert lay.lane == 3 + 3 + 1 + 1
    assert lay.width == 5 * 8 + 3 and lay.used_offset == 40
    assert lay.offsets(0) == (0, 3, 6, 7)
    assert lay.offsets(2) == (16, 19, 22, 23)
    wide = ExpectLayout(17, 9)
    assert (wide.pw, wide.sw, wide.uw, wide.lane) == (5, 4, 5, 13)
    assert wide.offsets(16) == (208, 211, 216, 220) and wide.width == 17 * 13 + 5


@pytest.mark.parametrize("width, depth, abits", [(43, 17, 5), (8, 16, 4), (1, 2, 1), (9, 1, 1)])
def test_the_rom_text(width, depth, abits):
    text = rom_verilog(width, depth)
    assert f"input wire [{abits - 1}:0] addr" in text
    assert f"output wire [{width - 1}:0] data" in text
    assert f"reg [{width - 1}:0] mem [0:{depth - 1}];" in text
    assert '$readmemh("pg_expect.hex", mem)' in text and "assign data = mem[addr];" in text
