"""The network fabric's fast mode: the in-hardware checker names the trace judge's first mismatch.

Both modes run in Amaranth's simulator here (no Verilator build): the fast
top (sim/fast/network.py) with its ROMs as memories, the trace mode's
record judged by sim/judge/network.py. Every fault kind must be caught by
both with the same (check, cycle, node, port or slot).
"""

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pipegossip.hw.network.fabric import network_size
from pipegossip.model.algorithms.path_cycle import cycle_gossip, path_gossip
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.program import ProgramError
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.fast import network as fast_hw
from pipegossip.sim.fast import network_testbench
from pipegossip.sim.judge.network import judge_network, mismatch_place
from pipegossip.sim.network.cosim import cosim_network
from pipegossip.sim.network.fast import fast_place, run_fast_amaranth, span_of
from pipegossip.sim.network.run import FAULTS, faulty_writes, network_job, run_network_amaranth

sys.path.insert(0, str(Path(__file__).parent))
from test_sim_network_cosim import polling_path4  # noqa: E402

CYCLE4 = topology("cycle", n=4)
#: What each fault shows first (the check of its first mismatch), on cycle(4)'s allreduce
#: (its stored own tokens are never sent: a wrong one shows in the read-back) and, for
#: ``gossip-word``, on its gossip (the wrong word is sent).
FIRST_CHECK = {"drop": "trace", "misroute": "trace", "combine": "trace", "word": "final_word",
               "acc": "acc", "directory": "final_held", "gossip-word": "tx_word"}
#: Faults at later nodes (their ports' numbers differ from the nodes'): name ->
#: (gossip?, fault, applicable entries skipped, first check).
LATER = {"misroute-p3": (False, "misroute", 3, "trace"), "drop-p2": (False, "drop", 6, "trace"),
         "combine-p3": (False, "combine", 9, "trace"),
         "gossip-word-p3": (True, "word", 3, "rx_word"),
         "gossip-misroute-p2": (True, "misroute", 6, "trace")}
SEED = 3


@pytest.fixture(scope="module")
def both_modes():
    """cycle(4) allreduce: a clean run and one per fault, in both modes; (job, fast, trace)."""
    p = compile_network(allreduce_schedule(CYCLE4), depth=8, slots=4)
    g = compile_network(cycle_gossip(4, 1), depth=8, slots=4)
    jobs = [network_job("clean", p, SEED)] + [
        network_job(f, p, SEED, faulty_writes(p, f, SEED)) for f in FAULTS] + [
        network_job("gossip-word", g, SEED, faulty_writes(g, "word", SEED))]
    programs = [p] * (len(jobs) - 1) + [g]
    for name, (gossip, fault, skip, _) in LATER.items():
        q = g if gossip else p
        jobs.append(network_job(name, q, SEED, faulty_writes(q, fault, SEED, skip)))
        programs.append(q)
    size = network_size(p.topology, p.width, p.depth, p.slots)
    fast = run_fast_amaranth(programs, jobs, size)
    trace = run_network_amaranth(programs, seed=SEED, jobs=jobs)
    return {j["name"]: (s, judge_network(q, r), r)
            for j, q, s, r in zip(jobs, programs, fast, trace)}


def test_the_table_of_faults_is_complete():
    assert set(FIRST_CHECK) == {*FAULTS, "gossip-word"}


def test_a_clean_run_matches_in_both_modes(both_modes):
    runs = both_modes
    summary, verdict, record = runs["clean"]
    assert verdict.match, verdict.report()
    assert summary["finished"] == 1 and fast_place(summary) is None
    assert summary["busy_cycles"] == record.busy_cycles
    assert summary["done_at"] == record.busy_cycles + 1
    # the fast top checks as many cycles as the trace mode samples of a clean run
    assert summary["finished"] and len(record.samples["busy"]) == span_of(verdict.config)


@pytest.mark.parametrize("fault", [*FAULTS, "gossip-word", *LATER])
def test_each_fault_has_the_same_first_mismatch_in_both_modes(both_modes, fault):
    runs = both_modes
    summary, verdict, _ = runs[fault]
    assert not verdict.match
    trace_first = mismatch_place(verdict.first_mismatch)
    want = LATER[fault][3] if fault in LATER else FIRST_CHECK[fault]
    assert trace_first[0] == want, verdict.first_mismatch
    if fault in LATER:  # a port named by its own number, not its node's
        assert trace_first[2] >= 2 and trace_first[3] not in (None, trace_first[2])
    assert fast_place(summary) == trace_first
    assert summary["finished"] == 1


