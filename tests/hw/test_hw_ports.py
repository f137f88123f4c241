"""The port table (hw/ports.py) against the Verilog the fabric exports.

The table is the one declaration of the fabric's interface; the exported
module's header must list exactly its ports, with its directions and widths,
for every configuration shape (N, order, sessions, word width).
"""

from __future__ import annotations

import re

import pytest

from pipegossip.hw.export import verilog_text
from pipegossip.hw.fsm.fabric import fabric_ports
from pipegossip.hw.ports import CLOCK_PORTS, PORTS, port_spec, port_widths, ports
from pipegossip.model import RunConfig

_DECL = re.compile(r"^\s*(input|output)\s+(?:(?:wire|reg)\s+)?(?:\[(\d+):(\d+)\]\s*)?"
                   r"\\?([A-Za-z_][\w$]*)\s*(?:=[^;]*)?;", re.M)


def verilog_ports(text: str, top: str = "pipegossip_fabric") -> dict[str, tuple[str, int]]:
    """``{name: (direction, width)}`` of module ``top``'s header and its declarations."""
    header = re.search(rf"^module\s+{top}\s*\(([^)]*)\);", text, re.M)
    assert header, "no module header"
    text = text[header.end():text.index("endmodule", header.end())]
    names = [n.strip() for n in header.group(1).replace("\n", " ").split(",")]
    decls = {}
    for direction, msb, lsb, name in _DECL.findall(text):
        width = 1 if msb == "" else int(msb) - int(lsb) + 1
        decls[name] = ("in" if direction == "input" else "out", width)
    assert set(decls) == set(names), "header and port declarations disagree"
    return decls


CASES = [(n, order, sessions, width)
         for n in (2, 5, 8)
         for order in ("pipelined", "identity")
         for sessions in (1, 3)
         for width in (1, 8, 70)]


@pytest.mark.parametrize("n, order, sessions, width", CASES,
                         ids=[f"n{c[0]}-{c[1]}-k{c[2]}-w{c[3]}" for c in CASES])
def test_exported_verilog_ports_equal_the_table(n, order, sessions, width):
    config = RunConfig.family(n, order, sessions=sessions)
    got = verilog_ports(verilog_text(config, width))
    want = {p.name: (p.direction, p.width) for p in ports(n, sessions, width)}
    want.update({name: ("in", 1) for name in CLOCK_PORTS})
    assert got == want
    # The signature the Component was built with flattens to the same list, in order.
    assert [(p.name, p.direction, p.width) for p in fabric_ports(config, width)] == \
        [(p.name, p.direction, p.width) for p in ports(n, sessions, width)]


def test_cycle_is_sized_for_any_run_not_for_one_length():
    # The drift this table removed: a copy sized `cycle` by one run's L (4 bits
    # for N=5 pipelined, L=10); the fabric's counter holds any run's L.
    assert port_widths(5, 1, 8)["cycle"] == 5
    assert port_widths(5, 3, 8)["cycle"] == (3 * 5 * 4).bit_length()


def test_table_names_and_groups():
    assert port_spec("delivery__word").verilog_name(3) == "delivery__3__word"
    assert port_spec("action").verilog_name(0) == "action__0"
    assert port_spec("busy").verilog_name() == "busy"
    with pytest.raises(ValueError):
        port_spec("peer").verilog_name()
    with pytest.raises(KeyError, match="no port 'nope'"):
        port_spec("nope")
    assert len({p.key for p in PORTS}) == len(PORTS)
