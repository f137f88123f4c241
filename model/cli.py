"""Sub-commands of the golden model: ``run``, ``plot``, ``bench``."""

from __future__ import annotations

import argparse
import json
import sys
import time

from ..files import atomic_write
from ..options import add_config_arguments, config_from_args
from .engine import simulate
from .errors import ConfigError

__all__ = ["register", "stderr_progress", "MAX_TABLE_CELLS"]

#: A text or JSON table larger than this is refused unless --no-table.
MAX_TABLE_CELLS = 20_000_000


def stderr_progress(label: str):
    """A progress callback for :func:`simulate` that writes to stderr."""
    start = time.monotonic()

    def report(step: int, done: int, total: int) -> None:
        pct = 100.0 * done / total if total else 100.0
        print(f"{label}: step {step}, {done}/{total} transfers ({pct:.0f}%), "
              f"{time.monotonic() - start:.1f}s", file=sys.stderr, flush=True)

    return report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="simulate a configuration with the golden model",
                       description="Simulate one configuration and print its run-table "
                       "(SPEC section 11) and metrics.")
    add_config_arguments(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--no-table", action="store_true",
                   help="metrics and utilisation string only (needed for very large runs)")
    p.add_argument("-o", "--output", metavar="PATH", help="write to PATH instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    want_table = not args.no_table
    progress = None if args.quiet else stderr_progress(f"run {config.slug}")
    result = simulate(config, table=False, progress=progress) if not want_table else None
    if want_table:
        # Cheap dry run first only when the table could be huge: refuse early.
        probe = simulate(config, table=False, progress=progress)
        cells = config.n * probe.length
        if cells > MAX_TABLE_CELLS:
            raise ConfigError(f"the run-table would hold {cells:,} slots (N={config.n}, "
                              f"L={probe.length}); pass --no-table for metrics only")
        result = simulate(config, table=True)
    if args.format == "json":
        text = json.dumps(result.to_json(table=want_table)) + "\n"
    else:
        lines = []
        if want_table:
            lines.append(result.table.render().rstrip("\n"))
        else:
            lines.append("# " + config.header())
            lines.append("used " + " ".join(str(int(u)) for u in result.utilization))
        lines.append(f"# {result.summary()}")
        text = "\n".join(lines) + "\n"
    if args.output:
        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
