"""hw verilog --core: a FuseSoC core that fusesoc (from PyPI) lists, lints and simulates.

fusesoc runs offline here (``--cores-root`` folders only, no library
fetched): ``core list`` and the lint target take about a second, the sim
target one Verilator build of the smoke testbench (about 15 s on an idle
machine), so all of it is in the default suite.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipegossip.cli import main as cli
from pipegossip.hw.core_file import core_name, core_text
from pipegossip.sim.tools.toolchain import use_verilator

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "integration"
FUSESOC = Path(sys.executable).with_name("fusesoc")


def _fusesoc(*args, roots=(), cwd):
    use_verilator()
    cmd = [str(FUSESOC), *(x for r in roots for x in ("--cores-root", str(r))), *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=os.environ.copy())


def _generate(tmp_path, *args):
    v = tmp_path / "rtl" / "fabric.v"
    v.parent.mkdir()
    assert cli(["hw", "verilog", *args, "--core", "-o", str(v)]) == 0
    return v.parent


NETWORK = ("--fabric", "network", "--topology", "cycle", "--n", "4", "--depth", "8")


def test_fusesoc_lists_the_core_and_its_lint_target_passes(tmp_path):
    rtl = _generate(tmp_path, *NETWORK, "--control", "axil")
    top = "pipegossip_network_fabric"
    listed = _fusesoc("core", "list", roots=[rtl], cwd=tmp_path)
    assert listed.returncode == 0 and core_name(top) in listed.stdout
    lint = _fusesoc("run", "--build-root", str(tmp_path / "build"), "--target", "lint",
                    core_name(top), roots=[rtl], cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_a_lint_error_in_the_verilog_fails_the_lint_target(tmp_path):
    rtl = _generate(tmp_path, *NETWORK)
    v = rtl / "fabric.v"
    v.write_text(v.read_text().replace("endmodule", "  wire [3:0] narrow = 8'hff;\nendmodule", 1))
    lint = _fusesoc("run", "--build-root", str(tmp_path / "build"), "--target", "lint",
                    core_name("pipegossip_network_fabric"), roots=[rtl], cwd=tmp_path)
    assert lint.returncode != 0 and "WIDTHTRUNC" in lint.stdout + lint.stderr


@pytest.mark.parametrize("args, top", [
    ((*NETWORK, "--control", "axil"), "pipegossip_network_fabric"),
    (("--fabric", "schedule", "--n", "4", "--depth", "8", "--control", "wishbone"),
     "pipegossip_schedule_fabric"),
])
def test_the_sim_target_runs_the_smoke_testbench_to_pass(tmp_path, args, top):
    rtl = _generate(tmp_path, *args)
    sim = _fusesoc("run", "--build-root", str(tmp_path / "build"), "--target", "sim",
                   core_name(top), roots=[rtl], cwd=tmp_path)
    assert sim.returncode == 0, sim.stdout[-3000:] + sim.stderr[-3000:]
    assert f"PASS {top}" in sim.stdout


def test_the_example_core_lints_over_the_generated_one(tmp_path):
    rtl = _generate(tmp_path, "--fabric", "network", "--topology", "hypercube", "--k", "3",
                    "--depth", "16", "--control", "axil")
    lint = _fusesoc("run", "--build-root", str(tmp_path / "build"), "--target", "lint",
                    "pipegossip:examples:integration_top", roots=[rtl, EXAMPLE], cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_core_needs_an_output_file(capsys):
    assert cli(["hw", "verilog", *NETWORK, "--core"]) == 2
    assert "--core needs -o" in capsys.readouterr().err


def test_the_core_names_its_files_relative_to_itself():
    text = core_text("top", "top.v", "top_tb.v", 'a "quoted" description')
    assert "      - top.v\n" in text and "      - top_tb.v\n" in text
    assert "name: pipegossip:fabric:top:" in text and '"a \'quoted\' description"' in text
