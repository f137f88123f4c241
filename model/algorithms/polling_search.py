"""Exact minimum number of messages for polling in a given number of rounds (SAT).

Settles the message counts of Czygrinow, Karonski and Sunderam, *The polling
primitive for computer networks*, for small graphs: is the complete graph's
optimum ``2^k + 2^(k-3) + r - 1`` (the algorithm and the proof of
Proposition 3) or one less (its statement and the abstract), and is
Corollary 6's hypercube bound consistent with Proposition 8's algorithm?

Encoding (CNF, solved with CaDiCaL through ``python-sat``; imported lazily so
the model imports without it), for rounds ``r = 1..R``:

* ``x[r,u,v]``: u sends to v in round r (an edge of the graph); H1 says each
  node is in at most one message per round (a sequential-counter at-most-one);
* ``q[r,v]``: v holds the question after round r; it requires ``q[r-1,v]`` or
  a message to v in round r; a non-root node sends only if ``q[r-1,u]``;
* ``h[r,v,w]``: v holds w's response after round r (``h[r,v,v] = q[r,v]``);
  it requires ``h[r-1,v,w]`` or a message from some u with ``h[r-1,u,w]`` -
  one clause per u suffices because v receives at most once per round;
* goal ``h[R,root,w]`` for every w; ``sum x <= M`` by an incremental
  totaliser, M lowered until the solver proves UNSAT.

On the complete graph the nodes are interchangeable, so the search only
looks at schedules whose nodes hear the question in id order (``q[r,v]``
implies ``q[r,v-1]``), which any schedule satisfies after relabelling.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["SearchResult", "min_polling_messages"]


@dataclass
class SearchResult:
    """Outcome of :func:`min_polling_messages`.

    Attributes
    ----------
    graph, k, n, rounds : problem
    optimum : int
        The minimum number of messages (proved: ``optimum - 1`` is UNSAT).
    calls : list of (round, src, dst)
        An optimal schedule's messages.
    steps : list of (M, verdict, seconds)
        Every solver call: "at most M messages" and its answer.
    seconds : float
    method : str
    """

    graph: str
    k: int
    n: int
    rounds: int
    optimum: int
    calls: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    seconds: float = 0.0
    method: str = ""


def _edges(graph: str, k: int) -> tuple[int, list[tuple[int, int]]]:
    n = 1 << k
    if graph == "complete":
        return n, [(u, v) for u in range(n) for v in range(n) if u != v]
    if graph == "hypercube":
        return n, [(u, u ^ (1 << d)) for u in range(n) for d in range(k)]
    raise ValueError(f"graph must be 'complete' or 'hypercube', got {graph!r}")


def min_polling_messages(graph: str, k: int, start: int, rounds: int | None = None,
                         progress: Callable[[tuple, int], None] | None = None
                         ) -> SearchResult:
    """The fewest messages polling ``K_{2^k}`` or ``Q_k`` (root 0) needs in ``rounds`` rounds.

    Parameters
    ----------
    graph : {"complete", "hypercube"}
    k : int
        ``n = 2^k`` nodes.
    start : int
        A message count known to be feasible (e.g. a validated schedule's);
        the search proves or improves it.
    rounds : int, optional
        Default ``2k`` (Proposition 2).
    progress : callable, optional
        ``progress(step, best)`` after every solver call: the step
        ``(M, verdict, seconds)`` and the fewest messages found so far
        (``start`` before the first schedule), so a caller that stops the
        search early still knows what it proved.
    """
    from pysat.card import EncType, CardEnc, ITotalizer
    from pysat.formula import IDPool
    from pysat.solvers import Solver

    t0 = time.perf_counter()
    n, edges = _edges(graph, k)
    R = 2 * k if rounds is None else rounds
    pool = IDPool()
    x = {(r, u, v): pool.id(("x", r, u, v)) for r in range(1, R + 1) for u, v in edges}
    q = {(r, v): pool.id(("q", r, v)) for r in range(R + 1) for v in range(n)}

    def h(r: int, v: int, w: int) -> int:
        return q[r, v] if v == w else pool.id(("h", r, v, w))

    into = {v: [u for u, w in edges if w == v] for v in range(n)}
    out = {v: [w for u, w in edges if u == v] for v in range(n)}
    cnf: list[list[int]] = [[q[0, 0]]] + [[-q[0, v]] for v in range(1, n)]
    cnf += [[-h(0, v, w)] for v in range(n) for w in range(n) if v != w]
    for r in range(1, R + 1):
        for v in range(n):
            lits = [x[r, u, v] for u in into[v]] + [x[r, v, w] for w in out[v]]
            cnf += CardEnc.atmost(lits, 1, vpool=pool, encoding=EncType.seqcounter).clauses
            recv = [x[r, u, v] for u in into[v]]
            cnf.append([-q[r, v], q[r - 1, v]] + recv)
            if v:
                cnf += [[-x[r, v, w], q[r - 1, v]] for w in out[v]]
            for w in range(n):
                if w == v:
                    continue
                cnf.append([-h(r, v, w), h(r - 1, v, w)] + recv)
                cnf += [[-h(r, v, w), h(r - 1, v, w), -x[r, u, v], h(r - 1, u, w)]
                        for u in into[v]]
            if graph == "complete" and v >= 2:
                cnf.append([-q[r, v], q[r, v - 1]])
    cnf += [[h(R, 0, w)] for w in range(n)]
    xs = list(x.values())
    tot = ITotalizer(lits=xs, ubound=start, top_id=pool.top)
    steps, best, calls = [], None, []
    with Solver(name="cadical153", bootstrap_with=cnf + tot.cnf.clauses) as s:
        m = start
        while m >= 0:
            t = time.perf_counter()
            ok = s.solve(assumptions=[-tot.rhs[m]] if m < len(tot.rhs) else [])
            steps.append((m, "SAT" if ok else "UNSAT", time.perf_counter() - t))
            if ok:
                model = set(lit for lit in s.get_model() if lit > 0)
                calls = sorted(key for key, var in x.items() if var in model)
                best = len(calls)
            if progress is not None:
                progress(steps[-1], start if best is None else best)
            if not ok:
                break
            m = best - 1
    tot.delete()
    if best is None:
        raise ValueError(f"no polling schedule with at most {start} messages in {R} rounds")
    return SearchResult(graph=graph, k=k, n=n, rounds=R, optimum=best, calls=calls, steps=steps,
                        seconds=time.perf_counter() - t0,
                        method="SAT (CaDiCaL 1.5.3 via python-sat), incremental totaliser "
                        "on the message count" + (", nodes informed in id order"
                                                 if graph == "complete" else ""))
