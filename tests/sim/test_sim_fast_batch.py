"""Fast-mode runs batched in the hardware (:mod:`pipegossip.sim.fast.batch`).

* which runs the testbench gives the hardware to drive (no simulator);
* the log's lines read back, a bad line refused;
* on a simulator: batched and Python-driven runs give the same summaries;
  a wrong model is caught in batched runs at the same first mismatch as in
  single runs and in the per-cycle rerun; a batched run the fabric never
  took (still busy from a held run) is reported as unfinished, not as the
  previous run's summary.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipegossip.model.config import RunConfig
from pipegossip.sim.fsm.runner import default_runs
from pipegossip.sim.fast.batch import LOG_FIELDS, batch_cycles, log_verilog, parse_log
from pipegossip.sim.fast.mode import batch_items, build_fast, fast_cosimulate, run_fast
from pipegossip.sim.judge.fsm import judge, model_result
from pipegossip.sim.tools.simulators import DEFAULT_RECIPE

CONFIG = RunConfig.family(5, "pipelined")


def test_plain_runs_form_one_batch():
    runs = default_runs(CONFIG, list(range(6)), spurious_start=True)
    items = batch_items(runs)
    # Run 0 (idle 2) alone, run 1 (spurious start) driven by Python, 2..5 one batch.
    assert [i.get("batch") for i in items] == [1, None, 4]
    assert items[2]["word_seed"] == 2 and items[2]["idle"] == 1
    assert all("batch" not in i for i in batch_items(runs, batch=False))
    assert len(batch_items(runs, batch=False)) == 6


def test_what_breaks_a_batch():
    base = default_runs(CONFIG, [0, 1, 2, 3])
    assert [i.get("batch") for i in batch_items(base)] == [1, 3]
    held = [base[0], base[1], replace(base[2], hold=1), base[3]]
    assert [i.get("batch") for i in batch_items(held)] == [1, 1, None, 1]
    reset = [base[0], base[1], replace(base[2], reset=True), base[3]]
    assert [i.get("batch") for i in batch_items(reset)] == [1, 1, 2]
    gap = [base[0], base[1], replace(base[2], word_seed=7), base[3]]
    assert [i.get("batch") for i in batch_items(gap)] == [1, 1, 1, 1]
    wrap = [replace(base[1], word_seed=2**32 - 1), replace(base[2], word_seed=0)]
    assert [i.get("batch") for i in batch_items(wrap)] == [2]


def test_log_lines_read_back():
    values = list(range(3, 3 + len(LOG_FIELDS)))
    (row,) = parse_log(" ".join(map(str, values)) + "\n")
    assert list(row) == [name for name, _ in LOG_FIELDS] and list(row.values()) == values
    with pytest.raises(ValueError, match="bad line"):
        parse_log("1 2 3\n")
    text = log_verilog()
    assert text.count("%0d") == len(LOG_FIELDS) and "$fflush" in text
    assert batch_cycles(3, 0, 10) == 3 * 13


@pytest.fixture(scope="module")
def fast_build():
    return build_fast(CONFIG, 8, recipe=DEFAULT_RECIPE)


def _same(a: dict, b: dict) -> None:
    keys = ("first_mismatch", "finished", "done_at", "busy_cycles", "deliveries", "used_sum",
            "at_rest", "final")
    assert {k: a[k] for k in keys} == {k: b[k] for k in keys}


def test_batched_runs_match_python_driven_runs(fast_build):
    runs = default_runs(CONFIG, list(range(12)), spurious_start=True)
    batched = run_fast(fast_build, CONFIG, 8, runs)
    single = run_fast(fast_build, CONFIG, 8, runs, batch=False)
    assert len(batched) == len(single) == 12
    for b, s in zip(batched, single):
        _same(b.summary, s.summary)
        assert b.spec == s.spec
        assert judge(CONFIG, 8, b).match and judge(CONFIG, 8, s).match
    length = model_result(CONFIG).length
    assert all(r.summary["busy_cycles"] == length for r in batched)
    # Batched runs' cycles: idle, the start cycle, then the checked cycles up to the
    # one that sees finished (the logging cycle is not counted, as in single runs).
    span = length + 4 + 1  # cycles 0 .. L + tail are checked
    assert {r.summary["cycles"] for r in batched[2:]} == {1 + 1 + span}


def test_a_wrong_model_is_caught_the_same_in_batched_runs():
    good = RunConfig.family(5, "pipelined")
    bad = RunConfig.family(5, "identity")
    runs = default_runs(good, [0, 1, 2, 3])
    assert [i.get("batch") for i in batch_items(runs)] == [1, 3]
    out = fast_cosimulate(bad, 8, against=good, runs=runs, recipe=DEFAULT_RECIPE)
    assert out.reruns == [0, 1, 2, 3]
    keys = {(m.cycle, m.processor, m.kind) for m in
            (v.first_mismatch for v in out.fast_verdicts)}
    assert len(keys) == 1  # the same first mismatch in every run, batched or not
    assert keys == {(m.cycle, m.processor, m.kind) for m in
                    (v.first_mismatch for v in out.verdicts)}


def test_a_batched_run_the_fabric_never_took_is_not_a_pass(fast_build):
    runs = default_runs(CONFIG, [0, 1, 2])
    # Run 0 holds every processor: the fabric stalls and stays busy, so the
    # batch's start of run 1 is ignored while the checker still shows run 0's summary.
    runs[0] = replace(runs[0], hold=(1 << CONFIG.n) - 1)
    assert [i.get("batch") for i in batch_items(runs)] == [None, 2]
    hw = run_fast(fast_build, CONFIG, 8, runs)
    verdicts = [judge(CONFIG, 8, r) for r in hw]
    assert not verdicts[0].match
    assert not hw[1].summary["finished"] and not verdicts[1].match
    assert "timeout" in {m.kind for m in verdicts[1].mismatches}
