# amaranth: UnusedElaboratable=no
"""One budget policy: refuse at once, with the estimate and how to raise it (rows 11, 13)."""

import os
import re
import subprocess
import sys
import tracemalloc

import pytest
from waiting import hang_guard

from pipegossip import cli
from pipegossip.infra.budgets import BudgetError, budget_limit, check_budget, model_bytes


def test_refusal_states_estimate_limit_and_variable(monkeypatch):
    monkeypatch.delenv("PIPEGOSSIP_MAX_TABLE_CELLS", raising=False)
    with pytest.raises(BudgetError) as e:
        check_budget("table-cells", 30_000_000, "the run-table of N=9")
    assert str(e.value) == ("the run-table of N=9 needs about 30,000,000 run-table cells, over "
                            "the limit of 20,000,000 run-table cells (set "
                            "PIPEGOSSIP_MAX_TABLE_CELLS to raise it)")
    monkeypatch.setenv("PIPEGOSSIP_MAX_TABLE_CELLS", "40000000")
    check_budget("table-cells", 30_000_000, "the run-table of N=9")


def test_memory_budget_takes_suffixes(monkeypatch):
    monkeypatch.setenv("PIPEGOSSIP_MAX_MEMORY", "2G")
    assert budget_limit("memory") == 2 << 30
    monkeypatch.setenv("PIPEGOSSIP_MAX_MEMORY", "lots")
    with pytest.raises(Exception, match="optional K/M/G/T suffix"):
        budget_limit("memory")


def test_estimate_covers_a_measured_run():
    # Measured: N=4096 pipelined peaks at 452 MB (README figures).
    assert model_bytes(4096) >= 452_000_000


@pytest.mark.parametrize("n", ["1000000", "1000000000", "20000"])
def test_huge_runs_refused_before_allocating(monkeypatch, capsys, n):
    monkeypatch.delenv("PIPEGOSSIP_MAX_MEMORY", raising=False)
    monkeypatch.setattr("pipegossip.infra.budgets._default_memory", lambda: 8 << 30)
    cli.main(["run", "--n", "4", "--order", "pipelined", "--no-table", "--format", "json"])
    capsys.readouterr()  # the imports are done: what is measured is the refusal alone
    tracemalloc.start()
    try:
        with hang_guard(f"the refusal of N={n}"):
            assert cli.main(["run", "--n", n, "--order", "pipelined", "--no-table"]) == 2
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Before allocating: the run's arrays (GBs) were never made, by bytes, not seconds.
    assert peak < 20 << 20, f"{peak / 2**20:.0f} MiB allocated before the refusal"
    err = capsys.readouterr().err
    assert err.startswith("pipegossip run: error: a golden-model run with N=")
    assert "over the limit of 8.0 GiB (set PIPEGOSSIP_MAX_MEMORY to raise it)" in err


def test_absurd_integers_refused_by_the_option_parser(capsys):
    assert cli.main(["run", "--n", "99999999999999999999", "--order", "pipelined"]) == 2
    assert "out of range" in capsys.readouterr().err


@pytest.mark.parametrize("args,needle", [
    (["verilog", "--n", "4", "--order", "identity", "--width", "100000"], "at most 4096 bits"),
    (["hwsim", "--n", "4", "--order", "identity", "--width", "70000"], "at most 4096 bits"),
    (["cost", "--widths", "100000"], "at most 4096 bits"),
    (["verilog", "--n", "512", "--order", "identity"], "PIPEGOSSIP_MAX_FABRIC_BITS"),
    (["cost", "--sizes", "1000"], "PIPEGOSSIP_MAX_FABRIC_BITS"),
])
def test_hardware_size_and_width_refused_at_once(capsys, args, needle):
    """Row 12: widths of 70000+ used to end in AssertionError/OverflowError or hang."""
    with hang_guard(f"the refusal of {args}"):  # at once: a hang guard, no speed claim
        assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


def test_fabric_refuses_a_width_past_the_table_limit():
    from pipegossip.hw.fsm.fabric import Fabric
    from pipegossip.hw.ports import MAX_WIDTH
    from pipegossip.model import RunConfig

    with pytest.raises(ValueError, match=f"at most {MAX_WIDTH}"):
        Fabric(RunConfig.family(4, "identity"), MAX_WIDTH + 1)


