"""Compiler stand-in that serves Verilator's run-time objects from a cache.

Verilator's makefile (``verilated.mk``) runs every C++ compile as
``$(OBJCACHE) $(CXX) ...``; ``OBJCACHE`` is its documented hook for ccache.
:mod:`.verilator_runtime` points it at this script::

    python objcache.py CACHE_DIR [OBJCACHE...] COMPILER ARGS...

A compile (``-c``) whose output (``-o NAME``, in the working directory) is
an object in ``CACHE_DIR`` is answered by copying that object and its
dependency file (``NAME.d``) instead; any other command, with whatever
``OBJCACHE`` was set before, runs unchanged. The script runs as a file,
outside the package, so it imports nothing but the standard library.
"""

from __future__ import annotations

import os
import shutil
import sys

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Copy a cached object, or run the compiler command ``argv[1:]``.

    Parameters
    ----------
    argv : list of str
        The cache folder, then the command make would have run.

    Returns
    -------
    int
        0 after serving from the cache; otherwise this process becomes the
        compiler and never returns.
    """
    cache, command = argv[0], argv[1:]
    out = command[command.index("-o") + 1] if "-o" in command[:-1] else None
    if "-c" in command and out and os.path.basename(out) == out:
        cached = os.path.join(cache, out)
        if os.path.isfile(cached):
            # copyfile, not copy2: the object must look as new as a fresh compile.
            shutil.copyfile(cached, out)
            stem = os.path.splitext(out)[0]
            if os.path.isfile(os.path.join(cache, stem + ".d")):
                shutil.copyfile(os.path.join(cache, stem + ".d"), stem + ".d")
            return 0
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
