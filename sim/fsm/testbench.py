"""cocotb testbench of the generated fabric: driver and monitor.

This module runs inside the simulator (loaded by cocotb through
``COCOTB_TEST_MODULES``); the runner (:mod:`pipegossip.sim.fsm.runner`) starts it
with the path of a :class:`~pipegossip.sim.record.Job` in the environment
variable ``PIPEGOSSIP_COSIM_JOB``. For every requested run it

* drives the tagged words (:class:`~pipegossip.hw.words.WordScheme`) on the
  ``words`` streams: session 0's word together with ``start``, and the next
  session's word right after each handshake (``ready & valid`` at a rising
  edge), with ``valid`` low once a processor has no word left;
* pulses ``start`` for one cycle, and optionally once more while busy;
* samples every output after ``ReadOnly()`` in every cycle, from a few idle
  cycles before the start until a few cycles after ``done`` (or the watchdog,
  or a cycle budget), and writes the samples to the job's result file.

It judges nothing: the judge (:mod:`pipegossip.sim.judge.fsm`) holds the samples
against the golden model
after the simulator has exited, so a failing comparison never depends on
simulator state, and the same samples can be inspected later.
"""

from __future__ import annotations

import json
import os
import time

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from ...hw.ports import IN, OUT, lane_names, port_spec, scalar_names
from ...hw.words import tagged_words
from ..record import (JOB_ENV, LANE_FIELDS, SCALAR_FIELDS, WORD_FIELDS, HwRun, Job, RunSpec,
                      record_field)

__all__ = ["gossip_runs"]

#: Clock period; any value works, 10 ns makes waveforms easy to read.
CLOCK_NS = 10


class _Ports:
    """Handles of the fabric's top-level ports, named by the port table (:mod:`~pipegossip.hw.ports`).

    ``outs`` and ``lanes`` (keyed by record field) are every output the
    monitor samples; the inputs are driven by :class:`_Driver`, which
    reports what it drives.
    """

    def __init__(self, dut, n: int):
        self.clk = dut["clk"]
        self.rst = dut["rst"]
        self.start = dut["start"]
        self.hold = dut["hold"]
        self.outs = {record_field(k): dut[k] for k in scalar_names(OUT)}
        self.lanes = {record_field(k): [dut[port_spec(k).verilog_name(i)] for i in range(n)]
                      for k in lane_names(OUT)}
        lane_in = {record_field(k): [dut[port_spec(k).verilog_name(i)] for i in range(n)]
                   for k in lane_names(IN)}
        self.payload = lane_in["payload"]
        self.valid = lane_in["valid"]


class _Monitor:
    """Collects one run's samples, one call of :meth:`sample` per cycle."""

    def __init__(self, ports: _Ports, n: int):
        self.ports = ports
        self.n = n
        self.rows: dict[str, list] = {k: [] for k in SCALAR_FIELDS + LANE_FIELDS}

    def sample(self, driven: dict) -> dict:
        """Read every output now (after ``ReadOnly``); ``driven`` adds the inputs."""
        row = {k: int(h.value) for k, h in self.ports.outs.items()}
        for name, handles in self.ports.lanes.items():
            row[name] = [int(h.value) for h in handles]
        row.update(driven)
        for k, v in row.items():
            self.rows[k].append(v)
        return row

    def samples(self) -> dict[str, np.ndarray]:
        out = {}
        for k, v in self.rows.items():
            out[k] = np.array(v, dtype=object if k in WORD_FIELDS else np.int64)
        return out


