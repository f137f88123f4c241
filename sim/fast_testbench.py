"""cocotb testbench of the fast mode: start runs, wake rarely, read the checker's summary.

Runs inside the simulator (``COCOTB_TEST_MODULES``), on the wrapper top
:class:`~pipegossip.sim.fast_checker.FastTop`, whose checker compares every
output of the fabric with the expected trace every cycle. Python is not in
the per-cycle loop: for each run it pulses ``rst`` (when asked), waits the
idle cycles, pulses ``start`` (and a spurious one when asked), then sleeps
K cycles at a time until the checker's ``finished`` output is
high (K defaults to the run's whole checked length, so one wake usually
suffices; a ``Timer`` rather than ``ClockCycles``, which resumes Python at
every edge), and reads the summary ports once. The job (JSON, the path in
:data:`FAST_JOB_ENV`) lists the runs; the result is one summary dict per
run, which :mod:`.fast_mode` turns into the trace record the judge takes.
"""

from __future__ import annotations

import json
import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge, Timer

from .fast_checker import SUMMARY_PORTS

__all__ = ["fast_runs", "FAST_JOB_ENV"]

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
    step = max(1, min(wake, span - waited))
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


@cocotb.test()
async def fast_runs(dut) -> None:
    """Every run of the job, back to back; writes one summary per run."""
    with open(os.environ[FAST_JOB_ENV], encoding="utf-8") as f:
        job = json.load(f)
    Clock(dut.clk, CLOCK_NS, unit="ns").start()
    dut.start.value = 0
    dut.seed.value = 0
    dut.hold.value = 0
    span = job["span"]  # cycles 0 .. L + tail are checked
    wake = job.get("wake") or span
    results = []
    for k, run in enumerate(job["runs"]):
        if k == 0 or run["reset"]:
            dut.rst.value = 1
            await ClockCycles(dut.clk, 2)
            dut.rst.value = 0
        results.append(await _one_run(dut, run, span, wake))
    tmp = job["result_path"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f)
    os.replace(tmp, job["result_path"])
