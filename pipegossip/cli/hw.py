"""Sub-commands of the hardware generator: ``verilog``, ``hwsim`` and ``cost``."""

from __future__ import annotations

import argparse
import sys

from . import UsageError
from ..infra.files import atomic_output, atomic_write
from .ip import IP_OPTIONS, add_ip_arguments, refuse_ip_arguments, register_regmap
from .network_hw import NETWORK_OPTIONS, add_network_arguments
from .schedule_hw import SIZE_OPTIONS, add_size_arguments
from .options import (FSM_OPTIONS, add_config_arguments, config_from_args, int_list,
                      positive_int, progress_printer, refuse_given, word_width, word_widths)
from .options import missing_config

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verilog", help="generate the fabric's Verilog",
                       description="Generate the Verilog of the gossip fabric for one "
                       "configuration (ports: docs/hw.md), or with --fabric schedule the "
                       "schedule-driven fabric for (N, width, depth), which runs any schedule "
                       "loaded at run time (docs/schedule-fabric.md), or with --fabric network "
                       "the fabric shaped like a topology, one link per edge "
                       "(docs/network-fabric.md).")
    add_config_arguments(p, required=False)
    p.add_argument("--fabric", choices=("fsm", "schedule", "network"), default="fsm",
                   help="fsm (default): broadcast orders built into per-processor "
                   "controllers, needs --order; schedule: programs loaded at run time, "
                   "sized by --n, --width, --depth (the configuration options do not apply); "
                   "network: one node per vertex of --topology and one link per edge, "
                   "programs loaded at run time")
    add_size_arguments(p)
    add_network_arguments(p)
    p.add_argument("--width", type=word_width, default=8, metavar="W",
                   help="word width in bits; default 8")
    p.add_argument("--name", default=None, metavar="PREFIX",
                   help="top-level module name, which every module of the Verilog carries "
                   "as its prefix (submodules are PREFIX.node0, ...), so that two generated "
                   "fabrics can sit in one design; default pipegossip_fabric (--fabric "
                   "schedule: pipegossip_schedule_fabric, network: pipegossip_network_fabric)")
    p.add_argument("--schedule", nargs="+", default=None, metavar="FILE.json",
                   help="--fabric schedule or network: size the fabric from the schedules "
                   "it must run: N (and the topology) from the files, depth the longest "
                   "program, slots the most any needs (and the bank depth: --slots unless "
                   "--bank-depth); --depth, --slots, --bank-depth make it larger. Images "
                   "for it: `hw program FILE.json --verilog OUT.v`")
    p.add_argument("--no-trace", action="store_true",
                   help="--fabric schedule or network: the lean build, without the trace "
                   "bundles (schedule: send__*/recv__*, network: tx__*/rx__*); the same "
                   "datapath, every other port the same in every cycle")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="write to PATH (atomically) instead of stdout")
    add_ip_arguments(p)
    p.set_defaults(func=cmd_verilog)
    register_regmap(sub)

    h = sub.add_parser("hwsim", help="run the fabric in Amaranth's simulator against the model",
                       description="Simulate the generated fabric cycle by cycle in Amaranth's "
                       "simulator, print its trace as a run-table (format in docs/reference.md) and compare "
                       "it, the deliveries and the words with the golden model. Exit status 1 "
                       "on any difference.")
    add_config_arguments(h)
    h.add_argument("--width", type=word_width, default=8, metavar="W",
                   help="word width in bits; default 8")
    h.add_argument("--vcd", metavar="PATH", help="also write a VCD of the run to PATH")
    h.add_argument("--quiet", action="store_true", help="print only the verdict")
    h.set_defaults(func=cmd_hwsim)

    c = sub.add_parser("cost", help="Yosys cell counts and logic depth of the fabric",
                       description="Synthesise fabrics with Yosys (generic gates, then "
                       "4-input LUTs) and print cell counts and logic depth: growth with N, "
                       "and what each feature costs over the base fabric.")
    c.add_argument("--sizes", type=int_list(2), default=[4, 8, 16, 32], metavar="LIST",
                   help="N values of the growth table; default 4,8,16,32")
    c.add_argument("--widths", type=word_widths, default=[8, 32], metavar="LIST",
                   help="word widths of the growth table; default 8,32")
    c.add_argument("--feature-sizes", type=int_list(4), default=[8, 16], metavar="LIST",
                   help="N values of the feature table; default 8,16")
    c.add_argument("--jobs", type=positive_int, default=2, metavar="J",
                   help="synthesis runs in parallel; default 2")
    c.add_argument("-o", "--output", metavar="PATH",
                   help="also write the tables (Markdown) to PATH")
    c.set_defaults(func=cmd_cost)


