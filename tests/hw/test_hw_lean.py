# amaranth: UnusedElaboratable=no
"""The lean build (``hw verilog --no-trace``): no trace bundles, the same samples elsewhere.

Both builds of each program-driven fabric run the same schedules back to back
in Amaranth's simulator from the same inputs (load writes, start, an item
write while running, the read-back of every slot); every port the lean build
keeps must show the trace build's value in every cycle. The lean Verilog has
exactly the trace build's ports without ``send``/``recv`` (schedule) or
``tx``/``rx`` (network) and lints like it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from amaranth.lib import wiring
from amaranth.sim import Simulator

from pipegossip.cli import main
from pipegossip.hw.lean import TRACE_GROUPS, Lean
from pipegossip.hw.network.fabric import NetworkFabric
from pipegossip.hw.network.load import network_writes
from pipegossip.hw.schedule.fabric import ScheduleFabric
from pipegossip.hw.schedule.load import load_writes
from pipegossip.model.algorithms.allport import allport_gossip
from pipegossip.model.algorithms.limits import cyclic_shift
from pipegossip.model.algorithms.polling import polling_hypercube
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules.ir import load
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.program import compile_schedule
from pipegossip.model.schedules.topologies import topology

from test_hw_export import ALLOWED, lint

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "gossip-n4.json")


def _leaf(obj, path):
    for step in path:
        obj = obj[step] if isinstance(step, int) else getattr(obj, step)
    return obj


def run_samples(dut, jobs, slots: int, n: int, item: bool):
    """Every output of ``dut``'s signature in every cycle of ``jobs`` (load, run, read-back)."""
    outs = [(p, v) for p, m, v in dut.signature.flatten(dut) if m.flow == wiring.Out]
    rows: list[tuple] = []

    async def bench(ctx):
        def sample():
            rows.append(tuple(ctx.get(v) for _, v in outs))

        for writes, cycles in jobs:
            for kind, node, addr, data in writes:
                for f, x in zip(("kind", "node", "addr", "data"), (kind, node, addr, data)):
                    ctx.set(getattr(dut.load, f), x)
                ctx.set(dut.load.valid, 1)
                sample()
                await ctx.tick()
            ctx.set(dut.load.valid, 0)
            ctx.set(dut.start, 1)
            for k in range(cycles + 4):
                if item and k == 2:  # a store write of node 1's own while running
                    ctx.set(dut.item[1].valid, 1)
                    ctx.set(dut.item[1].slot, 1)  # its own slot: no receive overwrites it
                    ctx.set(dut.item[1].word, 0x5A)
                sample()
                await ctx.tick()
                ctx.set(dut.start, 0)
                if item:
                    ctx.set(dut.item[1].valid, 0)
            for v in range(n):
                for x in range(slots):
                    ctx.set(dut.read.node, v)
                    ctx.set(dut.read.slot, x)
                    sample()
                    await ctx.tick()
            sample()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return [p for p, _ in outs], rows


def compare(full, lean, jobs, slots, n, item):
    paths, got = run_samples(lean, jobs, slots, n, item)
    all_paths, want = run_samples(full, jobs, slots, n, item)
    at = [all_paths.index(p) for p in paths]
    assert len(got) == len(want)
    for cycle, (g, w) in enumerate(zip(got, want)):
        expected = tuple(w[i] for i in at)
        if g != expected:
            bad = [("__".join(map(str, paths[i])), g[i], expected[i])
                   for i in range(len(paths)) if g[i] != expected[i]]
            raise AssertionError(f"cycle {cycle}: lean differs at {bad[:5]}")
    return len(got), len(paths)


def test_schedule_fabric_lean_samples_equal_the_trace_builds():
    programs = [compile_schedule(cyclic_shift(4), depth=8, slots=4),
                compile_schedule(load(EXAMPLE), depth=8, slots=4)]
    jobs = [(load_writes(p, seed), p.cycles) for seed, p in enumerate(programs)]
    full = ScheduleFabric(4, 8, 8, 4)
    lean = Lean(ScheduleFabric(4, 8, 8, 4), TRACE_GROUPS["schedule"])
    assert not {"send", "recv"} & set(lean.signature.members)
    cycles, ports = compare(full, lean, jobs, 4, 4, item=True)
    assert cycles > 60 and ports == 7  # busy, done, cycle, length and the read-back


@pytest.mark.parametrize("topo,kinds", [
    (("hypercube", dict(k=3)), ("all-port", "allreduce", "polling")),
    (("mesh", dict(a=2, b=3)), ("allreduce", "all-port")),
])
def test_network_fabric_lean_samples_equal_the_trace_builds(topo, kinds):
    t = topology(topo[0], **topo[1])
    make = {"all-port": lambda: allport_gossip(t), "allreduce": lambda: allreduce_schedule(t),
            "polling": lambda: polling_hypercube(3)}
    scheds = [make[k]() for k in kinds]
    first = [compile_network(s, topology=t) for s in scheds]
    depth, slots = max(p.cycles for p in first), max(max(p.slots for p in first), t.n)
    programs = [compile_network(s, topology=t, depth=depth, slots=slots) for s in scheds]
    jobs = [(network_writes(p, seed), p.cycles) for seed, p in enumerate(programs)]
    full = NetworkFabric(t, 8, depth, slots)
    lean = Lean(NetworkFabric(t, 8, depth, slots), TRACE_GROUPS["network"])
    assert not {"tx", "rx"} & set(lean.signature.members)
    compare(full, lean, jobs, slots, t.n, item=False)


_PORTS = re.compile(r"^\s*(input|output)\s+(?:\[\d+:\d+\]\s*)?(\w+)\s*;", re.M)


def top_ports(text: str, top: str) -> set[tuple[str, str]]:
    body = text[text.index(f"module {top}("):]
    return set(_PORTS.findall(body[:body.index("endmodule")]))


@pytest.mark.parametrize("fabric,args,top,dropped", [
    ("schedule", ["--n", "4", "--depth", "8"], "pipegossip_schedule_fabric", ("send", "recv")),
    ("network", ["--topology", "cycle", "--n", "4", "--depth", "4"],
     "pipegossip_network_fabric", ("tx", "rx")),
])
def test_lean_verilog_lacks_only_the_trace_ports(tmp_path, fabric, args, top, dropped):
    full, lean = tmp_path / "full.v", tmp_path / f"{top}.v"
    assert main(["hw", "verilog", "--fabric", fabric, *args, "-o", str(full)]) == 0
    assert main(["hw", "verilog", "--fabric", fabric, *args, "--no-trace", "-o", str(lean)]) == 0
    a, b = top_ports(full.read_text(), top), top_ports(lean.read_text(), top)
    gone = {p for p in a if p[1].split("__")[0] in dropped}
    assert gone and b == a - gone
    assert "trace=0" in lean.read_text().splitlines()[1]
    assert {k for k, _ in lint(lean)} <= ALLOWED


def test_no_trace_refused_for_the_fsm_fabric(capsys):
    assert main(["hw", "verilog", "--n", "4", "--order", "identity", "--no-trace"]) == 2
    assert "--no-trace" in capsys.readouterr().err
