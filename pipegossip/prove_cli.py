"""Sub-commands ``prove`` and ``prove-sweep``: formal proofs with SymbiYosys.

``prove`` proves one configuration (the fabric's delivery, timing and
watchdog properties; with ``--receive any --substitute`` also the resolver
equivalence); ``prove-sweep`` proves many and prints the Markdown table of
docs/proofs.md. Exit status 0 when every property is proven, 1 when one
failed or was not proven within ``--timeout`` (a verdict), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path

from .cli import UsageError
from .options import add_config_arguments, config_from_args, int_list, positive_int

__all__ = ["register"]

MODES = ("bmc", "prove")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=MODES, default="bmc",
                   help="bmc: bounded model check of cycles 0..L+2; prove: k-induction "
                   "(unbounded when it closes); default bmc")
    p.add_argument("--depth", type=positive_int, default=None, metavar="D",
                   help="steps to check (bmc) or the induction length (prove); default L+3")
    p.add_argument("--timeout", type=positive_int, default=600, metavar="S",
                   help="seconds per proof before it is stopped (not proven); default 600")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (one line per proof) or json; default text")
    p.add_argument("--table", action="store_true",
                   help="print the results as a Markdown table")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="keep the work folders (RTLIL, .sby, logs, traces) and results.json "
                   "in DIR; default a temporary folder, removed")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def register(sub: argparse._SubParsersAction) -> None:
    from .hw.proofs.catalog import MUTANTS, OPTION_SETS, ORDER_FAMILIES

    p = sub.add_parser(
        "prove", help="formal proofs of one fabric (SymbiYosys)",
        description="Prove with SymbiYosys (z3) that the fabric of one configuration "
        "delivers every word exactly once to every other processor with its source, "
        "delivers nothing after done, finishes in L cycles and never stalls; with "
        "--receive any --substitute also that the resolver equals the serial chain of "
        "the rule. Exit 0 proven, 1 a property failed or timed out, 2 bad usage.",
        epilog="Mutants (each must fail): " + "; ".join(f"{k}: {v}" for k, v in MUTANTS.items()))
    add_config_arguments(p, n_default=3, order_default="identity")
    p.add_argument("--mutate", choices=sorted(MUTANTS), default=None, metavar="NAME",
                   help="prove a deliberately broken design instead (" + ", ".join(MUTANTS)
                   + "); it must fail")
    p.add_argument("--only", choices=("fabric", "resolver"), default=None,
                   help="run only the fabric proof or only the resolver equivalence")
    _common(p)
    p.set_defaults(func=cmd_prove)

    s = sub.add_parser(
        "prove-sweep", help="formal proofs over sizes, order families and options",
        description="Run the fabric proofs for every N of --sizes, order family and option "
        "set, and the resolver equivalence for every N of --resolver-sizes; print the "
        "summary as a Markdown table (the README's proof table).")
    s.add_argument("--sizes", type=int_list(2), default=[3, 4, 5, 6], metavar="LIST",
                   help="N values of the fabric proofs; default 3,4,5,6")
    s.add_argument("--orders", default=",".join(ORDER_FAMILIES), metavar="LIST",
                   help="order families (random uses seed 0); default " + ",".join(ORDER_FAMILIES))
    s.add_argument("--options", default=",".join(OPTION_SETS), metavar="LIST",
                   help="option sets: " + ", ".join(OPTION_SETS) + "; default all of them")
    s.add_argument("--resolver-sizes", type=int_list(2), default=[3, 4, 5, 6, 7, 8],
                   metavar="LIST", help="N values of the resolver equivalence; default 3..8")
    s.add_argument("--no-resolver", action="store_true",
                   help="skip the resolver equivalence (fabric proofs only)")
    s.add_argument("--rows", action="store_true",
                   help="with --table: one row per proof instead of one per N")
    _common(s)
    s.set_defaults(func=cmd_sweep)


def _names(text: str, known, what: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in known]
    if bad or not names:
        raise UsageError(f"unknown {what} {', '.join(map(repr, bad)) or repr(text)} "
                         f"(expected some of {', '.join(known)})")
    return names


def cmd_prove(args: argparse.Namespace) -> int:
    from .hw.proofs.catalog import RESOLVER_MUTANTS
    from .hw.proofs.suite import fabric_job, resolver_job

    config = config_from_args(args)
    resolver_ok = config.receive == "any" and config.substitute
    if config.n > 8:
        raise UsageError(f"--n {config.n}: proofs are run for N <= 8 (state grows as N^2)")
    if args.only == "resolver" and not resolver_ok:
        raise UsageError("--only resolver needs --receive any --substitute")
    if args.mutate in RESOLVER_MUTANTS:
        if not resolver_ok:
            raise UsageError(f"--mutate {args.mutate} changes the resolver: it needs "
                             "--receive any --substitute")
        if args.only == "fabric":
            raise UsageError(f"--mutate {args.mutate} applies to the resolver, not --only fabric")
    elif args.mutate is not None and config.n < 3:
        raise UsageError(f"--mutate {args.mutate} needs --n 3 or more")
    jobs = []
    if args.only != "resolver" and args.mutate not in RESOLVER_MUTANTS:
        jobs.append(fabric_job(config, args.mode, args.depth, args.mutate))
    if resolver_ok and args.only != "fabric" and (args.mutate is None
                                                  or args.mutate in RESOLVER_MUTANTS):
        jobs.append(resolver_job(config, args.mutate))
    return _run(args, jobs)


def cmd_sweep(args: argparse.Namespace) -> int:
    from .hw.proofs.catalog import OPTION_SETS, ORDER_FAMILIES
    from .hw.proofs.suite import fabric_job, resolver_job, sweep_configs
    from .model.config import RunConfig

    orders = _names(args.orders, ORDER_FAMILIES, "order family")
    options = _names(args.options, tuple(OPTION_SETS), "option set")
    if max(args.sizes + args.resolver_sizes) > 8:
        raise UsageError("proofs are run for N <= 8 (state grows as N^2)")
    if "channels=1" in options or "all" in options:
        if min(args.sizes) < 2:
            raise UsageError("channels=1 needs N >= 2")
    jobs = [fabric_job(c, args.mode, args.depth)
            for c in sweep_configs(args.sizes, orders, options)]
    for n in [] if args.no_resolver else args.resolver_sizes:
        for order in orders:
            jobs.append(resolver_job(RunConfig.family(n, order, 0 if order == "random" else None,
                                                      receive="any", substitute=True)))
            if n >= 4:
                jobs.append(resolver_job(RunConfig.family(
                    n, order, 0 if order == "random" else None, receive="any", substitute=True,
                    sessions=2, channels=n // 2 - 1 or 1)))
    return _run(args, jobs)


def _run(args: argparse.Namespace, jobs: list) -> int:
    from .files import atomic_directory
    from .hw.proofs.runner import ToolMissing
    from .hw.proofs.suite import markdown_table, run_jobs, summary_table

    def progress(result) -> None:
        if not args.quiet:
            print(f"prove: {result.result} {result.name} ({result.mode}, depth {result.depth}, "
                  f"{result.seconds:.1f} s)", file=sys.stderr, flush=True)

    with contextlib.ExitStack() as stack:
        if args.output:
            folder = Path(stack.enter_context(atomic_directory(args.output)))
        else:
            folder = Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="pipegossip-prove-")))
        try:
            results = run_jobs(jobs, folder, args.timeout, progress)
        except ToolMissing as e:
            raise UsageError(str(e)) from None
        if args.output:
            (folder / "results.json").write_text(
                json.dumps([r.to_json() for r in results], indent=2) + "\n", encoding="utf-8")
    if args.format == "json":
        print(json.dumps([r.to_json() for r in results], indent=2))
    elif args.table:
        rows = getattr(args, "rows", True) or args.command == "prove"
        print(markdown_table(results) if rows else summary_table(results), end="")
    else:
        for r in results:
            line = f"{r.result:7} {r.name}: {r.mode}, depth {r.depth}, {r.seconds:.1f} s"
            print(line + (f" ({r.detail})" if r.detail else ""))
    return 0 if all(r.result == "PASS" for r in results) else 1