def test_a_program_that_ends_short_of_the_primitive_is_incomplete_in_both_modes():
    """A compiler bug the completeness check exists for: the program claims the gather's
    root ends without its own item (slot 0, the read-back's first check), and the fabric
    indeed lost it (its directory entry made invalid): no final-store mismatch, only the
    primitive's end state says that the root lacks item 0."""
    from pipegossip.model.schedules import Message, Schedule
    from test_sim_network_cosim import PATH4

    rounds = [[Message(3, (2,), (3,))], [Message(2, (1,), (2, 3))],
              [Message(1, (0,), (1, 2, 3))]]
    q = compile_network(Schedule.from_rounds(rounds, topology=PATH4, model="H1", p=None,
                                             primitive="gather", root=0), depth=8, slots=4)
    writes = faulty_writes(q, "directory", SEED)
    assert [w[:3] for w, x in zip(writes, network_job("j", q, SEED)["writes"]) if w != x] \
        == [(4, 0, 0)]  # node 0's directory entry of slot 0
    short = replace(q, final=q.final.copy())
    short.final[0, 0] = False
    job = network_job("short", q, SEED, writes)
    size = network_size(q.topology, q.width, q.depth, q.slots)
    (summary,) = run_fast_amaranth([short], [job], size)
    (record,) = run_network_amaranth([q], seed=SEED, jobs=[job])
    verdict = judge_network(short, record)
    assert [mismatch_place(m) for m in verdict.mismatches] == [("complete", None, 0, None)]
    assert fast_place(summary) == ("complete", None, 0, None)


def test_a_misroute_delivers_the_words_to_the_wrong_neighbours():
    """Two sending links swapped: each word must go out on the other link (its bank and
    address move with it), so the neighbours receive the wrong words; a swap of the
    labels alone would leave the words where they were and only the trace would differ."""
    g = compile_network(path_gossip(4, 1), depth=8)
    writes = faulty_writes(g, "misroute", SEED, 6)  # node 2: both its links send
    (r,) = run_network_amaranth([g], seed=SEED, jobs=[network_job("m", g, SEED, writes)])
    verdict = judge_network(g, r)
    first = verdict.first_mismatch
    assert first.kind == "trace" and first.processor == 2, first
    wrong = {m.processor for m in verdict.mismatches if m.cycle == first.cycle
             and m.kind == "delivery" and m.expected.startswith("receives")}
    assert wrong == {1, 3}, verdict.mismatches


def test_mismatch_place_reads_every_judge_text(both_modes):
    runs = both_modes
    seen = set()
    for _, verdict, _ in runs.values():
        for m in verdict.mismatches:
            check, cycle, node, where = mismatch_place(m)
            assert check in fast_hw.CHECKS and (cycle is None) == (m.cycle is None)
            assert node == m.processor
            seen.add(check)
    assert {"trace", "tx_word", "rx_word", "acc", "final_held", "final_word",
            "final_acc"} <= seen


def test_the_testbench_names_the_tops_ports():
    assert network_testbench.INPUTS == fast_hw.INPUTS
    assert network_testbench.SUMMARY == fast_hw.SUMMARY


def test_fast_mode_repeats_a_failing_run_in_trace_mode():
    report = cosim_network([("p", polling_path4())], seed=SEED, fault="drop",
                           simulator="amaranth", mode="fast")
    (r,) = report.results
    assert report.mode == "fast" and report.reruns == ["p"]
    assert not r.verdict.match and r.record.samples  # the trace record replaced the fast one
    (name, fast_verdict), = report.fast
    assert fast_place(fast_verdict.run.summary) == mismatch_place(r.verdict.first_mismatch)


def test_fast_mode_matches_gossip_without_rerun():
    report = cosim_network([("g", path_gossip(4, 1))], seed=1, simulator="amaranth",
                           mode="fast")
    assert report.match and not report.reruns
    (r,) = report.results
    assert r.record.busy_cycles == r.program.cycles + 1


def test_a_schedule_needing_deeper_banks_is_refused_and_its_depth_runs():
    need = compile_network(path_gossip(4, 1)).bank_need
    assert need > 1
    with pytest.raises(ProgramError, match=rf"--bank-depth {need} or more"):
        cosim_network([("g", path_gossip(4, 1))], simulator="amaranth", bank_depth=need - 1)
    report = cosim_network([("g", path_gossip(4, 1))], simulator="amaranth", bank_depth=need,
                           mode="fast")
    assert report.match and not report.reruns
    assert report.results[0].program.bank_depth == need


def _cli(*args):
    import subprocess
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("args, words", [
    # a bank depth too shallow: refused in one line with the depth it needs, before a build
    (["sim", "cosim", "--fabric", "network", "--bank-depth", "1"], "--bank-depth 3 or more"),
    (["sim", "cosim", "--bank-depth", "2"], "--bank-depth applies only to --fabric network"),
    (["sim", "cosim", "--fabric", "network", "--mode", "slow"], "invalid choice: 'slow'"),
    (["sim", "bench", "--fabric", "network", "--n", "8"], "--n applies only to --fabric fsm"),
    (["sim", "bench"], "--schedule applies only to --fabric network"),
])
def test_the_new_options_refuse_bad_input_in_one_line(tmp_path, args, words):
    from pipegossip.model.schedules import save
    f = tmp_path / "g.json"
    save(path_gossip(4, 1), f)
    proc = _cli(*args, "--schedule", str(f))
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not list(tmp_path.iterdir())[1:]  # nothing written beside the schedule