@pytest.mark.parametrize("args,needle", [
    (["cosim", "--n", "4", "--order", "identity", "--runs", "1000000000", "--quiet"],
     "PIPEGOSSIP_MAX_MEMORY"),
    (["cosim", "--n", "4", "--order", "identity", "--runs", "1000000000", "--mode", "trace"],
     "or use the fast mode"),
    (["plot", "scaling", "--max-n", "1000000", "-o", "x.png"], "conjecture21"),
    (["table8", "--max-n", "1048576"], "Table 8 ends at N=2048"),
])
def test_long_runs_refused_with_what_to_do(tmp_path, monkeypatch, capsys, args, needle):
    """Rows 13 and 14: no upper limit (14.5 GB in a minute), or a silent stop at 2048."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pipegossip.infra.budgets._default_memory", lambda: 8 << 30)
    monkeypatch.delenv("PIPEGOSSIP_MAX_MEMORY", raising=False)
    with hang_guard(f"the refusal of {args}"):  # at once: a hang guard, no speed claim
        assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["throughput", "--n", "100000"],
    ["cosim-bench", "--n", "100000"],
    ["verilog-schedule", "--n", "100000", "--depth", "10"],
    ["verilog-schedule", "--n", "4", "--depth", "100000000"],
    ["conjecture21", "--max-n", "100000000", "--workers", "0"],
])
def test_new_commands_refuse_huge_sizes_at_once(tmp_path, monkeypatch, capsys, args):
    """Probes of the commands added since the reliability report: hangs before."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pipegossip.infra.budgets._default_memory", lambda: 8 << 30)
    monkeypatch.delenv("PIPEGOSSIP_MAX_MEMORY", raising=False)
    monkeypatch.delenv("PIPEGOSSIP_MAX_FABRIC_BITS", raising=False)
    with hang_guard(f"the refusal of {args}"):  # at once: a hang guard, no speed claim
        assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "to raise it" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, needle", [
    (["cosim-schedule", "s.json", "--depth", "1000000000"], "to raise it"),
    (["cosim", "--schedule", "s.json", "--depth", "1000000000"], "to raise it"),
    (["cosim-schedule", "s.json", "--seed", "-1"], "must be at least 0"),
    (["prove", "--schedule-family", "cyclic-shift", "--n", "3", "--depth", "100000000"],
     "must be 1..10,000"),
    (["cosim", "--n", "4", "--order", "identity", "--word-seed", "-1"], "must be at least 0"),
    (["cosim-bench", "--n"], "times nothing"),
    (["cosim-bench", "--n", "8", "--runs", "1000000000000"], "to raise it"),
    (["cosim-bench", "--n", "8", "--fast-runs", "1000000000000"], "to raise it"),
    (["cosim-bench", "--n", "8", "--fast-cycles", "100000000000"], "to raise it"),
    (["cosim-bench", "--n", "8", "--fast-cycles", "0"], "at least 1"),
])
def test_schedule_fabric_depths_and_seeds_refused_at_once(tmp_path, monkeypatch, capsys, args,
                                                           needle):
    """Hostile probes: a huge --depth hung (cosim-schedule, prove), a negative seed passed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PIPEGOSSIP_MAX_FABRIC_BITS", raising=False)
    assert cli.main(["schedule", "cyclic-shift", "--n", "4", "-o", "s.json"]) == 0
    capsys.readouterr()
    with hang_guard(f"the refusal of {args}"):  # at once: a hang guard, no speed claim
        assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


@pytest.mark.parametrize("make,needle", [("fifo", "not a regular file"), ("folder", "is a folder")])
def test_check_refuses_fifos_and_folders_without_blocking(tmp_path, capsys, make, needle):
    import os

    target = tmp_path / "s.json"
    os.mkfifo(target) if make == "fifo" else target.mkdir()
    assert cli.main(["check", str(target)]) == 2
    assert needle in capsys.readouterr().err


# ------------------------------------------------- issue 25: budgets before work
HALF_OF_23_GIB = 23 * (1 << 30) // 2  # this project's 23 GiB machines


def refused(args, env=None, monkeypatch=None) -> str:
    """Run ``args`` in-process; assert a one-line exit-2 refusal, at once; return it.

    "At once": the refusal comes before the work (minutes to hours, or out of
    memory), checked by a hang guard, not by a speed (issue 39, item 19).
    """
    import contextlib
    import io
    err = io.StringIO()
    with contextlib.redirect_stderr(err), hang_guard(f"the refusal of {args}"):
        status = cli.main(args)
    assert status == 2, (args, err.getvalue())
    assert err.getvalue().count("\n") == 1, err.getvalue()
    return err.getvalue()


@pytest.mark.parametrize("args", [
    ["schedule", "one-factor", "--n", "16384"],
    ["schedule", "cyclic-shift", "--n", "16384"],
    ["schedule", "min-calls", "--n", "16384"],
    ["schedule", "path-gossip", "--n", "8192"],
    ["schedule", "run", "--n", "8192"],
    ["schedule", "matching", "--topology", "hypercube", "--k", "14"],
    ["schedule", "matching", "--topology", "torus", "--a", "256", "--b", "64"],
])
def test_schedules_past_the_memory_budget_refused_with_the_estimate(tmp_path, monkeypatch, args):
    """Issue 25: these grew past 5 GB (or ran for minutes) inside the documented limits."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pipegossip.infra.budgets._default_memory", lambda: HALF_OF_23_GIB)
    monkeypatch.delenv("PIPEGOSSIP_MAX_MEMORY", raising=False)
    err = refused(args + ["-o", "s.json"])
    assert re.search(r"needs about [0-9.]+ GiB, over the limit of 11.5 GiB \(set "
                     r"PIPEGOSSIP_MAX_MEMORY", err), err
    assert list(tmp_path.iterdir()) == []


