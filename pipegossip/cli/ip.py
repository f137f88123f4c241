"""The fabric as IP: ``hw verilog --control BUS --core`` and ``hw regmap``.

``--control axil|wishbone`` (schedule and network fabrics) writes the fabric
behind its control block (:mod:`pipegossip.hw.controlled`); ``--core``
writes a FuseSoC core and its smoke testbench beside the Verilog
(:mod:`pipegossip.hw.core_file`); ``hw regmap`` prints the register map as
the Markdown table of docs/integration.md or as a C header.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..infra.files import atomic_write

__all__ = ["add_ip_arguments", "refuse_ip_arguments", "write_controlled", "write_core",
           "register_regmap", "IP_OPTIONS"]

#: Options of ``hw verilog`` this module adds, as :func:`~.options.refuse_given` takes them.
IP_OPTIONS = (("--control", "control", None),)


def add_ip_arguments(p: argparse.ArgumentParser) -> None:
    """``--control BUS`` and ``--core`` on ``hw verilog``."""
    g = p.add_argument_group("the fabric as IP (docs/integration.md)")
    g.add_argument("--control", choices=("axil", "wishbone"), default=None,
                   help="--fabric schedule|network: put the fabric behind its control block "
                   "with an AXI4-Lite (axil) or Wishbone B4 slave: program load, start, "
                   "status, program select and counters as registers (`hw regmap`)")
    g.add_argument("--core", action="store_true",
                   help="also write a FuseSoC core (TOP.core, targets lint and sim with "
                   "Verilator) and its smoke testbench (TOP_tb.v) beside -o's Verilog")


def refuse_ip_arguments(args: argparse.Namespace) -> None:
    """``--core`` needs ``-o`` (the core names the file beside it)."""
    from . import UsageError
    if args.core and not args.output:
        raise UsageError("--core needs -o FILE.v (the core file goes beside it)")


def write_controlled(output: str, fabric, bus: str, name: str, header: str) -> None:
    """Write ``fabric`` behind a ``bus`` control block to ``output`` (``-``: stdout)."""
    from ..hw.controlled import controlled_verilog_text
    from ..model.errors import ConfigError
    try:
        text = controlled_verilog_text(fabric, bus, name=name, header=header)
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from None
    atomic_write(output, text)


def write_core(output: str, top: str, bus: str | None, description: str) -> list[Path]:
    """Write ``TOP.core`` and ``TOP_tb.v`` beside ``output``; the paths written.

    The testbench is written first: the core names it, so a core never points
    at a missing file.
    """
    from ..hw.core_file import core_text, smoke_testbench
    verilog = Path(output)
    tb = verilog.with_name(f"{top}_tb.v")
    core = verilog.with_name(f"{top}.core")
    atomic_write(tb, smoke_testbench(top, bus))
    atomic_write(core, core_text(top, verilog.name, tb.name, description))
    print(f"wrote {core} (FuseSoC core {top}, targets lint and sim) and {tb}", file=sys.stderr)
    return [tb, core]


def register_regmap(sub: argparse._SubParsersAction) -> None:
    """``hw regmap``: the control block's register map as Markdown or a C header."""
    r = sub.add_parser("hw regmap", help="the control block's register map (Markdown or C header)",
                       description="Print the register map of the control block that "
                       "`hw verilog --control axil|wishbone` puts in front of a fabric: the "
                       "Markdown table of docs/integration.md, or a C header of offsets, "
                       "field positions and masks. Both come from one table "
                       "(hw/regmap.py), as does the block's address decode.")
    r.add_argument("--format", choices=("markdown", "c"), default="markdown",
                   help="markdown (default) or c")
    r.add_argument("--prefix", default="PIPEGOSSIP", metavar="P",
                   help="C macro prefix (upper-case identifier); default PIPEGOSSIP")
    r.add_argument("-o", "--output", metavar="PATH",
                   help="write to PATH (atomically) instead of stdout")
    r.set_defaults(func=cmd_regmap)


def cmd_regmap(args: argparse.Namespace) -> int:
    from . import UsageError
    from ..hw.regmap import c_header, markdown_table
    if args.format == "c":
        try:
            text = c_header(args.prefix)
        except ValueError as e:
            raise UsageError(f"--prefix: {e}") from None
    else:
        text = markdown_table()
    atomic_write(args.output or "-", text)
    return 0
