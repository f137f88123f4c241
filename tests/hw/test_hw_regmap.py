# amaranth: UnusedElaboratable=no
"""One register map: the block's decode, docs/integration.md's table and the C header agree."""

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from amaranth.sim import Simulator
from control_bus import AxiLite

from pipegossip.hw.bus import OKAY
from pipegossip.hw.controlled import ControlledFabric
from pipegossip.hw.network import NetworkFabric
from pipegossip.hw.regmap import (MAGIC, REGISTERS, VERSION, Field, c_header, check_map,
                                  markdown_table)
from pipegossip.model.schedules.topologies import topology

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "examples" / "integration" / "pipegossip_regs.h"
CC = shutil.which("cc") or shutil.which("gcc")


def test_the_docs_table_is_generated_from_the_map():
    text = (ROOT / "docs" / "integration.md").read_text()
    m = re.search(r"<!-- regmap: begin -->\n(.*?)<!-- regmap: end -->", text, re.S)
    assert m is not None and m.group(1) == markdown_table()


def test_the_shipped_c_header_is_generated_from_the_map():
    assert HEADER.read_text() == c_header()


def _compiled_macros(tmp_path) -> dict[str, int]:
    """Every macro of the header, as the C compiler sees it."""
    names = re.findall(r"^#define (PIPEGOSSIP_\w+) ", HEADER.read_text(), re.M)
    names = [n for n in names if n != "PIPEGOSSIP_REGS_H"]
    src = tmp_path / "macros.c"
    src.write_text('#include <stdio.h>\n#include "pipegossip_regs.h"\nint main(void) {\n'
                   + "".join(f'  printf("{n} %lu\\n", (unsigned long)({n}));\n' for n in names)
                   + "  return 0;\n}\n")
    exe = tmp_path / "macros"
    subprocess.run([CC, "-Wall", "-Werror", "-I", str(HEADER.parent), str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_the_block_answers_at_the_c_headers_offsets_and_fields(tmp_path):
    """Every offset and field the compiled header names, exercised on the block itself."""
    c = _compiled_macros(tmp_path)
    fabric = NetworkFabric(topology("hypercube", k=2), 8, 16)
    dut = ControlledFabric(fabric)
    assert c["PIPEGOSSIP_MAGIC"] == MAGIC and c["PIPEGOSSIP_MAP_VERSION"] == VERSION
    assert {r.name for r in REGISTERS} == {k[len("PIPEGOSSIP_"):-len("_OFFSET")]
                                            for k in c if k.endswith("_OFFSET")}
    got = {}

    def off(reg):
        return c[f"PIPEGOSSIP_{reg}_OFFSET"]

    def fld(reg, f, value):
        return (value & c[f"PIPEGOSSIP_{reg}_{f}_MASK"]) >> c[f"PIPEGOSSIP_{reg}_{f}_LSB"]

    async def bench(ctx):
        m = AxiLite(ctx, dut.axil)
        ident, _ = await m.read(off("ID"))
        got["id"] = (fld("ID", "MAGIC", ident), fld("ID", "VERSION", ident),
                     fld("ID", "FABRIC", ident))
        got["sizes"] = [(await m.read(off(r)))[0] for r in ("NODES", "WIDTH", "DEPTH",
                                                              "SLOTS", "PROGRAMS")]
        # a register of read-write fields keeps exactly their header masks
        got["rw"] = {}
        for r in REGISTERS:
            if any(f.access == "rw" for f in r.fields) and r.name != "PROG_SEL":
                assert await m.write(off(r.name), 0xFFFF_FFFF) == OKAY
                got["rw"][r.name] = await m.read(off(r.name))
                await m.write(off(r.name), 0)
        # a command at its header bit: ARM shows at STATUS.ARMED (the fabric is held by READY)
        ctx.set(dut.ready, 0)
        await m.write(off("CMD"), c["PIPEGOSSIP_CMD_ARM_MASK"])
        status, _ = await m.read(off("STATUS"))
        got["armed"] = fld("STATUS", "ARMED", status)
        await m.write(off("CMD"), c["PIPEGOSSIP_CMD_DISARM_MASK"])
        status, _ = await m.read(off("STATUS"))
        got["disarmed"] = fld("STATUS", "ARMED", status)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert got["id"] == (MAGIC, VERSION, c["PIPEGOSSIP_FABRIC_NETWORK"])
    assert got["sizes"] == [4, 8, 16, 4, 1]
    assert set(got["rw"]) == {"CTRL", "LOAD_ADDR", "READ_NODE", "READ_SLOT", "READ_PART"}
    for reg, (value, resp) in got["rw"].items():
        want = 0
        for f in next(r for r in REGISTERS if r.name == reg).fields:
            want |= c[f"PIPEGOSSIP_{reg}_{f.name}_MASK"]
        assert (value, resp) == (want, OKAY), reg
    assert (got["armed"], got["disarmed"]) == (1, 0)


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_the_example_c_driver_compiles_against_the_header(tmp_path):
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-I",
                    str(HEADER.parent), str(HEADER.parent / "pipegossip_driver.c"), "-o",
                    str(tmp_path / "driver.o")], check=True)


def test_a_map_with_overlapping_fields_or_offsets_is_refused():
    ctrl = next(r for r in REGISTERS if r.name == "CTRL")
    bad_field = replace(ctrl, fields=(*ctrl.fields, Field("X", 1, 2, "rw", "overlaps IRQ_EN")))
    check_map(REGISTERS)  # the shipped map passes
    with pytest.raises(ValueError, match="overlaps"):
        check_map(tuple(bad_field if r is ctrl else r for r in REGISTERS))
    with pytest.raises(ValueError, match="share"):
        check_map((*REGISTERS, replace(ctrl, name="CTRL2")))
    with pytest.raises(ValueError, match="aligned"):
        check_map((replace(ctrl, offset=0x22),))


def test_the_docs_kind_table_is_the_codes_the_block_decodes():
    from pipegossip.hw.control import kind_table
    text = (ROOT / "docs" / "integration.md").read_text()
    m = re.search(r"<!-- kinds: begin -->\n(.*?)<!-- kinds: end -->", text, re.S)
    assert m is not None and m.group(1) == kind_table()
