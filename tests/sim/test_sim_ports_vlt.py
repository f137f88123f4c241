"""Which ports cocotb sees, and how: inputs writable, outputs read-only.

A VPI-writable signal may change between any two evaluations, so Verilator
recomputes everything it feeds on every evaluation (its input-combinational
"ico" region). The fast top's outputs are also read inside it (the batch
driver's ``batch_busy`` picks the word seed), so writable outputs dragged the
checker and the word sources into that region: 38 % of the N=32 run time.
"""

from __future__ import annotations

import re

import pytest
from amaranth.hdl import Fragment

from pipegossip.hw.ports import ScheduleSize, ports, schedule_ports
from pipegossip.model.config import RunConfig
from pipegossip.sim.fast.checker import FAST_TOP, FastTop
from pipegossip.sim.fast.mode import READABLE, WRITABLE, build_fast
from pipegossip.sim.tools.simulators import DEFAULT_RECIPE, SPLIT_N, ports_vlt, sized, table_vlt
from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator

LINE = re.compile(r'^(public_flat_rw|public_flat_rd) -module "(\w+)" -var "(\w+)"$')


def _parse(text: str) -> dict[str, str]:
    lines = text.splitlines()
    assert lines[0] == "`verilator_config"
    out = {}
    for line in lines[1:]:
        kind, _, name = LINE.match(line).groups()
        assert name not in out, f"{name} listed twice"
        out[name] = kind
    return out


@pytest.mark.parametrize("n,sessions,width", [(2, 1, 1), (5, 3, 8), (8, 1, 70)])
def test_fabric_inputs_writable_outputs_read_only(n, sessions, width):
    table = ports(n, sessions, width)
    got = _parse(table_vlt("pipegossip_fabric", table))
    want = {"clk": "public_flat_rw", "rst": "public_flat_rw"}
    want.update({p.name: "public_flat_rw" if p.direction == "in" else "public_flat_rd"
                 for p in table})
    assert got == want


def test_schedule_fabric_ports_by_direction():
    size = ScheduleSize(n=4, width=8, depth=16, slots=8)
    got = _parse(table_vlt("top", schedule_ports(size)))
    outs = {p.name for p in schedule_ports(size) if p.direction == "out"}
    assert outs and all(got[name] == "public_flat_rd" for name in outs)
    assert all(kind == "public_flat_rw" for name, kind in got.items() if name not in outs)


def test_fast_top_lists_exactly_its_ports():
    top = FastTop(4, 1, 8, length=9, tail=4)
    members = dict(top.signature.members.items())
    ins = {k for k, m in members.items() if m.flow.name == "In"}
    outs = set(members) - ins
    got = _parse(ports_vlt(FAST_TOP, WRITABLE, READABLE))
    assert {k for k, v in got.items() if v == "public_flat_rw"} == ins | {"clk", "rst"}
    assert {k for k, v in got.items() if v == "public_flat_rd"} == outs
    Fragment.get(top, None)  # elaborated, as a build would: no UnusedElaboratable warning


def test_split_by_size():
    assert not sized(DEFAULT_RECIPE, SPLIT_N - 1).split
    assert sized(DEFAULT_RECIPE, SPLIT_N).split


def _ico_assignments(directory) -> int:
    """Statements of the build's input-combinational functions."""
    count = 0
    for cpp in directory.glob("Vtop*.cpp"):
        body = None
        for line in cpp.read_text().splitlines():
            if re.match(r"void Vtop___024root___ico_sequent\w*\(", line):
                body = True
            elif body and line.startswith("}"):
                body = None
            elif body and re.search(r"\S = ", line) and "vlSymsp" not in line \
                    and "vlSelfRef =" not in line:
                count += 1
    return count


def test_fast_top_inputs_feed_only_registers(tmp_path):
    """Behind the top's input registers, the ico region copies the inputs and nothing more."""
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(str(e))
    b = build_fast(RunConfig.family(4, "pipelined"), 8, recipe=DEFAULT_RECIPE)
    assert 0 < _ico_assignments(b.directory) <= len(WRITABLE)


def test_fast_recipe_follows_cycles_and_size():
    from pipegossip.sim.fast.mode import (BUILD_RECIPE, FASTEST_RECIPE, SPEED_RECIPE,
                                          fastest_cycles, recipe_for, speed_cycles)
    for n in (4, 16, 32, 64):
        config = RunConfig.family(n, "pipelined")
        assert speed_cycles(n) < fastest_cycles(n)
        opt = [recipe_for(config, c).opt_fast for c in
               (0, speed_cycles(n) - 1, speed_cycles(n), fastest_cycles(n))]
        assert opt == [BUILD_RECIPE.opt_fast, BUILD_RECIPE.opt_fast, SPEED_RECIPE.opt_fast,
                       FASTEST_RECIPE.opt_fast]
        assert recipe_for(config).split == (n >= SPLIT_N)
    # Wide vectors make unoptimised C++ slow: the bigger the fabric, the sooner -O1.
    assert speed_cycles(64) < speed_cycles(32) < speed_cycles(16)
