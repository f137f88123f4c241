"""Generators meet their stated R (and calls) exactly; compiled runs keep u and L."""

import math

import pytest

from pipegossip.model import RunConfig, simulate
from pipegossip.model.algorithms.limits import (_knowledge, _odd_rounds, cyclic_shift,
                                                knodel_rounds, min_calls, one_factor,
                                                recursive_doubling)
from pipegossip.model.schedules.bounds import round_bound, telephone_min_calls
from pipegossip.model.schedules.compile_run import compile_run
from pipegossip.model.schedules.validate import validate

SIZES = range(2, 41)


@pytest.mark.parametrize("n", SIZES)
def test_one_factor(n):
    s = one_factor(n)
    v = validate(s)
    assert v.valid and v.R == (2 * (n - 1) if n % 2 == 0 else 2 * n)
    assert v.R == round_bound(s).value
    assert v.messages == n * (n - 1)
    if n % 2 == 0:
        assert v.efficiency == 1.0


@pytest.mark.parametrize("n", SIZES)
def test_cyclic_shift(n):
    s = cyclic_shift(n)
    v = validate(s)
    assert v.valid and v.R == n - 1 == round_bound(s).value and v.efficiency == 1.0


@pytest.mark.parametrize("n", SIZES)
def test_recursive_doubling(n):
    s = recursive_doubling(n)
    v = validate(s)
    assert v.valid and v.R == math.ceil(math.log2(n)) + n % 2 == round_bound(s).value


@pytest.mark.parametrize("k", range(1, 8))
def test_recursive_doubling_hypercube(k):
    s = recursive_doubling(2 ** k, "hypercube")
    v = validate(s)
    assert v.valid and v.R == k and s.topology.name == "hypercube"
    assert v.calls == k * 2 ** (k - 1)


@pytest.mark.parametrize("n", range(4, 200, 2))
def test_knodel_scheme_reaches_log_bound(n):
    know = [1 << v for v in range(n)]
    rounds = knodel_rounds(n)
    assert len(rounds) == math.ceil(math.log2(n))
    for pairs in rounds:
        for u, v in pairs:
            know[u] = know[v] = know[u] | know[v]
    assert all(k == (1 << n) - 1 for k in know)


def _odd_scheme_ok(n):
    know = _knowledge(n, _odd_rounds(n))
    return (all(k == (1 << n) - 1 for k in know)
            and len(_odd_rounds(n)) == math.ceil(math.log2(n)) + 1)


def test_odd_scheme_reaches_bound():
    assert all(_odd_scheme_ok(n) for n in range(3, 302, 2))


@pytest.mark.slow
def test_odd_scheme_reaches_bound_up_to_1099():
    assert all(_odd_scheme_ok(n) for n in range(303, 1100, 2))


@pytest.mark.parametrize("n", SIZES)
def test_min_calls(n):
    v = validate(min_calls(n))
    assert v.valid and v.calls == telephone_min_calls(n).value
    if n >= 4:
        assert v.calls == 2 * n - 4


def test_hypercube_needs_power_of_two():
    with pytest.raises(ValueError, match="2\\^k"):
        recursive_doubling(6, "hypercube")


# ------------------------------------------------------------ compiled runs
PAPER = {  # the pipelined-gossiping paper's utilisation strings
    ("identity", 5, False, 1): "2 2 2 2 2 2 4 2 2 2 4 2 2 2 2 2 2 2",
    ("identity", 8, False, 1): "2 2 2 2 2 2 2 2 2 4 2 2 2 2 2 2 4 4 2 2 2 2 4 4 4 2 2 4 4 2 2 2 2 "
                               "4 2 2 2 2 2 2 2 2 2 2 2 2 2",
    ("pipelined", 10, False, 1): "2 2 4 4 6 6 8 8 10 8 10 8 10 8 10 8 10 8 10 8 8 6 6 4 4 2 2",
    ("pipelined", 9, False, 1): "2 2 4 4 6 6 8 8 8 8 8 8 8 8 8 8 8 8 6 6 4 4 2 2",
    ("pipelined", 5, False, 3): "2 2 " + "4 " * 28 + "2 2",
    ("pipelined", 5, True, 1): "2 4 4 4 4 4 4 4 4 2 2 2",
}


@pytest.mark.parametrize("key,u", PAPER.items())
def test_paper_utilisation_strings(key, u):
    order, n, sub, sessions = key
    cfg = RunConfig.family(n, order, receive="any" if sub else "ordered", substitute=sub,
                           sessions=sessions)
    v = validate(compile_run(simulate(cfg)))
    assert v.valid and " ".join(map(str, v.busy)) == u.strip()


