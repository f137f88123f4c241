"""Sub-commands for schedules: ``schedule``, ``check``, ``plot-schedule``,
``schedule-table`` and ``schedule-bench``."""

from __future__ import annotations

import argparse
import json
import sys

from .cli import UsageError
from .collective_cli import COLLECTIVE_ALGORITHMS, collective_schedule
from .files import atomic_write
from .literature_cli import LITERATURE_ALGORITHMS, literature_schedule
from .network_cli import (NETWORK_ALGORITHMS, NETWORK_OPTIONS, add_network_arguments,
                          network_schedule)
from .limits import check_schedule_memory, gossip_items
from .model.errors import ConfigError
from .model.schedules.bounds import bounds_for
from .model.schedules.ir import Schedule, dumps, load
from .model.schedules.validate import validate
from .options import (add_config_arguments, checked_number, config_from_args, decimal, echo,
                      list_items, missing_config, positive_int, refuse_given)

__all__ = ["register", "ALGORITHMS"]

ALGORITHMS = ("run", "one-factor", "cyclic-shift", "recursive-doubling",
              "min-calls") + LITERATURE_ALGORITHMS + NETWORK_ALGORITHMS + COLLECTIVE_ALGORITHMS
#: recursive-doubling's largest n is 2^this.
_MAX_CUBE_K = 12
_RUN_ONLY = {"order": None, "seed": None, "receive": "ordered", "substitute": False,
             "sessions": 1, "channels": None}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "schedule", help="write a communication schedule (pipegossip-schedule/1 JSON)",
        description="Generate a schedule and write it as JSON (gzip when FILE ends in .gz). "
        "'run' compiles a pipelined-gossiping run (all options of 'pipegossip run'); the "
        "others are the optimal generators: one-factor (H1, p=1), cyclic-shift (port, p=1), "
        "recursive-doubling (telephone F1, unlimited p), min-calls (F1, 2n-4 calls); reduce "
        "(--root) and allreduce write one combined word per message, all-port writes Fstar "
        "p=1 gossip, each on --topology with --n/--k/--a/--b.")
    p.add_argument("algorithm", choices=ALGORITHMS, metavar="ALGORITHM",
                   help=" | ".join(ALGORITHMS))
    add_config_arguments(p)
    for action in p._actions:  # --n and --order are optional here (hypercube gives n)
        if action.dest in ("n", "order"):
            action.required = False
        if action.dest == "order":
            action.help += "; 'schedule run' only, default pipelined"
        if action.dest == "n":
            action.help += "; every algorithm but hypercube recursive-doubling (--k)"
    g = p.add_argument_group("generators")
    g.add_argument("--topology", default="complete", metavar="NAME",
                   help="complete (default) or, for recursive-doubling, hypercube; reduce, "
                   "allreduce, all-port: any topology but explicit")
    g.add_argument("--k", type=positive_int, help="hypercube dimension (n = 2^k)")
    g.add_argument("--p", type=positive_int, default=None,
                   help="declare a packet limit; refused if the schedule breaks it")
    g.add_argument("--root", type=decimal, default=None,
                   help="root node: reduce; matching --primitive broadcast; polling "
                   "schedules poll from node 0")
    add_network_arguments(p)
    p.add_argument("-o", "--output", default="-", metavar="FILE",
                   help="FILE.json or FILE.json.gz; '-' (default) is stdout")
    p.set_defaults(func=cmd_schedule)

    p = sub.add_parser("check", help="validate a schedule file and print its metrics",
                       description="Exit 0: valid (metrics printed); 1: rules are broken (one "
                       "line per problem, up to 20: round, message, rule; after each the "
                       "message is left out and checking goes on); 2: the file cannot be read.")
    p.add_argument("file", metavar="FILE", help="schedule file (.json, .json.gz) or - for stdin")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("plot-schedule", help="draw a schedule: who sends to whom per round, "
                       "and progress to the primitive's goal")
    p.add_argument("file", metavar="FILE")
    p.add_argument("-o", "--output", required=True, metavar="FILE.png|FILE.svg")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("schedule-table", help="R, messages and efficiency of every algorithm "
                       "against its bound",
                       description="Compare the pipelined run, identity + Algorithm 2 (receive "
                       "any), one-factor, cyclic-shift and recursive-doubling.")
    p.add_argument("--min-n", type=positive_int, default=4)
    p.add_argument("--max-n", type=positive_int, default=64)
    p.add_argument("--sizes", metavar="N,N,...",
                   help="explicit sizes (default: powers of two from --min-n to --max-n)")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("schedule-bench", help="time and memory of generating and validating "
                       "one-factor and cyclic-shift")
    p.add_argument("--sizes", default="256,1024,4096", metavar="N,N,...")
    p.add_argument("--limit-gib", type=_gib, default=4.0,
                   help="skip sizes whose estimated peak exceeds this; default 4")
    p.set_defaults(func=cmd_bench)


