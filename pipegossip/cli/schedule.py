"""Sub-commands for schedules: ``schedule``, ``check``, ``plot-schedule``,
``schedule-table`` and ``schedule-bench``."""

from __future__ import annotations

import argparse
import json
import sys

from . import UsageError, typed_command
from .collective import COLLECTIVE_ALGORITHMS, collective_schedule
from ..infra.files import atomic_write
from .literature import LITERATURE_ALGORITHMS, literature_schedule
from .heuristics import NETWORK_ALGORITHMS, network_schedule
from ..infra.budgets import check_schedule_memory, gossip_items
from ..model.errors import ConfigError
from ..model.schedules.bounds import bounds_for
from ..model.schedules.ir import Schedule, dumps
from ..model.schedules.read_rounds import load
from ..model.schedules.validate import validate
from .options import (add_config_arguments, checked_number, config_from_args, decimal, echo,
                      list_items, missing_config, positive_int, refuse_given)

__all__ = ["register", "ALGORITHMS"]

ALGORITHMS = ("run", "one-factor", "cyclic-shift", "recursive-doubling",
              "min-calls") + LITERATURE_ALGORITHMS + NETWORK_ALGORITHMS + COLLECTIVE_ALGORITHMS
#: recursive-doubling's largest n is 2^this.
_MAX_CUBE_K = 12
_RUN_ONLY = {"order": None, "seed": None, "receive": "ordered", "substitute": False,
             "sessions": 1, "channels": None}


#: One line per generator: ``pipegossip schedule ALGORITHM --help`` and the group's listing.
ALGORITHM_HELP = {
    "run": "compile a pipelined-gossiping run (the options of 'pipegossip model run')",
    "one-factor": "optimal H1 gossip on the complete graph, p = 1",
    "cyclic-shift": "optimal port-model gossip on the complete graph, p = 1",
    "recursive-doubling": "telephone F1 gossip on the complete graph or the hypercube, "
                          "unlimited p",
    "min-calls": "F1 gossip in the fewest calls, 2n-4",
    "path-gossip": "H* gossip on a path, packet size p",
    "cycle-gossip": "H* gossip on a cycle, packet size p",
    "polling-complete": "H1 polling of K_{2^k} from node 0 in 2k rounds",
    "polling-hypercube": "H1 polling of the hypercube Q_k from node 0 in 2k rounds",
    "polling-general": "H1 polling of K_n from node 0",
    "short-messages": "F1 gossip by calls of at most p blocks",
    "matching": "gossip or broadcast on any topology by the matching heuristic "
                "(Beier and Sibeyn)",
    "coloring": "gossip on any topology by expanding a colour string",
    "best": "the best of the matching settings, colouring and constructions within a budget",
    "reduce": "one combined word per message up a tree to --root",
    "allreduce": "every node ends with the combination of all words",
    "all-port": "Fstar gossip, p = 1, every link of a node at once",
}

_SIZES = ("topology", "n", "k", "a", "b")
#: The options of each generator, named as in :data:`_OPTIONS` ("config": those of
#: ``model run``). An option of another generator is refused by argparse.
ALGORITHM_OPTIONS = {
    "run": ("config", "p"),
    "one-factor": ("n", "p"), "cyclic-shift": ("n", "p"), "min-calls": ("n", "p"),
    "recursive-doubling": ("topology", "n", "k", "p"),
    "path-gossip": ("n", "p"), "cycle-gossip": ("n", "p"), "short-messages": ("n", "p"),
    "polling-complete": ("k", "root"), "polling-hypercube": ("k", "root"),
    "polling-general": ("n", "root"),
    "matching": (*_SIZES, "primitive", "root", "tau", "lookahead", "weights", "dist_exp",
                 "matcher", "num_exp", "split", "tries", "candidates", "seed"),
    "coloring": (*_SIZES, "colors"),
    "best": (*_SIZES, "primitive", "root", "tau", "matcher", "budget", "seed", "workers",
             "scheduler", "store", "no_cache"),
    "reduce": (*_SIZES, "root", "p"),
    "allreduce": (*_SIZES, "p"), "all-port": (*_SIZES, "p"),
}
assert set(ALGORITHM_OPTIONS) == set(ALGORITHMS) == set(ALGORITHM_HELP)

