"""A copy of a dump holding only the fabric's ports.

GTKWave 3.3 cannot load the VCD that Verilator writes for the fabric: the
Verilog from Amaranth/Yosys keeps internal wires named like
``\\$auto$verilog_backend.cc:2355:dump_module$1``, Verilator traces them
without the escape, and GTKWave's VCD parser stops on the dots ("$VAR parse
error ... exiting"). The ports are what the run-table is made of, so
:func:`write_port_dump` streams just those into a new VCD (written with
pyvcd), which GTKWave opens. It also turns an FST into a VCD and shrinks a
large dump to what a person looks at.
"""

from __future__ import annotations

from pathlib import Path

from .dump import Dump, Var, open_dump
from .readback import find_fabric

__all__ = ["write_port_dump", "gtkwave_can_parse"]


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
    tmp = dst.with_name(f".{dst.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
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
        tmp.replace(dst)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dst
