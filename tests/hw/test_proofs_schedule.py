"""Formal proofs of the schedule fabric (SymbiYosys + z3): N=3 by default, N=3..6 when slow.

Every proof here runs the real tool chain through ``pipegossip prove
--fabric schedule`` or the proof runner: a compiled schedule is loaded
through the load port, run, and read back. The default suite proves
cyclic-shift at N=3 (free and tagged words) and a gather schedule file with
combining at N=3, and checks that each mutant fails with the property it
breaks; ``--runslow`` adds N=3..6 for every generator and the mutants at N=5.
"""

import dataclasses
import json

import pytest

from pipegossip.cli import main
from pipegossip.hw.proofs.catalog import SCHEDULE_FAMILIES, SCHEDULE_MUTANTS
from pipegossip.hw.proofs.runner import ProofResult
from pipegossip.hw.proofs.schedule_harness import harness_writes, proof_depth, required_pairs
from pipegossip.hw.proofs.schedule_suite import MAP_MEMORIES, schedule_program
from pipegossip.hw.proofs.suite import fabric_job, run_jobs, schedule_job, summary_table
from pipegossip.model.config import RunConfig
from pipegossip.hw.proofs import runner
from pipegossip.hw.schedule import LoadKind
from pipegossip.hw.schedule.load import load_writes
from pipegossip.model.schedules import Message, Schedule, complete, dumps
from pipegossip.model.schedules.program import compile_schedule


def _prove(tmp_path, *args):
    out = tmp_path / "proof"
    rc = main(["prove", "--quiet", "-o", str(out), *args])
    return rc, json.loads((out / "results.json").read_text())


def _gather3():
    """Node 2 tells node 1, then node 1 sends both items to the root 0 (combined there)."""
    return Schedule.from_rounds([[Message(2, (1,), (2,))], [Message(1, (0,), (1, 2))]],
                                topology=complete(3), model="F1", p=None, primitive="gather",
                                root=0)


# --- the proofs (default suite) ---------------------------------------------

def test_cyclic_shift_n3_passes_at_load_plus_run_depth(tmp_path, capsys):
    rc, [r] = _prove(tmp_path, "--schedule-family", "cyclic-shift", "--n", "3")
    assert rc == 0
    # 10 load writes (header, 3 items, 3x2 entries), start, L=2, done, 2 read-backs
    assert (r["result"], r["mode"], r["depth"]) == ("PASS", "bmc", 10 + 2 + 5)
    assert r["name"] == "schedule cyclic-shift N=3 L=2"
    assert capsys.readouterr().out.startswith("PASS    schedule cyclic-shift N=3")
    sby = (tmp_path / "proof" / "000-schedule" / "job.sby").read_text()
    assert "prep -top harness\n" + MAP_MEMORIES in sby


def test_tagged_words_pass_too(tmp_path):
    rc, [r] = _prove(tmp_path, "--fabric", "schedule", "--schedule-family", "cyclic-shift",
                     "--n", "3", "--words", "tagged")
    assert rc == 0 and r["result"] == "PASS" and r["name"].endswith("words=tagged")


def test_gather_file_with_combining_passes(tmp_path):
    path = tmp_path / "gather3.json"
    path.write_bytes(dumps(_gather3()))
    program = compile_schedule(_gather3(), width=4)
    assert program.combine.sum() == 2 and program.cycles == 3  # two words into the root
    rc, [r] = _prove(tmp_path, "--schedule", str(path))
    assert rc == 0 and r["result"] == "PASS"
    assert r["name"] == "schedule gather3.json N=3 L=3"


@pytest.mark.parametrize("mutant, needle", [
    ("xbar-select", "select is the one-hot of recv.source"),
    ("xbar-double", "one source at most"),
    ("source-field", "a held slot holds its loaded word"),
])
def test_every_mutant_fails_at_n3(mutant, needle, tmp_path):
    rc, [r] = _prove(tmp_path, "--schedule-family", "cyclic-shift", "--n", "3",
                     "--mutate", mutant)
    assert rc == 1
    assert r["result"] == "FAIL" and needle in r["detail"], r["detail"]


def test_a_wrong_final_store_fails(tmp_path):
    """The held-bit check is live: a model that says one held slot is empty fails."""
    program = schedule_program("cyclic-shift", 3, 4)
    final = program.final.copy()
    final[0, 1] = False
    wrong = dataclasses.replace(program, final=final)
    [r] = run_jobs([schedule_job(wrong, "cyclic-shift")], tmp_path, 300)
    assert r.result == "FAIL" and "final held bits are the model's" in r.detail, r.detail



def test_a_wrong_accumulator_sum_fails(tmp_path, monkeypatch):
    """The accumulator check is live: expecting 0 where the root combines two words fails."""
    from amaranth.hdl import Const

    from pipegossip.hw.proofs import schedule_harness

    monkeypatch.setattr(schedule_harness, "_accumulator_sums",
                        lambda program, words, width: [Const(0, width)] * program.n)
    [r] = run_jobs([schedule_job(compile_schedule(_gather3(), width=4), "gather")], tmp_path, 300)
    assert r.result == "FAIL" and "accumulator is the sum" in r.detail, r.detail


