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
    # The resolution rules give 18 steps where the paper's own simulator gave 19.
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


# -- the compiled path for Algorithm 2 under `any` (model/fastpath.py, issue 18) --

@pytest.fixture
def fast_path_everywhere(monkeypatch):
    from pipegossip.model import fastpath

    if not fastpath.AVAILABLE:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(fastpath, "MIN_N", 3)
    return fastpath


def _general(config, table=False):
    import pipegossip.model.engine as engine

    return engine._Engine(config, table, engine.BATCH_THRESHOLD).run(None)


def _same_run(a, b):
    assert a.length == b.length
    assert np.array_equal(a.utilization, b.utilization) and a.utilization.dtype == b.utilization.dtype
    for field in ("step", "src", "dst", "session"):
        x, y = getattr(a.deliveries, field), getattr(b.deliveries, field)
        assert np.array_equal(x, y) and x.dtype == y.dtype


def _cyclic_any_sub_configs(ns):
    for n in ns:
        orders = [RunConfig.family(n, "identity").orders, RunConfig.family(n, "pipelined").orders,
                  # cyclic from an arbitrary start per processor
                  [[(s + k) % n for k in range(n) if (s + k) % n != i]
                   for i, s in enumerate((3 * i + 1) % n for i in range(n))]]
        for o in orders:
            for k in (1, 2, 3):
                for ch in sorted({None, 1, n // 2}, key=lambda c: c or 0):
                    yield RunConfig.explicit(np.asarray(o).tolist(), receive="any",
                                             substitute=True, sessions=k, channels=ch)


@pytest.mark.parametrize("n", [3, 4, 5, 7, 8, 13, 63, 64, 65, 129])
def test_fast_path_equals_general_engine(fast_path_everywhere, n):
    for config in _cyclic_any_sub_configs([n]):
        assert fast_path_everywhere.wanted(config, table=False)
        _same_run(simulate(config), _general(config))


@pytest.mark.parametrize("n", [3, 6, 9, 12])
def test_fast_path_equals_literal_reference(fast_path_everywhere, n):
    for config in _cyclic_any_sub_configs([n]):
        ref = simulate_reference(config)
        _same_run(simulate(config), ref)


def test_fast_path_is_not_taken_for_tables_or_other_disciplines(fast_path_everywhere):
    wanted = fast_path_everywhere.wanted
    base = RunConfig.family(16, "identity", receive="any", substitute=True)
    assert wanted(base, table=False)
    assert not wanted(base, table=True)
    assert not wanted(base.replace(receive="ordered"), table=False)
    assert not wanted(base.replace(substitute=False), table=False)
    # Random orders are not cyclic: the general engine runs them.
    assert _cyclic_starts(RunConfig.family(16, "random", 3).orders) is None


def test_without_deliveries_only_the_utilisation_is_kept(fast_path_everywhere):
    for config in (RunConfig.family(40, "identity", receive="any", substitute=True),
                   RunConfig.family(12, "random", 1)):
        full, lean = simulate(config), simulate(config, deliveries=False)
        assert lean.deliveries is None
        assert np.array_equal(full.utilization, lean.utilization)


def test_cyclic_starts_checks_rows_in_blocks():
    from pipegossip.model.pickers import cyclic_starts

    for family in ("identity", "pipelined"):
        orders = RunConfig.family(37, family).orders
        assert cyclic_starts(orders, block=5) == cyclic_starts(orders) is not None
    bad = np.array(RunConfig.family(37, "identity").orders)
    bad[36, [0, 1]] = bad[36, [1, 0]]  # the last block alone breaks the pattern
    assert cyclic_starts(bad, block=5) is None


def test_fast_path_reports_progress(fast_path_everywhere, monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setattr(fast_path_everywhere, "CHUNK_STEPS", 7)
    clock = iter(range(10**6))  # a second passes between chunks
    monkeypatch.setattr(fast_path_everywhere, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    calls = []
    r = simulate(RunConfig.family(20, "identity", receive="any", substitute=True),
                 progress=lambda *a: calls.append(a))
    assert calls[0] == (7, int(r.utilization[:7].sum()) // 2, 20 * 19)
    assert [c[0] for c in calls] == list(range(7, r.length, 7)) + [r.length]
    assert calls[-1][1:] == (20 * 19, 20 * 19)


def test_a_fast_path_fallback_is_reported(fast_path_everywhere, monkeypatch):
    from pipegossip.model.errors import FastPathWarning

    config = RunConfig.family(16, "pipelined", receive="any", substitute=True)
    monkeypatch.setattr(fast_path_everywhere, "run_cyclic_any_substitute",
                        lambda *a, **k: (np.zeros(3, np.int64), None, True))
    with pytest.warns(FastPathWarning, match=r"stopped at step 4 of N=16 .* general engine's"):
        r = simulate(config)
    _same_run(r, _general(config))


@pytest.mark.parametrize("n", [64, 65, 4096])
def test_the_fast_path_finishes_the_sizes_it_claims(n):
    # Word counts 1, 2 and 64 (a multiple of 64: the bit groups of usum fill up).
    from pipegossip.model import fastpath
    from pipegossip.model.closed_forms import physical_limit
    from pipegossip.model.pickers import cyclic_starts

    if not fastpath.AVAILABLE:
        pytest.skip("numba is not installed")
    config = RunConfig.family(n, "pipelined", receive="any", substitute=True)
    assert fastpath.wanted(config, table=False) or n < fastpath.MIN_N
    util, rows, deadlocked = fastpath.run_cyclic_any_substitute(
        config, cyclic_starts(config.orders), deliveries=False)
    assert not deadlocked and rows is None
    assert int(util.sum()) == 2 * n * (n - 1)  # every word sent and received once
    assert physical_limit(n) <= len(util)
