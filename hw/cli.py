"""Sub-commands of the hardware generator: ``verilog``, ``hwsim`` and ``cost``."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from ..cli import UsageError
from ..files import atomic_write
from ..options import add_config_arguments, config_from_args, int_list, positive_int, progress_printer

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verilog", help="generate the fabric's Verilog",
                       description="Generate the Verilog of the gossip fabric for one "
                       "configuration (ports: docs/hw.md).")
    add_config_arguments(p)
    p.add_argument("--width", type=positive_int, default=8, metavar="W",
                   help="word width in bits; default 8")
    p.add_argument("--name", default="pipegossip_fabric", metavar="TOP",
                   help="top-level module name; default pipegossip_fabric")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="write to PATH (atomically) instead of stdout")
    p.set_defaults(func=cmd_verilog)

    h = sub.add_parser("hwsim", help="run the fabric in Amaranth's simulator against the model",
                       description="Simulate the generated fabric cycle by cycle in Amaranth's "
                       "simulator, print its trace as a run-table (SPEC section 11) and compare "
                       "it, the deliveries and the words with the golden model. Exit status 1 "
                       "on any difference.")
    add_config_arguments(h)
    h.add_argument("--width", type=positive_int, default=8, metavar="W",
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
    c.add_argument("--widths", type=int_list(1), default=[8, 32], metavar="LIST",
                   help="word widths of the growth table; default 8,32")
    c.add_argument("--feature-sizes", type=int_list(4), default=[8, 16], metavar="LIST",
                   help="N values of the feature table; default 8,16")
    c.add_argument("--jobs", type=positive_int, default=2, metavar="J",
                   help="synthesis runs in parallel; default 2")
    c.add_argument("-o", "--output", metavar="PATH",
                   help="also write the tables (Markdown) to PATH")
    c.set_defaults(func=cmd_cost)


def cmd_verilog(args: argparse.Namespace) -> int:
    from .export import check_module_name, verilog_text

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


#: Largest run the simulator command accepts (N x L trace slots).
MAX_HWSIM_SLOTS = 200_000


def cmd_hwsim(args: argparse.Namespace) -> int:
    from ..model.engine import simulate
    from ..waveforms.diff import diff_tables, format_diff
    from .testbench import run_fabric, tag_word

    config = config_from_args(args)
    ref = simulate(config, table=False)
    if config.n * ref.length > MAX_HWSIM_SLOTS:
        raise UsageError(f"N={config.n} with L={ref.length} is too large for the Python "
                         f"simulator (limit {MAX_HWSIM_SLOTS:,} slots); use the co-simulation")
    if args.vcd:
        vcd_dir = os.path.dirname(os.path.abspath(args.vcd))
        if not os.path.isdir(vcd_dir):
            raise FileNotFoundError(2, "output folder does not exist", vcd_dir)
    ref = simulate(config, table=True)
    if args.vcd:
        # Written beside its destination and renamed: never a half-written VCD.
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(args.vcd)}.", dir=vcd_dir)
        os.close(fd)
        try:
            rtl = run_fabric(config, args.width, vcd_path=tmp)
            os.replace(tmp, args.vcd)
        except BaseException:
            os.unlink(tmp)
            raise
    else:
        rtl = run_fabric(config, args.width)
    problems = []
    # Codes and peers (WS targets, WR awaited senders) alike, and `used`.
    trace = diff_tables(ref.table, rtl.table, limit=12, exact=True)
    if not trace.equal:
        problems.append(f"the trace differs from the model in {trace.total} slot(s)"
                        + (f" from step {trace.first_step}" if trace.first_step else ""))
    got = sorted((d.step, d.src, d.dst, d.session) for d in rtl.deliveries)
    if got != sorted(ref.deliveries.rows()):
        problems.append("deliveries differ from the model's transfers")
    wrong = [d for d in rtl.deliveries
             if d.word != tag_word(d.src, d.session, config.sessions, args.width)]
    if wrong:
        problems.append(f"{len(wrong)} deliveries carry the wrong word")
    if rtl.stall.any():
        problems.append("the watchdog rose")
    if not args.quiet:
        sys.stdout.write(rtl.table.render())
    if not trace.equal:
        sys.stdout.write(format_diff(trace, "model", "hardware (Amaranth simulator)"))
    verdict = "matches the model" if not problems else "DIFFERS: " + "; ".join(problems)
    print(f"# rtl {config.slug} width={args.width}: {rtl.length} cycles, "
          f"{len(rtl.deliveries)} deliveries; {verdict}")
    return 0 if not problems else 1


def cmd_cost(args: argparse.Namespace) -> int:
    from .cost import feature_table, growth_table, render_markdown

    say = progress_printer("cost")
    growth = growth_table(args.sizes, args.widths, jobs=args.jobs, progress=say)
    features = feature_table(args.feature_sizes, jobs=args.jobs, progress=say)
    text = render_markdown(growth, features)
    sys.stdout.write(text)
    if args.output:
        atomic_write(args.output, text)
    return 0

