"""Sub-commands ``prove`` and ``prove-sweep``: formal proofs with SymbiYosys.

``prove`` proves one configuration (the fabric's delivery, timing and
watchdog properties; with ``--receive any --substitute`` also the resolver
equivalence), or with ``--fabric schedule`` the schedule fabric loaded with one
schedule (a generator at ``--n``, or a file), or with ``--fabric network`` the
network fabric of a topology loaded with one schedule (a file, or the
generator of ``--primitive``); ``prove-sweep`` proves many and
prints the Markdown table of docs/proofs.md. Exit status 0 when every property is proven, 1 when one
failed or was not proven within ``--timeout`` (a verdict), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path

from . import UsageError
from .options import (FSM_OPTIONS, add_config_arguments, bounded_int, config_from_args,
                      echo, int_list, list_items, positive_int, refuse_given)

__all__ = ["register"]

MODES = ("bmc", "prove")

#: Kinds of proof a sweep runs.
KINDS = ("fabric", "resolver", "schedule")

#: Schedule generators of the default sweep.
SWEEP_FAMILIES = ("cyclic-shift", "one-factor")

#: The deepest proof accepted: every step is a copy of the design for the
#: solver; the deepest default (a schedule proof at N=6) is under 100.
MAX_DEPTH = 10_000


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=MODES, default="bmc",
                   help="bmc: bounded model check of cycles 0..L+2 (schedule fabric: the "
                   "load, the run and two cycles after done); prove: k-induction "
                   "(unbounded when it closes); default bmc")
    p.add_argument("--depth", type=bounded_int(1, MAX_DEPTH, "steps the solver unrolls"),
                   default=None, metavar="D",
                   help="steps to check (bmc) or the induction length (prove); default L+3 "
                   "(schedule fabric: W+L+5 for W load writes)")
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


def _schedule_words(p: argparse.ArgumentParser) -> None:
    from ..hw.proofs.catalog import SCHEDULE_WORDS

    p.add_argument("--words", choices=SCHEDULE_WORDS, default="free",
                   help="schedule fabric: the loaded item words are any-constants (free, "
                   "default: every value) or the tagged words of hw/words.py (tagged)")


def register(sub: argparse._SubParsersAction) -> None:
    from ..hw.proofs.catalog import (MUTANTS, NETWORK_MUTANTS, NETWORK_PRIMITIVES, OPTION_SETS,
                                    ORDER_FAMILIES, SCHEDULE_FAMILIES, SCHEDULE_MUTANTS)
    from .network_hw import add_network_arguments

    p = sub.add_parser(
        "prove", help="formal proofs of one fabric (SymbiYosys)",
        description="Prove with SymbiYosys (z3) that the fabric of one configuration "
        "delivers every word exactly once to every other processor with its source, "
        "delivers nothing after done, finishes in L cycles and never stalls; with "
        "--receive any --substitute also that the resolver equals the serial chain of "
        "the rule. With --fabric schedule: that the schedule fabric, loaded with one "
        "schedule through its load port, gives every node every item the primitive needs "
        "with its word, never drives a receiving port from two sources, stores nothing "
        "after done and is busy for exactly L+1 cycles. With --fabric network: that the "
        "network fabric of --topology, loaded with --schedule FILE or the generator of "
        "--primitive, sends, stores and combines exactly as programmed on every link in every "
        "cycle, delivers on every link the word sent, and ends with the model's stores and "
        "accumulators. Exit 0 proven, 1 a property failed or timed out, 2 bad usage.",
        epilog="Mutants (each must fail): " + "; ".join(f"{k}: {v}" for k, v in MUTANTS.items())
        + ". Schedule-fabric mutants: "
        + "; ".join(f"{k}: {v}" for k, v in SCHEDULE_MUTANTS.items()) + ". Network-fabric "
        "mutants: " + "; ".join(f"{k}: {v}" for k, v in NETWORK_MUTANTS.items()) + ".")
    add_config_arguments(p, n_default=3, order_default="identity")
    # unset unless given, so --fabric schedule can refuse them (filled in by cmd_prove)
    p.set_defaults(n=None, order=None)
    names = sorted(set(MUTANTS) | set(SCHEDULE_MUTANTS) | set(NETWORK_MUTANTS))
    p.add_argument("--mutate", choices=names, default=None, metavar="NAME",
                   help="prove a deliberately broken design instead (" + ", ".join(names)
                   + "); it must fail")
    g = p.add_argument_group("schedule fabric")
    g.add_argument("--fabric", choices=("fsm", "schedule", "network"), default=None,
                   help="fsm (default): the fabric of one configuration; schedule: the "
                   "schedule fabric loaded with --schedule-family at --n, or --schedule FILE "
                   "(either implies it); network: the network fabric of --topology loaded "
                   "with --schedule FILE or --primitive NAME")
    g.add_argument("--schedule-family", choices=SCHEDULE_FAMILIES, default=None,
                   metavar="NAME", help="the generator to load: " + ", ".join(SCHEDULE_FAMILIES))
    g.add_argument("--schedule", default=None, metavar="FILE.json",
                   help="a schedule file to load (any valid schedule; it gives N)")
    _schedule_words(g)
    add_network_arguments(p)
    p.add_argument("--primitive", choices=NETWORK_PRIMITIVES, default=None,
                   help="--fabric network: load the generator of this primitive on --topology "
                   "(gossip: all-port; reduce: to node 0; allreduce)")
    p.add_argument("--only", choices=("fabric", "resolver"), default=None,
                   help="run only the fabric proof or only the resolver equivalence")
    _common(p)
    p.set_defaults(func=cmd_prove)

    s = sub.add_parser(
        "prove-sweep", help="formal proofs over sizes, order families and options",
        description="Run the fabric proofs for every N of --sizes, order family and option "
        "set, the resolver equivalence for every N of --resolver-sizes, and the schedule "
        "fabric loaded with every generator of --schedule-families at every N of "
        "--schedule-sizes; print the summary as a Markdown table (the README's proof table).")
    s.add_argument("--sizes", type=int_list(2), default=[3, 4, 5, 6], metavar="LIST",
                   help="N values of the fabric proofs; default 3,4,5,6")
    s.add_argument("--orders", default=",".join(ORDER_FAMILIES), metavar="LIST",
                   help="order families (random uses seed 0); default " + ",".join(ORDER_FAMILIES))
    s.add_argument("--options", default=",".join(OPTION_SETS), metavar="LIST",
                   help="option sets: " + ", ".join(OPTION_SETS) + "; default all of them")
    s.add_argument("--resolver-sizes", type=int_list(2), default=[3, 4, 5, 6, 7, 8],
                   metavar="LIST", help="N values of the resolver equivalence; default 3..8")
    s.add_argument("--no-resolver", action="store_true",
                   help="skip the resolver equivalence")
    s.add_argument("--schedule-sizes", type=int_list(2), default=[3, 4, 5, 6], metavar="LIST",
                   help="N values of the schedule-fabric proofs; default 3,4,5,6")
    s.add_argument("--schedule-families", default=",".join(SWEEP_FAMILIES), metavar="LIST",
                   help="generators loaded into the schedule fabric: "
                   + ", ".join(SCHEDULE_FAMILIES) + "; default " + ",".join(SWEEP_FAMILIES))
    s.add_argument("--no-schedule", action="store_true",
                   help="skip the schedule-fabric proofs")
    s.add_argument("--only", choices=KINDS, default=None,
                   help="run only one kind of proof: fabric (FSM), resolver or schedule")
    _schedule_words(s)
    s.add_argument("--rows", action="store_true",
                   help="with --table: one row per proof instead of one per N")
    _common(s)
    s.set_defaults(func=cmd_sweep)


def _names(text: str, known, what: str, option: str) -> list[str]:
    names = list_items(text, option)
    bad = [x for x in names if x not in known]
    if bad:
        raise UsageError(f"{option}: unknown {what} {', '.join(echo(b) for b in bad)} "
                         f"(expected some of {', '.join(known)})")
    return names


def _known_mutant(args: argparse.Namespace, mutants, fabric: str) -> None:
    """Refuse a ``--mutate`` that is not one of ``fabric``'s mutants."""
    if args.mutate is not None and args.mutate not in mutants:
        raise UsageError(f"--mutate {args.mutate} is not a {fabric}-fabric mutant (expected one "
                         f"of {', '.join(mutants)})")


