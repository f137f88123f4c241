"""cocotb testbench of the fast mode: start runs, wake rarely, read the checker's summary.

Runs inside the simulator (``COCOTB_TEST_MODULES``), on the wrapper top
:class:`~pipegossip.sim.fast.checker.FastTop`, whose checker compares every
output of the fabric with the expected trace every cycle. Python is not in
the per-cycle loop: for each run it pulses ``rst`` (when asked), waits the
idle cycles, pulses ``start`` (and a spurious one when asked), then sleeps
K cycles at a time until the checker's ``finished`` output is
high (K defaults to the run's whole checked length, so one wake usually
suffices; a ``Timer`` rather than ``ClockCycles``, which resumes Python at
every edge), and reads the summary ports once. A *batch* item of the job
is driven by the hardware instead (:mod:`.batch`): Python sets the
first word seed, the count and the idle cycles, pulses ``go``, sleeps
until the batch must be over and reads the runs' summaries from the log
file once at the end. The job (JSON, the path in :data:`FAST_JOB_ENV`)
lists the items; the result is one summary dict per run, which
:mod:`.mode` turns into the trace record the judge takes.
"""

from __future__ import annotations

import json
import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge, Timer

from .ports import LOG_FILE, SUMMARY_PORTS, batch_cycles, parse_log

__all__ = ["fast_runs", "FAST_JOB_ENV"]


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""

#: Environment variable naming the job file.
FAST_JOB_ENV = "PIPEGOSSIP_FAST_JOB"
CLOCK_NS = 10


async def _cycles(dut, k: int) -> None:
    """Let ``k`` rising edges pass with one Python wake-up, not ``k``.

    ``ClockCycles`` resumes Python at every edge on the way; a ``Timer`` to
    the middle of the last cycle plus one ``RisingEdge`` does not, and lands
    exactly on the k-th edge (we start right after an edge).
    """
    if k > 1:
        await Timer((k - 1) * CLOCK_NS + CLOCK_NS // 2, unit="ns")
    await RisingEdge(dut.clk)


async def _one_run(dut, run: dict, span: int, wake: int) -> dict:
    dut.seed.value = run["word_seed"] & 0xFFFFFFFF
    dut.hold.value = run.get("hold", 0)
    for _ in range(run["idle"]):
        await RisingEdge(dut.clk)
    t0 = time.perf_counter()
    dut.start.value = 1
    await RisingEdge(dut.clk)  # the edge ending cycle 0
    dut.start.value = 0
    waited = 1
    spurious = run.get("spurious_start")
    if spurious:
        # Pulse start again in cycle `spurious` (the fabric must ignore it).
        if spurious > 1:
            await _cycles(dut, spurious - 1)
        dut.start.value = 1
        await RisingEdge(dut.clk)
        dut.start.value = 0
        waited = spurious + 1
    # The top registers its inputs: the run's cycle 0 is the cycle after start.
    step = max(1, min(wake, span - waited + 1))
    wakes = 0
    while True:
        await _cycles(dut, step)
        waited += step
        wakes += 1
        await ReadOnly()
        if int(dut.finished.value):
            break
        step = max(1, min(wake, 64))
        await RisingEdge(dut.clk)
        waited += 1
    wall = time.perf_counter() - t0
    out = {k: int(getattr(dut, k).value) for k in SUMMARY_PORTS}
    out.update(wall_seconds=wall, waited=waited, wakes=wakes)
    await RisingEdge(dut.clk)
    return out


async def _batch(dut, item: dict, span: int) -> dict:
    """One hardware batch (see :mod:`.batch`); its summaries come from the log."""
    count = item["batch"]
    dut.seed.value = item["word_seed"] & 0xFFFFFFFF
    dut.hold.value = 0
    dut.count.value = count
    dut.idle.value = max(0, item["idle"] - 1)
    t0 = time.perf_counter()
    dut.go.value = 1
    await RisingEdge(dut.clk)
    dut.go.value = 0
    # Fault-free runs take exactly this long; a run that is not lasts at most
    # 2 * span + 16 cycles more (the driver's limit).
    await _cycles(dut, batch_cycles(count, max(0, item["idle"] - 1), span) + 2)
    wakes = 1
    await ReadOnly()
    while int(dut.batch_busy.value):
        await _cycles(dut, span)
        wakes += 1
        await ReadOnly()
    await RisingEdge(dut.clk)
    return dict(count=count, wall_seconds=time.perf_counter() - t0, wakes=wakes)


@cocotb.test()
async def fast_runs(dut) -> None:
    """Every run of the job, back to back; writes one summary per run."""
    with open(os.environ[FAST_JOB_ENV], encoding="utf-8") as f:
        job = json.load(f)
    # The clock in C (cocotb's GPI clock), not a Python task waking twice a cycle.
    Clock(dut.clk, CLOCK_NS, unit="ns", impl="gpi").start()
    dut.start.value = 0
    dut.seed.value = 0
    dut.hold.value = 0
    dut.go.value = 0
    dut.count.value = 0
    dut.idle.value = 0
    span = job["span"]  # cycles 0 .. L + tail are checked
    wake = job.get("wake") or span
    items = []
    for k, run in enumerate(job["runs"]):
        if k == 0 or run["reset"]:
            dut.rst.value = 1
            await ClockCycles(dut.clk, 2)
            dut.rst.value = 0
        if "batch" in run:
            items.append(await _batch(dut, run, span))
        else:
            items.append(await _one_run(dut, run, span, wake))
    results = []
    logged = iter(parse_log(_read(LOG_FILE)))
    for item in items:
        if "count" not in item:
            results.append(item)
            continue
        for _ in range(item["count"]):
            s = next(logged, None)
            if s is None:
                break  # reported by the caller as runs missing
            s.update(wall_seconds=item["wall_seconds"] / item["count"],
                     wakes=item["wakes"] / item["count"])
            results.append(s)
    tmp = job["result_path"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f)
    os.replace(tmp, job["result_path"])
