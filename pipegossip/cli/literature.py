"""The literature's algorithms on the command line.

* generators for ``pipegossip schedule``: ``path-gossip``, ``cycle-gossip``
  (H*, packet size p), ``polling-complete``, ``polling-hypercube``,
  ``polling-general`` (H1 polling), ``short-messages`` (F1 calls of at most p
  blocks), through :func:`literature_schedule`;
* ``literature-table path-cycle|polling|short-messages``: our validated
  numbers beside the papers' formulas and bounds, as Markdown or JSON,
  optionally plotted;
* ``polling-search``: the exact minimum number of polling messages (SAT);
* ``short-messages-search``: the exact minimum number of calls c(n, p) (SAT).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..infra.bounded import TimeLimitReached, run_bounded, time_limited
from . import UsageError
from ..infra.files import atomic_write
from ..infra.budgets import check_seconds
from ..model.algorithms.short_messages_search import SOLVERS, SYMMETRIES
from .options import checked_number, positive_int, refuse_given, time_limit_seconds

__all__ = ["register", "LITERATURE_ALGORITHMS", "literature_schedule", "table_rows"]

LITERATURE_ALGORITHMS = ("path-gossip", "cycle-gossip", "polling-complete",
                         "polling-hypercube", "polling-general", "short-messages")
_TABLES = ("path-cycle", "polling", "short-messages")
_RUN_ONLY = {"order": None, "seed": None, "receive": "ordered", "substitute": False,
             "sessions": 1, "channels": None}
_MAX_PATH_N = 8192
_MAX_POLL_K = 16
_MAX_SHORT_N = 1024  # p = 1 makes n(n-1)/2 calls: about half a million at 1024


def literature_schedule(args: argparse.Namespace):
    """The schedule ``pipegossip schedule ALGORITHM`` asked for (one of :data:`LITERATURE_ALGORITHMS`)."""
    from ..model.algorithms import path_cycle, polling
    name = args.algorithm
    given = [f"--{k}" for k, d in _RUN_ONLY.items() if getattr(args, k, d) != d]
    if given:
        raise UsageError(f"{given[0]} applies only to 'schedule run'")
    if args.topology != "complete":
        raise UsageError(f"--topology does not apply to {name} (its graph is fixed)")
    if name == "short-messages":
        from ..model.algorithms.short_messages import short_messages
        if args.k is not None:
            raise UsageError("short-messages takes --n and --p, not --k")
        if args.n is None or not 2 <= args.n <= _MAX_SHORT_N:
            raise UsageError(f"short-messages: --n must be between 2 and {_MAX_SHORT_N}, "
                             f"got {args.n}")
        if args.p is None:
            raise UsageError("short-messages: --p (blocks per message) is required")
        _check_gossip_memory(name, args.n, args.p)
        return short_messages(args.n, args.p)
    if name in ("path-gossip", "cycle-gossip"):
        if args.k is not None:
            raise UsageError(f"{name} takes --n and --p, not --k")
        if args.n is None or not 3 <= args.n <= _MAX_PATH_N:
            raise UsageError(f"{name}: --n must be between 3 and {_MAX_PATH_N}, got {args.n}")
        _check_gossip_memory(name, args.n, 1 if args.p is None else args.p)
        return path_cycle.GENERATORS[name](args.n, 1 if args.p is None else args.p)
    if args.p is not None:
        raise UsageError(f"{name}: --p does not apply (polling responses combine)")
    if name == "polling-general":
        if args.k is not None:
            raise UsageError("polling-general takes --n, not --k")
        if args.n is None or not 2 <= args.n <= 1 << _MAX_POLL_K:
            raise UsageError(f"polling-general: --n must be between 2 and {1 << _MAX_POLL_K}, "
                             f"got {args.n}")
        return polling.polling_general(args.n)
    if args.n is not None:
        raise UsageError(f"{name} takes --k (n = 2^k), not --n")
    if args.k is None or not 3 <= args.k <= _MAX_POLL_K:
        raise UsageError(f"{name}: --k must be between 3 and {_MAX_POLL_K}, got {args.k}")
    return polling.GENERATORS[name](args.k)


def _check_gossip_memory(name: str, n: int, p: int | None) -> None:
    """Refuse a gossip schedule too large to hold: every node receives n-1 items, at most p a message."""
    from ..infra.budgets import check_schedule_memory, gossip_items
    items = gossip_items(n)
    check_schedule_memory(-(-items // (p or n)), items, f"{name} for n={n:,}"
                          + (f", p={p}" if p else ""))


#: --time-limit of the SAT search: more than 0 seconds, at most a week.
_time_limit = time_limit_seconds


_TIME_LIMIT_HELP = ("stop the command after SECONDS (counted from its start; the solver is "
                    "stopped mid-call) and report what was proved; exit status 1 when the "
                    "limit stopped it (default: no limit)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "literature-table", help="the papers' tables beside our validated schedules",
        description="path-cycle: rounds of path-gossip and cycle-gossip (H*, p = 1, 2 and "
        "unlimited) against Table 1 of 'Optimal gossiping in paths and cycles', N = 3..128. "
        "polling: rounds and messages of polling-complete and polling-hypercube, K = 3..12, "
        "against the formulas and bounds of Czygrinow, Karonski and Sunderam. short-messages: "
        "calls c(n,p) of short-messages (F1, p blocks per message), n = 4..64, p = 1..8, "
        "against bounds (1), (2) and Theorem 3.1 of Bermond, Gargano and Perennes, 'Optimal "
        "sequential gossiping by short messages', with the exact c(n,p) where the SAT search "
        "settled it. Every schedule is checked by the validator first.")
    p.add_argument("table", choices=_TABLES, metavar="TABLE", help=" | ".join(_TABLES))
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--max-n", type=positive_int, default=None,
                   help="largest N: path-cycle default 128, short-messages default 64")
    p.add_argument("--max-k", type=positive_int, default=None,
                   help="polling: largest K (default 12)")
    p.add_argument("--max-p", type=positive_int, default=None,
                   help="short-messages: largest p (default 8; n goes to --max-n, default 64)")
    p.add_argument("--plot", metavar="PNG", help="also draw the table (PNG or SVG)")
    p.add_argument("--time-limit", type=_time_limit, default=None, metavar="SECONDS",
                   help="path-cycle: refuse a table estimated to take longer on an idle "
                   "machine; default PIPEGOSSIP_MAX_SECONDS or 600")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser(
        "polling-search", help="exact minimum messages of polling in 2K rounds (SAT)",
        description="Prove the fewest messages that poll K_{2^K} or the hypercube Q_K in 2K "
        "rounds with a SAT solver (needs python-sat). Prints the method, every solver "
        "call and the run time. K = 3 takes well under a second, K = 4 seconds to minutes.")
    p.add_argument("--k", type=positive_int, required=True)
    p.add_argument("--graph", choices=("complete", "hypercube"), required=True)
    p.add_argument("--time-limit", type=_time_limit, default=None, metavar="SECONDS",
                   help=_TIME_LIMIT_HELP)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "short-messages-search", help="exact minimum calls c(n,p) of gossip by short "
        "messages (SAT)",
        description="Prove the fewest telephone calls (F1) that gossip among N nodes when a "
        "message carries at most P blocks, with a SAT solver (needs python-sat): the call "
        "count rises from the paper's lower bound until satisfiable; reaching the validated "
        "short-messages count proves it optimal. Prints the method, every solver call and "
        "the run time; a found schedule is checked by the validator. N <= 6 takes seconds, "
        "N = 7 about a minute, c(8,3) seconds (its counting clauses), N = 9 more than 40 "
        "minutes.")
    p.add_argument("--n", type=positive_int, required=True)
    p.add_argument("--p", type=positive_int, required=True)
    p.add_argument("--time-limit", type=_time_limit, default=None, metavar="SECONDS",
                   help=_TIME_LIMIT_HELP)
    p.add_argument("--solver", choices=SOLVERS,
                   default="cadical153", help="python-sat solver (default cadical153; a "
                   "second one cross-checks an UNSAT verdict)")
    p.add_argument("--symmetry", choices=SYMMETRIES, default="first-calls",
                   help="symmetry break: first-calls (nodes first call in id order; default) "
                   "or pair-order (first call {0,1}, adjacent disjoint calls in pair order)")
    p.add_argument("--no-counting", action="store_true",
                   help="leave out the redundant counting clauses (every call carries a "
                   "block; no message falls short of its capacity by more than the slack "
                   "of bound (1)): the plain encoding, to cross-check a verdict")
    p.add_argument("--calls", type=positive_int, default=None, metavar="M",
                   help="ask only whether M calls suffice (without the every-call-carries-"
                   "a-block clause, so UNSAT proves c(n,p) > M); SAT prints the solver's "
                   "validated schedule")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_short_search)


def path_cycle_seconds(max_n: int) -> float:
    """Estimated seconds of ``literature-table path-cycle --max-n max_n`` on an idle machine.

    Six schedules per N (path and cycle, p = 1, 2, unlimited), each generated
    and validated; measured in one process (CPU seconds, ``time.process_time``):
    N = 128: 0.14 s, 256: 0.29 s, 512: 0.85 s for the six. Taken as
    ``3.3e-6 N^2`` per N (the 512 figure; smaller N cost less than that), so
    the table costs about ``1.1e-6 max_n^3``: 143 s to N = 512, 1,150 s to
    N = 1024.
    """
    return 3.3e-6 * sum(n * n for n in range(3, max_n + 1))


def table_rows(table: str, max_n: int = 128, max_k: int = 12, max_p: int = 8) -> list[dict]:
    """The rows of ``literature-table TABLE``; raises AssertionError if a schedule is invalid."""
    from ..model.algorithms import path_cycle, polling
    from ..model.schedules.validate import validate
    rows = []
    if table == "short-messages":
        return _short_rows(max_n, max_p)
    if table == "path-cycle":
        for n in range(3, max_n + 1):
            row = {"N": n}
            for shape, gen in (("path", path_cycle.path_gossip), ("cycle", path_cycle.cycle_gossip)):
                for p, tag in ((1, "p1"), (2, "p2"), (None, "pinf")):
                    v = validate(gen(n, p))
                    if not v.valid:
                        raise AssertionError(f"{shape} n={n} p={p}: {v.error}")
                    row[f"{shape}_{tag}"] = v.R
                    if tag != "pinf":
                        row[f"{shape}_{tag}_table1"] = path_cycle.table1_rounds(shape, n, p)
            rows.append(row)
        return rows
    for k in range(3, max_k + 1):
        vc, vh = validate(polling.polling_complete(k)), validate(polling.polling_hypercube(k))
        if not (vc.valid and vh.valid):
            raise AssertionError(f"polling k={k}: {vc.error or vh.error}")
        rows.append({"K": k, "N": 1 << k, "rounds_bound": 2 * k,
                     "complete_R": vc.R, "complete_messages": vc.messages,
                     "prop3_algorithm": polling.prop3_messages(k),
                     "prop3_stated": polling.prop3_stated(k),
                     "hypercube_R": vh.R, "hypercube_messages": vh.messages,
                     "prop8": polling.prop8_messages(k) if k >= 4 else None, "cor6_bound": polling.cor6_bound(k)})
    return rows


#: c(n, p) settled by ``short-messages-search`` (SAT; docs/literature.md has times).
SHORT_EXACT = {(4, 2): 4, (5, 3): 6, (6, 2): 9, (6, 3): 9, (6, 4): 8, (7, 3): 11, (7, 4): 10,
               (7, 5): 10, (8, 2): 16, (8, 3): 13, (8, 4): 12, (10, 3): 19}


def _short_rows(max_n: int, max_p: int) -> list[dict]:
    from ..model.algorithms.short_messages import paper_count, short_messages, split
    from ..model.schedules import bounds
    from ..model.schedules.validate import validate
    rows = []
    for p in range(1, max_p + 1):
        for n in range(4, max_n + 1):
            v = validate(short_messages(n, p))
            if not v.valid:
                raise AssertionError(f"short-messages n={n} p={p}: {v.error}")
            h, k = split(n, p)
            general = p >= 2 and n >= p + 2
            one = n * n / (2 * p) + (p - 2) * n / (2 * p)
            two = n * n / (2 * p) + (1 - k / (2 * p) - 1 / (2 * (k - 1))) * n if general else None
            lower = bounds.packet_calls_lower(n, p).value
            if not general:  # n = hp + k is the notation of the general case only
                h = k = None
            rows.append({"n": n, "p": p, "h": h, "k": k, "calls": v.calls, "R": v.R,
                         "bound1": round(one, 3), "bound2": None if two is None else round(two, 3),
                         "lower": lower, "upper": bounds.packet_calls_upper(n, p).value,
                         "paper_count": paper_count(n, p) if general else None,
                         "gap": v.calls - lower, "exact": SHORT_EXACT.get((n, p))})
    return rows


def _short_markdown(rows: list[dict]) -> str:
    head = ("| n | p | h | k | our calls | bound (1) | bound (2) | lower | Thm 3.1 | gap "
            "| exact (SAT) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    out = []
    for r in rows:
        two = "-" if r["bound2"] is None else f"{r['bound2']:g}"
        exact = "" if r["exact"] is None else str(r["exact"])
        out.append(f"| {r['n']} | {r['p']} | {r['h'] or '-'} | {r['k'] or '-'} | {r['calls']} | "
                   f"{r['bound1']:g} | {two} | {r['lower']} | {r['upper']} | {r['gap']} | "
                   f"{exact} |\n")
    return head + "".join(out)


def _markdown(table: str, rows: list[dict]) -> str:
    if table == "short-messages":
        return _short_markdown(rows)
    if table == "path-cycle":
        head = ("| N | path p=1 | Table 1 | path p=2 | Table 1 | path p=inf | cycle p=1 | Table 1 "
                "| cycle p=2 | Table 1 | cycle p=inf |\n|---:|---:|---:|---:|---:|---:|---:|---:"
                "|---:|---:|---:|\n")
        keys = ("path_p1", "path_p1_table1", "path_p2", "path_p2_table1", "path_pinf",
                "cycle_p1", "cycle_p1_table1", "cycle_p2", "cycle_p2_table1", "cycle_pinf")
        return head + "".join(f"| {r['N']} | " + " | ".join(str(r[k]) for k in keys) + " |\n"
                              for r in rows)
    head = ("| K | N | rounds (both) | 2K | K_N messages | Prop. 3 algorithm (r-1) | Prop. 3 "
            "as stated (-2) | Q_K messages | Prop. 8 | Cor. 6 bound |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    out = []
    for r in rows:
        rounds = r["complete_R"] if r["complete_R"] == r["hypercube_R"] else \
            f"{r['complete_R']}/{r['hypercube_R']}"
        cor6 = f"{r['cor6_bound']}" + ("" if r["K"] % 2 == 0 else " (odd K: not claimed)")
        out.append(f"| {r['K']} | {r['N']} | {rounds} | {r['rounds_bound']} | "
                   f"{r['complete_messages']} | {r['prop3_algorithm']} | {r['prop3_stated']} | "
                   f"{r['hypercube_messages']} | {r['prop8'] or '- (needs K >= 4)'} | {cor6} |\n")
    return head + "".join(out)


#: Which tables each option applies to: ``(tables, ((flag, attribute, unset), ...))``.
_TABLE_OPTIONS = ((("path-cycle", "short-messages"), (("--max-n", "max_n", None),)),
                  (("path-cycle",), (("--time-limit", "time_limit", None),)),
                  (("polling",), (("--max-k", "max_k", None),)),
                  (("short-messages",), (("--max-p", "max_p", None),)))


def cmd_table(args: argparse.Namespace) -> int:
    for tables, options in _TABLE_OPTIONS:
        if args.table not in tables:
            refuse_given(args, options, "only to " + " and ".join(tables))
    if args.max_n is None:
        args.max_n = 64 if args.table == "short-messages" else 128
    args.max_k = 12 if args.max_k is None else args.max_k
    args.max_p = 8 if args.max_p is None else args.max_p
    if args.table == "path-cycle" and not 3 <= args.max_n <= 1024:
        raise UsageError(f"--max-n must be between 3 and 1024, got {args.max_n}")
    if args.table == "polling" and not 3 <= args.max_k <= 14:
        raise UsageError(f"--max-k must be between 3 and 14, got {args.max_k}")
    if args.table == "short-messages":
        if not 4 <= args.max_n <= 256 or not args.max_p <= 32:
            raise UsageError(f"short-messages: --max-n must be between 4 and 256 and --max-p "
                             f"at most 32, got {args.max_n} and {args.max_p}")
    if args.plot and not args.plot.endswith((".png", ".svg")):
        raise UsageError(f"--plot {args.plot}: give a .png or .svg file name")
    if args.table == "path-cycle":
        check_seconds(path_cycle_seconds(args.max_n),
                      f"literature-table path-cycle up to N={args.max_n:,}", args.time_limit,
                      "--time-limit")
    rows = table_rows(args.table, args.max_n, args.max_k, args.max_p)
    if args.plot:
        from ..plots.literature import plot_table
        atomic_write(args.plot, plot_table(args.table, rows, "svg" if args.plot.endswith(".svg")
                                           else "png"))
    if args.format == "json":
        print(json.dumps(rows, indent=1))
    else:
        sys.stdout.write(_markdown(args.table, rows))
    return 0


def _search_limits(option: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise UsageError(f"{option} must be between {low} and {high} (the search grows fast), "
                         f"got {value}")


def _need_pysat(command: str) -> None:
    """A clear message instead of an import error mid-search."""
    try:
        import pysat  # noqa: F401
    except ImportError:
        raise UsageError(f"{command} needs python-sat: pip install python-sat") from None


def cmd_search(args: argparse.Namespace) -> int:
    from ..model.algorithms import polling
    from ..model.schedules.validate import validate
    _search_limits("--k", args.k, 3, 5)
    _need_pysat("polling-search")
    from ..model.algorithms.polling_search import min_polling_messages
    gen = polling.polling_complete if args.graph == "complete" else polling.polling_hypercube
    start = None
    try:
        with time_limited(args.time_limit):
            start = validate(gen(args.k)).messages
            r, _ = run_bounded(min_polling_messages, args.graph, args.k, start,
                               time_limit=args.time_limit)
    except TimeLimitReached as e:
        steps = [step for step, _ in e.progress]
        best = e.progress[-1][1] if e.progress else start
        summary = ("stopped before the search began" if start is None else
                   f"optimum <= {best} messages (our construction: {start}), not settled")
        return _stopped("polling-search", args, e, steps, {
            "graph": args.graph, "k": args.k, "constructed": start, "optimum": None,
            "at_most": best}, summary, lambda m, v, t: f"  at most {m} messages: {v} ({t:.2f} s)")
    if args.format == "json":
        print(json.dumps({"graph": r.graph, "k": r.k, "n": r.n, "rounds": r.rounds,
                          "optimum": r.optimum, "constructed": start, "method": r.method,
                          "seconds": round(r.seconds, 3),
                          "steps": [{"at_most": m, "verdict": v, "seconds": round(t, 3)}
                                    for m, v, t in r.steps]}))
        return 0
    print(f"graph {r.graph} K={r.k} (N={r.n}), {r.rounds} rounds")
    print(f"method {r.method}")
    for m, verdict, t in r.steps:
        print(f"  at most {m} messages: {verdict} ({t:.2f} s)")
    print(f"optimum {r.optimum} messages (our construction: {start}); total {r.seconds:.2f} s")
    return 0


def cmd_short_search(args: argparse.Namespace) -> int:
    from ..model.algorithms.short_messages import short_messages
    from ..model.schedules.bounds import packet_calls_lower
    from ..model.schedules.validate import validate
    _search_limits("--n", args.n, 2, 10)
    _need_pysat("short-messages-search")
    from ..model.algorithms.short_messages_search import calls_schedule, min_calls_sat
    lower = packet_calls_lower(args.n, args.p).value
    if args.calls is not None:
        return _short_one_count(args, lower)
    ours = None
    try:
        with time_limited(args.time_limit):
            ours = validate(short_messages(args.n, args.p)).calls
            r, _ = run_bounded(min_calls_sat, args.n, args.p, lower, ours,
                               time_limit=args.time_limit, solver=args.solver,
                               symmetry=args.symmetry, counting=not args.no_counting)
    except TimeLimitReached as e:
        steps = [step for step, _ in e.progress]
        proved = e.progress[-1][1] if e.progress else lower
        return _stopped("short-messages-search", args, e, steps, {
            "n": args.n, "p": args.p, "optimum": None, "proved_lower": proved,
            "lower_bound": lower, "ours": ours}, f"c({args.n},{args.p}) >= {proved} proved, "
            "not settled" + ("" if ours is None else f" (short-messages: {ours} calls)"),
            lambda m, v, t: f"  {m} calls: {v} ({t:.2f} s)")
    if r.calls:  # the solver's schedule goes through the one validator too
        v = validate(calls_schedule(args.n, args.p, r.calls))
        if not v.valid or v.calls != r.optimum:
            raise AssertionError(f"search schedule rejected: {v.error or v.calls}")
    if args.format == "json":
        print(json.dumps({"n": r.n, "p": r.p, "optimum": r.optimum, "proved_lower": r.lower,
                          "lower_bound": lower, "ours": ours, "method": r.method,
                          "seconds": round(r.seconds, 3), "calls": r.calls,
                          "steps": [{"calls": m, "verdict": v, "seconds": round(t, 3)}
                                    for m, v, t in r.steps]}))
        return 0
    print(f"n={r.n} p={r.p}: lower bound {lower}, short-messages {ours} calls")
    print(f"method {r.method}")
    for m, verdict, t in r.steps:
        print(f"  {m} calls: {verdict} ({t:.2f} s)")
    how = "found by the solver" if r.calls else "short-messages is optimal"
    print(f"optimum c({r.n},{r.p}) = {r.optimum} calls ({how}); total {r.seconds:.2f} s")
    return 0


def _short_one_count(args: argparse.Namespace, lower: int) -> int:
    """``--calls M``: one solver call; SAT gives ``c(n,p) <= M``, UNSAT ``c(n,p) > M``."""
    from ..model.algorithms.short_messages_search import calls_schedule, min_calls_sat
    from ..model.schedules.validate import validate
    m = args.calls
    if m > 4 * args.n * args.n:
        raise UsageError(f"--calls must be at most 4 n^2 = {4 * args.n * args.n}, got {m}")
    try:
        r, _ = run_bounded(min_calls_sat, args.n, args.p, m, m + 1, time_limit=args.time_limit,
                           solver=args.solver, symmetry=args.symmetry,
                           counting=not args.no_counting, minimal=False)
    except TimeLimitReached as e:
        return _stopped("short-messages-search", args, e, [step for step, _ in e.progress], {
            "n": args.n, "p": args.p, "calls_asked": m}, f"{m} calls not decided",
            lambda c, v, t: f"  {c} calls: {v} ({t:.2f} s)")
    verdict = r.steps[-1][1] if r.steps else "UNSAT"  # below bound (1): no solver call
    if r.calls:
        v = validate(calls_schedule(args.n, args.p, r.calls))
        if not v.valid or v.calls != m:
            raise AssertionError(f"search schedule rejected: {v.error or v.calls}")
    claim = f"c({args.n},{args.p}) {'<=' if r.calls else '>'} {m}"
    if args.format == "json":
        print(json.dumps({"n": args.n, "p": args.p, "calls_asked": m, "verdict": verdict,
                          "claim": claim, "lower_bound": lower, "method": r.method,
                          "seconds": round(r.seconds, 3), "calls": r.calls}))
        return 0
    print(f"n={args.n} p={args.p}: lower bound {lower}; asked {m} calls")
    print(f"method {r.method}")
    for c, verdict, t in r.steps:
        print(f"  {c} calls: {verdict} ({t:.2f} s)")
    for u, v, a, b in r.calls:
        print(f"  call {u}-{v}: {u}->{v} {list(a)}, {v}->{u} {list(b)}")
    print(f"{claim}; total {r.seconds:.2f} s")
    return 0


def _stopped(command: str, args: argparse.Namespace, e: TimeLimitReached, steps: list,
             fields: dict, summary: str, step_line) -> int:
    """A search the time limit stopped: what it proved, one line on stderr, exit status 1."""
    if args.format == "json":
        print(json.dumps({**fields, "time_limit": e.limit, "time_limit_reached": True,
                          "steps": [{"at_most" if command == "polling-search" else "calls": m,
                                     "verdict": v, "seconds": round(t, 3)}
                                    for m, v, t in steps]}))
    else:
        for step in steps:
            print(step_line(*step))
        print(f"time limit: {summary}")
    from . import typed_command
    print(f"{typed_command()}: time limit of {e.limit:g} s reached; the search is not "
          "settled (exit status 1)", file=sys.stderr)
    return 1
