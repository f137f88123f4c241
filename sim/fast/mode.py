"""The fast co-simulation mode: check in the hardware, report in Python, judge once.

:func:`fast_cosimulate` builds (or reuses) the wrapper top of
:mod:`.checker` around the fabric's Verilog, writes the model's
expected trace (:func:`expected_hex`) into the run's folder for the ROM to
load, runs :mod:`.testbench` (Python wakes once per run, not per
cycle, or once per batch of runs the hardware drives itself,
:mod:`.batch`), turns each run's summary into the one trace record,
:class:`~.record.HwRun` (empty samples, a ``summary``: :func:`fast_record`),
and has the one judge (:func:`~pipegossip.sim.judge.fsm.judge`) hold it against the model.

On a mismatch the failing run is repeated from the start in the per-cycle
mode (:mod:`~pipegossip.sim.fsm.testbench`, the fabric's own build), and that record's verdict
replaces the fast one: the report names the cycle, processor, expected and
got exactly as the per-cycle mode always did. The fast verdict is kept
(:attr:`FastOutcome.fast_verdicts`) to show that both name the same
first mismatch.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
from amaranth.back import verilog as amaranth_verilog

from ...hw.export import plain_internal_names
from ...model.config import RunConfig
from ...model.errors import ConfigError
from .batch import log_verilog
from .build import build_text, fabric_build, fabric_text, simulate_text
from .checker import (BATCH_PORTS, EXPECT_FILE, FAST_TOP, KIND_BITS, NO_PROC, SUMMARY_PORTS,
                      ExpectLayout, FastTop, rom_verilog)
from .testbench import FAST_JOB_ENV
from ..judge.fsm import Verdict, judge, model_result, session_ends
from ..record import HwRun, RunSpec
from ..tools import build_cache
from ..paths import build_root
from ..fsm.runner import (GENERATOR, Build, CosimError, Progress, _check_build_options, build,
                             default_runs, run_build)
from ..tools.simulators import CLOCK_PORTS, Recipe, ports_vlt, sized

__all__ = ["FastOutcome", "fast_cosimulate", "build_fast", "run_fast", "batch_items", "expected_hex",
           "top_text", "run_cycles", "BUILD_RECIPE", "SPEED_RECIPE", "speed_cycles",
           "FASTEST_RECIPE", "fastest_cycles",
           "fast_record", "TAIL", "MODES", "recipe_for"]

MODES = ("fast", "trace")
#: Cycles checked after L (the per-cycle mode's default tail).
TAIL = RunSpec().tail
#: Build recipes of the fast mode, by how many cycles a build will simulate
#: (:func:`recipe_for`). Every fabric port is internal to the wrapper (only
#: its summary is public, its outputs read-only), so Verilator's own
#: optimisation shrinks the C++ a lot and always runs.
BUILD_RECIPE = Recipe()
SPEED_RECIPE = Recipe(opt_fast="-O1")
FASTEST_RECIPE = Recipe(opt_fast="-O2")


def speed_cycles(n: int) -> int:
    """Simulated cycles from which C++ -O1 (:data:`SPEED_RECIPE`) pays for its longer build.

    Measured (pipelined, idle 2-core machine, builds from scratch), C++ -O0
    against -O1: N=16 4.2 s and 211 000 cycles/s against 6.6 s and 457 000
    (break-even 940 000 cycles); N=32 14.1 s and 96 600 against 15.4 s and
    262 000 (200 000); N=64 45.7 s and 8 900 against 52.2 s and 78 000
    (65 000). Unoptimised C++ falls off once vectors outgrow 64 bits (each
    word of a wide value is reached through a call -O0 does not inline):
    N=128 ran 620 cycles/s at -O0. About 200 000 (32/N)^2.
    """
    return max(1, 200_000 * 32 * 32 // (n * n))


def fastest_cycles(n: int) -> int:
    """Simulated cycles from which C++ -O2 (:data:`FASTEST_RECIPE`) pays for its build.

    -O2 against -O1: N=16 11.7 s and 474 000 cycles/s against 6.6 s and
    457 000 (break-even 65 M cycles); N=32 16.4 s and 273 000 against
    15.4 s and 262 000 (6.5 M). About 20 M (32/N)^2, on the safe side.
    """
    return max(1, 20_000_000 * 32 * 32 // (n * n))


def recipe_for(config: RunConfig, cycles: int = 0) -> Recipe:
    """The fast mode's build recipe for ``cycles`` simulated cycles of ``config``.

    :data:`FASTEST_RECIPE` from :func:`fastest_cycles` on, :data:`SPEED_RECIPE`
    from :func:`speed_cycles`, else :data:`BUILD_RECIPE` (a build serves later
    simulations too, but a first one is what a user waits for), split for
    the size (:func:`~pipegossip.sim.tools.simulators.sized`).
    """
    n = config.n
    recipe = (FASTEST_RECIPE if cycles >= fastest_cycles(n)
              else SPEED_RECIPE if cycles >= speed_cycles(n) else BUILD_RECIPE)
    return sized(recipe, n)


def run_cycles(config: RunConfig, runs: Sequence[RunSpec]) -> int:
    """Clock cycles ``runs`` take on the fast top (about; for :func:`recipe_for`)."""
    span = model_result(config).length + TAIL + 1
    return sum(r.idle + 2 + span for r in runs)


#: The ports of the wrapper top that cocotb touches (everything else stays
#: private): the inputs it drives, writable, and the outputs it reads, read-only
#: (see :func:`~pipegossip.sim.tools.simulators.ports_vlt` for why that matters for speed).
WRITABLE = CLOCK_PORTS + ("start", "seed", "hold", "go", "count", "idle")
READABLE = SUMMARY_PORTS + tuple(p for p in BATCH_PORTS if p not in WRITABLE)


def _bits(values: np.ndarray, width: int) -> np.ndarray:
    """``(..., width)`` little-endian bits of ``values``."""
    return ((values[..., None] >> np.arange(width)) & 1).astype(np.uint8)


@lru_cache(maxsize=16)
def expected_hex(config: RunConfig, tail: int = TAIL) -> str:
    """The ROM's contents: one hex row per cycle 0 .. L + ``tail`` (layout in :mod:`.checker`).

    Made from the judge's model run (:func:`~pipegossip.sim.judge.fsm.model_result`): the
    run-table, the deliveries' sessions and the handshake cycles
    (:func:`~pipegossip.sim.judge.fsm.session_ends`).
    """
    model = model_result(config)
    lay = ExpectLayout(config.n, config.sessions)
    n, length = config.n, model.length
    depth = length + tail + 1
    act = np.zeros((depth, n), np.int64)
    peer = np.zeros((depth, n), np.int64)
    act[1:length + 1] = model.table.actions.T
    peer[1:length + 1] = model.table.peers.T
    sess = np.zeros((depth, n), np.int64)
    rows = np.array(model.deliveries.rows(), dtype=np.int64).reshape(-1, 4)
    sess[rows[:, 0], rows[:, 2]] = rows[:, 3]
    take = np.zeros((depth, n), np.int64)
    take[0] = 1  # session 0's word with start
    ends = session_ends(model.table, config.sessions)
    for s in range(config.sessions - 1):
        take[ends[:, s], np.arange(n)] = 1
    used = np.zeros(depth, np.int64)
    used[1:length + 1] = model.utilization
    lane = np.concatenate([_bits(act, 3), _bits(peer, lay.pw), _bits(sess, lay.sw),
                           _bits(take, 1)], axis=2).reshape(depth, n * lay.lane)
    bits = np.concatenate([lane, _bits(used, lay.uw)], axis=1)
    pad = (-bits.shape[1]) % 8
    bits = np.pad(bits, ((0, 0), (0, pad)))
    packed = np.packbits(bits, axis=1, bitorder="little")[:, ::-1]
    digits = (lay.width + 3) // 4
    return "\n".join(r.tobytes().hex()[-digits:] for r in packed) + "\n"


@lru_cache(maxsize=8)
def top_text(config: RunConfig, width: int, fabric: str | None = None) -> str:
    """The fast top's Verilog: ``fabric`` (default the fabric of ``config``), ROM, log, wrapper."""
    if fabric is None:
        fabric = fabric_text(config, width)
    length = model_result(config).length
    lay = ExpectLayout(config.n, config.sessions)
    # The wrapper does not depend on the fabric's text (an instance of it):
    # one per size, sessions, width and L, kept like the fabric's text.
    text = build_cache.cached_text(
        f"pg-fast-top-n{config.n}-k{config.sessions}-w{width}-L{length}",
        dict(kind="fast-top", n=config.n, sessions=config.sessions, width=width,
             length=length, tail=TAIL), GENERATOR + ("pipegossip.sim",),
        lambda: plain_internal_names(amaranth_verilog.convert(
            FastTop(config.n, config.sessions, width, length, TAIL), name=FAST_TOP,
            emit_src=False)),
        build_root())
    return (fabric + "\n" + rom_verilog(lay.width, length + TAIL + 1) + "\n" + log_verilog()
            + f"// fast-mode wrapper top: L={length}, tail={TAIL}\n" + text)