class _Driver:
    """Owns the inputs; remembers what it drives so the monitor can record it."""

    def __init__(self, ports: _Ports, words: list[list[int]]):
        self.ports = ports
        self.words = words
        self.n = len(words)
        self.start = 0
        self.hold = 0
        self.next_session = [0] * self.n
        self.valid = [0] * self.n
        self.payload = [0] * self.n

    def set_start(self, value: int) -> None:
        self.start = value
        self.ports.start.value = value

    def set_hold(self, value: int) -> None:
        self.hold = value
        self.ports.hold.value = value

    def present(self, i: int) -> None:
        """Offer processor ``i``'s next word, or drop ``valid`` when none is left."""
        s = self.next_session[i]
        if s < len(self.words[i]):
            self.payload[i] = self.words[i][s]
            self.valid[i] = 1
            self.ports.payload[i].value = self.payload[i]
        else:
            self.valid[i] = 0
        self.ports.valid[i].value = self.valid[i]

    def idle_inputs(self) -> None:
        self.set_start(0)
        self.set_hold(0)
        for i in range(self.n):
            self.valid[i] = 0
            self.payload[i] = 0
            self.ports.valid[i].value = 0
            self.ports.payload[i].value = 0

    def driven(self) -> dict:
        return dict(start=self.start, hold=self.hold, valid=list(self.valid),
                    payload=list(self.payload))


async def _reset(ports: _Ports, driver: _Driver) -> None:
    driver.idle_inputs()
    ports.rst.value = 1
    for _ in range(2):
        await RisingEdge(ports.clk)
    ports.rst.value = 0


async def _one_run(ports: _Ports, n: int, sessions: int, width: int, spec: RunSpec,
                   after_reset: bool) -> HwRun:
    words = tagged_words(n, sessions, width, spec.word_seed)
    driver = _Driver(ports, words)
    monitor = _Monitor(ports, n)
    driver.idle_inputs()
    t0 = time.perf_counter()
    # We are right after a rising edge: sample the idle cycles first.
    for _ in range(spec.idle):
        await ReadOnly()
        monitor.sample(driver.driven())
        await RisingEdge(ports.clk)

    driver.set_hold(spec.hold)
    driver.set_start(1)
    for i in range(n):
        driver.present(i)
    cycle = 0
    done_at = stall_at = None
    ended = "timeout"
    while True:
        await ReadOnly()
        row = monitor.sample(driver.driven())
        taken = [i for i in range(n) if row["ready"][i] and row["valid"][i]]
        if done_at is None and row["done"] and cycle > 0:
            done_at = cycle
        if stall_at is None and row["stall"]:
            stall_at = cycle
        if done_at is not None and cycle - done_at >= spec.tail:
            ended = "done"
            break
        if (stall_at is not None and spec.stop_on_stall is not None
                and cycle - stall_at >= spec.stop_on_stall):
            ended = "stall"
            break
        if cycle >= spec.max_cycles:
            break
        await RisingEdge(ports.clk)
        cycle += 1
        # The handshakes of the edge just passed: offer the next words.
        for i in taken:
            driver.next_session[i] += 1
            driver.present(i)
        driver.set_start(1 if cycle == spec.spurious_start else 0)
    wall = time.perf_counter() - t0
    await RisingEdge(ports.clk)
    driver.idle_inputs()
    return HwRun(spec=spec, n=n, first_cycle=-spec.idle, samples=monitor.samples(),
                 ended=ended, wall_seconds=wall, extra=dict(after_reset=after_reset),
                 origin=f"cocotb {cocotb.SIM_NAME}")


@cocotb.test()
async def gossip_runs(dut) -> None:
    """Run every :class:`RunSpec` of the job and write the samples."""
    job = Job.read(os.environ[JOB_ENV])
    config = job.run_config()
    ports = _Ports(dut, config.n)
    Clock(ports.clk, CLOCK_NS, unit="ns").start()
    driver = _Driver(ports, [[] for _ in range(config.n)])
    results = []
    for k, spec in enumerate(job.runs):
        after_reset = k == 0 or spec.reset
        if after_reset:
            await _reset(ports, driver)
        results.append(await _one_run(ports, config.n, config.sessions, job.width, spec,
                                      after_reset))
        dut._log.info("run %d (words seed %d): %s after %d samples", k, spec.word_seed,
                      results[-1].ended, len(results[-1].samples["busy"]))
    tmp = job.result_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump([r.to_json() for r in results], f)
    os.replace(tmp, job.result_path)
