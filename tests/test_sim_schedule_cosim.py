"""Co-simulation of the schedule fabric on Verilator: one build per size, many schedules."""

import pytest

from pipegossip.model.algorithms.limits import GENERATORS
from pipegossip.model.config import RunConfig
from pipegossip.model.schedules import schedule_of_config
from pipegossip.sim.schedule_cosim import cosim_schedules
from pipegossip.sim.toolchain import ToolchainError, use_verilator


def _verilator():
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(str(e))


def schedules(n: int, random_runs: int = 0):
    """Every generator, the compiled runs the issue names, and optionally random-order runs."""
    out = [(name, g(n)) for name, g in sorted(GENERATORS.items())]
    configs = [("run identity", RunConfig.family(n, "identity")),
               ("run pipelined", RunConfig.family(n, "pipelined")),
               ("run identity + Algorithm 2 + any",
                RunConfig.family(n, "identity", substitute=True, receive="any")),
               ("run pipelined + any", RunConfig.family(n, "pipelined", receive="any"))]
    for seed in range(random_runs):
        configs.append((f"run random seed {seed}", RunConfig.family(n, "random", seed=seed)))
        configs.append((f"run random seed {seed} + Algorithm 2 + any",
                        RunConfig.family(n, "random", seed=seed, substitute=True,
                                         receive="any")))
    return out + [(name, schedule_of_config(c)) for name, c in configs]


def _check(report, expect_schedules):
    bad = [f"{r.name}: {r.verdict.report()}" for r in report.results if not r.verdict.match]
    assert not bad, "\n".join(bad)
    assert len(report.results) == expect_schedules
    assert len(report.builds) == 1  # one build (made now or reused) served them all


def test_n4_every_generator_on_one_build(tmp_path):
    _verilator()
    named = schedules(4)
    report = cosim_schedules(named, depth=16, seed=4)
    _check(report, len(named))


def test_n8_one_build_serves_twenty_schedules():
    _verilator()
    named = schedules(8, random_runs=6)
    assert len(named) >= 20
    report = cosim_schedules(named, depth=64, seed=8)
    _check(report, len(named))
    cyc = {r.name: r.program.cycles for r in report.results}
    assert cyc["cyclic-shift"] == 7 and cyc["run pipelined"] == 3 * 7


@pytest.mark.slow
@pytest.mark.parametrize("n, depth", [(16, 256), (32, 1024)])
def test_large_n_on_one_build(n, depth):
    _verilator()
    named = schedules(n, random_runs=1)
    report = cosim_schedules(named, depth=depth, seed=n)
    _check(report, len(named))
