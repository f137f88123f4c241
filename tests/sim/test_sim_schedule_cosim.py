"""Co-simulation of the schedule fabric on Verilator: one build per size, many schedules."""

import pytest

from pipegossip.model.algorithms.limits import GENERATORS
from pipegossip.model.config import RunConfig
from pipegossip.model.schedules import schedule_of_config
from pipegossip.sim.schedule.cosim import cosim_schedules
from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator


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


def test_cli_runs_allreduce_and_reduce_files_forwarding_accumulators(tmp_path):
    import json
    import subprocess
    import sys

    from pipegossip.model.algorithms.reduce import allreduce_schedule, reduce_schedule
    from pipegossip.model.schedules import save
    from pipegossip.model.schedules.topologies import topology

    _verilator()
    q2 = topology("hypercube", k=2)
    files = [tmp_path / "allreduce.json", tmp_path / "reduce.json"]
    save(allreduce_schedule(q2), files[0])
    save(reduce_schedule(q2, 1), files[1])
    proc = subprocess.run([sys.executable, "-m", "pipegossip", "cosim", "--schedule",
                           *map(str, files), "--format", "json", "--quiet"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["builds"] == 1
    assert [(r["primitive"], r["match"], r["R"], r["cycles"]) for r in out["results"]] == \
        [("allreduce", True, 2, 2), ("reduce", True, 2, 2)]


def test_the_build_key_changes_with_the_public_port_table():
    # A build made with another port table (another ports.vlt) must never be
    # reused: the key covers the table, the top and the fabric, not only the text.
    from pipegossip.hw.ports import Port
    from pipegossip.sim.schedule.cosim import program_build_key
    table = [Port("a", "in", 1), Port("b", "out", 8)]
    key = program_build_key("module t; endmodule", table, "network", "top")
    assert key == program_build_key("module t; endmodule", list(table), "network", "top")
    assert key != program_build_key("module t; endmodule", table[:1], "network", "top")
    assert key != program_build_key("module t; endmodule", [Port("a", "out", 1), table[1]],
                                    "network", "top")
    assert key != program_build_key("module t; endmodule", table, "network-fast", "top")
    assert key != program_build_key("module t; endmodule", table, "network", "other")
    assert key != program_build_key("module u; endmodule", table, "network", "top")
