"""Formal proofs (SymbiYosys + z3): the smallest cases by default, the sweep when slow.

Every proof here runs the real tool chain through ``pipegossip prove`` or
the proof runner. The default suite proves N=3 (identity by BMC, pipelined
by k-induction), the resolver equivalence at N=4, and checks that two
mutants fail; ``--runslow`` adds N=3..6 for every order family and option
set, the resolver for N<=8, and every mutant.
"""

import json
import tempfile

import pytest

from pipegossip.cli import main
from pipegossip.hw.proofs.catalog import MUTANTS, OPTION_SETS, ORDER_FAMILIES
from pipegossip.hw.proofs.runner import _verdict, check_messages, sby_text
from pipegossip.hw.proofs.suite import fabric_job, resolver_job, run_jobs
from pipegossip.model import RunConfig


def _results(folder):
    return json.loads((folder / "results.json").read_text())


def _prove(tmp_path, *args):
    out = tmp_path / "proof"
    rc = main(["prove", "--quiet", "-o", str(out), *args])
    return rc, _results(out)


def test_fabric_n3_identity_bmc_passes(tmp_path, capsys):
    rc, results = _prove(tmp_path, "--n", "3", "--order", "identity")
    assert rc == 0
    [r] = results
    assert (r["result"], r["mode"], r["depth"]) == ("PASS", "bmc", 6 + 3)  # L=6, cycles 0..L+2
    out = capsys.readouterr().out
    assert out.startswith("PASS") and "depth 9" in out
    kept = tmp_path / "proof" / "000-fabric"
    assert (kept / "job.sby").exists() and (kept / "design.il").exists()


def test_fabric_n3_pipelined_k_induction_closes(tmp_path):
    rc, [r] = _prove(tmp_path, "--n", "3", "--order", "pipelined", "--mode", "prove")
    assert rc == 0 and r["result"] == "PASS" and r["mode"] == "prove"


def test_resolver_n4_equals_the_serial_chain(tmp_path):
    rc, [r] = _prove(tmp_path, "--n", "4", "--order", "pipelined", "--receive", "any",
                     "--substitute", "--only", "resolver")
    assert rc == 0
    assert (r["result"], r["mode"], r["depth"]) == ("PASS", "equiv", 1)


def test_swapped_crossbar_select_fails_its_proof(tmp_path):
    rc, [r] = _prove(tmp_path, "--n", "3", "--order", "identity", "--mutate", "xbar-select")
    assert rc == 1
    assert r["result"] == "FAIL" and "victim word intact" in r["detail"]


def test_broken_resolver_chain_fails_the_equivalence(tmp_path):
    rc, [r] = _prove(tmp_path, "--n", "4", "--order", "pipelined", "--receive", "any",
                     "--substitute", "--mutate", "chain-skip")
    assert rc == 1
    assert r["result"] == "FAIL" and "same receiver as the chain" in r["detail"]


def test_work_folder_is_removed_without_output(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["prove", "--n", "4", "--order", "identity", "--receive", "any",
                 "--substitute", "--only", "resolver", "--format", "json", "--quiet"]) == 0
    [r] = json.loads(capsys.readouterr().out)
    assert r["result"] == "PASS"
    assert list(tmp_path.iterdir()) == []


def _working_in(folder):
    """Live (not zombie) processes whose current folder is under ``folder``."""
    import os

    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
            if state != "Z" and os.readlink(f"/proc/{pid}/cwd").startswith(str(folder)):
                found.append(pid)
        except OSError:
            pass
    return found


def test_timeout_stops_every_tool_and_is_not_a_pass(tmp_path):
    import time

    # A proof that takes far longer than 1 s even on an idle machine (N=3
    # identity finished within the second there and passed).
    rc, [r] = _prove(tmp_path, "--schedule-family", "one-factor", "--n", "6", "--timeout", "1")
    assert rc == 1 and r["result"] == "TIMEOUT"
    for _ in range(80):  # a killed process leaves /proc a moment later (longer when busy)
        if not _working_in(tmp_path):
            break
        time.sleep(0.25)
    assert _working_in(tmp_path) == []