def build_fast(config: RunConfig, width: int = 8, *, fabric: str | None = None,
               name: str | None = None, simulator: str = "verilator",
               recipe: Recipe | None = None, root: Path | None = None,
               progress: Progress | None = None, force: bool = False) -> Build:
    """Build (or reuse) the fast mode's top around ``fabric`` (default: the fabric of ``config``).

    ``config`` sets the expected trace's L (the checker's span); ``fabric``
    may be another text with the fabric's ports (:mod:`.faults`).
    """
    # Refuse a missing simulator before the texts are cached under the build
    # folder: a refused command leaves nothing on disk.
    _check_build_options(simulator, None)
    text = top_text(config, width, fabric)
    recipe = recipe_for(config) if recipe is None else recipe
    return build_text(name or f"{config.slug}-w{width}-fast", text, FAST_TOP, config, width,
                      vlt=ports_vlt(FAST_TOP, WRITABLE, READABLE), simulator=simulator,
                      recipe=recipe, root=root,
                      progress=progress, force=force)


def fast_record(spec: RunSpec, n: int, s: dict, after_reset: bool, idle_rose: bool,
                origin: str) -> HwRun:
    """The trace record of one fast run: no samples, the checker's ``summary``."""
    kinds = [k for i, k in enumerate(KIND_BITS) if s["bad_kinds"] >> i & 1]
    first = None if not s["bad"] else dict(
        cycle=s["bad_cycle"], processor=None if s["bad_proc"] == NO_PROC else s["bad_proc"],
        kinds=kinds or ["trace"])
    summary = dict(first_mismatch=first, finished=bool(s["finished"]), done_at=s["done_at"],
                   busy_cycles=s["busy_cycles"], deliveries=s["deliveries"],
                   used_sum=s["used_sum"], at_rest=not idle_rose,
                   final=dict(busy=s["busy"], done=s["done"], stall=s["stall"]),
                   cycles=s["waited"] + spec.idle, wakes=s["wakes"])
    empty = {k: np.zeros((0, n), np.int64) for k in ("action", "peer")}
    return HwRun(spec=spec, n=n, first_cycle=0, samples=empty,
                 ended="done" if s["done_at"] else "timeout", wall_seconds=s["wall_seconds"],
                 extra=dict(after_reset=after_reset, mode="fast"), origin=origin,
                 summary=summary)