def _schedule_prove(args: argparse.Namespace) -> int:
    """``prove --fabric schedule``: one schedule loaded into the schedule fabric."""
    from ..model.schedules.validate_static import ScheduleError
    from ..hw.proofs.catalog import SCHEDULE_MUTANTS
    from ..hw.proofs.suite import PROOF_WIDTH, schedule_job

    refuse_given(args, (*FSM_OPTIONS, ("--only", "only", None)), "only to --fabric fsm")
    _known_mutant(args, SCHEDULE_MUTANTS, "schedule")
    if (args.schedule is None) == (args.schedule_family is None):
        raise UsageError("--fabric schedule needs one of --schedule-family NAME (with --n) "
                         "or --schedule FILE")
    try:
        if args.schedule is not None:
            if args.n is not None:
                raise UsageError("--n: a schedule file gives its own N")
            from pathlib import PurePath

            from ..hw.proofs.schedule_suite import file_program
            program = file_program(args.schedule, PROOF_WIDTH)
            label = PurePath(args.schedule).name
        else:
            from ..hw.proofs.schedule_suite import schedule_program
            n = 3 if args.n is None else args.n
            if n > 8:
                raise UsageError(f"--n {n}: proofs are run for N <= 8")
            program = schedule_program(args.schedule_family, n, PROOF_WIDTH)
            label = args.schedule_family
    except ScheduleError:
        raise  # the validator's verdict (exit 1), as from every command
    except ValueError as e:
        raise UsageError(str(e)) from None
    if program.n > 8:
        raise UsageError(f"{label}: N={program.n}; proofs are run for N <= 8")
    from ..hw.proofs.schedule_harness import check_mutant
    try:
        check_mutant(program, args.mutate)  # one the schedule cannot show: before any tool
    except ValueError as e:
        raise UsageError(str(e)) from None
    return _run(args, [schedule_job(program, label, args.mode, args.depth, args.mutate,
                                    args.words)])


