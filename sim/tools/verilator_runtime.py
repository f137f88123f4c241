"""One compiled Verilator run-time library per machine, shared by every build.

cocotb's runner compiles Verilator's run-time library (``verilated*.cpp``,
~20 s of CPU) into every build directory. Those objects depend only on the
Verilator install, the C++ compiler and the trace flags (they are compiled
with ``OPT_GLOBAL``, not the recipe's ``OPT_FAST``), so the first build
stores them in ``<build root>/_runtime/<key>/`` (:func:`store`) and later
builds get them through :mod:`.objcache`, the compiler stand-in named by the
``OBJCACHE`` make variable (:func:`make_environment`), which copies them in
where make would compile them. Each stored library carries a stamp with its
key, checked before use, like a build (:mod:`.build_cache`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from .build_cache import is_valid, stamp, versions
from ..paths import build_root
from ..scratch import scratch, sweep
from .toolchain import verilator_root

__all__ = ["runtime_dir", "cached", "store", "make_environment"]


def _key(trace: str | None) -> str:
    root = verilator_root()
    cxx = shutil.which(os.environ.get("CXX", "c++")) or "c++"
    facts = dict(root=str(root), trace=trace, cxx=cxx,
                 cxx_mtime=os.path.getmtime(cxx) if os.path.exists(cxx) else 0,
                 versions=versions(),
                 config_h=(root / "include" / "verilated_config.h").stat().st_mtime)
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:12]


def runtime_dir(trace: str | None) -> Path:
    """The folder of the run-time library for builds with waveform support ``trace``."""
    return build_root() / "_runtime" / _key(trace)


def cached(trace: str | None) -> Path | None:
    """The stored run-time library for ``trace``, or None before the first build."""
    folder = runtime_dir(trace)
    return folder if is_valid(folder, folder.name) else None


def _objects(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("verilated*") if p.suffix in (".o", ".d"))


def store(build_dir: Path, trace: str | None) -> None:
    """Keep the run-time objects of a finished Verilator build for later builds.

    Does nothing when a valid library is stored already, or the build has no
    run-time objects; a parallel process storing the same library first wins.
    """
    folder = runtime_dir(trace)
    objects = _objects(build_dir)
    if not objects or is_valid(folder, folder.name):
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    sweep(folder.parent)
    with scratch(folder.parent, folder.name) as tmp:
        for obj in objects:
            shutil.copy2(obj, tmp / obj.name)
        stamp(tmp, folder.name, dict(trace=trace))
        if folder.exists():  # an invalid one (swapped by hand): make room
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:  # stored meanwhile by a parallel build
            pass


def make_environment(runtime: Path | None, make_variables: dict[str, str]) -> dict[str, str]:
    """Environment variables that steer the ``make`` step of a Verilator build.

    Parameters
    ----------
    runtime : Path or None
        A stored run-time library (:func:`cached`) to serve the run-time
        objects from, through ``OBJCACHE`` (any ``OBJCACHE`` already set,
        such as ccache, still runs every other compile).
    make_variables : dict
        Variables to set on make's command line. cocotb's runner passes make
        no arguments of ours, but GNU make reads command-line variable
        definitions from ``MAKEFLAGS`` in its environment too, and those
        override the makefile's own assignments as command-line ones do.

    Returns
    -------
    dict
        ``MAKEFLAGS`` and, with a library, ``OBJCACHE``.
    """
    # make splits MAKEFLAGS at blanks; a backslash keeps a blank in a value.
    definitions = " ".join(f"{k}={v.replace(' ', chr(92) + ' ')}"
                           for k, v in make_variables.items())
    env = {"MAKEFLAGS": " ".join(filter(None, [os.environ.get("MAKEFLAGS", ""), definitions]))}
    if runtime is not None:
        # make hands the recipe line to the shell: quote the paths.
        helper = Path(__file__).with_name("objcache.py")
        env["OBJCACHE"] = " ".join(
            [shlex.quote(sys.executable), "-I", shlex.quote(str(helper)),
             shlex.quote(str(runtime)), os.environ.get("OBJCACHE", "")]).rstrip()
    return env
