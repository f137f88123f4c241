"""Sub-commands of the FPGA flow: ``fpga`` and ``fpga-sweep``.

Only the command line lives here; the flow is the package
:mod:`pipegossip.hw.fpga`. Every output location is checked before the
first tool runs, so a bad ``-o`` never costs a synthesis.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from contextlib import contextmanager
from pathlib import Path

from .cli import UsageError
from .options import (add_config_arguments, checked_number, choice_list, config_from_args,
                      decimal, int_list, progress_printer, word_width, word_widths)
from .sweep import SweepOptions, add_sweep_arguments, run_sweep
from .sweep_cli import print_failures
from .hw.fpga.devices import BOARDS, DEVICES
from .hw.fpga.flow import prepare, run_flow
from .hw.fpga.outputs import check_output_dir, check_writable_folder
from .hw.fpga.reports import render_text
from .hw.fpga.sweep import (FEATURES, SWEEP_NS, outcome_row, sort_rows, sweep_grid, sweep_jobs,
                         sweep_markdown, write_sweep)
from .hw.fpga.tools import FlowError

__all__ = ["register", "SWEEP_NS", "SWEEP_TIMEOUT_S"]

#: Default ``--timeout`` of ``fpga-sweep``, seconds per point.
SWEEP_TIMEOUT_S = 1800.0


_mhz = checked_number(float, "a frequency in MHz", lambda v: 0 < v <= 1000,
                      "must be in (0, 1000] MHz, got {text!r}")
_minutes = checked_number(float, "minutes", lambda v: not v < 0,
                          "must be 0 (no limit) or more, got {text!r}")


@contextmanager
def _terminate_cleanly():
    """Turn SIGTERM into SystemExit while a build runs.

    So that a killed build still stops its tool and removes its half-filled
    temporary folder (both are cleaned up on any exception).
    """
    def stop(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fpga", help="synthesise and place-and-route a fabric with YoWASP (report, bitstream)",
        description="Synthesise and place-and-route one fabric with the YoWASP tools and "
        "report cells, Fmax and the critical path from nextpnr's JSON report. Without "
        "--board the bare fabric is measured inside a registered two-pin boundary; with "
        "--board a self-checking top is built into a bitstream. Exit status 0 whenever a "
        "report was produced (also when timing fails), 1 when a tool fails, 2 for bad input.")
    add_config_arguments(p)
    p.add_argument("--width", type=word_width, default=8, help="word width in bits; default 8")
    p.add_argument("--device", choices=list(DEVICES),
                   help="FPGA (default ice40-up5k, or the board's)")
    p.add_argument("--board", choices=list(BOARDS),
                   help="build the self-checking top for this board, with a bitstream")
    p.add_argument("--clock", type=_mhz, metavar="MHZ",
                   help="timing constraint of a bare build (default 50 on iCE40, 100 on ECP5); "
                   "with --board, run the top from a PLL at this frequency "
                   "(default: the board's oscillator)")
    p.add_argument("--pnr-seed", type=decimal, default=1, metavar="S",
                   help="nextpnr placement seed; default 1")
    p.add_argument("--timeout", type=_minutes, default=0, metavar="MIN",
                   help="stop the tools after MIN minutes (exit status 1); default 0: no limit")
    p.add_argument("--no-trace", action="store_true",
                   help="bare build: leave the trace outputs (action, peer, used, cycle) "
                   "unobserved, as a deployment that only consumes deliveries would")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="output folder (replaced as a whole; only an empty folder or an "
                   "earlier fpga output is replaced)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    p.set_defaults(func=cmd_fpga)

    s = sub.add_parser(
        "fpga-sweep", help="cells and Fmax versus N, width and feature options (long)",
        description="Run the bare-fabric flow over a grid of N x width x feature options "
        "per device, one sweep job per point on the Dask runner (docs/sweeps.md): points "
        "build in parallel, each result is cached in the store, and an interrupted sweep "
        "resumes. Writes sweep.csv, sweep.md and sweep.png (default into "
        "STORE/fpga-sweep/) and prints the table.")
    s.add_argument("--devices", type=choice_list(list(DEVICES)),
                   default=["ice40-up5k", "ecp5-25k"],
                   help="comma-separated devices; default ice40-up5k,ecp5-25k")
    s.add_argument("--n", dest="ns", type=int_list(), default=None, metavar="N,N,...",
                   help="processor counts; default 4,8,16 (ECP5 also 32)")
    s.add_argument("--widths", type=word_widths, default=[8, 32], metavar="W,W,...",
                   help="word widths; default 8,32")
    s.add_argument("--features", type=choice_list(list(FEATURES)), default=list(FEATURES),
                   help=f"feature variants; default {','.join(FEATURES)}")
    s.add_argument("--pnr-seed", type=decimal, default=1, metavar="S")
    s.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="folder for sweep.csv, sweep.md and sweep.png; default STORE/fpga-sweep")
    s.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    # Place-and-route of the largest points runs for hours: a point still
    # building after 30 minutes is recorded as a timeout (and retried next run).
    add_sweep_arguments(s, timeout=SWEEP_TIMEOUT_S)
    s.set_defaults(func=cmd_sweep)


def cmd_fpga(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    try:
        job = prepare(config, args.width, device=args.device, board=args.board,
                      clock_mhz=args.clock, pnr_seed=args.pnr_seed, trace=not args.no_trace)
        check_output_dir(args.output)
    except (TypeError, ValueError, NotImplementedError) as e:
        raise UsageError(f"fpga: {e}") from None
    try:
        with _terminate_cleanly():
            report = run_flow(job, args.output, progress_printer("pipegossip fpga", args.quiet),
                              timeout=args.timeout * 60 or None)
    except FlowError as e:
        print(f"pipegossip fpga: error: {e}", file=sys.stderr)
        if e.log and not args.quiet:
            print("pipegossip fpga: end of the tool's log (nothing was written):",
                  file=sys.stderr)
            print("\n".join("  " + line for line in e.log.splitlines()), file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        print(render_text(report), end="")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    points = sweep_grid(args.devices, args.ns, args.widths, args.features)
    options = SweepOptions.from_args(args)
    # The table and plot's folder before the first build, so a bad -o costs nothing.
    try:
        if args.output is not None:
            check_writable_folder(args.output)
    except ValueError as e:
        raise UsageError(f"fpga-sweep: {e}") from None
    run = run_sweep("fpga-sweep", sweep_jobs(points, args.pnr_seed), options,
                    progress=not args.quiet)
    rows = sort_rows([outcome_row(o) for o in run.outcomes], args.devices, args.features)
    out = Path(args.output) if args.output is not None else run.store.sweep_dir("fpga-sweep")
    write_sweep(rows, out)
    files = [str(out / name) for name in ("sweep.csv", "sweep.md", "sweep.png")]
    if args.format == "json":
        print(json.dumps({"sweep": "fpga-sweep", "rows": rows, "counts": run.counts,
                          "wall_seconds": round(run.wall_seconds, 3),
                          "store": str(run.store.root), "files": files,
                          "failures": [o.row() for o in run.failures]}))
    else:
        print(sweep_markdown(rows), end="")
    if not args.quiet:
        print(f"pipegossip fpga-sweep: wrote {', '.join(files)}", file=sys.stderr)
    return print_failures(run, "pipegossip fpga-sweep")