CONFIGS = [dict(order=o) for o in ("identity", "pipelined")] + [
    dict(order="random", seed=3), dict(order="identity", receive="any"),
    dict(order="identity", receive="any", substitute=True),
    dict(order="pipelined", substitute=True), dict(order="pipelined", sessions=3),
    dict(order="identity", channels=1), dict(order="random", seed=1, channels=2, sessions=2),
]


@pytest.mark.parametrize("n", range(4, 13))
@pytest.mark.parametrize("opts", CONFIGS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_compiled_run_keeps_u_and_L(n, opts):
    opts = dict(opts)
    order, seed = opts.pop("order"), opts.pop("seed", None)
    run = simulate(RunConfig.family(n, order, seed, **opts))
    s = compile_run(run)
    v = validate(s)
    assert v.valid, v.error
    assert v.R == run.length
    assert v.busy == run.utilization.tolist()
    assert v.items_per_node == run.config.sessions


def test_compiled_explicit_orders():
    orders = [[2, 1], [0, 2], [1, 0]]
    run = simulate(RunConfig.explicit(orders, receive="any"))
    v = validate(compile_run(run))
    assert v.valid and v.busy == run.utilization.tolist()


# ------------------------------------------------------------------- bounds
def test_bound_values():
    from pipegossip.model.schedules import bounds as b
    assert b.h1_gossip_rounds(8).value == 14 and b.h1_gossip_rounds(7).value == 14
    assert b.h1_gossip_rounds(5, h=3).value == 30
    assert b.port_gossip_rounds(9).value == 8
    assert [b.telephone_gossip_rounds(n).value for n in (2, 3, 4, 5, 8, 9, 12)] == [1, 3, 2, 4, 3, 5, 4]
    assert [b.telephone_min_calls(n).value for n in (2, 3, 4, 10)] == [1, 3, 4, 16]
    # packet-size calls: (1) for p=1 gives n(n-1)/2 ... (2) for p >= 2
    assert b.packet_calls_lower(6, 1).value == math.ceil(36 / 2 - 6 / 2)
    n, p = 10, 3  # n = 2*3 + 4: k = 4
    two = n * n / (2 * p) + (1 - 4 / (2 * p) - 1 / (2 * 3)) * n
    assert b.packet_calls_lower(n, p).value == math.ceil(two)
    assert b.packet_calls_upper(n, p).value == math.floor(two + p)
    assert b.hstar_rounds("path", 7, 1).value == 9 and b.hstar_rounds("path", 8, 1).value == 11
    assert b.hstar_rounds("cycle", 8, 2).value == 5 and b.hstar_rounds("cycle", 7, None).value == 5
    assert b.hstar_rounds("mesh", 7, 1) is None
    assert b.polling_rounds(16).value == 8
    # the corrected '+ r - 1' form (the printed '- 2' form is infeasible: SAT search)
    assert b.polling_messages(16).value == 16 + 2 + 1 - 1
    assert [b.polling_rounds(n).value for n in (5, 6, 12, 16)] == [4, 5, 7, 8]  # Proposition 2
    assert b.hstar_rounds("cycle", 3, 2).value == 2  # the triangle: Table 1's 3 is not a bound
    assert "Beier" in b.linear_cost_steps(8).source


def test_bounds_for_schedules():
    from pipegossip.model.schedules.bounds import bounds_for
    kinds = {(x.metric, x.kind) for x in bounds_for(min_calls(8))}
    assert kinds == {("R", "lower"), ("calls", "lower"), ("S", "lower")}
    assert str(round_bound(cyclic_shift(6))) .startswith("R >= 5 (")


@pytest.mark.parametrize("n", [2, 3, 8])
def test_cyclic_shift_has_no_empty_round(n):
    s = cyclic_shift(n)
    assert s.rounds_total == n - 1 and all(len(r) == n for r in s.rounds)


def _first_fit(n, know):
    """The repair round by its definition: each node lacking items, in id order, takes
    the lowest free node whose knowledge completes its own, else a complete node (the
    last listed), scanning every node (the quadratic way)."""
    full = (1 << n) - 1
    need = [v for v in range(n) if know[v] != full]
    complete = [v for v in range(n) if know[v] == full]
    used, pairs = set(), []
    for v in need:
        if v in used:
            continue
        u = next((u for u in need if u not in used and u != v and know[u] | know[v] == full),
                 None)
        if u is None:
            if not complete:
                return None
            u = complete.pop()
        used.update((v, u))
        pairs.append((v, u))
    return pairs


def test_repair_round_is_the_first_fit_in_id_order():
    from pipegossip.model.algorithms.limits import _repair_round
    for n in range(3, 202, 2):
        rounds = [[(u, v) for u, v in r if n not in (u, v)] for r in knodel_rounds(n + 1)]
        know = _knowledge(n, rounds)
        assert _repair_round(n, know) == _first_fit(n, know), n
