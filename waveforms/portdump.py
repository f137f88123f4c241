"""A copy of a dump holding only the fabric's ports.

GTKWave 3.3 cannot load the VCD that Verilator writes for the fabric: the
Verilog from Amaranth/Yosys keeps internal wires named like
``\\$auto$verilog_backend.cc:2355:dump_module$1``, Verilator traces them
without the escape, and GTKWave's VCD parser stops on the dots ("$VAR parse
error ... exiting"). The ports are what the run-table is made of, so
:func:`write_port_dump` streams just those into a new VCD (written with
pyvcd), which GTKWave opens. It also turns an FST into a VCD and shrinks a
large dump to what a person looks at.

The fabric's Verilog now names those wires plainly (see
:func:`pipegossip.hw.export.plain_internal_names`), so dumps of new builds
open as they are; the copy remains for older dumps and other sources.
:func:`nest_root_scope` mends the one name Verilator itself adds, the
``$rootio`` scope.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ..infra.files import atomic_output
from ..model.errors import FormatError
from .dump import Dump, Var, open_dump
from .readback import find_fabric

__all__ = ["write_port_dump", "gtkwave_can_parse", "nest_root_scope"]

_ROOTIO = b"$scope module $rootio $end"
_SCOPE_TOKENS = re.compile(rb"\$(scope|upscope)\s(?:.*?\s)??\$end\s*", re.S)


def gtkwave_can_parse(dump: Dump) -> bool:
    """False for a VCD declaring names GTKWave 3.3's parser gives up on.

    Those are Yosys's internal ``$``-names carrying dots or colons, as
    Verilator traces them (see the module docstring).
    """
    if dump.format != "vcd":
        return True
    return not any(v.raw.startswith("$") and (":" in v.raw or "." in v.raw)
                   for names in dump.scopes.values() for v in names.values())


class _Copy:
    """Replay sink writing each change straight into a pyvcd writer."""

    def __init__(self, writer, variables: list):
        self.writer = writer
        self.variables = variables
        self.now = 0

    def time(self, t: int) -> None:
        self.now = t

    def change(self, index: int, value) -> None:
        var = self.variables[index]
        if value is None:
            value = "x" if var.size == 1 else "x" * var.size
        self.writer.change(var, self.now, value)

    def end(self) -> None:
        pass


def write_port_dump(src: str | Path, dst: str | Path, top: str | None = None,
                    clock: str = "clk") -> Path:
    """Write the fabric's ports of dump ``src`` (VCD or FST) to VCD ``dst``.

    Names, scope, widths, timescale and every value change of the ports are
    kept; everything else is left out.

    Raises
    ------
    FormatError
        As :func:`~.readback.read_dump` for an unreadable dump or missing ports.
    """
    from vcd import VCDWriter

    dump = open_dump(src)
    ports = find_fabric(dump, top, clock)
    dst = Path(dst)
    chosen: list[Var] = []
    seen: set[object] = set()
    for var in dump.scopes[ports.scope].values():
        if var.handle not in seen and not var.raw.startswith("$"):
            seen.add(var.handle)
            chosen.append(var)
    with atomic_output(dst) as f:
        with VCDWriter(f, timescale=dump.timescale_text, date="-",
                       comment=f"pipegossip: ports of {ports.scope} from {dump.path.name}") as w:
            variables = []
            for var in chosen:
                if var.kind == "string":
                    variables.append(w.register_var(ports.scope, var.raw, "string"))
                else:
                    variables.append(w.register_var(ports.scope, var.raw, "wire",
                                                    size=var.size))
            dump.replay(chosen, _Copy(w, variables))
    return dst


def nest_root_scope(path: str | Path, name: str = "TOP") -> bool:
    """Rename Verilator's ``$rootio`` scope of VCD ``path`` and nest the design in it.

    Verilator 5 declares the top-level ports of a model built without a
    name (cocotb's main builds it so) in a scope ``$rootio``, beside the
    top module's scope. Readers that take ``$`` to start a keyword, such as
    pyvcd's, refuse the file. The header is rewritten as Verilator writes
    it for a model named ``name``: the ports in scope ``name``, every other
    top-level scope inside it (read-back then takes the outer copy of the
    ports, as for older Verilator). The value changes are copied unchanged
    and the file is replaced in one rename.

    Returns
    -------
    bool
        False when the file has no ``$rootio`` scope (it is left alone).

    Raises
    ------
    FormatError
        The declarations do not end, or ``$rootio`` holds scopes of its own.
    """
    path = Path(path)
    with open(path, "rb") as src:
        head = b""
        while b"$enddefinitions" not in head:
            chunk = src.read(1 << 20)
            if not chunk:
                raise FormatError(f"{str(path)!r}: not a readable VCD file (no $enddefinitions)")
            head += chunk
        end = head.index(b"$enddefinitions")
        at = head.find(_ROOTIO, 0, end)
        if at < 0:
            return False
        close = _SCOPE_TOKENS.search(head, at + len(_ROOTIO), end)
        if close is None or close.group(1) != b"upscope":
            # Verilator declares the ports only; anything else is not its layout.
            raise FormatError(f"{str(path)!r}: $rootio holds scopes; not rewritten")
        header = (head[:at] + b"$scope module " + name.encode() + b" $end"
                  + head[at + len(_ROOTIO):close.start()] + head[close.end():end]
                  + b"$upscope $end\n")
        with atomic_output(path, binary=True) as dst:
            dst.write(header)
            dst.write(head[end:])
            shutil.copyfileobj(src, dst, 1 << 20)
    return True
