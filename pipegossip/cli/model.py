"""Sub-commands of the golden model: ``run``, ``plot``, ``table8``, ``bench``."""

from __future__ import annotations

import argparse
import json
import sys
import time

from . import typed_command
from ..infra.files import atomic_write
from ..infra.budgets import check_budget
from .options import add_config_arguments, config_from_args, positive_int, power_of_two
from ..sweeps.runner import SweepOptions, add_sweep_arguments, run_sweep
from ..model.config import RunConfig
from ..model.engine import simulate
from ..model.errors import ConfigError
from ..model.orders import FAMILIES
from ..model.result import RunResult

__all__ = ["register", "stderr_progress", "MAX_SCALING_N"]

#: Largest N of `plot scaling`, which runs every N from 2 up (about a minute
#: at 1024 with the default seeds); larger N belong to `conjecture21`.
MAX_SCALING_N = 1024


def stderr_progress(label: str, every: float | None = None):
    """A progress callback for :func:`simulate` that writes to stderr.

    A line at most every ``every`` seconds: 2 on a terminal, 10 into a file
    or a pipe (a log); a run of minutes used to write a line each half
    second.
    """
    start = time.monotonic()
    every = every if every is not None else (2.0 if sys.stderr.isatty() else 10.0)
    last = [-every]

    def report(step: int, done: int, total: int) -> None:
        now = time.monotonic() - start
        if now - last[0] < every:
            return
        last[0] = now
        pct = 100.0 * done / total if total else 100.0
        print(f"{label}: step {step}, {done}/{total} transfers ({pct:.0f}%), {now:.1f}s",
              file=sys.stderr, flush=True)

    return report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="simulate a configuration with the golden model",
                       description="Simulate one configuration and print its run-table "
                       "(format in docs/reference.md) and metrics.")
    add_config_arguments(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--no-table", action="store_true",
                   help="metrics and utilisation string only (needed for very large runs)")
    p.add_argument("-o", "--output", metavar="PATH", help="write to PATH instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("plot", help="draw a run's utilisation, its run-table, or L/E versus N",
                       description="Write a PNG or SVG figure (chosen by the -o suffix).")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", parser_class=type(p))
    kinds.required = True
    for kind, what in (("utilization", "utilisation profile of one run (paper Figs. 8-12)"),
                       ("table", "run-table picture of one run (paper Fig. 4)")):
        k = kinds.add_parser(kind, help=what, description=what)
        add_config_arguments(k)
        k.add_argument("-o", "--output", required=True, metavar="FILE.png|FILE.svg")
        k.set_defaults(func=cmd_plot_run)
    k = kinds.add_parser("scaling", help="L and E versus N per family, with and without "
                         "Algorithm 2 (paper Figs. 5-7, 13-15)")
    k.add_argument("--max-n", type=positive_int, default=48, help="largest N; default 48")
    k.add_argument("--seeds", type=positive_int, default=8,
                   help="random orders per N (mean and spread); default 8")
    k.add_argument("--families", default=",".join(FAMILIES),
                   help=f"comma-separated subset of {','.join(FAMILIES)}")
    k.add_argument("-o", "--output", required=True, metavar="FILE.png|FILE.svg")
    k.set_defaults(func=cmd_plot_scaling)

    p = sub.add_parser("table8",
                       help="our Table 8 (identity + Algorithm 2 + any) beside the paper's",
                       description="One sweep job per N on the Dask runner (docs/sweeps.md); "
                       "results are cached in the store.")
    p.add_argument("--max-n", type=power_of_two, default=2048,
                   help="largest N, a power of two; default 2048 (the paper's last row)")
    add_sweep_arguments(p, formats=("text", "json", "markdown"))
    p.set_defaults(func=cmd_table8)

    p = sub.add_parser("bench", help="time the model against its performance targets")
    p.add_argument("--baseline", action="store_true",
                   help="also time the literal per-step simulator on the Table 8 sweep "
                   "(about 15 minutes on an idle 2-core machine, longer under load) and on "
                   "identity + Algorithm 2 + any at N=512 and 1024, and print the speed-ups")
    p.add_argument("--large", action="store_true",
                   help="also run identity + Algorithm 2 + any at N=16384, metrics only "
                   "(about a minute and 4 GiB)")
    p.add_argument("--case", action="append", choices=sorted(_bench_cases()),
                   help="run only this case (repeatable)")
    p.set_defaults(func=cmd_bench)