#: The largest network proved: the state grows with the ports and the slots.
MAX_NETWORK_NODES = 8


def _network_schedule(args: argparse.Namespace):
    """The schedule and its fabric's topology that ``prove --fabric network`` loads."""
    from ..model.schedules.read_rounds import load
    from .network_hw import network_topology

    topo = None
    if args.topology is not None:
        topo = network_topology(args)
    else:
        refuse_given(args, (("--n", "n", None), ("--k", "k", None), ("--a", "a", None),
                            ("--b", "b", None)), "only with --topology")
    if args.schedule is not None:
        s = load(args.schedule)
        topo = s.topology if topo is None else topo
    elif topo is None:
        raise UsageError("--primitive needs --topology (and its --n, --k or --a/--b)")
    if topo.n > MAX_NETWORK_NODES:
        raise UsageError(f"--topology {topo.name}: N={topo.n}; network proofs are run for "
                         f"N <= {MAX_NETWORK_NODES}")
    if args.schedule is not None:
        from pathlib import PurePath
        return s, topo, PurePath(args.schedule).name
    from ..model.algorithms.allport import allport_gossip
    from ..model.algorithms.reduce import allreduce_schedule, reduce_schedule
    make = {"gossip": allport_gossip, "reduce": lambda t: reduce_schedule(t, 0),
            "allreduce": allreduce_schedule}[args.primitive]
    return make(topo), topo, args.primitive


def _network_prove(args: argparse.Namespace) -> int:
    """``prove --fabric network``: one schedule loaded into the network fabric of a topology."""
    from ..model.schedules.validate_static import ScheduleError
    from ..hw.proofs.catalog import NETWORK_MUTANTS
    from ..hw.proofs.suite import PROOF_WIDTH, network_job

    refuse_given(args, (*FSM_OPTIONS, ("--only", "only", None)), "only to --fabric fsm")
    refuse_given(args, (("--schedule-family", "schedule_family", None),
                        ("--words", "words", "free")), "only to --fabric schedule")
    refuse_given(args, (("--bank-depth", "bank_depth", None),),
                 "only to hw verilog and hw fpga (a proof's banks hold every slot)")
    if args.mode != "bmc":
        raise UsageError("--mode prove: the network fabric is proved by bounded model checking "
                         "over the load, the run and the read-back (--mode bmc)")
    _known_mutant(args, NETWORK_MUTANTS, "network")
    if (args.schedule is None) == (args.primitive is None):
        raise UsageError("--fabric network needs one of --schedule FILE or --primitive NAME "
                         "(with --topology)")
    from ..model.schedules.network_program import compile_network
    try:
        s, topo, label = _network_schedule(args)
        program = compile_network(s, topology=topo, op=args.op or "sum", width=PROOF_WIDTH)
    except ScheduleError:
        raise  # the validator's verdict (exit 1)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.mutate is not None:
        from ..hw.proofs.network_harness import network_harness_writes
        try:  # one the program cannot show: before any tool
            network_harness_writes(program, args.mutate)
        except ValueError as e:
            raise UsageError(f"--mutate {args.mutate}: {e}") from None
    return _run(args, [network_job(program, label, args.mutate, args.depth,
                                   args.store or "banks", args.node or "wire")])


