"""The fast engine against the paper, the literal reference, and invariants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paper import CASES, IDS

from pipegossip.model import (DeadlockError, RunConfig, RunTable, physical_limit, simulate,
                              simulate_reference)
from pipegossip.model.engine import _cyclic_starts
from pipegossip.model.paper import TABLE7, TABLE9_ORDERED


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_paper_utilisation_strings(case, engine):
    run = simulate if engine == "fast" else simulate_reference
    result = run(case.config)
    assert result.length == case.length
    assert tuple(result.utilization.tolist()) == case.utilization


def test_table9_under_ordered_gives_the_spec_string():
    config, published = TABLE9_ORDERED
    assert (config.receive, config.substitute, config.n) == ("ordered", True, 5)
    assert tuple(simulate(config).utilization.tolist()) == published


def test_table7_runs_one_step_shorter_than_the_paper():
    # SPEC section 9: sections 4-5 give 18 steps where the paper's own simulator gave 19.
    r = simulate(RunConfig.family(8, "identity", receive="any", substitute=True))
    assert r.length == 18
    assert TABLE7[0] == 19 and r.used_slots == sum(TABLE7[1])


def _same(a, b):
    assert a.length == b.length
    assert np.array_equal(a.utilization, b.utilization)
    assert np.array_equal(a.table.actions, b.table.actions)
    assert np.array_equal(a.table.peers, b.table.peers)
    for field in ("step", "src", "dst", "session"):
        assert np.array_equal(getattr(a.deliveries, field), getattr(b.deliveries, field))


def _configs(ns, seeds=(0, 1)):
    for n in ns:
        for family, seed in [("identity", None), ("pipelined", None)] + [("random", s) for s in seeds]:
            for receive in ("ordered", "any"):
                for sub in (False, True):
                    for k in (1, 2):
                        for ch in sorted({None, 1, n // 2}, key=lambda c: c or 0):
                            yield RunConfig.family(n, family, seed, receive=receive,
                                                   substitute=sub, sessions=k, channels=ch)


@pytest.mark.parametrize("n", range(2, 10))
def test_engine_equals_literal_reference(n):
    for config in _configs([n]):
        ref = simulate_reference(config)
        for threshold in (1, 10**9):  # NumPy batch path and scalar path
            _same(simulate(config, table=True, batch_threshold=threshold), ref)


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 12, 13, 16, 24])
def test_engine_equals_literal_reference_larger(n):
    for config in _configs([n], seeds=range(4)):
        _same(simulate(config, table=True, batch_threshold=4), simulate_reference(config))


def test_cyclic_fast_path_is_chosen_only_for_cyclic_orders():
    assert _cyclic_starts(RunConfig.family(6, "identity").orders) == [1, 0, 0, 0, 0, 0]
    assert _cyclic_starts(RunConfig.family(6, "pipelined").orders) == [1, 2, 3, 4, 5, 0]
    assert _cyclic_starts(RunConfig.family(9, "random", 1).orders) is None




@st.composite
def any_config(draw, max_n=11):
    n = draw(st.integers(2, max_n))
    orders = [draw(st.permutations([j for j in range(n) if j != i])) for i in range(n)]
    channels = draw(st.one_of(st.none(), st.integers(1, n // 2)))
    return RunConfig.explicit(orders, receive=draw(st.sampled_from(["ordered", "any"])),
                              substitute=draw(st.booleans()), sessions=draw(st.integers(1, 3)),
                              channels=channels)


@settings(max_examples=150, deadline=None)
@given(any_config())
def test_invariants_hold_for_random_configurations(config):
    r = simulate(config, table=True)  # raises DeadlockError if any step fires nothing
    n, k = config.n, config.sessions
    # Sum of used slots, and every step has at least one transfer.
    assert r.used_slots == 2 * n * (n - 1) * k
    assert (r.utilization >= 2).all() and (r.utilization % 2 == 0).all()
    assert r.length >= physical_limit(n, k, config.channels)
    if config.channels is not None:
        assert r.utilization.max() <= 2 * config.channels
    # Every ordered pair exactly once per session, words never cross sessions.
    d = r.deliveries
    triples = set(zip(d.src.tolist(), d.dst.tolist(), d.session.tolist()))
    assert len(triples) == len(d) == n * (n - 1) * k
    assert triples == {(i, j, s) for i in range(n) for j in range(n) if i != j for s in range(k)}
    # A processor's sessions come in order: all of session s before any of s+1.
    for p in range(n):
        mine = (d.src == p) | (d.dst == p)
        assert np.all(np.diff(d.session[mine]) >= 0)
    # The table agrees with the deliveries and the utilisation string.
    assert np.array_equal(r.table.used, r.utilization)
    assert RunTable.parse(r.table.render()) == r.table
    # The literal reference agrees slot for slot.
    _same(r, simulate_reference(config))


def test_deadlock_is_reported_with_what_each_processor_waits_for():
    config = RunConfig.family(3, "identity")
    # Bypass validation: processor 0 sends to 1 twice and never to 2.
    object.__setattr__(config, "orders", np.array([[1, 1], [0, 2], [0, 1]], dtype=np.int32))
    with pytest.raises(DeadlockError) as e:
        simulate(config)
    # Step 1: p0 -> p1. Step 2: p0 again aims at p1, which now sends to p0.
    assert e.value.step == 2
    assert e.value.blocked == {0: "waits to send to p1 (session 1)",
                               1: "waits to send to p0 (session 1)",
                               2: "waits to receive from p0"}
    assert str(e.value).startswith("deadlock at step 2: p0 waits to send to p1")


def test_table_is_built_only_when_asked():
    config = RunConfig.family(7, "pipelined")
    assert simulate(config).table is None
    assert simulate(config, table=True).table.actions.shape == (7, 18)


def test_progress_callback_reports_transfers():
    calls = []
    import pipegossip.model.engine as engine

    eng = engine._Engine(RunConfig.family(6, "identity"), False, engine.BATCH_THRESHOLD)
    eng._progress(lambda *a: calls.append(a), 5, [-1e9])
    assert calls == [(5, 0, 30)]