_gib = checked_number(float, "a number of GiB", lambda v: 0 < v <= 2**20,
                      "must be more than 0 and at most 1048576 GiB, got {text}")


def _sizes(text: str) -> list[int]:
    try:
        sizes = [decimal(x) for x in list_items(text, "--sizes")]
    except argparse.ArgumentTypeError:
        raise UsageError(f"--sizes: expected comma-separated integers, got {echo(text)}") from None
    if min(sizes) < 2:
        raise UsageError(f"--sizes: every size must be at least 2, got {echo(text)}")
    return sizes


def _generate(args: argparse.Namespace) -> Schedule:
    from .model.algorithms.limits import GENERATORS
    from .model.schedules.compile_run import schedule_of_config
    if args.algorithm in NETWORK_ALGORITHMS:
        return network_schedule(args)
    if args.algorithm in COLLECTIVE_ALGORITHMS:
        return collective_schedule(args)
    if args.algorithm in LITERATURE_ALGORITHMS:
        return literature_schedule(args)
    if args.algorithm == "run":
        if args.topology != "complete" or args.k is not None:
            raise UsageError("schedule run: a run is always on the complete graph")
        if args.order is None:
            args.order = "pipelined"
        if missing_config(args):
            raise UsageError("schedule run: --n is required (or --order FILE.json, which gives N)")
        if args.n is not None and args.n >= 2 and args.sessions >= 1:
            # (else the configuration rules refuse it) before the orders (N^2 entries)
            # are built: one item per message.
            transfers = gossip_items(args.n) * args.sessions
            check_schedule_memory(transfers, transfers, f"the schedule of the run N={args.n:,}"
                                  + (f", {args.sessions} sessions" if args.sessions > 1 else ""))
        return schedule_of_config(config_from_args(args))
    given = [f"--{k}" for k, d in _RUN_ONLY.items() if getattr(args, k) != d]
    if given:
        raise UsageError(f"{given[0]} applies only to 'schedule run'")
    n = args.n
    if args.topology == "hypercube":
        if args.algorithm != "recursive-doubling":
            raise UsageError(f"{args.algorithm} runs on the complete graph only")
        if args.k is not None and args.k > _MAX_CUBE_K:
            raise UsageError(f"--k {args.k}: recursive-doubling on the hypercube is limited "
                             f"to k <= {_MAX_CUBE_K} (n = 2^k <= {1 << _MAX_CUBE_K})")
        if args.k is not None:
            if n is not None and n != 1 << args.k:
                raise UsageError(f"--n {n} contradicts --k {args.k} (n = 2^k)")
            n = 1 << args.k
    elif args.topology != "complete":
        raise UsageError(f"--topology {args.topology}: generators here run on complete "
                         "(or hypercube for recursive-doubling)")
    elif args.k is not None:
        raise UsageError("--k applies only to --topology hypercube")
    if n is None:
        raise UsageError(f"schedule {args.algorithm}: --n is required")
    if n < 2 or n > 1 << 14:
        raise UsageError(f"--n must be between 2 and {1 << 14}, got {n}")
    if args.algorithm == "recursive-doubling" and n > 1 << _MAX_CUBE_K:
        raise UsageError(f"--n {n}: recursive-doubling is limited to n <= {1 << _MAX_CUBE_K}")
    # min-calls and recursive-doubling send few, large messages; the others one item each.
    messages = {"min-calls": 2 * n, "recursive-doubling": n * n.bit_length()}.get(
        args.algorithm, gossip_items(n))
    check_schedule_memory(messages, gossip_items(n), f"{args.algorithm} for n={n:,}")
    try:
        gen = GENERATORS[args.algorithm]
        if args.algorithm == "recursive-doubling":
            return gen(n, args.topology)
        return gen(n)
    except ValueError as e:
        raise UsageError(str(e)) from None