_TOPOLOGY_HELP = {"recursive-doubling": "complete (default) or hypercube (with --k)"}
_P_HELP = {"path-gossip": "packet size: items per message; default 1",
           "cycle-gossip": "packet size: items per message; default 1",
           "short-messages": "blocks per message (required)"}
_ROOT_HELP = {"polling-complete": "the polling node: 0 (fixed)",
              "polling-hypercube": "the polling node: 0 (fixed)",
              "polling-general": "the polling node: 0 (fixed)",
              "reduce": "the node that ends with the combined word (required)"}
_N_HELP = {"recursive-doubling": "nodes (a power of two on the hypercube, or give --k)"}


def _options():
    """``name -> (flags, argparse keywords)`` of every generator option."""
    from .heuristics import _BUDGET, _CANDIDATES, _LOOKAHEAD, _TRIES
    from ..sweeps.runner import _address, _workers
    from ..sweeps.store import DEFAULT_STORE
    from .options import finite_float
    return {
        "topology": (("--topology",), dict(default="complete", metavar="NAME",
                                          help="the graph (see docs/schedules.md for the "
                                          "names and their sizes); any but explicit")),
        "n": (("--n",), dict(type=decimal, default=None, metavar="N", help="nodes")),
        "k": (("--k",), dict(type=positive_int, default=None,
                            help="hypercube or polling dimension (n = 2^k); the k of star, "
                            "pancake, ccc, butterfly, shuffle_exchange, debruijn")),
        "a": (("--a",), dict(type=decimal, default=None, help="mesh/torus rows")),
        "b": (("--b",), dict(type=decimal, default=None, help="mesh/torus columns")),
        "p": (("--p",), dict(type=positive_int, default=None,
                            help="declare a packet limit; refused if the schedule breaks it")),
        "root": (("--root",), dict(type=decimal, default=None,
                                  help="root node of --primitive broadcast")),
        "primitive": (("--primitive",), dict(choices=("gossip", "broadcast"), default="gossip")),
        "tau": (("--tau",), dict(type=finite_float, default=None,
                                help="linear-cost model with this tau (default: unit cost)")),
        "colors": (("--colors",), dict(default=None, metavar="STRING",
                                      help="expand this colour string (default: search for "
                                      "one)")),
        "lookahead": (("--lookahead",), dict(type=_LOOKAHEAD, default=0, metavar="L",
                                            help="rounds of look-ahead (default 0)")),
        "weights": (("--weights",), dict(choices=("bfs", "potential"), default="bfs",
                                        help="edge weights (default bfs)")),
        "dist_exp": (("--dist-exp",), dict(type=finite_float, default=4.0,
                                          help="Dist_Exp, default 4")),
        "matcher": (("--matcher",), dict(choices=("auto", "exact", "greedy", "networkx"),
                                        default="auto",
                                        help="auto (exact up to 2500 edges), exact (compiled "
                                        "blossom, rustworkx), greedy, or networkx (the "
                                        "pure-Python reference blossom)")),
        "num_exp": (("--num-exp",), dict(type=finite_float, default=None,
                                        help="the paper's Num_Exp, an even split over bce_v "
                                        "(default: split by shortest paths)")),
        "split": (("--split",), dict(action="store_true", default=False,
                                    help="with --tau: superpacket splitting (senders of the "
                                    "same new items divide them between their calls, as in "
                                    "the paper's Lemma 2)")),
        "tries": (("--tries",), dict(type=_TRIES, default=1,
                                    help="best of this many tie orders (natural, then random "
                                    "from --seed); default 1")),
        "candidates": (("--candidates",), dict(type=_CANDIDATES, default=4,
                                              help="matchings compared per round with "
                                              "--lookahead; default 4")),
        "budget": (("--budget",), dict(type=_BUDGET, default=60.0, metavar="SECONDS",
                                      help="seconds for the portfolio after its first "
                                      "candidates (default 60)")),
        "workers": (("--workers",), dict(type=_workers, default=None, metavar="N",
                                        help="spread the portfolio's candidates over N local "
                                        "Dask workers (default: one process, every core)")),
        "scheduler": (("--scheduler",), dict(type=_address, default=None, metavar="ADDRESS",
                                            help="spread them over the Dask cluster at "
                                            "ADDRESS (tcp://HOST:PORT)")),
        "store": (("--store",), dict(default=DEFAULT_STORE, metavar="DIR",
                                    help="with --workers/--scheduler: the sweep store that "
                                    f"caches the candidates (default {DEFAULT_STORE})")),
        "no_cache": (("--no-cache",), dict(action="store_true", default=False,
                                          help="with --workers/--scheduler: run every "
                                          "candidate again")),
        "seed": (("--seed",), dict(type=decimal, default=None,
                                  help="seed of the random tie orders (default 0)")),
    }


