"""Certified optimal rounds: the fewest rounds of gossip or broadcast on a small network (SAT).

For a topology, a model (``F1``, ``H1``, ``Hstar``, ``Fstar``, see the
schedules contract), a primitive and a packet size, :func:`min_rounds`
raises ``R`` from a lower bound and asks a SAT solver (CaDiCaL through
``python-sat``, imported lazily) whether ``R`` rounds suffice. The first
satisfiable ``R`` is the optimum: every smaller one was proved
unsatisfiable or is below the lower bound. A known schedule (a heuristic's)
caps the search: reaching its ``R`` proves it optimal without a solver call.

Encoding, rounds ``r = 1..R``, items ``b`` (gossip: every node's; broadcast:
the root's), arcs ``u -> v`` of the topology's edges:

* ``k[r,v,b]``: ``v`` holds ``b`` after round ``r`` (round 0 fixed); it
  needs ``k[r-1,v,b]`` or an arc into ``v`` carrying ``b``; held items stay;
* ``s[r,u->v,b]``: the message on ``u -> v`` in round ``r`` carries ``b``:
  the sender held it, and the arc is in use;
* the model's rule on the arcs in use: ``F1`` a call variable per edge, at
  most one call per node (a call may carry both ways); ``H1`` an arc
  variable, at most one arc per node as sender or receiver; ``Hstar`` at
  most one direction per edge; ``Fstar`` every arc free;
* packets: at most ``p`` items on an arc per round (a sequential counter);
* goal: every ``k[R,v,b]``.

No symmetry breaking: the verdicts must hold for every topology, so none is
assumed. Each solver call runs in a child process (fork): the parent polls
it, so Ctrl-C and SIGTERM unwind the parent at once and its ``finally``
kills the child; a time limit kills it the same way.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import signal
import time
from dataclasses import dataclass, field


from ..schedules.ir import Message, Schedule
from ..schedules.topologies import Topology

__all__ = ["OptimumSearch", "min_rounds", "round_lower_bound", "MODELS", "estimate_size",
           "MAX_SIZE", "as_model"]

MODELS = ("F1", "H1", "Hstar", "Fstar")
#: Budget of one instance: rounds x arcs x items (the transfer variables).
MAX_SIZE = 400_000
_SOLVER = "cadical153"


@dataclass
class OptimumSearch:
    """Outcome of :func:`min_rounds`.

    Attributes
    ----------
    optimum : int or None
        The fewest rounds; None when the time limit stopped the search.
    lower : int
        Every ``R < lower`` is impossible (proved or by the bound).
    schedule : Schedule or None
        An optimal schedule (the solver's, or the given one when it is optimal).
    steps : list of (R, verdict, seconds)
        ``verdict`` is ``"SAT"``, ``"UNSAT"`` or ``"UNKNOWN"`` (time limit).
    bound : int
        The lower bound the search started from.
    seconds : float
    method : str
    """

    optimum: int | None
    lower: int
    schedule: Schedule | None
    steps: list = field(default_factory=list)
    bound: int = 0
    seconds: float = 0.0
    method: str = ""


def _adjacency(topo: Topology) -> list[list[int]]:
    adj: list[list[int]] = [[] for _ in range(topo.n)]
    if topo.edges is None:
        for u, v in itertools.combinations(range(topo.n), 2):
            adj[u].append(v)
            adj[v].append(u)
    else:
        for u, v in topo.edges.tolist():
            adj[u].append(v)
            adj[v].append(u)
    return adj


def _eccentricities(adj: list[list[int]]) -> list[int]:
    n, out = len(adj), []
    for s in range(n):
        dist = [-1] * n
        dist[s], frontier = 0, [s]
        while frontier:
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if dist[v] < 0:
                        dist[v] = dist[u] + 1
                        nxt.append(v)
            frontier = nxt
        if min(dist) < 0:
            raise ValueError("the topology is not connected")
        out.append(max(dist))
    return out


def round_lower_bound(topo: Topology, model: str, primitive: str = "gossip",
                      root: int | None = None) -> int:
    """A simple valid lower bound on the rounds.

    The eccentricity of the root (broadcast) or the diameter (gossip); under
    ``F1`` and ``H1`` also ``ceil(log2 n)`` (the holders of an item at most
    double per round), and for ``F1`` gossip on odd ``n`` one more: that is
    the gossip time of the complete graph on odd ``n``, and removing edges
    never helps.
    """
    ecc = _eccentricities(_adjacency(topo))
    bound = ecc[root] if primitive == "broadcast" else max(ecc)
    if model in ("F1", "H1") and topo.n > 1:
        log = math.ceil(math.log2(topo.n))
        if model == "F1" and primitive == "gossip" and topo.n % 2:
            log += 1
        bound = max(bound, log)
    return bound


def estimate_size(topo: Topology, rounds: int, primitive: str = "gossip") -> int:
    """Rounds x arcs x items: the transfer variables an instance with ``rounds`` needs."""
    return rounds * 2 * topo.m * (topo.n if primitive == "gossip" else 1)


def _cnf(topo: Topology, adj, model: str, items: list[int], p: int | None, rounds: int,
         start: dict[int, int]):
    from pysat.card import CardEnc, EncType
    from pysat.formula import IDPool

    pool, cnf = IDPool(), []
    n = topo.n
    edges = sorted({(min(u, v), max(u, v)) for u in range(n) for v in adj[u]})

    def k(r, v, b):
        return pool.id(("k", r, v, b))

    def use(r, u, v):  # the arc u -> v carries a message in round r (None: always free)
        if model == "F1":
            return pool.id(("x", r, min(u, v), max(u, v)))
        if model == "Fstar":
            return None
        return pool.id(("d", r, u, v))

    for v in range(n):
        for b in items:
            cnf.append([k(0, v, b)] if start.get(b) == v else [-k(0, v, b)])
    for r in range(1, rounds + 1):
        if model == "F1":
            for v in range(n):
                cnf += CardEnc.atmost([use(r, v, u) for u in adj[v]], 1, vpool=pool,
                                      encoding=EncType.seqcounter).clauses
        elif model == "H1":
            for v in range(n):
                lits = [use(r, v, u) for u in adj[v]] + [use(r, u, v) for u in adj[v]]
                cnf += CardEnc.atmost(lits, 1, vpool=pool, encoding=EncType.seqcounter).clauses
        elif model == "Hstar":
            cnf += [[-use(r, u, v), -use(r, v, u)] for u, v in edges]
        for u in range(n):
            for v in adj[u]:
                arc = use(r, u, v)
                sent = []
                for b in items:
                    s = pool.id(("s", r, u, v, b))
                    sent.append(s)
                    cnf.append([-s, k(r - 1, u, b)])
                    if arc is not None:
                        cnf.append([-s, arc])
                if p is not None and p < len(items):
                    cnf += CardEnc.atmost(sent, p, vpool=pool,
                                          encoding=EncType.seqcounter).clauses
        for v in range(n):
            for b in items:
                cnf.append([-k(r - 1, v, b), k(r, v, b)])
                cnf.append([-k(r, v, b), k(r - 1, v, b)]
                           + [pool.id(("s", r, u, v, b)) for u in adj[v]])
    cnf += [[k(rounds, v, b)] for v in range(n) for b in items]
    return cnf, pool


def _child(conn, cnf) -> None:
    """The solver process: Ctrl-C is the parent's business (it kills this process)."""
    from pysat.solvers import Solver
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with Solver(name=_SOLVER, bootstrap_with=cnf) as s:
        ok = s.solve()
        conn.send((ok, s.get_model() if ok else None))


def _solve(cnf, deadline: float | None):
    """``(verdict, true variables)``; the solver runs in a child process that is killed
    at the deadline or when a signal unwinds this one (a solver in C cannot be
    trusted to stop on request, and a signal handler cannot run while it holds
    the interpreter)."""
    ctx = multiprocessing.get_context("fork")
    mine, theirs = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(theirs, cnf), daemon=True)
    proc.start()
    theirs.close()
    try:
        while not mine.poll(0.05):
            if not proc.is_alive() and not mine.poll(0):
                raise RuntimeError(f"the SAT solver process died (exit {proc.exitcode})")
            if deadline is not None and time.monotonic() > deadline:
                return "UNKNOWN", None
        ok, model = mine.recv()
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        mine.close()
    return ("SAT", set(x for x in model if x > 0)) if ok else ("UNSAT", None)


