"""The ``pipegossip`` command line.

Each command module exposes ``register(subparsers)``, which adds its
sub-commands with ``set_defaults(func=...)``; ``func(args)`` returns the exit
status. Errors the user can fix (bad configuration, unreadable files) become
one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .model.errors import ConfigError, DeadlockError, FormatError

__all__ = ["main", "UsageError"]

#: Modules providing sub-commands, in the order `--help` lists them.
COMMAND_MODULES = [
    "pipegossip.model.cli",
    "pipegossip.hw.cli",
    "pipegossip.sim.cli",
    "pipegossip.waveforms.cli",
    "pipegossip.hw.fpga_cli",
]


class UsageError(Exception):
    """A command-line problem the user can fix; printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pipegossip",
                     description="Generator and verification kit for crossbar gossip fabrics "
                     "(The Algorithm of Pipelined Gossiping).",
                     epilog="Run 'pipegossip COMMAND --help' for a command's options.")
    parser.add_argument("--version", action="version", version=f"pipegossip {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (ConfigError, FormatError) as e:
        print(f"pipegossip: error: {e}", file=sys.stderr)
        return 2
    except DeadlockError as e:
        print(f"pipegossip: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        where = f" {e.filename!r}" if e.filename else ""
        print(f"pipegossip: error:{where} {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pipegossip: interrupted", file=sys.stderr)
        return 130