def _verilog_network(args: argparse.Namespace) -> int:
    from .network_hw import network_topology, write_network_verilog

    refuse_given(args, FSM_OPTIONS,
                 "only to --fabric fsm; the network fabric runs any schedule on its topology "
                 "loaded at run time")
    name = _module_name(args, "network")
    op = args.op or "sum"
    store = args.store or "banks"
    if args.schedule:
        topo, depth, args.slots, args.bank_depth = _network_from_schedules(args, op)
    else:
        topo = network_topology(args)
        depth = 64 if args.depth is None else args.depth
    write_network_verilog(args.output or "-", topo, args.width, depth, args.slots, op,
                          args.bank_depth, store, args.node or "wire", name=name,
                          trace=not args.no_trace, control=args.control)
    if args.output:
        kept = (f"bank_depth={args.bank_depth or args.slots or topo.n}" if store == "banks"
                else f"store={store}")
        print(f"wrote {args.output}: module {name}, network fabric, {topo.name} n={topo.n} "
              f"({2 * topo.m} link ends), width={args.width}, depth={depth}, "
              f"slots={args.slots or topo.n}, {kept}, op={op}"
              + ("" if (args.node or "wire") == "wire" else f", node={args.node}")
              + (", lean (no trace ports)" if args.no_trace else "")
              + (f", behind an {args.control} control block" if args.control else ""),
              file=sys.stderr)
    if args.core:
        from .ip import write_core
        write_core(args.output, name, args.control, f"pipegossip network fabric, {topo.name} "
                   f"n={topo.n}, width {args.width}, depth {depth}")
    return 0


def _verilog_schedule(args: argparse.Namespace) -> int:
    from .schedule_hw import write_verilog

    refuse_given(args, FSM_OPTIONS,
                 "only to --fabric fsm; the schedule fabric runs any schedule loaded at "
                 "run time")
    refuse_given(args, NETWORK_OPTIONS, "only to --fabric network")
    name = _module_name(args, "schedule")
    if args.schedule:
        args.n, depth, args.slots = _schedule_from_schedules(args)
    elif args.n is None:
        raise UsageError("the following arguments are required: --n (or --schedule FILE.json)")
    else:
        depth = 64 if args.depth is None else args.depth
    write_verilog(args.output or "-", args.n, args.width, depth, args.slots, name=name,
                  trace=not args.no_trace, control=args.control)
    if args.output:
        print(f"wrote {args.output}: module {name}, schedule fabric, n={args.n}, "
              f"width={args.width}, depth={depth}, slots={args.slots or args.n}"
              + (", lean (no trace ports)" if args.no_trace else "")
              + (f", behind an {args.control} control block" if args.control else ""),
              file=sys.stderr)
    if args.core:
        from .ip import write_core
        write_core(args.output, name, args.control, f"pipegossip schedule fabric, n={args.n}, "
                   f"width {args.width}, depth {depth}")
    return 0


def _schedule_from_schedules(args: argparse.Namespace) -> tuple[int, int, int]:
    """``(n, depth, slots)`` of the schedule fabric that runs every ``--schedule`` file.

    Each file is compiled as ``hw program`` compiles it (depth: its cycles
    or ``--depth``; slots: the items it needs or ``--slots``); the fabric
    takes the largest of each, and every file is compiled again at that
    size, so that one that cannot run there is refused now (one line).
    """
    from .program import compile_image
    images = [(f, _named(f, compile_image, f, args.width, args.depth, args.slots))
              for f in args.schedule]
    ns = {im.size.n for _, im in images}
    if len(ns) > 1:
        raise UsageError("--schedule: one fabric runs schedules of one N; got "
                         + ", ".join(f"{f} n={im.size.n}" for f, im in images))
    (n,) = ns
    if args.n is not None and args.n != n:
        raise UsageError(f"--n {args.n}: the schedules have n={n}")
    depth = max(im.size.depth for _, im in images)
    slots = max(im.size.slots for _, im in images)
    for f, _ in images:
        _named(f, compile_image, f, args.width, depth, slots)
    return n, depth, slots


def _named(path: str, compile_one, *a, **kw):
    """``compile_one(*a, **kw)``; a schedule it refuses is refused naming ``path``."""
    from ..model.errors import FormatError
    from ..model.schedules.program import ProgramError
    try:
        return compile_one(*a, **kw)
    except (ProgramError, FormatError) as e:
        if str(e).startswith(path):
            raise
        raise type(e)(f"{path}: {e}") from None


