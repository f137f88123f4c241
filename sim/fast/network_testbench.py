"""cocotb testbench of the network fabric's fast mode: one wake-up per run, none per cycle.

Runs inside the simulator on :class:`~pipegossip.sim.fast.network.NetworkFastTop`,
which loads, runs, checks and reads back by itself. For each run of the job
(JSON named by :data:`JOB_ENV`: the top's inputs and the clock cycles the
run takes) it sets the inputs, pulses ``go``, sleeps that many cycles (a
``Timer``, which does not wake Python at every edge), waits for
``finished`` if need be (at most as long again) and reads the summary
ports once. Imports only cocotb and the standard library.
"""

from __future__ import annotations

import json
import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from .testbench import _cycles

__all__ = ["network_fast_runs", "JOB_ENV"]

#: Environment variable naming the job file.
JOB_ENV = "PIPEGOSSIP_NETWORK_FAST_JOB"
#: Kept equal to :data:`~pipegossip.sim.fast.network.INPUTS` and ``SUMMARY``
#: (a test checks): this module must not import Amaranth.
INPUTS = ("load_base", "load_count", "exp_base", "span", "final_base", "length")
SUMMARY = ("finished", "bad", "bad_check", "bad_cycle", "bad_node", "bad_port",
           "busy_cycles", "done_at")


@cocotb.test()
async def network_fast_runs(dut) -> None:
    """Every run of the job, one after another; writes one summary per run."""
    with open(os.environ[JOB_ENV], encoding="utf-8") as f:
        job = json.load(f)
    Clock(dut.clk, 10, unit="ns", impl="gpi").start()
    dut.go.value = 0
    for k in INPUTS:
        dut[k].value = 0
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 3)  # the registered reset falls behind it
    results = []
    for run in job["runs"]:
        for k in INPUTS:
            dut[k].value = run[k]
        t0 = time.perf_counter()
        dut.go.value = 1
        await RisingEdge(dut.clk)
        dut.go.value = 0
        cycles = run["cycles"]
        await _cycles(dut, cycles)
        waited = cycles + 1
        await ReadOnly()
        while not int(dut.finished.value) and waited < 2 * cycles + 16:
            await RisingEdge(dut.clk)
            waited += 1
            await ReadOnly()
        out = {k: int(dut[k].value) for k in SUMMARY}
        out.update(wall_seconds=time.perf_counter() - t0, waited=waited)
        results.append(out)
        await RisingEdge(dut.clk)
    tmp = job["result_path"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f)
    os.replace(tmp, job["result_path"])
