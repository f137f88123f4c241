# amaranth: UnusedElaboratable=no
"""Verilog export: ``verilog_text``, ``pipegossip verilog`` and Verilator lint."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from pipegossip.model import RunConfig
from pipegossip.hw.export import verilog_text
from pipegossip.hw.fsm.fabric import fabric_ports
from pipegossip.sim.tools.toolchain import use_verilator

#: Warning kinds Amaranth's Verilog output always produces (docs/hw.md,
#: "Verilator lint"); anything else fails the lint test.
ALLOWED = {"DECLFILENAME", "PROCASSINIT", "UNUSEDSIGNAL"}

LINT_CASES = [
    RunConfig.family(2, "identity"),
    RunConfig.family(5, "identity"),
    RunConfig.family(8, "pipelined"),
    RunConfig.family(7, "random", seed=2, receive="any"),
    RunConfig.family(6, "random", seed=1, substitute=True),
    RunConfig.family(6, "pipelined", receive="any", substitute=True),
    RunConfig.family(5, "pipelined", sessions=3),
    RunConfig.family(8, "random", seed=3, channels=1),
    RunConfig.family(8, "random", seed=3, receive="any", substitute=True, sessions=4, channels=3),
    RunConfig.explicit([[2, 1], [0, 2], [1, 0]], receive="any", sessions=2, channels=1),
]


def lint(path) -> list[tuple[str, str]]:
    """``(kind, message)`` of every Verilator -Wall warning or error."""
    use_verilator()
    proc = subprocess.run(["verilator", "--lint-only", "-Wall", str(path)],
                          capture_output=True, text=True)
    found = re.findall(r"^%(Warning-[A-Z_]+|Error[^:]*): (.*)$", proc.stderr, re.M)
    return [(kind.removeprefix("Warning-"), msg) for kind, msg in found
            if not msg.startswith("Exiting due to")]


@pytest.mark.parametrize("config", LINT_CASES, ids=lambda c: c.slug)
@pytest.mark.parametrize("width", [1, 8])
def test_verilator_lint_reports_only_the_documented_warnings(tmp_path, config, width):
    name = "pipegossip_fabric"
    path = tmp_path / f"{name}.v"
    path.write_text(verilog_text(config, width, name))
    problems = lint(path)
    kinds = {kind for kind, _ in problems}
    assert kinds <= ALLOWED, [p for p in problems if p[0] not in ALLOWED]
    # The top module's own name matches its file; only submodules may not.
    for kind, msg in problems:
        if kind == "DECLFILENAME":
            assert f"MODULE name: '{name}." in msg
    # Unused wires are Amaranth's debug names, never a port the design ignores.
    ports = {p.name for p in fabric_ports(config, width)} | {"clk", "rst"}
    for kind, msg in problems:
        if kind == "UNUSEDSIGNAL":
            m = re.search(r"not used: '([^']+)'", msg)
            assert m is not None, msg
            assert m.group(1) not in ports, msg


def test_lint_catches_a_real_problem(tmp_path):
    # The checker above must be able to fail: an undriven output is UNDRIVEN.
    path = tmp_path / "bad.v"
    path.write_text("module bad(input wire a, output wire y);\nendmodule\n")
    kinds = {kind for kind, _ in lint(path)}
    assert kinds - ALLOWED


def test_verilog_names_every_pinned_port():
    config = RunConfig.family(4, "random", seed=5, receive="any", sessions=2)
    text = verilog_text(config, 16, "gossip_top")
    header = re.search(r"module gossip_top\((.*?)\);", text, re.S).group(1)
    names = {p.strip() for p in header.split(",")}
    assert names == {p.name for p in fabric_ports(config, 16)} | {"clk", "rst"}
    for p in fabric_ports(config, 16):
        decl = rf"^\s*{p.direction}put " + (rf"\[{p.width - 1}:0\] " if p.width > 1 else "") \
            + rf"{p.name};"
        assert re.search(decl, text, re.M), p


def test_verilog_is_reproducible_and_names_the_configuration():
    config = RunConfig.family(5, "random", seed=9, substitute=True)
    a = verilog_text(config)
    assert a == verilog_text(config)
    assert a.splitlines()[1] == "// " + config.header()
    assert "src =" not in a
    assert verilog_text(RunConfig.family(5, "random", seed=10, substitute=True)) != a


@pytest.mark.parametrize("name", ["1top", "top-level", "", "a b", "top$"])
def test_bad_module_names_are_refused(name):
    with pytest.raises(ValueError, match=re.escape(repr(name))):
        verilog_text(RunConfig.family(3, "identity"), 8, name)


def test_bad_width_is_refused():
    with pytest.raises(ValueError, match="0"):
        verilog_text(RunConfig.family(3, "identity"), 0)


@pytest.mark.parametrize("name", ["module", "wire", "logic", "endmodule"])
def test_a_keyword_is_no_module_name(name):
    """Hostile probe verilog/name-keyword: `module module` used to be written."""
    from pipegossip.hw.export import check_module_name
    with pytest.raises(ValueError, match="keyword"):
        check_module_name(name)
    assert check_module_name(name + "_top") == name + "_top"


def test_export_needs_no_deep_python_stack():
    """Issue 25: N=362 pipelined and N=1024 width 1 ended in RecursionError.

    The used-slot count was a chain of N adds, three Python frames each in
    Amaranth's back-end; at N=100 that chain needs 300 frames, the balanced
    tree (and everything else in the fabric) fits in 240.
    """
    import inspect
    import sys

    config = RunConfig.family(100, "pipelined")
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 240)
    try:
        text = verilog_text(config, 1)
    finally:
        sys.setrecursionlimit(old)
    assert "module pipegossip_fabric" in text


@pytest.mark.slow
@pytest.mark.parametrize("n, order, width", [(362, "pipelined", 8), (1024, "identity", 1)])
def test_export_at_the_fabric_budget(tmp_path, n, order, width):
    """The largest fabrics the ``fabric-bits`` budget allows export, with no warnings.

    Unless the ``memory`` budget refuses them first, at once, with its
    estimate: N = 1024 needs about 48 GiB (pipegossip/infra/budgets.py,
    export_bytes), more than half of most machines' memory.
    """
    from pipegossip.infra.budgets import budget_limit, export_bytes
    proc = subprocess.run([sys.executable, "-m", "pipegossip", "verilog", "--n", str(n),
                           "--order", order, "--width", str(width), "-o",
                           str(tmp_path / "f.v")], capture_output=True, text=True)
    if export_bytes(n) > budget_limit("memory"):
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert proc.stderr.count("\n") == 1 and "PIPEGOSSIP_MAX_MEMORY" in proc.stderr
        assert not (tmp_path / "f.v").exists()
        return
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("wrote "), proc.stderr[-2000:]
    assert (tmp_path / "f.v").read_text().count("\nmodule ") >= n
