"""Dumps of real simulations read back into the model's run-tables.

* Amaranth's simulator (``Simulator.write_vcd``) on :class:`Fabric`: quick.
* Verilator through cocotb (``pipegossip.sim.fsm.cosim.cosimulate``): one
  configuration, skipped with the reason when the toolchain is missing.
* The golden dump (model run written with the fabric's port names) in VCD
  and FST, for the paper's cases.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from amaranth.sim import Simulator

from pipegossip.hw.fsm.fabric import Fabric
from pipegossip.model import RunConfig, RunResult, RunTable, simulate
from pipegossip.model.paper import paper_cases
from pipegossip.hw.words import tagged_word
from pipegossip.sim.judge.fsm import judge
from pipegossip.waveforms.golden import write_golden_dump
from pipegossip.waveforms.readback import read_dump

def paper_configs() -> list[tuple[str, RunConfig]]:
    return [(c.name, c.config) for c in paper_cases()]


def amaranth_dump(config: RunConfig, path: Path, *, runs: int = 1, hold: int = 0,
                  width: int = 8, cycles: int | None = None) -> Path:
    """Simulate the fabric for ``runs`` back-to-back runs, dumping a VCD.

    The testbench keeps ``valid`` high and presents a processor's next
    session word right after each handshake, as the pinned interface asks.
    """
    n, sessions = config.n, config.sessions
    fabric = Fabric(config, width)
    sim = Simulator(fabric)
    sim.add_clock(1e-8)
    length = simulate(config).length if cycles is None else cycles

    async def testbench(ctx):
        ctx.set(fabric.hold, hold)
        await ctx.tick().repeat(2)
        for _ in range(runs):
            session = [0] * n
            for i in range(n):
                ctx.set(fabric.words[i].payload, tagged_word(i, 0, n, sessions, width))
                ctx.set(fabric.words[i].valid, 1)
            ctx.set(fabric.start, 1)
            for _ in range(length + 1):
                taken = [ctx.get(fabric.words[i].ready) for i in range(n)]
                await ctx.tick()
                ctx.set(fabric.start, 0)
                for i in range(n):
                    if taken[i]:
                        session[i] += 1
                        if session[i] < sessions:
                            ctx.set(fabric.words[i].payload, tagged_word(i, session[i], n, sessions, width))
            await ctx.tick().repeat(2)

    sim.add_testbench(testbench)
    with sim.write_vcd(str(path)):
        sim.run()
    return path


def assert_matches_model(rb, config: RunConfig) -> None:
    model = simulate(config, table=True)
    assert rb.table == model.table
    # Exact trace: the WS/WR peers (targets, awaited senders) too.
    assert np.array_equal(rb.table.actions, model.table.actions)
    assert np.array_equal(rb.table.peers, model.table.peers)
    d, m = rb.deliveries, model.deliveries
    assert d is not None
    for a, b in ((d.step, m.step), (d.src, m.src), (d.dst, m.dst), (d.session, m.session)):
        assert np.array_equal(a, b)
    # The testbench's words make every delivered word predictable.
    want = [tagged_word(int(s), int(k), config.n, config.sessions, 8)
            for s, k in zip(m.src, m.session)]
    assert rb.words.tolist() == want
    assert rb.problems == []
    # The judge holds the read-back's record against the model, every check made.
    verdict = judge(config, 8, rb.record)
    assert verdict.match and verdict.unchecked == [], verdict.report()


AMARANTH_CASES = [
    RunConfig.family(5, "identity"),
    RunConfig.family(5, "pipelined", sessions=3),
    RunConfig.family(8, "identity", receive="any", substitute=True),
    RunConfig.family(6, "random", seed=3, channels=2),
]


@pytest.mark.parametrize("config", AMARANTH_CASES, ids=lambda c: c.slug)
def test_amaranth_dump_reads_back_as_the_model(tmp_path, config):
    rb = read_dump(amaranth_dump(config, tmp_path / "fabric.vcd"))
    assert rb.scope == "bench.top"
    assert rb.missing == []
    assert rb.complete and rb.runs == 1
    assert rb.clock_period == pytest.approx(1e-8)
    assert_matches_model(rb, config)


def test_second_run_of_a_dump(tmp_path):
    config = RunConfig.family(4, "pipelined", sessions=2)
    path = amaranth_dump(config, tmp_path / "two.vcd", runs=2)
    first, second = read_dump(path, run=1), read_dump(path, run=2)
    assert first.runs == second.runs == 2
    assert second.start_time > first.start_time
    assert_matches_model(second, config)
    with pytest.raises(Exception, match="only 2 run"):
        read_dump(path, run=3)


def test_held_processor_shows_stall_and_an_incomplete_run(tmp_path):
    config = RunConfig.family(4, "identity")
    length = simulate(config).length
    cycles = length + 20
    rb = read_dump(amaranth_dump(config, tmp_path / "held.vcd", hold=0b0010, cycles=cycles))
    assert not rb.complete
    # The testbench ticks cycles + 1 times from the start edge, then twice more.
    assert rb.problems[0] == (f"the dump ends after cycle {cycles + 2} of run 1 with busy "
                              "still high")
    assert any(p.startswith("stall is high in cycle") for p in rb.problems)
    assert rb.table != simulate(config, table=True).table


def test_verilator_dump_reads_back_as_the_model(tmp_path):
    runner = pytest.importorskip("pipegossip.sim.fsm.cosim")
    from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(f"Verilator is not usable here: {e}")
    config = RunConfig.family(5, "pipelined", sessions=2)
    wave = tmp_path / "verilator.vcd"
    result = runner.cosimulate(config, waves="vcd", waves_file=wave, word_seeds=(0, 1))
    assert result.match
    for run in (1, 2):
        rb = read_dump(wave, run=run)
        assert rb.runs == 2 and rb.complete
        assert rb.scope == "pipegossip_fabric"  # not Verilator 5's $rootio copy
        assert rb.missing == [] and rb.problems == []
        assert rb.table == simulate(config, table=True).table
        assert np.array_equal(rb.table.peers, simulate(config, table=True).table.peers)


@pytest.mark.parametrize("name, config", paper_configs(), ids=[c[0] for c in paper_configs()])
@pytest.mark.parametrize("suffix", [".vcd", ".fst"])
def test_golden_dump_round_trip(tmp_path, name, config, suffix):
    result = simulate(config, table=True)
    rb = read_dump(write_golden_dump(result, tmp_path / f"{name}{suffix}"))
    assert rb.scope == "TOP.pipegossip_model"
    assert_matches_model(rb, config)


def test_used_port_disagreeing_with_the_trace_is_reported(tmp_path):
    config = RunConfig.family(5, "identity")
    good = simulate(config, table=True)
    used = good.table.used.copy()
    used[2] += 2
    bad = RunResult(config, good.deliveries, used,
                    RunTable(good.table.actions, good.table.peers, used))
    rb = read_dump(write_golden_dump(bad, tmp_path / "bad.vcd"))
    assert rb.problems == ["used shows 4 in cycle 3 but the trace has 2 S/R slots"]
    assert rb.table != good.table  # the used row is part of the comparison


def test_json_has_the_shape_of_run(tmp_path):
    config = RunConfig.family(5, "identity")
    rb = read_dump(write_golden_dump(simulate(config, table=True), tmp_path / "g.vcd"))
    data = rb.to_json()
    ref = simulate(config, table=True).to_json()
    for key in ("N", "L", "mu", "efficiency", "used_slots", "utilization", "table", "deliveries"):
        assert data[key] == ref[key], key
    assert data["source"]["scope"] == "TOP.pipegossip_model"


def test_a_dump_without_delivery_ports_names_the_checks_not_made(tmp_path):
    from pipegossip.sim.record import HwRun

    config = RunConfig.family(4, "pipelined")
    rb = read_dump(write_golden_dump(simulate(config, table=True), tmp_path / "g.vcd"))
    record = rb.record
    kept = {k: v for k, v in record.samples.items() if not k.startswith("d")}
    bare = HwRun(record.spec, record.n, record.first_cycle, kept, record.ended,
                 origin=record.origin)
    verdict = judge(config, 8, bare)
    assert verdict.match
    assert any(u.startswith("delivery (no dvalid") for u in verdict.unchecked)
    assert "not checked" in verdict.report()
    assert "and every delivery" not in verdict.summary()
    # A record without the trace is refused.
    with pytest.raises(ValueError, match="lacks action"):
        HwRun(record.spec, record.n, 0, {"peer": record.samples["peer"]}, "done")
