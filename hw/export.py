"""Verilog export of a :class:`~pipegossip.hw.fabric.Fabric`."""

from __future__ import annotations

import re

from amaranth.back import verilog

from .. import __version__
from ..model.config import RunConfig
from .fabric import Fabric, fabric_signature

__all__ = ["verilog_text", "check_module_name"]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_module_name(name: object) -> str:
    """Refuse a top-module name that is not a plain Verilog identifier."""
    if not isinstance(name, str):
        raise TypeError(f"module name must be a string, not {name!r}")
    if not _IDENTIFIER.match(name):
        raise ValueError(f"module name must be a plain Verilog identifier "
                         f"(letters, digits and _, not starting with a digit), not {name!r}")
    return name


def verilog_text(config: RunConfig, width: int = 8, name: str = "pipegossip_fabric") -> str:
    """The Verilog of the fabric for ``config``.

    Ports are those of :class:`Fabric` with nested names joined by ``__``
    (``words__3__payload``, ``delivery__0__valid``), plus ``clk`` and the
    active-high synchronous ``rst`` of the ``sync`` domain. The text starts
    with a comment naming the configuration and is byte-for-byte
    reproducible (no source locations are emitted).

    Raises
    ------
    TypeError, ValueError
        For a bad configuration object, width or module name.
    """
    check_module_name(name)
    fabric_signature(config, width)  # refuse bad parameters before building anything
    fabric = Fabric(config, width)
    text = verilog.convert(fabric, name=name, emit_src=False)
    header = (f"// pipegossip {__version__} fabric, width={width}\n"
              f"// {config.header()}\n")
    if config.order_name in ("explicit", "random"):
        header += "// orders: " + "; ".join(
            f"p{i}: " + " ".join(map(str, row)) for i, row in enumerate(config.orders.tolist())
        ) + "\n"
    return header + text