def cmd_schedule(args: argparse.Namespace) -> int:
    # (reduce, allreduce and all-port refuse the options foreign to them themselves)
    if args.algorithm not in NETWORK_ALGORITHMS + COLLECTIVE_ALGORITHMS:
        refuse_given(args, NETWORK_OPTIONS, "only to 'schedule matching' and 'schedule coloring'")
    if args.root is not None and args.algorithm.startswith("polling-"):
        if args.root != 0:
            raise UsageError(f"--root {args.root}: {args.algorithm} polls from node 0 "
                             "(its root is fixed)")
    elif args.root is not None and args.algorithm not in NETWORK_ALGORITHMS + COLLECTIVE_ALGORITHMS:
        raise UsageError(f"--root applies only to reduce, to polling schedules and to matching "
                         f"with --primitive broadcast; {args.algorithm} writes a gossip schedule, "
                         "which has no root")
    s = _generate(args)
    if args.p is not None:
        s.p = args.p  # the validator decides whether the schedule keeps it
        v = validate(s)
        if not v.valid:
            raise ConfigError(f"--p {args.p}: the {args.algorithm} schedule breaks it ({v.error})")
    atomic_write(args.output, dumps(s, gz=str(args.output).endswith(".gz")))
    return 0


def _metrics_text(s: Schedule, v) -> str:
    bounds = bounds_for(s, v.items_per_node)
    lines = [f"valid {s.primitive} schedule: n={s.n} model={s.model} "
             f"p={s.p if s.p is not None else 'unlimited'} topology={s.topology.name}",
             f"R {v.R}", f"messages {v.messages}"]
    if v.calls is not None:
        lines.append(f"calls {v.calls}")
    lines += [f"transfers {v.transfers}", f"item_transfers {v.item_transfers}", f"S {v.S}",
              f"efficiency {v.efficiency:.4f}"]
    lines += [f"bound {b}" for b in bounds] or ["bound none known for this model/topology"]
    lines.append("busy " + " ".join(map(str, v.busy)))
    for fabric, need in _fabric_needs(s).items():
        lines.append(f"{fabric} fabric: " + (f"refused: {need['refused']}" if "refused" in need
                     else f"depth {need['depth']} (cycles), slots {need['slots']}"
                     + (f", bank depth {need['bank_depth']}" if "bank_depth" in need else "")))
    return "\n".join(lines) + "\n"


#: Schedules over this many messages are not compiled by ``check`` (time).
FABRIC_NEEDS_MESSAGES = 1 << 18


def _fabric_needs(s: Schedule) -> dict:
    """The smallest build of each schedule-driven fabric that runs ``s``.

    ``{"schedule": {"depth", "slots"}, "network": {"depth", "slots", "bank_depth"}}``; a
    fabric that cannot run ``s`` gets ``{"refused": why}`` instead.
    """
    from .model.schedules.network_program import compile_network
    from .model.schedules.program import ProgramError, compile_schedule
    if s.messages > FABRIC_NEEDS_MESSAGES:
        why = f"not compiled by check (over {FABRIC_NEEDS_MESSAGES:,} messages)"
        return {"schedule": {"refused": why}, "network": {"refused": why}}
    needs = {}
    try:
        prog = compile_schedule(s)
        needs["schedule"] = {"depth": prog.cycles, "slots": prog.slots}
    except ProgramError as e:
        needs["schedule"] = {"refused": str(e)}
    try:
        net = compile_network(s)
        needs["network"] = {"depth": net.cycles, "slots": net.slots, "bank_depth": net.bank_need}
    except ProgramError as e:
        needs["network"] = {"refused": str(e)}
    return needs


