"""Sub-commands of the FPGA flow: ``fpga``, ``fpga-sweep`` and ``fpga-compare``.

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

from . import EXIT_INTERNAL, EXIT_USAGE, EXIT_VERDICT, UsageError, tool_memory_refusal, typed_command
from .options import (FSM_OPTIONS, add_config_arguments, checked_number, choice_list,
                      config_from_args, int_list, nonnegative_int,
                      progress_printer, refuse_given, word_width, word_widths)
from .network_hw import (NETWORK_OPTIONS, add_network_arguments, check_network_size,
                             network_topology)
from .schedule_hw import SIZE_OPTIONS, add_size_arguments, check_fabric_size
from ..sweeps.runner import SweepOptions, add_sweep_arguments, run_sweep
from .sweep import print_failures
from ..hw.fpga.compare import (DEFAULT_TARGETS, Target, compare_markdown, parse_targets,
                              run_compare, write_compare)
from ..hw.fpga.devices import BOARDS, DEVICES, NETWORK_STORE
from ..hw.fpga.flow import FABRICS, ROUTERS, prepare, prepare_network, prepare_schedule, run_flow
from ..infra.files import OutputKind, mark_output_dir
from ..infra.files import check_output_dir as files_check_output_dir
from ..hw.fpga.outputs import check_output_dir
from ..hw.fpga.reports import render_text
from ..hw.fpga.sweep import (FEATURES, SWEEP_NS, outcome_row, sort_rows, sweep_grid, sweep_jobs,
                         sweep_markdown, write_sweep)
from ..hw.fpga.tools import FlowError

__all__ = ["register", "SWEEP_NS", "SWEEP_TIMEOUT_S"]

#: ``--fault`` kinds (:data:`pipegossip.hw.schedule.image.FAULTS`, named here so that
#: registering the command loads no Amaranth).
FAULTS = ("expected", "program")
#: ``--fault`` of the FSM board top: its button injects a wrong word.
FSM_FAULTS = ("word",)

#: Default ``--timeout`` of ``fpga-sweep``, seconds per point.
SWEEP_TIMEOUT_S = 1800.0


_mhz = checked_number(float, "a frequency in MHz", lambda v: 0 < v <= 1000,
                      "must be in (0, 1000] MHz, got {text!r}")
_minutes = checked_number(float, "minutes", lambda v: 0 <= v <= 7 * 24 * 60,
                          "must be 0 (no limit) up to 10080 (a week), got {text!r}")


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
        description="Synthesise and place-and-route one fabric (the FSM fabric of a "
        "configuration or, with --fabric schedule, the schedule-driven fabric of a size) with "
        "the YoWASP tools and report cells, Fmax and the critical path from nextpnr's JSON "
        "report. Without "
        "--board the bare fabric is measured inside a registered two-pin boundary; with "
        "--board a self-checking top is built into a bitstream. Exit status 0 whenever a "
        "report was produced (also when timing fails), 1 when --simulate says FAIL, 2 for "
        "bad input, 3 when a tool fails or is stopped by --timeout.")
    add_config_arguments(p, required=False)
    for action in p._actions:  # --fabric schedule takes no --order, network no --n
        if action.dest == "order":
            action.help += " (--fabric fsm: required)"
        if action.dest == "n":
            action.help += " (required but with --schedule or --fabric network)"
    p.add_argument("--fabric", choices=FABRICS, default="fsm",
                   help="fsm (default): the broadcast orders built into per-processor "
                   "controllers, needs --order; schedule: the schedule-driven fabric, which "
                   "runs any schedule loaded at run time, sized by --n, --width, --depth, "
                   "--slots, or by --schedule FILE (the configuration options and "
                   "--no-trace are refused); network: the network fabric of --topology "
                   "(with --n/--k/--a/--b, --op), sized by --width, --depth, --slots, "
                   "--bank-depth, or by --schedule FILE with --board")
    add_size_arguments(p)
    add_network_arguments(p)
    p.add_argument("--schedule", metavar="FILE.json",
                   help="--fabric schedule or network with --board: the schedule the board "
                   "runs and checks (its image is in block RAM; the fabric is sized by it, or "
                   "by --depth/--slots/--bank-depth when larger; network: on --topology, "
                   "default the schedule's own)")
    p.add_argument("--simulate", action="store_true",
                   help="with --board: simulate the placed and routed design (the netlist "
                   "the bitstream is packed from), run its self-check and print PASS or "
                   "FAIL (node K) (exit 0 or 1); iCE40 boards")
    p.add_argument("--fault", choices=FAULTS + FSM_FAULTS,
                   help="with --simulate: plant a fault so that the check must FAIL: "
                   "--schedule: in the expected values or in the program; --fabric fsm: "
                   "word (the simulated button injects a wrong word)")
    p.add_argument("--width", type=word_width, default=8, help="word width in bits; default 8")
    p.add_argument("--device", choices=list(DEVICES),
                   help="FPGA (default ice40-up5k, or the board's)")
    p.add_argument("--board", choices=list(BOARDS),
                   help="build the self-checking top for this board, with a bitstream "
                   "(--fabric schedule or network: with --schedule)")
    p.add_argument("--clock", type=_mhz, metavar="MHZ",
                   help="timing constraint of a bare build (default 50 on iCE40, 100 on ECP5); "
                   "with --board, run the top from a PLL at this frequency "
                   "(default: the board's oscillator)")
    p.add_argument("--pnr-seed", type=nonnegative_int, default=1, metavar="S",
                   help="nextpnr placement seed; default 1")
    p.add_argument("--router", choices=ROUTERS,
                   help="nextpnr's router (default: nextpnr's own, router1); router2 "
                   "copes better with a congested device")
    p.add_argument("--timeout", type=_minutes, default=0, metavar="MIN",
                   help="stop the tools after MIN minutes (exit status 3); default 0: no limit")
    p.add_argument("--no-trace", action="store_true",
                   help="bare build: leave the trace outputs (action, peer, used, cycle) "
                   "unobserved, as a deployment that only consumes deliveries would; "
                   "--fabric network --node reg: the lean build, without the per-port "
                   "tx/rx trace outputs and the trace-only program fields")
    p.add_argument("--node-modules", action="store_true",
                   help="--fabric network, bare build: synthesise one module per node "
                   "degree and instance it at every node (Yosys keeps it a module of its "
                   "own), instead of the flattened fabric: the same circuit, much faster "
                   "synthesis, no optimisation across a node's ports")
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
    s.add_argument("--pnr-seed", type=nonnegative_int, default=1, metavar="S")
    s.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="folder for sweep.csv, sweep.md and sweep.png; default STORE/fpga-sweep")
    s.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    # Place-and-route of the largest points runs for hours: a point still
    # building after 30 minutes is recorded as a timeout (and retried next run).
    add_sweep_arguments(s, timeout=SWEEP_TIMEOUT_S)
    s.set_defaults(func=cmd_sweep)

    c = sub.add_parser(
        "fpga-compare", help="the schedule fabric beside the FSM fabric: cells, Fmax, ns (long)",
        description="Bare builds, one after the other, per target DEVICE:N: the FSM fabric "
        "with pipelined orders, the FSM fabric with identity + Algorithm 2 + receive any, and "
        "the schedule fabric (depth: the longest compiled program of identity + Algorithm 2 + "
        "any, the pipelined run and cyclic-shift at N, rounded up to a power of two); then the "
        "time of one gossip on each (cycles / Fmax). Each build goes into a folder of its own "
        "in DIR and is reused while its design digest is unchanged; writes DIR/compare.md and "
        "DIR/compare.json and prints the tables. Exit 3 if a build failed.")
    c.add_argument("--targets", type=_targets, default=None, metavar="DEVICE:N,...",
                   help="default " + ",".join(f"{d}:{n}" for d, n in DEFAULT_TARGETS))
    c.add_argument("--width", type=word_width, default=8, help="word width in bits; default 8")
    c.add_argument("--pnr-seeds", type=int_list(0), default=[1], metavar="S,S,...",
                   help="nextpnr seeds, each build once per seed (times use the first); "
                   "default 1")
    c.add_argument("--clock", type=_mhz, metavar="MHZ",
                   help="timing constraint (default 50 on iCE40, 100 on ECP5)")
    c.add_argument("--timeout", type=_minutes, default=0, metavar="MIN",
                   help="stop a build after MIN minutes (recorded as failed); default 0: no limit")
    c.add_argument("--rebuild", action="store_true", help="rebuild even unchanged builds")
    c.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="folder of the builds and of compare.md, compare.json")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    c.set_defaults(func=cmd_compare)


#: The folders of `fpga-sweep -o` and `fpga-compare -o` (each command replaces only its own).
SWEEP_OUTPUT = OutputKind("fpga-sweep", signature=("sweep.csv", "sweep.md"), extra=("sweep.png",))
COMPARE_OUTPUT = OutputKind("fpga-compare", signature=("compare.md", "compare.json"),
                            extra=("*-w*-s*",))

#: Options of the FSM fabric's build beyond its configuration.
_FSM_BUILD = (("--no-trace", "no_trace", False),)
#: The network fabric's bare build synthesised one node module per degree.
_NODE_MODULES = (("--node-modules", "node_modules", False),)


def _targets(text: str) -> list[Target]:
    try:
        return parse_targets(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _prepare_job(args: argparse.Namespace):
    """The build the options describe, and the node a planted fault must fail at.

    UsageError for options of the other fabric. The router is set here, not by
    the caller, so that ``paper fpga-references`` (which rebuilds and checks
    digests through this function) sees a ``--router`` build as it was made.
    """
    job, node = _prepare_fabric_job(args)
    job.router = args.router  # enters nextpnr's options (and the digest) only when given
    return job, node


def _prepare_fabric_job(args: argparse.Namespace):
    """:func:`_prepare_job` without the flow options that apply to every fabric."""
    if args.simulate and args.board is None:
        raise UsageError("--simulate needs --board (it simulates the board's design)")
    if args.simulate and not DEVICES[BOARDS[args.board].device].family == "ice40":
        raise UsageError(f"--simulate: iCE40 boards only (icebreaker), not {args.board}")
    if args.fabric == "network":
        refuse_given(args, FSM_OPTIONS,
                     "to --fabric fsm only; the network fabric is sized by --topology, "
                     "--width, --depth, --slots (or by --schedule FILE with --board) and runs "
                     "any schedule loaded at run time")
        if args.schedule is not None or args.board is not None:
            refuse_given(args, _FSM_BUILD, "to a bare build only (--fabric fsm or network)")
            refuse_given(args, _NODE_MODULES, "to a bare build only (--fabric network "
                         "without --board)")
            return _prepare_network_board(args)
        refuse_given(args, [("--fault", "fault", None)], "only with --schedule and --board")
        if args.no_trace and args.node != "reg":
            raise UsageError("--fabric network --no-trace (the lean build, without the "
                             "per-port trace outputs) needs --node reg")
        topo = network_topology(args)
        depth = 64 if args.depth is None else args.depth
        # the store defaults to the device's (NETWORK_STORE: single on iCE40, banks on
        # ECP5), unless --bank-depth asks for banks
        store = args.store or ("banks" if args.bank_depth is not None else
                               NETWORK_STORE[DEVICES[args.device or "ice40-up5k"].family])
        check_network_size(topo, args.width, depth, args.slots or topo.n,
                           f"the network fabric of {topo.name} (N={topo.n:,}), width "
                           f"{args.width}, depth {depth:,}", args.bank_depth, store)
        return prepare_network(topo, args.width, depth, args.slots, args.op or "sum",
                               device=args.device, clock_mhz=args.clock,
                               pnr_seed=args.pnr_seed, bank_depth=args.bank_depth,
                               store=store, node=args.node or "wire",
                               trace=not args.no_trace,
                               node_modules=args.node_modules), None
    refuse_given(args, (*NETWORK_OPTIONS, *_NODE_MODULES), "to --fabric network only")
    if args.fabric == "schedule":
        refuse_given(args, (*FSM_OPTIONS, *_FSM_BUILD),
                     "to --fabric fsm only; the schedule fabric is sized by --n, --width, "
                     "--depth, --slots and runs any schedule loaded at run time")
        if args.schedule is not None or args.board is not None:
            return _prepare_schedule_board(args)
        refuse_given(args, [("--fault", "fault", None)], "only with --schedule and --board")
        if args.n is None:
            raise UsageError("the following arguments are required: --n")
        depth = 64 if args.depth is None else args.depth
        check_fabric_size(args.n, args.width, depth, args.slots or args.n,
                          f"the schedule fabric for N={args.n:,}, width {args.width}, "
                          f"depth {depth:,}")
        return prepare_schedule(args.n, args.width, depth, args.slots, device=args.device,
                                clock_mhz=args.clock, pnr_seed=args.pnr_seed), None
    refuse_given(args, (*SIZE_OPTIONS, ("--schedule", "schedule", None)),
                 "to --fabric schedule only")
    if args.fault is not None and (args.fault not in FSM_FAULTS or not args.simulate):
        raise UsageError(f"--fault {args.fault}: --fabric fsm takes --fault "
                         f"{', '.join(FSM_FAULTS)} with --simulate")
    if args.order is None or args.n is None:
        raise UsageError("the following arguments are required: "
                         + ", ".join(f for f, v in (("--n", args.n), ("--order", args.order))
                                     if v is None) + " (or --fabric schedule)")
    config = config_from_args(args)
    job = prepare(config, args.width, device=args.device, board=args.board,
                  clock_mhz=args.clock, pnr_seed=args.pnr_seed, trace=not args.no_trace)
    job.netlist = args.simulate
    return job, None


def _prepare_schedule_board(args: argparse.Namespace):
    """A schedule board build: the schedule's image in the board top, and the fault's node."""
    from ..hw.schedule.image import plant_fault
    from .program import compile_image
    _board_schedule(args)
    image = compile_image(args.schedule, args.width, args.depth, args.slots)
    if args.n is not None and args.n != image.size.n:
        raise UsageError(f"--n {args.n}: {args.schedule} has n={image.size.n}")
    fault = _planted(args, lambda kind: plant_fault(image.program, image.entries, kind))
    image.entries, node = fault or (image.entries, None)
    z = image.size
    job = prepare_schedule(z.n, z.width, z.depth, z.slots, device=args.device,
                           clock_mhz=args.clock, pnr_seed=args.pnr_seed, board=args.board,
                           image=image.encoded())
    job.netlist = args.simulate
    return job, node


def _board_schedule(args: argparse.Namespace) -> None:
    """Refuse a board build without its schedule, or a schedule without a board."""
    if args.board is None:
        raise UsageError("--schedule builds a board top: give --board "
                         f"({', '.join(BOARDS)})")
    if args.schedule is None:
        raise UsageError(f"--board with --fabric {args.fabric} needs --schedule FILE.json "
                         "(the schedule the board runs and checks)")


def _planted(args: argparse.Namespace, plant):
    """The image entries with ``--fault`` planted by ``plant(kind)``, and the node to fail."""
    if args.fault is None:
        return None
    if args.fault not in FAULTS or not args.simulate:
        raise UsageError(f"--fault {args.fault}: --schedule takes --fault "
                         f"{', '.join(FAULTS)} with --simulate")
    return plant(args.fault)


def _prepare_network_board(args: argparse.Namespace):
    """A network board build: the schedule's image in the board top, and the fault's node.

    The topology is --topology (with --n/--k/--a/--b) or, without it, the schedule's own.
    """
    from ..hw.network.image import plant_network_fault
    from .program import compile_network_image
    _board_schedule(args)
    topo = network_topology(args) if args.topology is not None else None
    image = compile_network_image(args.schedule, args.width, args.depth, args.slots,
                                  op=args.op or "sum", bank_depth=args.bank_depth,
                                  topology=topo)
    fault = _planted(args, lambda kind: plant_network_fault(image.program, image.entries, kind))
    image.entries, node = fault or (image.entries, None)
    z, p = image.size, image.program
    # The store as for a bare build: the board's device's (single on iCE40, banks on
    # ECP5) unless --store or --bank-depth says; the image's entries do not depend on it.
    job = prepare_network(p.topology, z.width, z.depth, z.slots, p.op, device=args.device,
                          clock_mhz=args.clock, pnr_seed=args.pnr_seed,
                          bank_depth=args.bank_depth,
                          store=args.store or ("banks" if args.bank_depth is not None else None),
                          board=args.board, image=image.encoded(), node=args.node or "wire")
    job.netlist = args.simulate
    return job, node


def cmd_fpga(args: argparse.Namespace) -> int:
    try:
        job, fault_node = _prepare_job(args)
        check_output_dir(args.output)
    except (TypeError, ValueError, NotImplementedError) as e:
        raise UsageError(str(e)) from None
    try:
        with _terminate_cleanly():
            report = run_flow(job, args.output, progress_printer(typed_command(), args.quiet),
                              timeout=args.timeout * 60 or None)
    except FlowError as e:
        refusal = tool_memory_refusal(f"{e}\n{e.log or ''}")
        if refusal is not None:  # an address-space limit, not a failing tool
            print(f"{typed_command()}: error: {refusal}", file=sys.stderr)
            return EXIT_USAGE
        if str(e).startswith("the design does not fit"):
            # The flow worked and answered: the design is larger than the part. A
            # verdict (docs/reference.md, "Exit status"), as the sweep's result row.
            print(f"{typed_command()}: {e} (nothing written)", file=sys.stderr)
            return EXIT_VERDICT
        print(f"{typed_command()}: error: {e}", file=sys.stderr)
        if e.log and not args.quiet:
            print(f"{typed_command()}: end of the tool's log (nothing was written):",
                  file=sys.stderr)
            print("\n".join("  " + line for line in e.log.splitlines()), file=sys.stderr)
        return EXIT_INTERNAL  # a failing tool is not a verdict
    status = 0
    if args.simulate:
        from ..sim.netlist_sim import simulate_fsm_board, simulate_schedule_board
        progress = progress_printer(typed_command(), args.quiet)
        try:
            with _terminate_cleanly():
                report["simulation"] = (
                    simulate_schedule_board(job, args.output, progress)
                    if job.fabric != "fsm" else
                    simulate_fsm_board(job, args.output, fault=args.fault is not None,
                                       progress=progress))
        except FlowError as e:
            print(f"{typed_command()}: error: {e}", file=sys.stderr)
            if e.log and not args.quiet:
                print("\n".join("  " + line for line in e.log.splitlines()), file=sys.stderr)
            return EXIT_INTERNAL
        report["simulation"]["fault_node"] = fault_node
        status = 0 if report["simulation"]["verdict"] == "PASS" else 1
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        print(render_text(report), end="")
        if args.simulate:
            print(report["simulation"]["verdict"])
    return status


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..infra.budgets import check_fabric, check_model_memory
    for n in args.ns or ():  # before the grid builds any orders
        check_model_memory(n)
        for width in args.widths or (8,):
            check_fabric(n, width)
    points = sweep_grid(args.devices, args.ns, args.widths, args.features)
    options = SweepOptions.from_args(args)
    # The table and plot's folder before the first build, so a bad -o costs nothing;
    # a folder of the user's own files is refused (files.check_output_dir).
    if args.output is not None:
        files_check_output_dir(args.output, SWEEP_OUTPUT)
    run = run_sweep("fpga-sweep", sweep_jobs(points, args.pnr_seed), options,
                    progress=not args.quiet)
    rows = sort_rows([outcome_row(o) for o in run.outcomes], args.devices, args.features)
    out = Path(args.output) if args.output is not None else run.store.sweep_dir("fpga-sweep")
    write_sweep(rows, out)
    names = ("sweep.csv", "sweep.md", "sweep.png")
    if args.output is not None:
        mark_output_dir(out, names, SWEEP_OUTPUT)
    files = [str(out / name) for name in names]
    if args.format == "json":
        print(json.dumps({"sweep": "fpga-sweep", "rows": rows, "counts": run.counts,
                          "wall_seconds": round(run.wall_seconds, 3),
                          "store": str(run.store.root), "files": files,
                          "failures": [o.row() for o in run.failures]}))
    else:
        print(sweep_markdown(rows), end="")
    if not args.quiet:
        print(f"{typed_command()}: wrote {', '.join(files)}", file=sys.stderr)
    return print_failures(run, typed_command())


def cmd_compare(args: argparse.Namespace) -> int:
    from ..hw.fpga.compare import schedule_depth
    from ..infra.budgets import check_fabric, check_model_memory

    targets = args.targets or [Target(d, n) for d, n in DEFAULT_TARGETS]
    for t in targets:  # the golden model, the FSM crossbar, then the schedule fabric
        check_model_memory(t.n)
        check_fabric(t.n, args.width)
        depth = schedule_depth(t.n, args.width)
        check_fabric_size(t.n, args.width, depth, t.n,
                          f"the schedule fabric for N={t.n:,}, width {args.width}, "
                          f"depth {depth:,}")
    out = files_check_output_dir(args.output, COMPARE_OUTPUT)  # empty, new, or an earlier run's
    before = {e.name for e in out.iterdir()} if out.is_dir() else set()
    progress = progress_printer(typed_command(), args.quiet)
    try:
        with _terminate_cleanly():
            result = run_compare(targets, args.output, width=args.width, seeds=args.pnr_seeds,
                                 clock_mhz=args.clock, timeout=args.timeout * 60 or None,
                                 rebuild=args.rebuild, progress=progress)
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None
    files = write_compare(result, args.output)
    mark_output_dir(out, {e.name for e in out.iterdir()} - before, COMPARE_OUTPUT)
    if args.format == "json":
        print(json.dumps(result, indent=2))
    else:
        print(compare_markdown(result), end="")
    progress(f"wrote {', '.join(str(f) for f in files)}")
    failed = [e for t in result["targets"] for b in t["builds"] for e in b["errors"]]
    return EXIT_INTERNAL if failed else 0