#: ``schedule run``'s configuration options and their values when not given.
_CONFIG_DEFAULTS = {"n": None, "order": None, "seed": None, "receive": "ordered",
                    "substitute": False, "sessions": 1, "channels": None}


def _takes(algorithm: str, key: str) -> bool:
    own = ALGORITHM_OPTIONS[algorithm]
    return key in own or ("config" in own and key in _CONFIG_DEFAULTS)


def register(sub) -> None:
    """Add ``schedule ALGORITHM`` (one sub-command per generator, with only its
    options) and ``schedule check|plot|table|bench``."""
    options = _options()
    unset = {**_CONFIG_DEFAULTS, **{k: kw["default"] for k, (_, kw) in options.items()}}
    group = sub.group("schedule")
    for name in ALGORITHMS:
        own = ALGORITHM_OPTIONS[name]
        # No abbreviations: '--p' must not be read as another generator's --primitive.
        p = group.add_parser(name, help=ALGORITHM_HELP[name], allow_abbrev=False,
                             description=f"{ALGORITHM_HELP[name][0].upper()}"
                             f"{ALGORITHM_HELP[name][1:]}; written as pipegossip-schedule/1 "
                             "JSON (gzip when FILE ends in .gz).")
        if "config" in own:
            add_config_arguments(p, required=False)
            for action in p._actions:
                if action.dest == "order":
                    action.help += "; default pipelined"
        g = p.add_argument_group("options of " + name)
        for key in own:
            if key == "config":
                continue
            names, kw = options[key]
            kw = dict(kw)
            extra = {"topology": _TOPOLOGY_HELP, "p": _P_HELP, "root": _ROOT_HELP,
                     "n": _N_HELP}.get(key, {})
            if name in extra:
                kw["help"] = extra[name]
            g.add_argument(*names, **kw)
        p.add_argument("-o", "--output", default="-", metavar="FILE",
                       help="FILE.json or FILE.json.gz; '-' (default) is stdout")
        taken = {k for k in own if k != "config"} | (set(_CONFIG_DEFAULTS) if "config" in own
                                                     else set())
        p.set_defaults(func=cmd_schedule, algorithm=name,
                       **{k: v for k, v in unset.items() if k not in taken})
        # argparse's "unrecognized arguments" then says whose option it is
        p.other_options = {"--" + k.replace("_", "-"): [a for a in ALGORITHMS if _takes(a, k)]
                           for k in unset if k not in taken}


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
    from ..model.algorithms.limits import GENERATORS
    from ..model.schedules.compile_run import schedule_of_config
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
    # (each generator's parser has only its own options: ALGORITHM_OPTIONS)
    if args.root is not None and args.algorithm.startswith("polling-") and args.root != 0:
        raise UsageError(f"--root {args.root}: {args.algorithm} polls from node 0 "
                         "(its root is fixed)")
    s = _generate(args)
    if args.p is not None:
        s.p = args.p  # the validator decides whether the schedule keeps it
        v = validate(s)
        if not v.valid:
            raise ConfigError(f"--p {args.p}: the {args.algorithm} schedule breaks it ({v.error})")
    atomic_write(args.output, dumps(s, gz=str(args.output).endswith(".gz")))
    return 0


