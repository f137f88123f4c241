"""cocotb testbench of the program-driven fabrics: load, run, read back, for every job entry.

Runs inside the simulator (``COCOTB_TEST_MODULES``); the runner
(:func:`pipegossip.sim.schedule.cosim.run_schedule_build`) names a
:class:`~pipegossip.sim.schedule.cosim.ScheduleJob` in the environment
variable ``PIPEGOSSIP_SCHEDULE_JOB``; its ``fabric`` (``schedule`` or
``network``) selects the port table (:data:`~pipegossip.hw.ports.SCHEDULE_PORTS`,
:data:`~pipegossip.hw.ports.NETWORK_PORTS`). After one reset, for every entry it

* drives the entry's load writes, one per clock cycle, on the load port;
* pulses ``start`` and samples every output after ``ReadOnly()`` in every
  cycle from the start cycle (cycle 0) until ``TAIL`` cycles after ``done``
  (or a cycle budget), driving a streaming entry's timed writes (the next
  gossips' words) on the ``item`` ports or the ``load`` port in their cycles;
* reads every node's store, held bits and accumulator back through the read
  port (latency 1);

and writes one :class:`~pipegossip.sim.record.ScheduleRun` (network:
:class:`~pipegossip.sim.network.run.NetworkRun`) per entry. It judges nothing
(:mod:`pipegossip.sim.judge.schedule` and :mod:`pipegossip.sim.judge.network`
do, afterwards).
"""

from __future__ import annotations

import json
import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from ...hw.ports import SCHEDULE_PORTS
from ...hw.schedule.fabric import LATENCY
from ..record import SCHEDULE_LANE_FIELDS, SCHEDULE_SCALAR_FIELDS, schedule_record_field

__all__ = ["schedule_runs"]

CLOCK_NS = 10


def _fabric(job):
    """``(size, port table, group length, scalar fields, lane fields, record maker, item ports)``."""
    if job.fabric == "network":
        from ...hw.ports import NETWORK_PORTS, NetworkSize  # noqa: PLC0415
        from ..network.run import (NETWORK_LINK_FIELDS, NETWORK_NODE_FIELDS,  # noqa: PLC0415
                                   NETWORK_SCALAR_FIELDS, network_record)
        size = NetworkSize(**job.size)
        return (size, NETWORK_PORTS, lambda s: size.ports if s.per_link else size.n,
                NETWORK_SCALAR_FIELDS, NETWORK_LINK_FIELDS + NETWORK_NODE_FIELDS,
                network_record, False)
    from ...hw.ports import ScheduleSize  # noqa: PLC0415
    from .cosim import _record  # noqa: PLC0415
    size = ScheduleSize(**job.size)
    return (size, SCHEDULE_PORTS, lambda s: size.n, SCHEDULE_SCALAR_FIELDS,
            SCHEDULE_LANE_FIELDS, _record, True)


def _handles(dut, table, count, scalar_fields, lane_fields):
    scalars, lanes = {}, {}
    for spec in table:
        f = schedule_record_field(spec.key)
        if f in scalar_fields:
            scalars[f] = dut[spec.key]
        elif f in lane_fields:
            lanes[f] = [dut[spec.verilog_name(i)] for i in range(count(spec))]
    return scalars, lanes


@cocotb.test()
async def schedule_runs(dut) -> None:
    """Run every entry of the job on this one build and write the records."""
    from .cosim import JOB_ENV, ScheduleJob, _run_end, timed_by_cycle  # noqa: PLC0415

    job = ScheduleJob.read(os.environ[JOB_ENV])
    size, table, count, scalar_fields, lane_fields, make_record, has_items = _fabric(job)
    n = size.n
    clk = dut["clk"]
    Clock(clk, CLOCK_NS, unit="ns").start()
    load = {f: dut[f"load__{f}"] for f in ("valid", "kind", "node", "addr", "data")}
    read = {f: dut[f"read__{f}"] for f in ("node", "slot", "word", "held", "acc")}
    start = dut["start"]
    scalars, lanes = _handles(dut, table, count, scalar_fields, lane_fields)
    item = [{f: dut[f"item__{i}__{f}"] for f in ("valid", "slot", "word")}
            for i in range(n if has_items else 0)]
    for h in list(load.values()) + [start, read["node"], read["slot"]] + [
            x for d in item for x in d.values()]:
        h.value = 0
    dut["rst"].value = 1
    for _ in range(2):
        await RisingEdge(clk)
    dut["rst"].value = 0
    results = []
    for run in job.runs:
        t0 = time.perf_counter()
        load["valid"].value = 1
        for kind, node, addr, data in run["writes"]:
            load["kind"].value = kind
            load["node"].value = node
            load["addr"].value = addr
            load["data"].value = data
            await RisingEdge(clk)
        load["valid"].value = 0
        start.value = 1
        rows = {k: [] for k in scalar_fields + lane_fields}
        problems: list[str] = []
        done_at, k = None, 0
        timed = timed_by_cycle(run)
        _drive(load, item, timed.get(0, []))
        while True:
            await ReadOnly()
            for f, h in scalars.items():
                rows[f].append(_int(h, f, k, problems))
            for f, hs in lanes.items():
                rows[f].append([_int(h, f, k, problems) for h in hs])
            done_at, ended = _run_end(rows["done"], k, done_at, run)
            if ended:
                break
            await RisingEdge(clk)
            start.value = 0
            k += 1
            _drive(load, item, timed.get(k, []))
        await RisingEdge(clk)
        start.value = 0
        _drive(load, item, [])
        store = [[0] * size.slots for _ in range(n)]
        held = [[0] * size.slots for _ in range(n)]
        acc = [0] * n
        for v in range(n):
            for x in range(size.slots):
                read["node"].value = v
                read["slot"].value = x
                await RisingEdge(clk)
                await ReadOnly()  # latency 1: the answer is there after the edge
                store[v][x] = _int(read["word"], "read_word", None, problems)
                held[v][x] = _int(read["held"], "read_held", None, problems)
                acc[v] = _int(read["acc"], "read_acc", None, problems)
                await FallingEdge(clk)  # leave the read-only phase before driving again
        rec = make_record(run, size, rows, store, held, acc, ended, time.perf_counter() - t0,
                          f"cocotb {cocotb.SIM_NAME}")
        rec.problems = problems
        results.append(rec.to_json())
        dut._log.info("%s: %s after %d samples (latency %d)", run["name"], ended, k + 1, LATENCY)
    tmp = job.result_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f)
    os.replace(tmp, job.result_path)


def _drive(load: dict, item: list[dict], writes: list) -> None:
    """Drive this cycle's timed writes (and nothing else) on the item and load ports."""
    on = {int(w[2]): w for w in writes if w[1] == 1}
    for i, port in enumerate(item):
        w = on.get(i)
        port["valid"].value = int(w is not None)
        if w is not None:
            port["slot"].value = int(w[3])
            port["word"].value = int(w[4])
    shared = [w for w in writes if w[1] == 0]
    load["valid"].value = int(bool(shared))
    if shared:
        _, _, node, slot, word = shared[0]
        load["kind"].value = 1  # LoadKind.ITEM
        load["node"].value = int(node)
        load["addr"].value = int(slot)
        load["data"].value = int(word)


def _int(handle, name: str, cycle, problems: list[str]) -> int:
    value = handle.value
    if not value.is_resolvable:
        problems.append(f"{name} is {value} at cycle {cycle}")
        return 0
    return int(value)