def test_schedule_memory_boundary_is_the_estimate(tmp_path, monkeypatch):
    from pipegossip.infra.budgets import gossip_items, schedule_bytes
    monkeypatch.chdir(tmp_path)
    need = schedule_bytes(gossip_items(64), gossip_items(64))
    monkeypatch.setenv("PIPEGOSSIP_MAX_MEMORY", str(need - 1))
    refused(["schedule", "one-factor", "--n", "64", "-o", "s.json"])
    monkeypatch.setenv("PIPEGOSSIP_MAX_MEMORY", str(need))
    assert cli.main(["schedule", "one-factor", "--n", "64", "-o", "s.json"]) == 0


def test_estimates_cover_the_measured_peaks():
    """The calibration in pipegossip/infra/budgets.py (``/usr/bin/time -f %M``, KB)."""
    from pipegossip.infra.budgets import export_bytes, gossip_items, schedule_bytes, verilator_bytes
    from pipegossip.cli.literature import path_cycle_seconds
    kib = 1024
    assert schedule_bytes(gossip_items(2048), gossip_items(2048)) >= 1_996_904 * kib
    assert schedule_bytes(25_000, gossip_items(4096)) >= 2_129_812 * kib  # matching, k=12
    assert model_bytes(8192, compiled=True) >= 1_475_148 * kib
    assert model_bytes(4096, compiled=True) >= 552_764 * kib
    assert verilator_bytes(151_552) >= 747_528 * kib  # schedule fabric, N=64
    assert export_bytes(64) >= 242_328 * kib and export_bytes(128) >= 776_732 * kib
    assert export_bytes(362) >= 6 << 30  # the FSM fabric's generation, width 8
    assert path_cycle_seconds(512) >= 0.85 * 512 / 3  # the six schedules of N=512 alone


@pytest.mark.parametrize("command", [["verilog", "-o", "out"], ["cosim"], ["hwsim"],
                                     ["fpga", "--device", "ice40-up5k", "-o", "out"]])