def cmd_prove(args: argparse.Namespace) -> int:
    from ..hw.proofs.catalog import MUTANTS, NETWORK_MUTANTS, RESOLVER_MUTANTS
    from .network_hw import NETWORK_OPTIONS

    if args.fabric == "network":
        return _network_prove(args)
    refuse_given(args, (*NETWORK_OPTIONS, ("--primitive", "primitive", None)),
                 "only to --fabric network")
    schedule = args.schedule is not None or args.schedule_family is not None
    if args.fabric == "schedule" or (args.fabric is None and schedule):
        return _schedule_prove(args)
    if schedule:
        raise UsageError("--schedule-family and --schedule apply only to --fabric schedule")
    if args.words != "free":
        raise UsageError("--words applies only to --fabric schedule")
    if args.mutate is not None and args.mutate not in MUTANTS:
        where = "network" if args.mutate in NETWORK_MUTANTS else "schedule"
        raise UsageError(f"--mutate {args.mutate} applies only to --fabric {where}")
    args.n = 3 if args.n is None else args.n
    args.order = "identity" if args.order is None else args.order
    from ..hw.proofs.suite import fabric_job, resolver_job

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
    from ..hw.proofs.catalog import OPTION_SETS, ORDER_FAMILIES, SCHEDULE_FAMILIES
    from ..hw.proofs.suite import PROOF_WIDTH, fabric_job, resolver_job, schedule_job, sweep_configs
    from ..model.config import RunConfig

    if args.only is not None:
        refuse_given(args, (("--no-resolver", "no_resolver", False),
                            ("--no-schedule", "no_schedule", False)),
                     f"without --only (--only {args.only} already picks one kind of proof)")
    if not args.table:
        refuse_given(args, (("--rows", "rows", False),), "only with --table")
    orders = _names(args.orders, ORDER_FAMILIES, "order family", "--orders")
    options = _names(args.options, tuple(OPTION_SETS), "option set", "--options")
    families = _names(args.schedule_families, SCHEDULE_FAMILIES, "schedule family",
                      "--schedule-families")
    if max(args.sizes + args.resolver_sizes + args.schedule_sizes) > 8:
        raise UsageError("proofs are run for N <= 8 (state grows as N^2)")
    if "channels=1" in options or "all" in options:
        if min(args.sizes) < 2:
            raise UsageError("channels=1 needs N >= 2")
    kinds = {args.only} if args.only else set(KINDS) - {
        k for k, skip in (("resolver", args.no_resolver), ("schedule", args.no_schedule)) if skip}
    jobs = [fabric_job(c, args.mode, args.depth)
            for c in (sweep_configs(args.sizes, orders, options) if "fabric" in kinds else [])]
    for n in args.resolver_sizes if "resolver" in kinds else []:
        for order in orders:
            jobs.append(resolver_job(RunConfig.family(n, order, 0 if order == "random" else None,
                                                      receive="any", substitute=True)))
            if n >= 4:
                jobs.append(resolver_job(RunConfig.family(
                    n, order, 0 if order == "random" else None, receive="any", substitute=True,
                    sessions=2, channels=n // 2 - 1 or 1)))
    if "schedule" in kinds:
        from ..hw.proofs.schedule_suite import schedule_program
        for family in families:
            for n in args.schedule_sizes:
                try:
                    program = schedule_program(family, n, PROOF_WIDTH)
                except ValueError as e:
                    raise UsageError(f"{family} at N={n}: {e}") from None
                jobs.append(schedule_job(program, family, args.mode, args.depth,
                                         words=args.words))
    if not jobs:
        raise UsageError("nothing to prove (every kind of proof was skipped)")
    return _run(args, jobs)


def _run(args: argparse.Namespace, jobs: list) -> int:
    from ..infra.files import OutputKind, atomic_directory
    from ..hw.proofs.runner import ToolMissing
    from ..hw.proofs.suite import markdown_table, run_jobs, summary_table

    def progress(result) -> None:
        if not args.quiet:
            print(f"prove: {result.result} {result.name} ({result.mode}, depth {result.depth}, "
                  f"{result.seconds:.1f} s)", file=sys.stderr, flush=True)

    with contextlib.ExitStack() as stack:
        if args.output:
            # An older prove folder (a marker without its command) cannot be told
            # from another command's by its names: it is refused, never replaced.
            kind = OutputKind(args.command)
            folder = Path(stack.enter_context(atomic_directory(args.output, kind)))
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