def _extract(topo, adj, model, items, p, rounds, pool, true, primitive, root, start) -> Schedule:
    know = {b: {start[b]} for b in items}
    out = []
    for r in range(1, rounds + 1):
        msgs, gained = [], []
        for u in range(topo.n):
            for v in adj[u]:
                got = tuple(b for b in items if pool.id(("s", r, u, v, b)) in true
                            and u in know[b] and v not in know[b])
                if got:
                    msgs.append(Message(u, (v,), got))
                    gained += [(b, v) for b in got]
        for b, v in gained:
            know[b].add(v)
        out.append(msgs)
    return Schedule.from_rounds(out, topology=topo, model=model, p=p, primitive=primitive,
                                root=root, origin={"algorithm": "optimum", "source": ""})


def min_rounds(topo: Topology, model: str, primitive: str = "gossip", root: int | None = None,
               p: int | None = None, known: Schedule | None = None,
               time_limit: float | None = None, max_size: int = MAX_SIZE) -> OptimumSearch:
    """The fewest rounds, proved: ``R`` rises from :func:`round_lower_bound` until satisfiable.

    Parameters
    ----------
    topo : Topology
        Connected.
    model : {"F1", "H1", "Hstar", "Fstar"}
    primitive : {"gossip", "broadcast"}
    root : int, optional
        Broadcast only.
    p : int, optional
        Items per message; None is unlimited.
    known : Schedule, optional
        A valid schedule of the same problem: the search stops at its ``R``.
    time_limit : float, optional
        Seconds; the running solver call is interrupted when they are up.
    max_size : int
        Refuse (ValueError) an instance whose :func:`estimate_size` at the
        largest ``R`` the search may need is larger.
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    if primitive not in ("gossip", "broadcast"):
        raise ValueError(f"primitive must be gossip or broadcast, got {primitive!r}")
    if (primitive == "broadcast") != (root is not None):
        raise ValueError("broadcast needs a root; gossip takes none")
    if root is not None and not 0 <= root < topo.n:
        raise ValueError(f"root must be in 0..{topo.n - 1}, got {root}")
    _budget(topo, 1, primitive, max_size)  # before the all-pairs BFS of the lower bound
    t0 = time.monotonic()
    deadline = None if time_limit is None else t0 + time_limit
    adj = _adjacency(topo)
    lower = bound = round_lower_bound(topo, model, primitive, root)
    items = list(range(topo.n)) if primitive == "gossip" else [root]
    start = {b: b for b in items}
    upper = None
    if known is not None:
        from ..schedules.validate import validate
        v = validate(known)
        if not v.valid:
            raise ValueError(f"the known schedule is invalid: {v.error}")
        upper = v.R
    _budget(topo, lower, primitive, max_size)  # refused before any solver call
    steps = []
    method = (f"SAT ({_SOLVER} via python-sat), {model} rules on the arcs, "
              f"p={'unlimited' if p is None else p}; R raised from the lower bound {bound}")
    r = lower
    while upper is None or r < upper:
        _budget(topo, r, primitive, max_size)
        cnf, pool = _cnf(topo, adj, model, items, p, r, start)
        t = time.monotonic()
        verdict, true = _solve(cnf, deadline)
        steps.append((r, verdict, time.monotonic() - t))
        if verdict == "UNKNOWN":
            return OptimumSearch(None, r, None, steps, bound, time.monotonic() - t0, method)
        if verdict == "SAT":
            s = _extract(topo, adj, model, items, p, r, pool, true, primitive, root, start)
            s.origin = {"algorithm": "optimum", "source": f"{r} rounds, optimal; {method}"}
            return OptimumSearch(r, r, s, steps, bound, time.monotonic() - t0, method)
        r += 1
        if deadline is not None and time.monotonic() > deadline and (upper is None or r < upper):
            return OptimumSearch(None, r, None, steps, bound, time.monotonic() - t0, method)
    return OptimumSearch(upper, upper, known, steps, bound, time.monotonic() - t0, method)


def as_model(s: Schedule, model: str) -> Schedule:
    """A telephone (``F1``) schedule as a schedule of ``model``, for the heuristics' column.

    ``F1`` and ``Fstar`` take it as it is (a call is two arcs). ``H1`` and
    ``Hstar`` split each round in two: first the messages to a higher id,
    then those to a lower one. Each node is in one call, so it sends or
    receives one message per half; the second half's items were the
    sender's at the round's start and are still new to the receiver, who
    only sent in the first half.
    """
    if s.model != "F1" or model not in MODELS:
        raise ValueError(f"as_model takes an F1 schedule and one of {', '.join(MODELS)}")
    if model in ("F1", "Fstar"):
        rounds = s.rounds
    else:
        rounds = []
        for rnd in s.rounds:
            halves = ([m for m in rnd if m.dst[0] > m.src], [m for m in rnd if m.dst[0] < m.src])
            rounds += [half for half in halves if half]
    return Schedule.from_rounds(rounds, topology=s.topology, model=model, p=s.p,
                                primitive=s.primitive, root=s.root, origin={
                                    "algorithm": s.origin["algorithm"],
                                    "source": f"{s.origin['source']}; F1 rounds as {model}"})


def _budget(topo: Topology, rounds: int, primitive: str, max_size: int) -> None:
    size = estimate_size(topo, rounds, primitive)
    if size > max_size:
        raise ValueError(f"{topo.name} with {topo.n} nodes and {topo.m} edges needs "
                         f"{size:,} transfer variables at {rounds} rounds, over the budget "
                         f"of {max_size:,}")