# --- without a solver -------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["--fabric", "schedule"], "needs one of --schedule-family"),
    (["--schedule-family", "cyclic-shift", "--order", "pipelined"], "--order applies only"),
    (["--schedule-family", "cyclic-shift", "--receive", "any"], "--receive applies only"),
    (["--fabric", "fsm", "--schedule-family", "one-factor"], "apply only to --fabric schedule"),
    (["--schedule-family", "one-factor", "--n", "9"], "N <= 8"),
    (["--schedule-family", "one-factor", "--mutate", "chain-skip"], "not a schedule-fabric"),
    (["--n", "3", "--order", "identity", "--mutate", "source-field"], "only to --fabric sch"),
    (["--schedule-family", "cyclic-shift", "--n", "2", "--mutate", "xbar-select"], "N >= 3"),
    (["--schedule-family", "min-calls", "--n", "1"], "n must be an integer >= 2"),
    (["--schedule-family", "ring"], "invalid choice"),
    (["--schedule", "x.json", "--n", "3"], "gives its own N"),
    (["--words", "tagged"], "--words applies only"),
])
def test_bad_usage_is_refused_before_any_proof(args, needle, capsys):
    assert main(["prove", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_sweep_refuses_unknown_families_and_large_sizes(capsys):
    assert main(["prove-sweep", "--only", "schedule", "--schedule-families", "ring"]) == 2
    assert "ring" in capsys.readouterr().err
    assert main(["prove-sweep", "--only", "schedule", "--schedule-sizes", "9"]) == 2
    assert "N <= 8" in capsys.readouterr().err


def test_required_pairs_follow_the_primitive():
    gossip = schedule_program("cyclic-shift", 3, 4)
    assert required_pairs(gossip) == {(v, x) for v in range(3) for x in range(3)}
    gather = compile_schedule(_gather3(), width=4)
    assert required_pairs(gather) == {(0, x) for x in range(3)}
    bcast = Schedule.from_rounds([[Message(1, (0, 2), (1,))]], topology=complete(3),
                                 model="port", p=None, primitive="broadcast", root=1)
    assert required_pairs(compile_schedule(bcast, width=4)) == {(0, 1), (1, 1), (2, 1)}


def test_source_field_mutant_changes_one_source_only():
    program = schedule_program("one-factor", 4, 4)
    plain, bad = load_writes(program), harness_writes(program, "source-field")
    diff = [k for k, (a, b) in enumerate(zip(plain, bad)) if a != b]
    assert len(plain) == len(bad) and len(diff) == 1
    kind, node, addr, data = bad[diff[0]]
    lay = program.layout
    good, wrong = lay.decode(plain[diff[0]][3]), lay.decode(data)
    assert (kind, node) == (LoadKind.PROGRAM, 0) and good["recv"]
    assert wrong["source"] not in (good["source"], 0)
    assert {k: v for k, v in wrong.items() if k != "source"} == \
        {k: v for k, v in good.items() if k != "source"}
    with pytest.raises(ValueError, match="node 0 receives"):
        gather = compile_schedule(_gather3(), width=4)
        gather.source[:, 0] = -1  # node 0 never receives
        harness_writes(gather, "source-field")


def test_depth_covers_load_run_and_read_back():
    for family in SCHEDULE_FAMILIES:
        p = schedule_program(family, 5, 4)
        w = 1 + p.n * p.items + p.n * p.cycles
        assert len(load_writes(p)) == w
        assert proof_depth(p) == w + p.cycles + 5
        assert schedule_job(p, family).depth == proof_depth(p)


def test_only_schedule_jobs_map_memories():
    plain = runner.sby_text("bmc", 7)
    assert runner.sby_text("bmc", 7, after_prep=MAP_MEMORIES) == plain.replace(
        "prep -top harness\n", "prep -top harness\n" + MAP_MEMORIES)
    assert MAP_MEMORIES not in plain
    p = schedule_program("cyclic-shift", 3, 4)
    assert schedule_job(p, "cyclic-shift").after_prep == MAP_MEMORIES
    assert fabric_job(RunConfig.family(3, "identity")).after_prep == ""


def test_summary_table_has_one_row_per_schedule_and_n():
    rows = [ProofResult("schedule cyclic-shift N=4 L=3", "bmc", "PASS", 25, 5.0),
            ProofResult("schedule one-factor N=4 L=6", "bmc", "FAIL", 40, 9.0, "x"),
            ProofResult("fabric N=4 identity ordered", "bmc", "PASS", 12, 1.0)]
    table = summary_table(rows)
    assert "| schedule cyclic-shift | bmc | 4 | 1 | PASS | 25 | 5.0 | 5.0 |" in table
    assert "| schedule one-factor | bmc | 4 | 1 | 0/1 PASS; FAIL N=4 L=6 | 40 |" in table
    assert "| fabric | bmc | 4 | 1 | PASS | 12 |" in table


# --- the sweep (slow) -------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("family", SCHEDULE_FAMILIES)
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_schedule_bmc_sweep(n, family, tmp_path):
    [r] = run_jobs([schedule_job(schedule_program(family, n, 4), family)], tmp_path, 900)
    assert r.result == "PASS", r.detail


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(SCHEDULE_MUTANTS))
@pytest.mark.parametrize("family", ["cyclic-shift", "one-factor"])
def test_every_mutant_fails_at_n5(family, mutant, tmp_path):
    job = schedule_job(schedule_program(family, 5, 4), family, mutant=mutant)
    [r] = run_jobs([job], tmp_path, 900)
    assert r.result == "FAIL"