def test_fabric_generation_past_the_memory_budget(tmp_path, command):
    """Issue 25: N=1024 at width 1 is inside ``fabric-bits`` but needs ~48 GiB to generate.

    In a child with a timeout: were the estimate skipped, the generation
    would run for an hour and then run out of memory.
    """
    env = {**os.environ, "PIPEGOSSIP_MAX_MEMORY": str(HALF_OF_23_GIB)}
    proc = subprocess.run([sys.executable, "-m", "pipegossip", *command, "--n", "1024",
                           "--width", "1", "--order", "pipelined"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr[-2000:]
    assert re.search(r"generating the fabric for N=1,024 needs about 48\.[0-9] GiB, over the "
                     r"limit of 11\.5 GiB \(set PIPEGOSSIP_MAX_MEMORY", proc.stderr), proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_path_cycle_table_past_the_time_budget(monkeypatch, capsys):
    """Issue 25: ``literature-table path-cycle --max-n 1024`` ran past 300 s."""
    monkeypatch.delenv("PIPEGOSSIP_MAX_SECONDS", raising=False)
    err = refused(["literature-table", "path-cycle", "--max-n", "1024"])
    assert "needs about 1,183 seconds, over the limit of 600 seconds (set " \
           "PIPEGOSSIP_MAX_SECONDS" in err
    monkeypatch.setenv("PIPEGOSSIP_MAX_SECONDS", "2")  # N=128: 2.3 s estimated
    refused(["literature-table", "path-cycle"])
    err = refused(["literature-table", "path-cycle", "--time-limit", "2"])
    assert "needs about 3 seconds, over --time-limit 2" in err
    monkeypatch.setenv("PIPEGOSSIP_MAX_SECONDS", "3")
    capsys.readouterr()
    assert cli.main(["literature-table", "path-cycle", "--max-n", "128"]) == 0
    assert capsys.readouterr().out.count("\n") == 128


def test_streams_and_builds_past_the_memory_budget(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pipegossip.infra.budgets._default_memory", lambda: HALF_OF_23_GIB)
    monkeypatch.delenv("PIPEGOSSIP_MAX_MEMORY", raising=False)
    for n in (8, 128):
        assert cli.main(["schedule", "cyclic-shift", "--n", str(n), "-o", f"cs{n}.json"]) == 0
    err = refused(["cosim-schedule", "cs8.json", "--depth", "16", "--stream", "1000000000"])
    assert "cs8.json streamed 1,000,000,000 times needs about" in err
    # The Verilator build of N=128: 5.4 GiB estimated, over a 4 GiB budget.
    monkeypatch.setenv("PIPEGOSSIP_MAX_MEMORY", "4G")
    err = refused(["cosim-schedule", "cs128.json"])
    assert "the Verilator build of the schedule fabric for N=128, depth 128 needs about 5.4 GiB" \
        in err


def test_conjecture21_default_fits_half_of_23_gib(tmp_path, monkeypatch):
    """Its documented default (N up to 16384, two local workers) was refused on 23 GB."""
    import pipegossip.cli.sweep as sweep_cli

    class Started(Exception):
        pass

    def started(*args, **kwargs):
        raise Started

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pipegossip.infra.budgets._default_memory", lambda: HALF_OF_23_GIB)
    monkeypatch.delenv("PIPEGOSSIP_MAX_MEMORY", raising=False)
    monkeypatch.setattr(sweep_cli, "run_sweep", started)
    with pytest.raises(Started):
        sweep_cli.cmd_conjecture21(cli.build_parser().parse_args(
            ["paper", "conjecture21", "--workers", "2"]))
    err = refused(["conjecture21", "--max-n", "24576", "--workers", "2"])
    assert "conjecture21 up to N=24,576 (2 worker(s) at once) needs about" in err


@pytest.mark.parametrize("args", [
    ["hw", "program", "s.json", "--fabric", "network", "-o", "x.hex"],
    ["hw", "verilog", "--fabric", "network", "--topology", "hypercube", "--k", "3",
     "-o", "x.v"],
    ["hw", "fpga", "--fabric", "network", "--topology", "cycle", "--n", "4",
     "--device", "ice40-up5k", "-o", "x"],
])
def test_network_fabric_budget_names_its_own_bits_not_a_crossbar(tmp_path, monkeypatch, capsys,
                                                                  args):
    # the network fabric has links, programs and banks: a refusal that spoke of the
    # crossbar's bits named hardware it does not have
    monkeypatch.chdir(tmp_path)
    assert cli.main(["schedule", "allreduce", "--topology", "cycle", "--n", "4",
                     "-o", "s.json"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("PIPEGOSSIP_MAX_FABRIC_BITS", "100")
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "network fabric" in err and "crossbar" not in err
    assert "bits of links, program memory and store banks, over the limit of 100 bits of " \
           "links, program memory and store banks" in err
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]