def _bench_cases():
    from ..benchmarks.model import CASES

    return CASES


def _least_length(config: RunConfig) -> int:
    """A lower bound on L (exact for the pipelined and identity closed forms)."""
    from ..model.closed_forms import identity_length, physical_limit, pipelined_length
    least = physical_limit(config.n, config.sessions, config.channels)
    plain = (config.receive == "ordered" and not config.substitute and config.sessions == 1
             and config.channels is None)
    if plain and config.order_name == "pipelined":
        least = max(least, pipelined_length(config.n))
    elif plain and config.order_name == "identity":
        least = max(least, identity_length(config.n))
    return least


def _run_with_table(config: RunConfig, progress=None) -> RunResult:
    """Simulate with the table, refusing tables too large to be useful.

    L is known before any work for the paper's closed forms, and bounded
    below for every configuration; a table that is too large even then is
    refused at once, not after the metrics run that measures L.
    """
    check_budget("table-cells", config.n * _least_length(config),
                 f"the run-table of N={config.n} (L at least {_least_length(config)})",
                 "or pass --no-table for metrics only")
    probe = simulate(config, progress=progress)
    check_budget("table-cells", config.n * probe.length,
                 f"the run-table of N={config.n} (L={probe.length})",
                 "or pass --no-table for metrics only")
    return simulate(config, table=True)


def _table_of_n(args: argparse.Namespace, n: int) -> None:
    """The run-table's budget from N alone (before an order file is parsed)."""
    from ..model.closed_forms import physical_limit
    if args.no_table:
        return
    try:
        least = physical_limit(n, max(1, args.sessions or 1), args.channels)
    except (ValueError, ZeroDivisionError):  # a bad N or --channels: the configuration says so
        return
    check_budget("table-cells", n * least, f"the run-table of N={n:,} (L at least {least:,})",
                 "or pass --no-table for metrics only")


def cmd_run(args: argparse.Namespace) -> int:
    args.size_check = _table_of_n
    config = config_from_args(args)
    want_table = not args.no_table
    progress = None if args.quiet else stderr_progress(f"run {config.slug}")
    if want_table:
        result = _run_with_table(config, progress)
    else:
        result = simulate(config, progress=progress)
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


def _check_figure_path(path: str) -> None:
    if not path.lower().endswith((".png", ".svg")):
        raise ConfigError(f"plot file must end in .png or .svg, got {path!r}")


