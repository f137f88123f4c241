"""Run a :class:`~pipegossip.hw.fsm.fabric.Fabric` in Amaranth's simulator, into a trace record.

The quick producer of :class:`~pipegossip.sim.record.HwRun` (no Verilog, no
external simulator): ``hwsim`` and ``tests/hw/test_hw_fabric.py`` hand what it
records to :func:`pipegossip.sim.judge.fsm.judge`. It drives the pinned interface
as docs/hw.md describes (start pulse, one word per processor per session on
the ``words`` streams, words from :mod:`pipegossip.hw.words`) and samples
every port of the table (:mod:`pipegossip.hw.ports`) once per cycle, with
the same cycle numbering as the cocotb testbench: cycle 0 is the start
cycle, ``idle`` cycles before it are negative.

Unlike the cocotb driver, ``valid`` stays high for the whole run (a processor
with no word left keeps offering its last one), so every cycle in which the
fabric raises ``ready`` counts as a handshake and a spurious ``ready`` is
caught by the judge.
"""

from __future__ import annotations

import os
import time

import numpy as np
from amaranth.sim import Simulator

from ...hw.fsm.fabric import Fabric
from ...hw.ports import OUT, lane_names, port_spec, scalar_names
from ...hw.words import WordScheme
from ...model.config import RunConfig
from ..record import LANE_FIELDS, SCALAR_FIELDS, WORD_FIELDS, HwRun, RunSpec, record_field

__all__ = ["run_fabric", "ORIGIN"]

#: Clock period of the simulation (the value is irrelevant to the results).
PERIOD = 1e-6
#: The record's ``origin``.
ORIGIN = "Amaranth simulator"


def _handle(dut: Fabric, key: str, i: int | None = None):
    """The signal of port-table entry ``key`` (of processor ``i``)."""
    spec = port_spec(key)
    group = getattr(dut, spec.group)
    if i is not None:
        group = group[i]
    return group if spec.field is None else getattr(group, spec.field)


def run_fabric(config: RunConfig, width: int = 8, *, word_seed: int = 0, hold: int = 0,
               max_cycles: int | None = None, idle: int = 1, tail: int = 2,
               vcd_path: str | os.PathLike | None = None) -> HwRun:
    """Simulate one run of the fabric for ``config`` after reset.

    Parameters
    ----------
    config : RunConfig
    width : int
        Word width.
    word_seed : int
        Seed of the tagged words (:class:`~pipegossip.hw.words.WordScheme`).
    hold : int
        Value of the ``hold`` input for the whole run.
    max_cycles : int, optional
        Give up when still busy after this many cycles after the start (default: the
        model-independent bound ``sessions * N * (N-1)``, which a valid run
        never exceeds); the record then ends ``"timeout"``.
    idle : int
        Idle cycles sampled before the start cycle.
    tail : int
        Cycles sampled from the one in which ``done`` rose (``busy`` fell), at least 1.
    vcd_path : path, optional
        Also write a VCD of the run there.

    Returns
    -------
    HwRun
        Every port, cycle ``-idle`` first; ``ended`` is ``"done"`` or ``"timeout"``.
    """
    n, sessions = config.n, config.sessions
    words = WordScheme(n, sessions, width, word_seed)
    if max_cycles is None:
        max_cycles = sessions * n * (n - 1)
    spec = RunSpec(word_seed=word_seed, reset=True, idle=idle, tail=tail, max_cycles=max_cycles,
                   hold=hold)
    dut = Fabric(config, width)
    outs = {record_field(k): _handle(dut, k) for k in scalar_names(OUT)}
    lanes = {record_field(k): [_handle(dut, k, i) for i in range(n)] for k in lane_names(OUT)}
    rows: dict[str, list] = {k: [] for k in SCALAR_FIELDS + LANE_FIELDS}
    state: dict = {"ended": "timeout"}

    def sample(ctx, driven: dict) -> dict:
        row = {k: ctx.get(s) for k, s in outs.items()}
        row.update({k: [ctx.get(s) for s in sigs] for k, sigs in lanes.items()})
        row.update(driven)
        for k, v in row.items():
            rows[k].append(v)
        return row

    async def bench(ctx) -> None:
        session = [0] * n
        payload = [words.word(i, 0) for i in range(n)]
        ctx.set(dut.hold, hold)
        for i in range(n):
            ctx.set(dut.words[i].valid, 1)
            ctx.set(dut.words[i].payload, payload[i])

        def driven(start: int) -> dict:
            return dict(start=start, hold=hold, valid=[1] * n, payload=list(payload))

        for _ in range(idle):
            sample(ctx, driven(0))
            await ctx.tick()
        ctx.set(dut.start, 1)
        done_at = None
        cycle = 0
        while True:
            row = sample(ctx, driven(int(cycle == 0)))
            if done_at is None and cycle > 0 and not row["busy"]:
                done_at = cycle
            if done_at is not None and cycle - done_at + 1 >= tail:
                state["ended"] = "done"
                break
            if done_at is None and cycle > max_cycles:
                break
            await ctx.tick()
            cycle += 1
            ctx.set(dut.start, 0)
            # The handshakes of the edge just passed: offer the next words.
            for i in np.flatnonzero(row["ready"]):
                session[i] += 1
                if session[i] < sessions:
                    payload[i] = words.word(int(i), session[i])
                    ctx.set(dut.words[i].payload, payload[i])

    sim = Simulator(dut)
    sim.add_clock(PERIOD)
    sim.add_testbench(bench)
    t0 = time.perf_counter()
    if vcd_path is not None:
        with sim.write_vcd(os.fspath(vcd_path)):
            sim.run()
    else:
        sim.run()
    samples = {k: _array(k, v, n) for k, v in rows.items()}
    return HwRun(spec=spec, n=n, first_cycle=-idle, samples=samples, ended=state["ended"],
                 wall_seconds=time.perf_counter() - t0, extra=dict(after_reset=True),
                 origin=ORIGIN)


def _array(name: str, values: list, n: int) -> np.ndarray:
    """One field's samples: ``(T,)`` or ``(T, N)``; words stay Python ints (may exceed 64 bits)."""
    arr = np.array(values, dtype=object if name in WORD_FIELDS else np.int64)
    return arr.reshape(len(values), n) if name in LANE_FIELDS else arr