@pytest.mark.parametrize("args, needle", [
    (["--n", "3", "--order", "identity", "--mutate", "chain-skip"], "needs --receive any"),
    (["--n", "3", "--order", "identity", "--only", "resolver"], "needs --receive any"),
    (["--n", "9", "--order", "identity"], "N <= 8"),
    (["--n", "2", "--order", "identity", "--mutate", "xbar-select"], "--n 3 or more"),
    (["--n", "3", "--order", "identity", "--mode", "ic3"], "invalid choice"),
    (["--n", "3", "--order", "identity", "--timeout", "0"], "at least 1"),
])
def test_bad_usage_is_refused_before_any_proof(args, needle, capsys):
    assert main(["prove", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_sweep_refuses_unknown_names(capsys):
    assert main(["prove-sweep", "--orders", "identity,zigzag"]) == 2
    assert "zigzag" in capsys.readouterr().err


def test_failed_assertion_is_named_by_its_message():
    il = ('  cell $check $209\n    parameter \\FORMAT "p0: victim word intact"\n'
          '  cell $check $214\n    parameter \\FORMAT "p0: victim at most once"\n')
    messages = check_messages(il)
    assert messages == {"209": "p0: victim word intact", "214": "p0: victim at most once"}
    log = ("SBY 1:00 [job] engine_0: ##   0:00:00  Assert failed in harness: "
           "_witness_.check_214\nSBY 1:00 [job] DONE (FAIL, rc=2)\n")
    from pathlib import Path
    assert _verdict(Path("/nonexistent"), log, messages) == ("FAIL", "p0: victim at most once")
    assert "mode prove" in sby_text("prove", 5) and "smtbmc z3" in sby_text("bmc", 5)


def _rule(orders, channels, sending, receiving, parity, served, heard):
    """docs/reference.md for one step, as the model's reference engine reads them."""
    n = len(orders)
    claimed, fired = set(), {}
    for i in range(n):
        if not sending[i]:
            continue
        unserved = [j for k, j in enumerate(orders[i]) if not served[i][k]]

        def can_take(j):
            return (j not in claimed and receiving[j] and parity[j] == parity[i]
                    and not heard[j][i])
        choice = None
        if channels is None or len(fired) < channels:
            if can_take(unserved[0]):
                choice = unserved[0]
            else:
                choice = next((j for j in unserved[1:] if can_take(j)), None)
        if choice is not None:
            claimed.add(choice)
            fired[i] = choice
    return fired


@pytest.mark.parametrize("channels", [None, 1])
def test_serial_chain_reference_is_the_rule(channels):
    """The miter's reference circuit equals the rule on random step states."""
    import random

    from combinational import settle

    from pipegossip.hw.proofs.resolver_miter import SerialChain

    rng = random.Random(5)
    orders = _family(5, "random").orders.tolist()
    dut = SerialChain(orders, channels)

    def script(ctx):
        for _ in range(150):
            role = [rng.randrange(3) for _ in range(5)]
            sending, receiving = [r == 1 for r in role], [r == 2 for r in role]
            parity = [rng.randrange(2) for _ in range(5)]
            served = [[rng.random() < 0.4 for _ in range(4)] for _ in range(5)]
            for i in range(5):
                served[i][rng.randrange(4)] = False
            heard = [[rng.random() < 0.3 and i != j for i in range(5)] for j in range(5)]
            bits = lambda xs: sum(int(x) << k for k, x in enumerate(xs))  # noqa: E731
            ctx.set(dut.sending, bits(sending))
            ctx.set(dut.receiving, bits(receiving))
            ctx.set(dut.parity, bits(parity))
            for i in range(5):
                ctx.set(dut.served[i], bits(served[i]))
                ctx.set(dut.heard[i], bits(heard[i]))
            want = _rule(orders, channels, sending, receiving, parity, served, heard)
            got = {i: ctx.get(dut.fired[i]).bit_length() - 1 for i in range(5)
                   if ctx.get(dut.fired[i])}
            assert got == want

    settle(dut, script)


# --- the sweep (slow) -----------------------------------------------------

def _family(n, order, **options):
    return RunConfig.family(n, order, 0 if order == "random" else None, **options)


@pytest.mark.slow
@pytest.mark.parametrize("options", list(OPTION_SETS))
@pytest.mark.parametrize("order", ORDER_FAMILIES)
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_fabric_bmc_sweep(n, order, options, tmp_path):
    [r] = run_jobs([fabric_job(_family(n, order, **OPTION_SETS[options]))], tmp_path, 900)
    assert r.result == "PASS", r.detail


@pytest.mark.slow
@pytest.mark.parametrize("extra", [{}, {"sessions": 2, "channels": 1}, {"sessions": 2}])
@pytest.mark.parametrize("order", ORDER_FAMILIES)
@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 8])
def test_resolver_equivalence_sweep(n, order, extra, tmp_path):
    config = _family(n, order, receive="any", substitute=True, **extra)
    [r] = run_jobs([resolver_job(config)], tmp_path, 900)
    assert r.result == "PASS", r.detail


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
@pytest.mark.parametrize("n", [3, 5])
def test_every_mutant_fails(n, mutant, tmp_path):
    config = _family(n, "pipelined", receive="any", substitute=True)
    job = (fabric_job(config, mutant=mutant) if mutant == "xbar-select"
           else resolver_job(config, mutant))
    [r] = run_jobs([job], tmp_path, 900)
    assert r.result == "FAIL"
