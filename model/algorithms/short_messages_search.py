"""Exact ``c(n, p)``: the fewest telephone calls gossiping ``n`` nodes with packets of ``p`` blocks.

Bermond, Gargano and Perennes, *Optimal sequential gossiping by short
messages* (1998), bound ``c(n, p)`` between their lower bound (2) and
Theorem 3.1, less than ``p`` apart; for small ``n`` a SAT solver settles the
value. Calls are sequential: a schedule of ``M`` calls is ``M`` steps with
one call each (calls are counted, not rounds).

Encoding (CNF, CaDiCaL through ``python-sat``, imported lazily), steps
``t = 1..M``, blocks ``b`` (block ``v`` starts at node ``v``):

* ``c[t,{u,v}]``: the call of step ``t`` (exactly one pair per step);
* ``k[t,v,b]``: ``v`` knows ``b`` after step ``t``; it needs ``k[t-1,v,b]``
  or ``r[t,v,b]``; knowledge is kept (``k[t-1] -> k[t]``);
* ``r[t,v,b]``: ``v`` receives ``b`` in step ``t``: ``v`` is in the call,
  its partner knew ``b``, ``v`` did not (receiving a known block is never
  needed), and ``v`` knows it from then on, so each ``(v, b)`` with
  ``v != b`` is received exactly once; at most ``p`` of them per ``(t, v)``
  (a sequential counter);
* goal: every ``k[M,v,b]``.

Symmetry breaking, both valid together: nodes are relabelled so that the
first call is ``{0,1}``; adjacent calls on disjoint pairs commute, so only
the order with the smaller pair first is kept (the lexicographically least
order of the calls' partial order has this property, and relabelling
first, then reordering, keeps ``{0,1}`` first because ``{0,1}`` is the
least pair and a first call of its nodes).

Counting (redundant, on by default, :func:`_counting`): bound (1) is a sum
over all messages; the clauses give each message its share of it, which
settles ``c(8, 3) > 12`` in about a second where the plain encoding ran for
many minutes.

``M`` rises from the lower bound; the first satisfiable ``M`` is ``c(n, p)``
and every smaller ``M`` is proved unsatisfiable.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["CallSearch", "min_calls_sat", "calls_schedule", "slack"]


@dataclass
class CallSearch:
    """Outcome of :func:`min_calls_sat`.

    Attributes
    ----------
    n, p : int
    optimum : int
        ``c(n, p)``.
    lower : int
        The largest ``M`` proved impossible, plus one.
    calls : list of (u, v, blocks u->v, blocks v->u)
        An optimal sequence of calls (when found by the solver).
    steps : list of (M, verdict, seconds)
    seconds : float
    method : str
    """

    n: int
    p: int
    optimum: int
    lower: int
    calls: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    seconds: float = 0.0
    method: str = ""


#: Symmetry breaks: ``pair-order`` (first call {0,1}, adjacent disjoint calls in pair
#: order) or ``first-calls`` (nodes make their first call in id order).
SYMMETRIES = ("pair-order", "first-calls")
#: SAT solvers of python-sat offered for the search (a second one cross-checks UNSAT).
SOLVERS = ("cadical153", "glucose4", "maplechrono", "minisat22")


def _cnf(n: int, p: int, m: int, symmetry: str = "pair-order", counting: bool = True,
         minimal: bool = True):
    from pysat.card import CardEnc, EncType
    from pysat.formula import IDPool

    pool = IDPool()
    pairs = list(itertools.combinations(range(n), 2))
    c = {(t, e): pool.id(("c", t, e)) for t in range(1, m + 1) for e in pairs}

    def k(t: int, v: int, b: int) -> int:
        return pool.id(("k", t, v, b))

    def r(t: int, v: int, b: int) -> int:
        return pool.id(("r", t, v, b))

    cnf = [[k(0, v, v)] for v in range(n)]
    cnf += [[-k(0, v, b)] for v in range(n) for b in range(n) if b != v]
    for t in range(1, m + 1):
        step = [c[t, e] for e in pairs]
        cnf += CardEnc.equals(step, 1, vpool=pool, encoding=EncType.seqcounter).clauses
        for v in range(n):
            mine = [(e[0] + e[1] - v, c[t, e]) for e in pairs if v in e]
            got = []
            for b in range(n):
                cnf.append([-k(t - 1, v, b), k(t, v, b)])
                if b == v:
                    cnf.append([k(t, v, b)])
                    continue
                x = r(t, v, b)
                got.append(x)
                cnf.append([-k(t, v, b), k(t - 1, v, b), x])
                cnf.append([-x, k(t, v, b)])  # a reception is real: the counting needs it
                cnf.append([-x, -k(t - 1, v, b)])
                cnf.append([-x] + [lit for _, lit in mine])
                cnf += [[-x, -lit, k(t - 1, u, b)] for u, lit in mine]
            if p < n - 1:
                cnf += CardEnc.atmost(got, p, vpool=pool, encoding=EncType.seqcounter).clauses
    if symmetry == "pair-order":
        cnf.append([c[1, (0, 1)]])
        for t in range(1, m):
            for i, e in enumerate(pairs):
                for f in pairs[:i]:
                    if not set(e) & set(f):
                        cnf.append([-c[t, e], -c[t + 1, f]])
    else:  # a[t, v]: v has called by step t; v+1 never before v (relabel by first call)
        for t in range(1, m + 1):
            for v in range(n):
                a, mine = pool.id(("a", t, v)), [c[t, e] for e in pairs if v in e]
                prev = [pool.id(("a", t - 1, v))] if t > 1 else []
                cnf.append([-a] + prev + mine)
                cnf += [[-x, a] for x in prev + mine]
                if v:
                    cnf.append([-a, pool.id(("a", t, v - 1))])
        # swapping adjacent disjoint calls whose four nodes have all called
        # before keeps every first-call step, so the pair order stays valid there
        for t in range(2, m):
            for i, e in enumerate(pairs):
                for f in pairs[:i]:
                    if not set(e) & set(f):
                        cnf.append([-c[t, e], -c[t + 1, f]]
                                   + [-pool.id(("a", t - 1, u)) for u in e + f])
    if counting:
        cnf += _counting(n, p, m, pairs, c, r, pool, minimal)
    cnf += [[k(m, v, b)] for v in range(n) for b in range(n)]
    return cnf, c, pool


def slack(n: int, p: int, m: int) -> int:
    """Capacity ``m`` calls leave beyond the ``n(n-1)`` receptions gossip needs.

    A call carries at most ``2p`` new blocks, and every node's first call
    sends at most its own block (``p - 1`` less); each block reaches each
    other node exactly once. Negative: ``m`` calls cannot gossip (bound (1)).
    """
    return 2 * p * m - (p - 1) * n - n * (n - 1)


def _counting(n: int, p: int, m: int, pairs: list, c: dict, r, pool,
              minimal: bool = True) -> list:
    """Redundant clauses from the counting behind bound (1) (valid for every schedule).

    Every call carries a new block (a call carrying none can be dropped, so
    an optimal schedule has none, and the count rises from a proved bound);
    ``minimal=False`` leaves that out, so that an UNSAT verdict on ``m``
    alone proves ``c(n, p) > m`` (a shorter schedule padded with empty
    calls would satisfy the rest).
    With slack ``S < p`` (:func:`slack`), no message can fall more than ``S``
    short of its capacity: a sender that called before sends at least
    ``p - S`` new blocks, and at ``S = 0`` a first caller sends its block.
    The solver cannot derive this sum over all messages on its own.
    """
    from pysat.card import CardEnc, EncType

    out, room = [], slack(n, p, m)
    if room < 0:
        return [[]]  # the empty clause: below bound (1)
    for t in range(1, m + 1) if minimal else ():
        out.append([r(t, v, b) for v in range(n) for b in range(n) if b != v])
    if room >= p:
        return out

    def called(t: int, v: int) -> int:  # v made a call in steps 1..t
        return pool.id(("called", t, v))

    for t in range(1, m + 1):
        for v in range(n):
            mine = [c[t, e] for e in pairs if v in e]
            prev = [called(t - 1, v)] if t > 1 else []
            out.append([-called(t, v)] + prev + mine)
            out += [[-x, called(t, v)] for x in prev + mine]
    for t in range(1, m + 1):
        for v in range(n):
            got = [r(t, v, b) for b in range(n) if b != v]
            if t > 1:  # full: v's partner in step t had called before
                full = pool.id(("full", t, v))
                for e in pairs:
                    if v in e:
                        u = e[0] + e[1] - v
                        out.append([-c[t, e], -called(t - 1, u), full])
                atleast = CardEnc.atleast(got, p - room, vpool=pool,
                                          encoding=EncType.seqcounter).clauses
                out += [clause + [-full] for clause in atleast]
            if room == 0:  # a first caller still sends its own block
                out += [[-c[t, e]] + got for e in pairs if v in e]
    return out


def min_calls_sat(n: int, p: int, lower: int, upper: int,
                  progress: Callable[[tuple, int], None] | None = None,
                  solver: str = "cadical153", symmetry: str = "pair-order",
                  counting: bool = True, minimal: bool = True) -> CallSearch:
    """``c(n, p)`` by SAT: try ``M = lower, lower + 1, ...`` until one is satisfiable.

    Parameters
    ----------
    n, p : int
    lower : int
        A proved lower bound (e.g. bound (2)).
    upper : int
        A count known to be feasible (a validated schedule's); reaching it
        without a satisfiable ``M`` below proves it optimal without a call.
    progress : callable, optional
        ``progress(step, lower)`` after every solver call: the step
        ``(M, verdict, seconds)`` and the count now proved a lower bound, so
        a caller that stops the search early (a time limit, a signal) still
        knows what it proved.
    solver : str
        One of :data:`SOLVERS` (python-sat names).
    symmetry : str
        One of :data:`SYMMETRIES`; both are valid alone, so two encodings
        and two solvers can cross-check an UNSAT verdict.
    counting : bool
        Add the redundant clauses of :func:`_counting` (default). They hold
        for every schedule of at most ``c(n, p)`` calls, so ``lower`` must be
        a proved lower bound; without them the encoding is the plain one.
    minimal : bool
        Keep "every call carries a block" (default). ``False``: each verdict
        holds on its own (UNSAT at ``M`` proves ``c(n, p) > M``), for asking
        one ``M`` with ``lower = M, upper = M + 1``.
    """
    if solver not in SOLVERS or symmetry not in SYMMETRIES:
        raise ValueError(f"solver must be one of {SOLVERS} and symmetry one of {SYMMETRIES}, "
                         f"got {solver!r}, {symmetry!r}")
    from pysat.solvers import Solver

    t0 = time.perf_counter()
    steps, calls = [], []
    m = lower
    while m < upper:
        cnf, c, pool = _cnf(n, p, m, symmetry, counting, minimal)
        t = time.perf_counter()
        with Solver(name=solver, bootstrap_with=cnf) as s:
            ok = s.solve()
            model = set(x for x in s.get_model() if x > 0) if ok else set()
        steps.append((m, "SAT" if ok else "UNSAT", time.perf_counter() - t))
        if progress is not None:
            progress(steps[-1], m if ok else m + 1)
        if ok:
            for (step, (u, v)), var in sorted(c.items()):
                if var in model:  # the blocks each side received, from the r variables
                    got = [tuple(b for b in range(n) if pool.id(("r", step, w, b)) in model)
                           for w in (v, u)]
                    calls.append((u, v, got[0], got[1]))
            break
        m += 1
    return CallSearch(n, p, m, m, calls, steps, time.perf_counter() - t0,
                      _method(solver, symmetry, counting, minimal))


def _method(solver: str = "cadical153", symmetry: str = "pair-order",
            counting: bool = True, minimal: bool = True) -> str:
    breaks = ("first call {0,1}, disjoint adjacent calls in pair order"
              if symmetry == "pair-order" else "nodes make their first calls in id order, "
              "disjoint adjacent calls of nodes that all called before in pair order")
    extra = ("; every call carries a block" if counting and minimal else "") + \
        ("; no message short of capacity by more than the slack" if counting else "")
    how = "M raised from the lower bound" if minimal else "one M asked"
    return f"SAT ({solver} via python-sat): one call per step, {breaks}{extra}; {how}"


def calls_schedule(n: int, p: int, calls: list) -> "Schedule":
    """A found call sequence as an F1 schedule, one call per round (for the validator)."""
    from ..schedules.ir import Message, Schedule, complete
    rounds = [[m for m in (Message(u, (v,), tuple(a)), Message(v, (u,), tuple(b))) if m.items]
              for u, v, a, b in calls]
    return Schedule.from_rounds(rounds, topology=complete(n), model="F1", p=p, origin={
        "algorithm": "short-messages-search", "source": f"n={n} p={p}; {_method()}"})