def _metrics_text(s: Schedule, v, streamed: bool = False) -> str:
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
    if streamed:
        lines.append("read as a stream (over the held limit): checked round by round")
    for fabric, need in _fabric_needs(s, streamed).items():
        lines.append(f"{fabric} fabric: " + (f"refused: {need['refused']}" if "refused" in need
                     else f"depth {need['depth']} (cycles), slots {need['slots']}"
                     + (f", bank depth {need['bank_depth']}" if "bank_depth" in need else "")))
    return "\n".join(lines) + "\n"


#: Schedules over this many messages are not compiled by ``check`` (time).
FABRIC_NEEDS_MESSAGES = 1 << 18


def _fabric_needs(s: Schedule, streamed: bool = False) -> dict:
    """The smallest build of each schedule-driven fabric that runs ``s``.

    ``{"schedule": {"depth", "slots"}, "network": {"depth", "slots", "bank_depth"}}``; a
    fabric that cannot run ``s`` gets ``{"refused": why}`` instead. A streamed file
    (``s`` its header alone) is not compiled.
    """
    from ..model.schedules.network_program import compile_network
    from ..model.schedules.program import ProgramError, compile_schedule
    if streamed or s.messages > FABRIC_NEEDS_MESSAGES:
        why = ("not compiled by check (read as a stream)" if streamed else
               f"not compiled by check (over {FABRIC_NEEDS_MESSAGES:,} messages)")
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
    from ..model.schedules.problems import MAX_PROBLEMS, problems
    from ..model.schedules.read_rounds import Streamed, open_schedule, validate_file
    opened = open_schedule(args.file)
    streamed = isinstance(opened, Streamed)
    if streamed:
        # past the held limit: checked round by round, never held; the first problem
        # only (finding more leaves a message out and checks again: that needs it all)
        s = opened.header
        v = validate_file(opened)
        found, more = ([v.exception] if not v.valid else []), False
    else:
        s = opened
        v = validate(s)
        found, more = problems(s) if not v.valid else ([], False)
    if args.format == "json":
        out = v.to_json()
        out["bounds"] = [{"metric": b.metric, "value": b.value, "kind": b.kind,
                          "source": b.source} for b in bounds_for(s, v.items_per_node)]
        out["problems"] = [str(e) for e in found]
        out["more_problems"] = more
        out["streamed"] = streamed
        if v.valid:
            out["fabrics"] = _fabric_needs(s, streamed)
        print(json.dumps(out))
    elif v.valid:
        sys.stdout.write(_metrics_text(s, v, streamed))
    if not v.valid:
        for e in found:
            print(f"{typed_command()}: invalid: {e}", file=sys.stderr)
        if more:
            print(f"{typed_command()}: the first {MAX_PROBLEMS} problems are shown; more may "
                  "follow", file=sys.stderr)
        elif streamed:
            print("pipegossip check: the file was read as a stream: only its first problem "
                  "is shown", file=sys.stderr)
        return 1
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from ..plots.schedule import MAX_CELLS, plot_schedule
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
        print(f"{typed_command()}: invalid: {v.error}", file=sys.stderr)
        return 1
    atomic_write(out, plot_schedule(s, v, fmt))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from ..paper.schedule_compare import comparison_rows, default_sizes
    if args.sizes is not None:
        sizes = _sizes(args.sizes)
    else:
        if args.max_n > 1024:  # said with the number typed, not the power of two below it
            raise UsageError(f"--max-n must be at most 1024, got {args.max_n}")
        if args.min_n > args.max_n:
            raise UsageError(f"--min-n {args.min_n} is above --max-n {args.max_n}")
        sizes = default_sizes(args.min_n, args.max_n)
        if not sizes:
            raise UsageError(f"no power of two between {args.min_n} and {args.max_n}; "
                             "use --sizes")
    if max(sizes) > 1024:
        raise UsageError(f"schedule table is limited to n <= 1024, got {max(sizes)}")
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
    from ..paper.schedule_compare import bench_case, estimate_bytes
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
