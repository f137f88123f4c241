# amaranth: UnusedElaboratable=no
"""`pipegossip fpga --fabric schedule` and `pipegossip fpga-compare`: options refused
before any tool runs, the comparison's plumbing with a stand-in flow, and one real
small build of the schedule fabric through YoWASP.

(Verilator lint of the schedule fabric's Verilog is
``tests/hw/test_hw_schedule_fabric.py::test_verilator_lint_reports_only_the_waived_warnings``.)
"""

import json
import subprocess
import sys

import pytest
from amaranth.lib.wiring import In

from pipegossip.cli import main
from pipegossip.hw.fpga import compare
from pipegossip.hw.fpga.bare_top import BareTop
from pipegossip.hw.fpga.flow import bare_digest, prepare, prepare_schedule
from pipegossip.hw.fpga.outputs import REPORT_NAME
from pipegossip.hw.fpga.tools import FlowError
from pipegossip.hw.schedule import ScheduleFabric
from pipegossip.model import RunConfig
from pipegossip.model.engine import simulate


def cli(*args):
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True)


def refused(capsys, *args) -> str:
    """Run the command in this process; it must exit 2 with one line on stderr."""
    capsys.readouterr()
    assert main(list(args)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


REFUSED = [
    (["--fabric", "schedule", "--order", "pipelined"], "--order"),
    (["--fabric", "schedule", "--receive", "any", "--substitute"], "--receive, --substitute"),
    (["--fabric", "schedule", "--sessions", "2"], "--sessions"),
    (["--fabric", "schedule", "--channels", "1"], "--channels"),
    (["--fabric", "schedule", "--board", "icebreaker"], "--board"),
    (["--fabric", "schedule", "--no-trace"], "--no-trace"),
    (["--fabric", "schedule", "--depth", "0"], "--depth"),
    (["--fabric", "schedule", "--n", "1"], "n must be at least 2"),
    (["--fabric", "schedule", "--n", "100000"], "PIPEGOSSIP_MAX_FABRIC_BITS"),
    (["--fabric", "schedule", "--device", "ice40-hx8k"], "device"),
    (["--fabric", "schedule", "--clock", "0"], "clock"),
    (["--fabric", "gates"], "invalid choice"),
    (["--order", "pipelined", "--depth", "8"], "--depth applies to --fabric schedule only"),
    (["--order", "pipelined", "--slots", "2", "--depth", "8"], "--depth, --slots apply"),
    ([], "--order"),
    (["--fabric", "fsm"], "--order"),
]


@pytest.mark.parametrize("extra,word", REFUSED, ids=[w for _, w in REFUSED])
def test_options_of_the_other_fabric_are_one_line_exit_2(tmp_path, capsys, extra, word):
    out = tmp_path / "out"
    line = refused(capsys, "fpga", "--n", "4", *extra, "-o", str(out))
    assert line.startswith("pipegossip fpga: error: ") and word in line
    assert not out.exists()


def test_help_says_what_the_schedule_fabric_refuses(capsys):
    with pytest.raises(SystemExit):
        main(["fpga", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--fabric {fsm,schedule,network}" in text
    assert "the configuration options and --no-trace are refused" in text
    assert "--schedule FILE.json" in text and "FAIL (node K)" in text


def test_schedule_job_is_the_schedule_fabric_in_the_bare_boundary():
    job = prepare_schedule(4, 4, 8, device="ecp5-25k", pnr_seed=3)
    assert job.fabric == "schedule" and job.board is None and job.pnr_seed == 3
    assert job.device.name == "ecp5-25k"
    assert job.slug == "schedule-n4-d8"
    assert job.header == "schedule fabric n=4 depth=8 slots=4"
    assert job.config_json() == {"fabric": "schedule", "N": 4, "width": 4, "depth": 8,
                                 "slots": 4}
    assert isinstance(job.top, BareTop) and isinstance(job.top._dut, ScheduleFabric)
    assert job.top._tied == {} and job.top._unobserved == ()
    assert prepare_schedule(4, 4, 8, slots=6).slug == "schedule-n4-d8-s6"
    # The digest follows the netlist: another depth is another design.
    assert bare_digest(job) != bare_digest(prepare_schedule(4, 4, 16, device="ecp5-25k",
                                                            pnr_seed=3))
    fsm = prepare(RunConfig.family(4, "pipelined"), 4)
    assert fsm.fabric == "fsm" and fsm.slug == "n4-pipelined-ordered"
    with pytest.raises(ValueError, match="depth"):
        prepare_schedule(4, 4, 0)

def test_router_option_reaches_nextpnr_and_the_digest_only_when_given(monkeypatch):
    from pipegossip.hw.fpga import flow
    job = prepare_schedule(4, 4, 8, device="ecp5-25k")
    default = bare_digest(job)
    assert "--router" not in flow._bare_inputs(job)["options"]
    two = prepare_schedule(4, 4, 8, device="ecp5-25k")
    two.router = "router2"
    options = flow._bare_inputs(two)["options"]
    assert options[options.index("--router") + 1] == "router2"
    # another router is another measurement: the stored results must not match it
    assert bare_digest(two) != default
    assert flow._report_head(two, "bare")["router"] == "router2"
    assert "router" not in flow._report_head(job, "bare")
    bad = prepare_schedule(4, 4, 8, device="ecp5-25k")
    bad.router = "router9"
    with pytest.raises(ValueError, match="router9"):
        flow._bare_inputs(bad)


def test_progress_names_the_routing_phase_of_either_router():
    # router2 prints no "Routing N arcs": its hour in the router must not read
    # as "refining placement"
    from pipegossip.hw.fpga.tools import _PHASES

    def phase(line):
        return next((name for rx, name in _PHASES["nextpnr"] if rx.search(line)), None)
    assert phase("Info: Running router2...") == "routing"
    assert phase("Info: Routing 58596 arcs.") == "routing"
    assert phase("Info: Running simulated annealing placer.") == "refining placement"
    assert phase("Info:     iter=12 wires=66254 overused=370 overuse=370 archfail=NA") is None


def test_router_option_is_checked_by_the_command_line(tmp_path, capsys):
    line = refused(capsys, "hw", "fpga", "--fabric", "schedule", "--n", "4", "--router",
                   "astar", "-o", str(tmp_path / "o"))
    assert "astar" in line and "router2" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("text,word", [("ice40:8", "DEVICE:N"), ("ice40-up5k:x", "DEVICE:N"),
                                       ("ice40-up5k:1", "at least 2"),
                                       ("ice40-up5k:4,ice40-up5k:4", "twice")])
def test_bad_targets_are_refused(tmp_path, capsys, text, word):
    with pytest.raises(ValueError, match=word):
        compare.parse_targets(text)
    assert word in refused(capsys, "fpga-compare", "--targets", text, "-o", str(tmp_path / "c"))
    assert not (tmp_path / "c").exists()


def test_compare_refuses_a_target_over_the_budget_before_any_work(tmp_path, capsys):
    line = refused(capsys, "fpga-compare", "--targets", "ecp5-25k:5000", "-o", str(tmp_path / "c"))
    assert "PIPEGOSSIP_MAX_FABRIC_BITS" in line
    assert not (tmp_path / "c").exists()


def test_compare_refuses_a_folder_it_may_not_fill(tmp_path, capsys):
    (tmp_path / "c").mkdir()
    keep = tmp_path / "c" / "ecp5-25k-n4-pipelined-ordered-w8-s1"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    line = refused(capsys, "fpga-compare", "--targets", "ecp5-25k:4", "-o", str(tmp_path / "c"))
    assert "not written by pipegossip" in line
    assert (keep / "notes.txt").read_text() == "mine"
    # A folder of the user's files next to nothing of ours: refused too (hostile probe).
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "thesis.tex").write_text("x")
    line = refused(capsys, "fpga-compare", "-o", str(tmp_path / "d"))
    assert "not written by pipegossip" in line
    line = refused(capsys, "fpga-sweep", "--n", "4", "--workers", "0", "-o", str(tmp_path / "d"))
    assert "not written by pipegossip" in line
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["thesis.tex"]


@pytest.mark.parametrize("argv, needle", [
    (["fpga", "--n", "4", "--order", "identity", "-o", "x", "--timeout", "nan"], "a week"),
    (["fpga-compare", "-o", "x", "--timeout", "inf"], "a week"),
    (["fpga", "--n", "4", "--order", "identity", "-o", "x", "--pnr-seed", "-1"], "at least 0"),
    (["fpga-sweep", "--n", "100000", "--workers", "0"], "to raise it"),
])
def test_hostile_numbers_refused_before_any_build(tmp_path, monkeypatch, capsys, argv, needle):
    monkeypatch.chdir(tmp_path)
    assert needle in refused(capsys, *argv)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("n", [4, 8, 16])
def test_schedule_depth_holds_every_program_of_the_comparison(n):
    depth = compare.schedule_depth(n)
    cycles = [p.cycles for p in compare._programs(n, 8).values()]
    assert depth & (depth - 1) == 0 and max(cycles) <= depth < 2 * max(cycles)
    rows = compare.workloads(n, 8, depth)
    alg2, gossip = rows
    assert alg2["fsm_cycles"] == simulate(RunConfig.family(
        n, "identity", receive="any", substitute=True)).length
    assert gossip["fsm_cycles"] == simulate(RunConfig.family(n, "pipelined")).length
    # One word in and out per node per cycle: cyclic-shift takes N-1 cycles.
    assert gossip["schedule_cycles"] == n - 1
    for w in rows:
        assert w["schedule_busy"] == w["schedule_cycles"] + 1


def _fake_flow(fmax: dict, calls: list, fail: str | None = None):
    """A stand-in for run_flow: a report of the flow's shape, Fmax per fabric."""
    def run_flow(job, folder, timeout=None, **kw):
        calls.append(folder.name)
        if fail and fail in folder.name:
            raise FlowError("the design does not fit")
        folder.mkdir(parents=True, exist_ok=True)
        report = {"tool": "pipegossip fpga", "kind": "bare", "fabric": job.fabric,
                  "design_digest": bare_digest(job), "pnr_seed": job.pnr_seed,
                  "fmax_mhz": fmax[job.fabric] + job.pnr_seed, "constraint_mhz": 50.0,
                  "timing_met": False,
                  "logic_cells": {"type": "ICESTORM_LC", "used": 30, "available": 5280,
                                  "fabric": 20, "boundary": 10},
                  "fabric_cells": {"ICESTORM_LC": 20, "ICESTORM_RAM": 2, "ICESTORM_SPRAM": 0},
                  "fabric_synth_cells": {"SB_DFF": 5, "SB_DFFE": 7, "SB_LUT4": 9}}
        (folder / REPORT_NAME).write_text(json.dumps(report))
        return report
    return run_flow


def test_compare_times_each_gossip_from_the_builds_and_reuses_them(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(compare, "run_flow", _fake_flow({"fsm": 9.0, "schedule": 19.0}, calls))
    targets = [compare.Target("ice40-up5k", 4)]
    result = compare.run_compare(targets, tmp_path, width=4, seeds=[1, 2])
    assert len(calls) == 6  # 3 builds x 2 seeds
    t = result["targets"][0]
    assert t["depth"] == compare.schedule_depth(4, 4)
    assert [b["variant"] for b in t["builds"]] == list(compare.VARIANTS)
    sched = t["builds"][2]
    assert sched["fmax_mhz"] == [20.0, 21.0] and sched["ff_fabric"] == 12
    assert sched["memory_fabric"] == {"ICESTORM_RAM": 2} and sched["used"] == 30
    for w in t["workloads"]:   # times from the first seed's Fmax
        assert w["fsm_ns"] == pytest.approx(w["fsm_cycles"] * 1000 / 10.0, abs=0.05)
        assert w["schedule_ns"] == pytest.approx(w["schedule_busy"] * 1000 / 20.0, abs=0.05)
        assert w["speedup"] == pytest.approx(w["fsm_ns"] / w["schedule_ns"], abs=0.01)
    text = compare.compare_markdown(result)
    assert "| iCE40UP5K-SG48 | 4 | schedule fabric, depth" in text
    assert "20.0 / 21.0" in text
    paths = compare.write_compare(result, tmp_path)
    assert json.loads(paths[1].read_text()) == result

    # Unchanged builds are reused; --rebuild builds them again.
    calls.clear()
    assert compare.run_compare(targets, tmp_path, width=4, seeds=[1, 2]) == result
    assert calls == []
    compare.run_compare(targets, tmp_path, width=4, seeds=[1], rebuild=True)
    assert len(calls) == 3


def test_a_failed_build_is_a_row_and_exit_3(tmp_path, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(compare, "run_flow",
                        _fake_flow({"fsm": 9.0, "schedule": 19.0}, calls, fail="schedule"))
    status = main(["fpga-compare", "--targets", "ice40-up5k:4", "--width", "4", "--quiet",
                   "--format", "json", "-o", str(tmp_path)])
    assert status == 3  # a failing tool, never a verdict
    result = json.loads(capsys.readouterr().out)
    assert result == json.loads((tmp_path / "compare.json").read_text())
    t = result["targets"][0]
    assert t["builds"][2]["errors"] == ["the design does not fit"]
    assert all(w["schedule_ns"] is None and w["fsm_ns"] for w in t["workloads"])
    assert "failed: the design does not fit" in compare.compare_markdown(result)


@pytest.mark.fpga
def test_bare_schedule_fabric_n4_reports_cells_and_fmax(tmp_path):
    out = tmp_path / "s4"
    run = cli("fpga", "--fabric", "schedule", "--n", "4", "--width", "4", "--depth", "8",
              "--device", "ice40-up5k", "-o", str(out), "--format", "json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report == json.loads((out / REPORT_NAME).read_text())
    assert report["fabric"] == "schedule" and report["kind"] == "bare"
    assert report["config"] == {"fabric": "schedule", "N": 4, "width": 4, "depth": 8,
                                "slots": 4}
    lc = report["logic_cells"]
    assert lc["type"] == "ICESTORM_LC" and lc["used"] == report["cells"]["ICESTORM_LC"]["used"]
    assert lc["fabric"] > 0 and lc["fabric"] + lc["boundary"] == lc["used"]
    # The boundary has one chain register per input bit of the fabric.
    fabric = ScheduleFabric(4, 4, 8)
    inputs = sum(len(v) for _, m, v in fabric.signature.flatten(fabric) if m.flow == In)
    assert lc["boundary"] >= inputs
    flops = sum(v for k, v in report["fabric_synth_cells"].items() if k.startswith("SB_DFF"))
    assert flops > 0
    assert report["fmax_mhz"] > 0 and report["constraint_mhz"] == 50.0
    assert report["critical_path"]["logic_levels"] >= 1