def batch_items(runs: Sequence[RunSpec], batch: bool = True) -> list[dict]:
    """The testbench's job items for ``runs``: single runs and hardware batches.

    Consecutive runs that need nothing from Python (no ``hold``, no spurious
    ``start``, no reset but before the first, the same idle cycles and
    consecutive word seeds) form one batch the hardware drives
    (:mod:`.batch`); the others, or every run when ``batch`` is off, are
    single items the testbench drives itself.
    """
    items: list[dict] = []
    for r in runs:
        seed = (r.word_seed or 0) & 0xFFFFFFFF
        plain = batch and not r.hold and not r.spurious_start
        last = items[-1] if items else None
        if (plain and last is not None and "batch" in last and not r.reset
                and r.idle == last["idle"]
                and seed == (last["word_seed"] + last["batch"]) & 0xFFFFFFFF):
            last["batch"] += 1
            continue
        item = dict(word_seed=seed, idle=r.idle, reset=r.reset, hold=r.hold,
                    spurious_start=r.spurious_start)
        if plain:
            item["batch"] = 1
        items.append(item)
    return items


def run_fast(b: Build, config: RunConfig, width: int, runs: Sequence[RunSpec],
             wake: int | None = None, batch: bool = True) -> list[HwRun]:
    """Simulate ``runs`` on fast build ``b`` (judged by ``config``'s model); one record each.

    ``wake``: cycles Python sleeps between looks at ``finished`` in a single
    run (default the whole checked span, or ``$PIPEGOSSIP_FAST_WAKE``).
    ``batch``: let the hardware drive runs that need nothing from Python
    (:func:`batch_items`); off, Python starts every run itself.
    """
    length = model_result(config).length
    wake = wake or int(os.environ.get("PIPEGOSSIP_FAST_WAKE", "0")) or None
    job = dict(span=length + TAIL + 1, wake=wake, runs=batch_items(runs, batch))
    summaries = simulate_text(b, FAST_TOP, "pipegossip.sim.fast.testbench", job,
                              {EXPECT_FILE: expected_hex(config)}, FAST_JOB_ENV)
    if len(summaries) != len(runs):
        raise CosimError(f"the fast testbench reported {len(summaries)} runs of {len(runs)}")
    out, idle_before = [], 0
    for k, (spec, s) in enumerate(zip(runs, summaries)):
        after_reset = k == 0 or spec.reset
        if after_reset:
            idle_before = 0
        out.append(fast_record(spec, config.n, s, after_reset, s["idle_bad"] > idle_before,
                               f"fast checker on {b.simulator}"))
        idle_before = s["idle_bad"]
    return out


