"""The SAT search for the fewest polling messages against a brute force on 4 nodes (seconds).

The brute force follows the problem, not the encoding: each round every node
is in at most one message along an edge; a node other than the root sends
only once it holds the question; a message gives the receiver the question
and every response the sender holds; a node's own response exists from the
round it holds the question. The root must hold every response after the
last round.
"""

import itertools
import time

import pytest

pytest.importorskip("pysat")

from pipegossip.model.algorithms.polling_search import (  # noqa: E402
    SearchResult, _edges, min_polling_messages)


def _graph(name, k):
    n = 1 << k
    if name == "complete":
        return n, {(u, v) for u in range(n) for v in range(n) if u != v}
    return n, {(u, u ^ 1 << d) for u in range(n) for d in range(k)}


def _matchings(n, arcs):
    """Every set of arcs in which each node appears at most once (the empty set too)."""
    out = [()]
    for size in range(1, n // 2 + 1):
        for pick in itertools.combinations(sorted(arcs), size):
            nodes = [x for arc in pick for x in arc]
            if len(set(nodes)) == len(nodes):
                out.append(pick)
    return out


def _step(state, msgs):
    q, held = state
    q2, held2 = set(q), [set(h) for h in held]
    for u, v in msgs:
        q2.add(v)
        held2[v] |= held[u]
    for v in q2:
        held2[v].add(v)
    return frozenset(q2), tuple(frozenset(h) for h in held2)


def brute_force(name, k, rounds):
    """The fewest messages, by dynamic programming over (question holders, responses held)."""
    n, arcs = _graph(name, k)
    moves = _matchings(n, arcs)
    states = {(frozenset({0}), tuple(frozenset({0}) if v == 0 else frozenset()
                                     for v in range(n))): 0}
    for _ in range(rounds):
        nxt = {}
        for (q, held), cost in states.items():
            for msgs in moves:
                if any(u != 0 and u not in q for u, _ in msgs):
                    continue
                s = _step((q, held), msgs)
                if cost + len(msgs) < nxt.get(s, 1 << 30):
                    nxt[s] = cost + len(msgs)
        states = nxt
    done = [c for (q, held), c in states.items() if held[0] == frozenset(range(n))]
    return min(done) if done else None


def _replay(name, k, rounds, calls):
    """The result's calls are a polling schedule: matchings of edges, senders informed."""
    n, arcs = _graph(name, k)
    state = (frozenset({0}), tuple(frozenset({0}) if v == 0 else frozenset() for v in range(n)))
    for r in range(1, rounds + 1):
        msgs = [(u, v) for t, u, v in calls if t == r]
        nodes = [x for m in msgs for x in m]
        assert len(set(nodes)) == len(nodes) and set(msgs) <= arcs, (r, msgs)
        assert all(u == 0 or u in state[0] for u, _ in msgs), (r, msgs)
        state = _step(state, msgs)
    assert state[1][0] == frozenset(range(n))


@pytest.mark.parametrize("name", ["complete", "hypercube"])
@pytest.mark.parametrize("rounds", [4, 5, 6])
def test_optimum_is_the_brute_forces_on_four_nodes(name, rounds):
    want = brute_force(name, 2, rounds)
    seen = []
    t0 = time.perf_counter()
    r = min_polling_messages(name, 2, 12, rounds, progress=lambda step, best: seen.append(
        (step, best)))
    took = time.perf_counter() - t0
    assert isinstance(r, SearchResult)
    assert (r.graph, r.k, r.n, r.rounds, r.optimum) == (name, 2, 4, rounds, want)
    assert len(r.calls) == want
    _replay(name, 2, rounds, r.calls)
    # from the start count down: SAT until the optimum, then one UNSAT at optimum - 1
    assert [s[:2] for s in r.steps][-2:] == [(want, "SAT"), (want - 1, "UNSAT")]
    assert r.steps[0][0] == 12 and all(v == "SAT" for _, v, _ in r.steps[:-1])
    assert [s for s, _ in seen] == r.steps
    # after a SAT step the next bound is the count found less one
    assert [b for _, b in seen] == [m + 1 for m, _, _ in r.steps[1:]] + [want]
    assert took >= r.seconds >= sum(t for _, _, t in r.steps) > 0
    assert r.method.endswith("nodes informed in id order") == (name == "complete")
    assert r.method.startswith("SAT (CaDiCaL 1.5.3 via python-sat), incremental totaliser")


@pytest.mark.parametrize("name", ["complete", "hypercube"])
def test_too_few_rounds_or_messages_are_refused(name):
    assert brute_force(name, 2, 3) is None
    with pytest.raises(ValueError, match="no polling schedule with at most 12 messages in 3"):
        min_polling_messages(name, 2, 12, 3)
    seen = []
    with pytest.raises(ValueError, match="at most 3 messages in 4 rounds"):
        # the default is 2k = 4 rounds; the optimum is 4
        min_polling_messages(name, 2, 3, progress=lambda step, best: seen.append((step, best)))
    assert [(m, v, b) for (m, v, _), b in seen] == [(3, "UNSAT", 3)]  # nothing found: start


@pytest.mark.parametrize("name", ["complete", "hypercube"])
def test_eight_nodes_need_nine_messages(name):
    # Proposition 3 (complete) and the Q_3 value of the paper, 2k = 6 rounds
    r = min_polling_messages(name, 3, 9)
    assert r.rounds == 6 and r.optimum == 9 and r.steps == [(9, "SAT", r.steps[0][2]),
                                                            (8, "UNSAT", r.steps[1][2])]
    _replay(name, 3, 6, r.calls)


def test_a_start_at_the_optimum_reports_it_found():
    seen = []
    r = min_polling_messages("hypercube", 2, 4, progress=lambda step, best: seen.append(best))
    assert r.optimum == 4 and seen == [4, 4]


def test_graphs():
    assert _edges("complete", 2) == (4, [(u, v) for u in range(4) for v in range(4) if u != v])
    assert _edges("hypercube", 2) == (4, [(0, 1), (0, 2), (1, 0), (1, 3), (2, 3), (2, 0),
                                          (3, 2), (3, 1)])
    with pytest.raises(ValueError, match="graph must be 'complete' or 'hypercube', got 'ring'"):
        _edges("ring", 2)
