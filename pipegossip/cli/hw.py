"""Sub-commands of the hardware generator: ``verilog``, ``hwsim`` and ``cost``."""

from __future__ import annotations

import argparse
import sys

from . import UsageError
from ..infra.files import atomic_output, atomic_write
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
    p.add_argument("--name", default="pipegossip_fabric", metavar="TOP",
                   help="top-level module name; default pipegossip_fabric")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="write to PATH (atomically) instead of stdout")
    p.set_defaults(func=cmd_verilog)

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

    refuse_given(args, (*FSM_OPTIONS, ("--name", "name", "pipegossip_fabric")),
                 "only to --fabric fsm; the network fabric runs any schedule on its topology "
                 "loaded at run time")
    topo = network_topology(args)
    depth = 64 if args.depth is None else args.depth
    op = args.op or "sum"
    store = args.store or "banks"
    write_network_verilog(args.output or "-", topo, args.width, depth, args.slots, op,
                          args.bank_depth, store)
    if args.output:
        kept = (f"bank_depth={args.bank_depth or args.slots or topo.n}" if store == "banks"
                else f"store={store}")
        print(f"wrote {args.output}: network fabric, {topo.name} n={topo.n} "
              f"({2 * topo.m} link ends), width={args.width}, depth={depth}, "
              f"slots={args.slots or topo.n}, {kept}, op={op}", file=sys.stderr)
    return 0


def _verilog_schedule(args: argparse.Namespace) -> int:
    from .schedule_hw import write_verilog

    refuse_given(args, (*FSM_OPTIONS, ("--name", "name", "pipegossip_fabric")),
                 "only to --fabric fsm; the schedule fabric runs any schedule loaded at "
                 "run time")
    refuse_given(args, NETWORK_OPTIONS, "only to --fabric network")
    if args.n is None:
        raise UsageError("the following arguments are required: --n")
    depth = 64 if args.depth is None else args.depth
    write_verilog(args.output or "-", args.n, args.width, depth, args.slots)
    if args.output:
        print(f"wrote {args.output}: schedule fabric, n={args.n}, width={args.width}, "
              f"depth={depth}, slots={args.slots or args.n}", file=sys.stderr)
    return 0


def cmd_verilog(args: argparse.Namespace) -> int:
    from ..hw.export import check_module_name, verilog_text

    if args.fabric == "schedule":
        return _verilog_schedule(args)
    if args.fabric == "network":
        return _verilog_network(args)
    refuse_given(args, SIZE_OPTIONS,
                 "only to --fabric schedule or network")
    refuse_given(args, NETWORK_OPTIONS, "only to --fabric network")
    missing = missing_config(args)
    if missing:
        raise UsageError(f"the following arguments are required: {', '.join(missing)}")
    from ..infra.budgets import check_export_time
    args.size_check = lambda args, n: check_export_time(n)  # before an order file is parsed
    config = config_from_args(args)
    try:
        check_module_name(args.name)
    except ValueError as e:
        raise UsageError(f"--name: {e}") from None
    text = verilog_text(config, width=args.width, name=args.name)
    if args.output:
        atomic_write(args.output, text)
        print(f"wrote {args.output}: module {args.name}, {config.header()}, width={args.width}",
              file=sys.stderr)
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

