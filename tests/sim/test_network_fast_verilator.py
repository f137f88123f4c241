"""The network fabric's fast mode on Verilator: the same first mismatch as the trace mode.

path(4) polling with every fault kind, one fast simulation per driver (the
C++ loop the fast mode uses, and cocotb: the same summaries, field for
field) and one trace simulation (one build each, cached), plus the command
line's fast default.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipegossip.hw.network.fabric import network_size
from pipegossip.model.schedules import save
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.sim.judge.network import judge_network, mismatch_place
from pipegossip.sim.network.cosim import build_network_fabric, run_network_build
from pipegossip.sim.network.fast import (build_network_fast, build_network_native, fast_place,
                                         rom_depths, rom_rows, run_fast_build, run_fast_native)
from pipegossip.sim.network.run import FAULTS, faulty_writes, network_job
from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator

sys.path.insert(0, str(Path(__file__).parent))
from test_sim_network_cosim import polling_path4  # noqa: E402

SEED = 5


def _verilator():
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(str(e))


def test_every_fault_has_the_same_first_mismatch_in_both_modes_on_verilator():
    _verilator()
    p = compile_network(polling_path4(), depth=8, slots=4)
    jobs = [network_job("clean", p, SEED)] + [
        network_job(f"{f}-{skip}", p, SEED, faulty_writes(p, f, SEED, skip)) for f in FAULTS
        for skip in ((0, 2) if f in ("drop", "misroute", "combine") else (0,))]
    programs = [p] * len(jobs)
    size = network_size(p.topology, p.width, p.depth, p.slots)
    roms, _ = rom_rows(programs, jobs, size)
    fast = run_fast_native(build_network_native(p, size, rom_depths(roms)), programs, jobs)
    by_cocotb = run_fast_build(build_network_fast(p, size, rom_depths(roms)), programs, jobs)
    trace = run_network_build(build_network_fabric(p, size), programs, seed=SEED, jobs=jobs)
    for a, b in zip(fast, by_cocotb):
        assert {k: a[k] for k in b if k != "wall_seconds"} == \
            {k: b[k] for k in b if k != "wall_seconds"}
    assert fast[0]["finished"] and fast_place(fast[0]) is None
    assert judge_network(p, trace[0]).match
    assert fast[0]["busy_cycles"] == trace[0].busy_cycles
    places = []
    for j, s, r in zip(jobs[1:], fast[1:], trace[1:]):
        v = judge_network(p, r)
        assert not v.match, j["name"]
        assert fast_place(s) == mismatch_place(v.first_mismatch), (j["name"], v.first_mismatch)
        places.append(fast_place(s))
    assert {x[0] for x in places} >= {"trace", "acc", "final_held", "tx_word"}


@pytest.mark.slow
def test_the_command_line_runs_the_fast_mode_by_default(tmp_path):
    _verilator()
    f = tmp_path / "poll.json"
    save(polling_path4(), f)
    proc = subprocess.run([sys.executable, "-m", "pipegossip", "sim", "cosim", "--fabric",
                           "network", "--schedule", str(f), "--depth", "8", "--format", "json",
                           "--quiet", "--fault", "acc"], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    (res,) = out["results"]
    assert out["mode"] == "fast" and out["reruns"] == [str(f)]
    first = res["first_mismatch"]
    assert res["fast_first_mismatch"] == ["acc", first["cycle"], first["processor"], None]


@pytest.mark.slow
def test_the_bench_times_both_modes_on_the_same_runs():
    _verilator()
    from pipegossip.sim.network.bench import bench_network
    rows = bench_network([("poll", polling_path4())], runs=2, fast_runs=5)
    assert [(r.mode, r.runs) for r in rows] == [("trace", 2), ("fast", 5), ("bare", 5)]
    assert rows[0].cycles_per_run == rows[1].cycles_per_run == rows[2].cycles_per_run > 0
    for r in rows:
        assert 0 < r.testbench_seconds <= r.sim_seconds
        assert r.cycles_per_second >= r.end_to_end > 0