@dataclass
class FastOutcome:
    """A fast co-simulation: its build, the final verdicts, and what led to them.

    ``verdicts[k]`` is the fast verdict of run k when it matched, else the
    per-cycle rerun's verdict; ``fast_verdicts`` are the fast ones;
    ``reruns`` the indices of the runs repeated in the per-cycle mode;
    ``judge_seconds`` the time the judge took on the fast records.
    """

    build: Build
    verdicts: list[Verdict]
    fast_verdicts: list[Verdict]
    hw: list[HwRun]
    sim_seconds: float
    judge_seconds: float
    reruns: list[int] = field(default_factory=list)
    trace_build: Build | None = None


def fast_cosimulate(config: RunConfig, width: int = 8, word_seeds: Sequence[int] = (0,), *,
                    simulator: str = "verilator", against: RunConfig | None = None,
                    spurious_start: bool = False, runs: Sequence[RunSpec] | None = None,
                    fabric: str | None = None, name: str | None = None, rerun: bool = True,
                    root: Path | None = None, progress: Progress | None = None,
                    recipe: Recipe | None = None) -> FastOutcome:
    """Build, simulate with the in-hardware checker, judge; repeat failures per cycle.

    Parameters
    ----------
    against : RunConfig, optional
        Judge (and load the expected trace of) this configuration's model.
    runs : sequence of RunSpec, optional
        Instead of :func:`~pipegossip.sim.fsm.runner.default_runs` of ``word_seeds``.
    fabric, name : str, optional
        A stand-in fabric text and its build name (:mod:`.faults`); the
        per-cycle rerun then builds the same text.
    rerun : bool
        Repeat a failing run in the per-cycle mode for the exact report.
    recipe : Recipe, optional
        Build recipe of the fast top (default :func:`recipe_for` the runs' cycles).
    """
    _check_build_options(simulator, None)
    model_config = against or config
    if against is not None and against.n != config.n:
        raise ConfigError(f"cannot judge an N={config.n} fabric by an N={against.n} model")
    custom = fabric is not None  # a stand-in: the rerun builds the same text
    if fabric is None and against is not None:
        fabric = fabric_text(config, width)
    runs = list(runs) if runs is not None else default_runs(
        model_config, word_seeds, spurious_start=spurious_start)
    if recipe is None:
        recipe = recipe_for(model_config, run_cycles(model_config, runs))
    b = build_fast(model_config, width, fabric=fabric, name=name, simulator=simulator,
                   recipe=recipe, root=root, progress=progress)
    say = progress or (lambda msg: None)
    say(f"simulating {len(runs)} run(s) in fast mode on {simulator} ...")
    t0 = time.monotonic()
    hw = run_fast(b, model_config, width, runs)
    t1 = time.monotonic()
    fast = [judge(model_config, width, r) for r in hw]
    judged = time.monotonic() - t1
    out = FastOutcome(b, list(fast), fast, hw, t1 - t0, judged)
    for k, v in enumerate(fast):
        if v.match or not rerun:
            continue
        if out.trace_build is None:
            say(f"run {k} differs from the model: repeating it cycle by cycle ...")
            out.trace_build = (
                fabric_build(config, width, fabric, (name or "fabric") + "-trace",
                             simulator=simulator, root=root, progress=progress) if custom
                else build(config, width, simulator=simulator, root=root, progress=progress))
        spec = replace(runs[k], reset=True, idle=runs[0].idle)
        (record,) = run_build(out.trace_build, [spec])
        out.verdicts[k] = judge(model_config, width, record)
        out.reruns.append(k)
    return out