def cmd_plot_run(args: argparse.Namespace) -> int:
    from ..plots.figures import runtable_figure, save_figure, utilization_figure

    _check_figure_path(args.output)
    config = config_from_args(args)
    title = f"{config.header()}"
    if args.kind == "utilization":
        result = simulate(config, progress=stderr_progress(f"plot {config.slug}"))
        fig = utilization_figure(result.utilization, title=f"{title}\n{result.summary()}",
                                 n=config.n)
    else:
        result = _run_with_table(config)
        fig = runtable_figure(result.table, title=f"{title}\n{result.summary()}")
    save_figure(fig, args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def cmd_plot_scaling(args: argparse.Namespace) -> int:
    from ..plots.figures import save_figure, scaling_figure
    from ..model.sweeps import family_sweep

    _check_figure_path(args.output)
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    bad = [f for f in families if f not in FAMILIES]
    if bad or not families:
        raise ConfigError(f"unknown family {bad[0]!r} in --families" if bad
                          else "--families names no family")
    if args.max_n < 2:
        raise ConfigError(f"--max-n must be at least 2, got {args.max_n}")
    if args.max_n > MAX_SCALING_N:
        raise ConfigError(f"--max-n {args.max_n} is over {MAX_SCALING_N}: this plot runs every N "
                          "from 2 up; for large N use 'pipegossip paper conjecture21 --max-n N'")
    points = family_sweep(range(2, args.max_n + 1), families, seeds=range(args.seeds),
                          progress=lambda what: print(f"plot scaling: {what}", file=sys.stderr))
    save_figure(scaling_figure(points, title=f"N = 2..{args.max_n}, random over "
                                             f"{args.seeds} seeds"), args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def cmd_table8(args: argparse.Namespace) -> int:
    from ..model.sweeps import PAPER_TABLE8, TABLE8_N, Table8Row
    from .sweep import model_jobs, print_failures

    ns = [n for n in TABLE8_N if n <= args.max_n]
    if not ns:
        raise ConfigError(f"--max-n must be at least 2, got {args.max_n}")
    if args.max_n > TABLE8_N[-1]:
        raise ConfigError(f"the paper's Table 8 ends at N={TABLE8_N[-1]}; for larger N use "
                          f"'pipegossip paper conjecture21 --max-n {args.max_n}'")
    run = run_sweep("table8", model_jobs(ns), SweepOptions.from_args(args))
    rows = []
    for o in sorted((o for o in run.outcomes if o.result is not None),
                    key=lambda o: o.result["N"]):
        paper = PAPER_TABLE8.get(o.result["N"])
        rows.append(Table8Row(o.result["N"], o.result["L"], o.result["efficiency"],
                              None if paper is None else paper / 100))
    if args.format == "json":
        print(json.dumps([{"N": r.n, "L": r.length, "efficiency": r.efficiency,
                           "paper_efficiency": r.paper_efficiency} for r in rows]))
        return print_failures(run, typed_command())
    md = args.format == "markdown"
    head = ("| N | our L | our E (%) | paper E (%) |\n|---:|---:|---:|---:|" if md
            else f"{'N':>5} {'our L':>6} {'our E %':>8} {'paper E %':>9}")
    print(head)
    for r in rows:
        paper = "" if r.paper_efficiency is None else f"{100 * r.paper_efficiency:.2f}"
        if md:
            print(f"| {r.n} | {r.length} | {100 * r.efficiency:.2f} | {paper} |")
        else:
            print(f"{r.n:>5} {r.length:>6} {100 * r.efficiency:>8.2f} {paper:>9}")
    below = [r.n for r in rows if r.below_two_thirds]
    print(f"# E below 2/3 for N = {below}" if below else "# E stays at or above 2/3 for every N")
    return print_failures(run, typed_command())


def cmd_bench(args: argparse.Namespace) -> int:
    from ..benchmarks.model import BASELINE_CASES, CASES, LARGE_CASES, RATIOS, measure

    names = args.case or [c for c in CASES if c not in BASELINE_CASES + LARGE_CASES]
    if args.baseline:
        names += [c for c in BASELINE_CASES if c not in names]
    if args.large:
        names += [c for c in LARGE_CASES if c not in names]
    results = {}
    ok = True
    for name in names:
        what, limit_s, limit_mib, _ = CASES[name]
        print(f"bench: {what} ...", file=sys.stderr, flush=True)
        r = results[name] = measure(name)
        verdict = ""
        if limit_s is not None:
            met = r.seconds <= limit_s and (limit_mib is None or r.peak_mib <= limit_mib)
            ok &= met
            target = f"<= {limit_s:g} s" + (f", <= {limit_mib:g} MiB" if limit_mib else "")
            verdict = f"  target {target}: {'met' if met else 'MISSED'}"
        print(f"{name:<20} {r.seconds:8.2f} s  (process {r.process_seconds:.2f} s wall, "
              f"{r.process_cpu_seconds:.2f} s CPU)  peak {r.peak_mib:7.1f} MiB{verdict}")
        print(f"{'':<20} {r.detail}", flush=True)
    for (fast_name, slow_name), least in RATIOS.items():
        if fast_name in results and slow_name in results:
            fast, slow = results[fast_name], results[slow_name]
            ratio = slow.process_seconds / fast.process_seconds
            verdict = ""
            if least is not None:
                ok &= ratio >= least
                verdict = f"; target >= {least:g}x: {'met' if ratio >= least else 'MISSED'}"
            cpu = slow.process_cpu_seconds / max(fast.process_cpu_seconds, 1e-9)
            print(f"{fast_name}: engine {fast.process_seconds:.2f} s vs literal per-step "
                  f"{slow.process_seconds:.2f} s as whole processes = {ratio:.1f}x faster "
                  f"(CPU time {cpu:.1f}x, in-process {slow.seconds / fast.seconds:.1f}x)"
                  f"{verdict}")
    return 0 if ok else 1
