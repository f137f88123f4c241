"""Run a :class:`~pipegossip.hw.fabric.Fabric` in Amaranth's simulator.

The RTL runner of the glasgow-style pair: the tests hold what it records
against :func:`pipegossip.model.simulate` for the same configuration. It
drives the pinned interface exactly as docs/hw.md describes (start pulse,
one word per processor per session on the ``words`` streams) and records
every output, cycle by cycle.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from amaranth.sim import Simulator

from ..model.config import RunConfig
from ..model.runtable import RunTable
from .fabric import Fabric

__all__ = ["FabricRun", "Delivery", "run_fabric", "tag_word"]

#: Clock period of the simulation (the value is irrelevant to the results).
PERIOD = 1e-6


def tag_word(pid: int, session: int, sessions: int, width: int) -> int:
    """A word that names its processor and session.

    ``(pid * sessions + session)`` through an odd multiplier mod ``2**width``
    is a bijection, so every (processor, session) pair gets its own word
    as long as there are at most ``2**width`` pairs; a misrouted word is
    then caught by value.
    """
    return ((pid * sessions + session) * 0x9E3779B1 + 0x35) % (1 << width)


@dataclass(frozen=True)
class Delivery:
    """One ``delivery`` strobe: in cycle ``step`` processor ``dst`` got ``word``."""

    step: int
    src: int
    dst: int
    session: int
    word: int


@dataclass
class FabricRun:
    """Everything the fabric showed during one run.

    Attributes
    ----------
    config : RunConfig
    width : int
    length : int
        Cycles with ``busy`` high (the run's L).
    table : RunTable
        Action and peer outputs of cycles 1..length, with the ``used``
        output as its used row.
    cycle : numpy.ndarray
        The ``cycle`` output in cycles 1..length.
    stall : numpy.ndarray
        The ``stall`` output in cycles 1..length.
    deliveries : list of Delivery
        Every ``delivery`` strobe, in cycle then receiver order.
    handshakes : list of tuple
        ``(cycle, pid, session)`` of every word the fabric took; cycle 0 is
        the start cycle.
    before : dict
        ``busy``, ``done``, ``cycle`` and the actions in the idle cycle
        before ``start``.
    after : list of dict
        The same in the cycles after the run (``stall`` too).
    finished : bool
        ``busy`` fell within ``max_cycles``.
    """

    config: RunConfig
    width: int
    length: int
    table: RunTable
    cycle: np.ndarray
    stall: np.ndarray
    deliveries: list[Delivery]
    handshakes: list[tuple[int, int, int]]
    before: dict
    after: list[dict] = field(default_factory=list)
    finished: bool = True


def run_fabric(config: RunConfig, width: int = 8, *,
               word: Callable[[int, int], int] | None = None,
               hold: int = 0, max_cycles: int | None = None, after_cycles: int = 2,
               vcd_path: str | os.PathLike | None = None) -> FabricRun:
    """Simulate one run of the fabric for ``config``.

    Parameters
    ----------
    config : RunConfig
    width : int
        Word width.
    word : callable, optional
        ``word(pid, session)``: the payload offered; default :func:`tag_word`.
    hold : int
        Value of the ``hold`` input for the whole run.
    max_cycles : int, optional
        Give up after this many busy cycles (default: the model-independent
        bound ``sessions * N * (N-1)``, which a valid run never exceeds).
    after_cycles : int
        Idle cycles to record after ``busy`` falls.
    vcd_path : path, optional
        Also write a VCD of the run there.
    """
    n, sessions = config.n, config.sessions
    if word is None:
        def word(pid: int, session: int) -> int:
            return tag_word(pid, session, sessions, width)
    if max_cycles is None:
        max_cycles = sessions * n * (n - 1)
    dut = Fabric(config, width)
    actions: list[list[int]] = []
    peers: list[list[int]] = []
    used: list[int] = []
    cycles: list[int] = []
    stalls: list[int] = []
    deliveries: list[Delivery] = []
    handshakes: list[tuple[int, int, int]] = []
    state: dict = {}

    def snapshot(ctx) -> dict:
        return {"busy": ctx.get(dut.busy), "done": ctx.get(dut.done),
                "cycle": ctx.get(dut.cycle), "stall": ctx.get(dut.stall),
                "actions": [ctx.get(dut.action[i]) for i in range(n)],
                "peers": [ctx.get(dut.peer[i]) for i in range(n)],
                "ready": [ctx.get(dut.words[i].ready) for i in range(n)]}

    async def bench(ctx) -> None:
        next_session = [0] * n
        ctx.set(dut.hold, hold)
        for i in range(n):
            ctx.set(dut.words[i].valid, 1)
            ctx.set(dut.words[i].payload, word(i, 0))
        await ctx.tick()
        state["before"] = snapshot(ctx)
        ctx.set(dut.start, 1)
        for i in range(n):
            if ctx.get(dut.words[i].ready):
                handshakes.append((0, i, 0))
                next_session[i] = 1
        await ctx.tick()
        ctx.set(dut.start, 0)
        for i in range(n):
            if next_session[i] < sessions:
                ctx.set(dut.words[i].payload, word(i, next_session[i]))
        t = 0
        while ctx.get(dut.busy) and t < max_cycles:
            t += 1
            actions.append([ctx.get(dut.action[i]) for i in range(n)])
            peers.append([ctx.get(dut.peer[i]) for i in range(n)])
            used.append(ctx.get(dut.used))
            cycles.append(ctx.get(dut.cycle))
            stalls.append(ctx.get(dut.stall))
            took = []
            for j in range(n):
                d = dut.delivery[j]
                if ctx.get(d.valid):
                    deliveries.append(Delivery(t, ctx.get(d.source), j, ctx.get(d.session),
                                               ctx.get(d.word)))
                if ctx.get(dut.words[j].ready):
                    handshakes.append((t, j, next_session[j]))
                    next_session[j] += 1
                    took.append(j)
            await ctx.tick()
            for j in took:
                if next_session[j] < sessions:
                    ctx.set(dut.words[j].payload, word(j, next_session[j]))
        state["finished"] = not ctx.get(dut.busy)
        state["after"] = []
        for _ in range(after_cycles):
            state["after"].append(snapshot(ctx))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(PERIOD)
    sim.add_testbench(bench)
    if vcd_path is not None:
        with sim.write_vcd(os.fspath(vcd_path)):
            sim.run()
    else:
        sim.run()

    length = len(actions)
    act = np.array(actions, dtype=np.uint8).reshape(length, n).T
    peer = np.array(peers, dtype=np.int32).reshape(length, n).T
    table = RunTable(act, peer, used=np.array(used, dtype=np.int64),
                     comments=[config.header(), f"source: Amaranth simulation, width={width}"])
    return FabricRun(config=config, width=width, length=length, table=table,
                     cycle=np.array(cycles, dtype=np.int64),
                     stall=np.array(stalls, dtype=np.int64), deliveries=deliveries,
                     handshakes=handshakes, before=state["before"], after=state["after"],
                     finished=state["finished"])
