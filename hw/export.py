"""Verilog export of a :class:`~pipegossip.hw.fsm.fabric.Fabric`."""

from __future__ import annotations

import re

from amaranth.back import verilog

from .. import __version__
from ..model.config import RunConfig
from .fsm.fabric import Fabric, fabric_signature

__all__ = ["verilog_text", "check_module_name", "plain_internal_names"]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: An escaped identifier Yosys or Amaranth generated (``\$1``,
#: ``\$auto$verilog_backend.cc:2355:dump_module$1``), up to its white space.
_INTERNAL = re.compile(r"\\(\$\S+)(?=\s)")
#: Every plain identifier of a Verilog text (``$`` may follow the first character).
_PLAIN = re.compile(r"(?<![\\\w$])[A-Za-z_][\w$]*")


def check_module_name(name: object) -> str:
    """Refuse a top-module name that is not a plain Verilog identifier."""
    if not isinstance(name, str):
        raise TypeError(f"module name must be a string, not {name!r}")
    if not _IDENTIFIER.match(name):
        raise ValueError(f"module name must be a plain Verilog identifier "
                         f"(letters, digits and _, not starting with a digit), not {name!r}")
    if name in _KEYWORDS:
        raise ValueError(f"module name {name!r} is a Verilog/SystemVerilog keyword")
    return name


#: Reserved words of Verilog (IEEE 1364-2005) and SystemVerilog (1800-2017):
#: ``module module`` parses in neither (Verilator and Yosys read SystemVerilog).
_KEYWORDS = frozenset("""
accept_on alias always always_comb always_ff always_latch and assert assign assume automatic
before begin bind bins binsof bit break buf bufif0 bufif1 byte case casex casez cell chandle
checker class clocking cmos config const constraint context continue cover covergroup coverpoint
cross deassign default defparam design disable dist do edge else end endcase endchecker endclass
endclocking endconfig endfunction endgenerate endgroup endinterface endmodule endpackage
endprimitive endprogram endproperty endsequence endspecify endtable endtask enum event eventually
expect export extends extern final first_match for force foreach forever fork forkjoin function
generate genvar global highz0 highz1 if iff ifnone ignore_bins illegal_bins implements implies
import incdir include initial inout input inside instance int integer interconnect interface
intersect join join_any join_none large let liblist library local localparam logic longint
macromodule matches medium modport module nand negedge nettype new nexttime nmos nor
noshowcancelled not notif0 notif1 null or output package packed parameter pmos posedge primitive
priority program property protected pull0 pull1 pulldown pullup pulsestyle_ondetect
pulsestyle_onevent pure rand randc randcase randsequence rcmos real realtime ref reg reject_on
release repeat restrict return rnmos rpmos rtran rtranif0 rtranif1 s_always s_eventually
s_nexttime s_until s_until_with scalared sequence shortint shortreal showcancelled signed small
soft solve specify specparam static string strong strong0 strong1 struct super supply0 supply1
sync_accept_on sync_reject_on table tagged task this throughout time timeprecision timeunit tran
tranif0 tranif1 tri tri0 tri1 triand trior trireg type typedef union unique unique0 unsigned until
until_with untyped use uwire var vectored virtual void wait wait_order wand weak weak0 weak1 while
wildcard wire with within wor xnor xor
""".split())


def plain_internal_names(text: str) -> str:
    """Give the generated escaped identifiers of ``text`` plain names.

    Verilator traces an escaped identifier without its backslash, so the
    fabric's VCD declared wires named ``$auto$verilog_backend.cc:2355:dump_module$1``
    and ``$1``: GTKWave's VCD parser stops at the dots and colons, pyvcd's at
    the leading ``$``. Each becomes ``_`` and its characters with every
    non-word one as ``_`` (``_auto_verilog_backend_cc_2355_dump_module_1``,
    ``_1``), made unique against every identifier already in the text.
    Ports keep their names: Amaranth gives them plain ones.
    """
    taken = set(_PLAIN.findall(text))
    renamed: dict[str, str] = {}

    def plain(m: re.Match) -> str:
        old = m.group(1)
        if old not in renamed:
            name = "_" + re.sub(r"\W", "_", old[1:])
            while name in taken:
                name += "_"
            taken.add(name)
            renamed[old] = name
        return renamed[old]

    return _INTERNAL.sub(plain, text)


def verilog_text(config: RunConfig, width: int = 8, name: str = "pipegossip_fabric") -> str:
    """The Verilog of the fabric for ``config``.

    Ports are those of :class:`Fabric` with nested names joined by ``__``
    (``words__3__payload``, ``delivery__0__valid``), plus ``clk`` and the
    active-high synchronous ``rst`` of the ``sync`` domain. The text starts
    with a comment naming the configuration and is byte-for-byte
    reproducible (no source locations are emitted). Internal wires have
    plain names (:func:`plain_internal_names`) so that simulator dumps of it
    open in any VCD reader.

    Raises
    ------
    TypeError, ValueError
        For a bad configuration object, width or module name.
    """
    check_module_name(name)
    fabric_signature(config, width)  # refuse bad parameters before building anything
    fabric = Fabric(config, width)
    text = plain_internal_names(verilog.convert(fabric, name=name, emit_src=False))
    header = (f"// pipegossip {__version__} fabric, width={width}\n"
              f"// {config.header()}\n")
    if config.order_name in ("explicit", "random"):
        header += "// orders: " + "; ".join(
            f"p{i}: " + " ".join(map(str, row)) for i, row in enumerate(config.orders.tolist())
        ) + "\n"
    return header + text