def _network_from_schedules(args: argparse.Namespace, op: str):
    """``(topology, depth, slots, bank_depth)`` of the network fabric that runs every
    ``--schedule`` file (on ``--topology`` if given, else their own, which must be one)."""
    from ..hw.schedule.image import topology_label
    from .program import compile_network_image
    topo = network_topology(args) if args.topology is not None else None
    images = [(f, _named(f, compile_network_image, f, args.width, args.depth, args.slots,
                         op=op, bank_depth=args.bank_depth, topology=topo))
              for f in args.schedule]
    labels = {topology_label(im.program.topology) for _, im in images}
    if len(labels) > 1:
        raise UsageError("--schedule: one network fabric runs schedules of one topology; got "
                         + ", ".join(f"{f} {topology_label(im.program.topology)}"
                                     for f, im in images))
    topo = images[0][1].program.topology
    depth = max(im.size.depth for _, im in images)
    slots = max(im.size.slots for _, im in images)
    for f, _ in images:
        _named(f, compile_network_image, f, args.width, depth, slots, op=op,
               bank_depth=args.bank_depth, topology=topo)
    return topo, depth, slots, args.bank_depth


def _module_name(args: argparse.Namespace, fabric: str) -> str:
    """``--name``, checked, or the fabric's default top-module name."""
    from ..hw.export import check_module_name
    if args.name is None:
        if fabric == "schedule":
            from ..hw.schedule.export import TOP
        elif fabric == "network":
            from ..hw.network.export import TOP
        else:
            TOP = "pipegossip_fabric"
        return TOP
    try:
        return check_module_name(args.name)
    except ValueError as e:
        raise UsageError(f"--name: {e}") from None


def cmd_verilog(args: argparse.Namespace) -> int:
    from ..hw.export import verilog_text

    refuse_ip_arguments(args)
    if args.fabric == "schedule":
        return _verilog_schedule(args)
    if args.fabric == "network":
        return _verilog_network(args)
    refuse_given(args, (*SIZE_OPTIONS, *IP_OPTIONS, ("--schedule", "schedule", None),
                        ("--no-trace", "no_trace", False)),
                 "only to --fabric schedule or network")
    refuse_given(args, NETWORK_OPTIONS, "only to --fabric network")
    missing = missing_config(args)
    if missing:
        raise UsageError(f"the following arguments are required: {', '.join(missing)}")
    from ..infra.budgets import check_export_time
    args.size_check = lambda args, n: check_export_time(n)  # before an order file is parsed
    config = config_from_args(args)
    name = _module_name(args, "fsm")
    text = verilog_text(config, width=args.width, name=name)
    if args.output:
        atomic_write(args.output, text)
        print(f"wrote {args.output}: module {name}, {config.header()}, width={args.width}",
              file=sys.stderr)
        if args.core:
            from .ip import write_core
            write_core(args.output, name, None,
                       f"pipegossip FSM fabric, {config.header()}, width {args.width}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_hwsim(args: argparse.Namespace) -> int:
    from ..infra.budgets import check_budget
    from ..model.engine import simulate
    # Imported here, not at the top: other commands never pay for the simulator.
    from ..sim.fsm.amaranth_run import run_fabric
    from ..sim.judge.fsm import judge

    config = config_from_args(args)
    ref = simulate(config, table=False)
    check_budget("python-sim-slots", config.n * ref.length,
                 f"hwsim of N={config.n} with L={ref.length}",
                 hint="too large for the Python simulator, use the co-simulation")
    if args.vcd:
        # Written beside its destination and renamed: never a half-written VCD.
        with atomic_output(args.vcd, temp_path=True) as tmp:
            record = run_fabric(config, args.width, vcd_path=tmp)
    else:
        record = run_fabric(config, args.width)
    verdict = judge(config, args.width, record)
    if not args.quiet:
        table = record.table()
        table.comments = [config.header(), f"source: Amaranth simulation, width={args.width}"]
        sys.stdout.write(table.render())
    if not verdict.match:
        print(verdict.report())
    deliveries = int(record.window("dvalid", 1, record.last_cycle).sum())
    counts = ", ".join(f"{k} {v}" for k, v in verdict.counts().items())
    outcome = ("matches the model" if verdict.match
               else f"DIFFERS: {len(verdict.mismatches)} mismatch(es) ({counts})")
    print(f"# rtl {config.slug} width={args.width}: {record.busy_cycles} cycles, "
          f"{deliveries} deliveries; {outcome}")
    return 0 if verdict.match else 1


def cmd_cost(args: argparse.Namespace) -> int:
    from ..infra.files import check_output_file
    from ..infra.budgets import check_fabric
    from ..hw.cost import feature_table, growth_table, render_markdown

    if args.output:
        # Refused now (OutputError: one line, exit 2), not after the synthesis runs.
        check_output_file(args.output)
    for n in set(args.sizes) | set(args.feature_sizes):
        check_fabric(n, max(args.widths) if n in args.sizes else 8)
    say = progress_printer("cost")
    growth = growth_table(args.sizes, args.widths, jobs=args.jobs, progress=say)
    features = feature_table(args.feature_sizes, jobs=args.jobs, progress=say)
    text = render_markdown(growth, features)
    sys.stdout.write(text)
    if args.output:
        atomic_write(args.output, text)
    return 0