def cmd_check(args: argparse.Namespace) -> int:
    from .model.schedules.problems import MAX_PROBLEMS, problems
    s = load(args.file)
    v = validate(s)
    found, more = problems(s) if not v.valid else ([], False)
    if args.format == "json":
        out = v.to_json()
        out["bounds"] = [{"metric": b.metric, "value": b.value, "kind": b.kind,
                          "source": b.source} for b in bounds_for(s, v.items_per_node)]
        out["problems"] = [str(e) for e in found]
        out["more_problems"] = more
        if v.valid:
            out["fabrics"] = _fabric_needs(s)
        print(json.dumps(out))
    elif v.valid:
        sys.stdout.write(_metrics_text(s, v))
    if not v.valid:
        for e in found:
            print(f"pipegossip check: invalid: {e}", file=sys.stderr)
        if more:
            print(f"pipegossip check: the first {MAX_PROBLEMS} problems are shown; more may "
                  "follow", file=sys.stderr)
        return 1
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from .schedule_plots import MAX_CELLS, plot_schedule
    out = str(args.output)
    fmt = "svg" if out.endswith(".svg") else "png" if out.endswith(".png") else None
    if fmt is None:
        raise UsageError(f"-o {out}: give a .png or .svg file name")
    s = load(args.file)
    if s.n * s.rounds_total > MAX_CELLS:
        raise UsageError(f"{args.file}: {s.n} nodes x {s.rounds_total} rounds is too large "
                         f"to draw (limit {MAX_CELLS} cells)")
    v = validate(s)
    if not v.valid:
        print(f"pipegossip plot-schedule: invalid: {v.error}", file=sys.stderr)
        return 1
    atomic_write(out, plot_schedule(s, v, fmt))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from .schedule_compare import comparison_rows, default_sizes
    if args.sizes is not None:
        sizes = _sizes(args.sizes)
    else:
        if args.min_n > args.max_n:
            raise UsageError(f"--min-n {args.min_n} is above --max-n {args.max_n}")
        sizes = default_sizes(args.min_n, args.max_n)
        if not sizes:
            raise UsageError(f"no power of two between {args.min_n} and {args.max_n}; "
                             "use --sizes")
    if max(sizes) > 1024:
        raise UsageError(f"schedule-table is limited to n <= 1024, got {max(sizes)}")
    rows = comparison_rows(sizes)
    if args.format == "json":
        print(json.dumps(rows, indent=1))
        return 0
    print("| n | algorithm | model | p | R | bound | messages | efficiency |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        p = "-" if r["p"] is None else r["p"]
        bound = "-" if r["bound"] is None else r["bound"]
        print(f"| {r['n']} | {r['algorithm']} | {r['model']} | {p} | {r['R']} | {bound} | "
              f"{r['messages']} | {r['efficiency']:.4f} |")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from .schedule_compare import bench_case, estimate_bytes
    limit = int(args.limit_gib * 2**30)
    print(f"{'algorithm':<14} {'n':>5} {'messages':>10} {'R':>5} {'gen s':>7} "
          f"{'gen MiB':>8} {'check s':>8} {'check MiB':>9}")
    for n in _sizes(args.sizes):
        need = estimate_bytes(n)
        if need > limit:
            print(f"skip n={n}: estimated peak {need / 2**30:.1f} GiB exceeds "
                  f"{args.limit_gib:g} GiB", flush=True)
            continue
        for name in ("one-factor", "cyclic-shift"):
            r = bench_case(name, n)
            if not r["valid"]:
                raise AssertionError(f"{name} n={n} is invalid")
            print(f"{name:<14} {n:>5} {r['messages']:>10} {r['R']:>5} {r['generate_s']:>7.2f} "
                  f"{r['generate_peak_mib']:>8.1f} {r['validate_s']:>8.2f} "
                  f"{r['validate_peak_mib']:>9.1f}", flush=True)
    return 0
