"""Formal proofs of the network fabric (SymbiYosys + z3): path 4, cycle 4, hypercube k=2..3,
mesh 2x3, from the test suite and from ``pipegossip prove --fabric network``.

Each proof loads a compiled schedule through the load port with any-constant
words, runs it and reads back an any-constant victim
(:class:`~pipegossip.hw.proofs.network_harness.NetworkHarness`); each mutant
(the program loaded with one fault) must fail.
"""

import json

import pytest
from amaranth.back import rtlil

from pipegossip.cli import main
from pipegossip.hw.proofs.suite import PROOF_WIDTH, network_job, run_jobs
from pipegossip.model.algorithms.allport import allport_gossip
from pipegossip.model.algorithms.path_cycle import cycle_gossip, path_gossip
from pipegossip.model.algorithms.reduce import allreduce_schedule
from pipegossip.model.schedules import dumps
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.topologies import topology

CASES = {
    "path4-gossip": lambda: path_gossip(4, 1),
    "cycle4-gossip": lambda: cycle_gossip(4, 1),
    "hypercube2-allreduce": lambda: allreduce_schedule(topology("hypercube", k=2)),
}


def _prove(tmp_path, name, mutant=None):
    program = compile_network(CASES[name](), width=PROOF_WIDTH)
    (result,) = run_jobs([network_job(program, name, mutant)], tmp_path, timeout=1200)
    return result


def _cli(tmp_path, *args):
    out = tmp_path / "proof"
    rc = main(["prove", "--fabric", "network", "--quiet", "-o", str(out), "--timeout", "3000",
               *args])
    return rc, json.loads((out / "results.json").read_text())


SLOW = pytest.mark.slow  # 30-40 s each on a loaded machine


@pytest.mark.parametrize("name", [n if n == "path4-gossip" else pytest.param(n, marks=SLOW)
                                  for n in sorted(CASES)])
def test_network_fabric_proof_passes(tmp_path, name):
    r = _prove(tmp_path, name)
    assert r.result == "PASS", r


@pytest.mark.parametrize("name, mutant", [("path4-gossip", "drop"),
                                          pytest.param("cycle4-gossip", "misroute", marks=SLOW),
                                          pytest.param("hypercube2-allreduce", "combine",
                                                       marks=SLOW)])
def test_each_mutant_fails(tmp_path, name, mutant):
    r = _prove(tmp_path, name, mutant)
    assert r.result == "FAIL", r


def test_cli_proves_the_single_store(tmp_path):
    rc, [r] = _cli(tmp_path, "--topology", "path", "--n", "4", "--primitive", "gossip",
                   "--store", "single")
    assert (rc, r["result"]) == (0, "PASS") and r["name"].endswith("store=single"), r


# The passing proof is test_cli_proves_the_single_store's (path 4 gossip, single store),
# there through the command line: run here with --runslow only.
@pytest.mark.parametrize("mutant", [pytest.param(None, marks=SLOW), "drop"])
def test_the_single_store_passes_the_same_proof_and_its_mutant_fails(tmp_path, mutant):
    program = compile_network(CASES["path4-gossip"](), width=PROOF_WIDTH)
    job = network_job(program, "path4-gossip", mutant, store="single")
    design = job.design()
    assert job.name.endswith("store=single") and design._store == "single"
    # elaborated, as every design must be: one built and dropped warns (UnusedElaboratable)
    rtlil.convert(design, name="harness")
    (r,) = run_jobs([job], tmp_path, timeout=1200)
    assert r.result == ("FAIL" if mutant else "PASS"), r


# --- from the command line ----------------------------------------------------

# 146 s at load 15, the slowest proof of the default suite (its mutants were slow
# already): the fabric's run of allreduces that forward stored tokens is checked word for
# word by test_sim_network_cosim.py::test_one_build_runs_gossip_broadcast_and_polling_on_path4
# (this schedule, Verilator) and test_hw_network.py::
# test_small_topologies_run_and_match_in_cycles_plus_latency[allreduce-path5] (Amaranth);
# the network proof's command line by the two other CLI proofs here.
@SLOW
def test_cli_proves_the_path_allreduce_that_forwards_stored_words(tmp_path, capsys):
    # the dimension-wise allreduce sends single tokens from store slots after round 1
    rc, [r] = _cli(tmp_path, "--topology", "path", "--n", "4", "--primitive", "allreduce")
    assert (rc, r["result"], r["mode"]) == (0, "PASS", "bmc")
    assert r["name"] == "network allreduce path N=4 L=3"
    assert capsys.readouterr().out.startswith("PASS    network allreduce path N=4")


@SLOW
@pytest.mark.parametrize("mutant", ["drop", "misroute", "combine"])
def test_cli_mutants_of_the_path_allreduce_fail(tmp_path, mutant):
    rc, [r] = _cli(tmp_path, "--topology", "path", "--n", "4", "--primitive", "allreduce",
                   "--mutate", mutant)
    assert (rc, r["result"]) == (1, "FAIL"), r


#: The larger instances: (topology arguments, --primitive, mutant or None); minutes each.
#: The recursive-doubling allreduce stores nothing, so its dropped receive is the
#: all-port gossip's.
HC3, MESH23 = ["--topology", "hypercube", "--k", "3"], ["--topology", "mesh", "--a", "2",
                                                         "--b", "3"]
LARGE = {"hypercube3-allreduce": (HC3, "allreduce", None),
         "hypercube3-gossip": (HC3, "gossip", None),
         "hypercube3-gossip-drop": (HC3, "gossip", "drop"),
         "hypercube3-allreduce-misroute": (HC3, "allreduce", "misroute"),
         "hypercube3-allreduce-combine": (HC3, "allreduce", "combine"),
         "mesh2x3-allreduce": (MESH23, "allreduce", None),
         "mesh2x3-allreduce-drop": (MESH23, "allreduce", "drop"),
         "mesh2x3-allreduce-misroute": (MESH23, "allreduce", "misroute"),
         "mesh2x3-allreduce-combine": (MESH23, "allreduce", "combine")}


@SLOW
@pytest.mark.parametrize("name", list(LARGE))
def test_larger_networks_pass_and_their_mutants_fail(tmp_path, name):
    topo, prim, mutant = LARGE[name]
    args = [*topo, "--primitive", prim] + ([] if mutant is None else ["--mutate", mutant])
    rc, [r] = _cli(tmp_path, *args)
    want = ("PASS", 0) if mutant is None else ("FAIL", 1)
    assert (r["result"], rc) == want, r


def test_cli_takes_a_schedule_file_on_its_own_topology(tmp_path):
    f = tmp_path / "g.json"
    f.write_bytes(dumps(allport_gossip(topology("cycle", n=4))))
    rc, [r] = _cli(tmp_path, "--schedule", str(f))
    assert (rc, r["result"]) == (0, "PASS")
    assert r["name"] == "network g.json cycle N=4 L=2"


@pytest.mark.parametrize("args, needle", [
    ([], "needs one of --schedule FILE or --primitive"),
    (["--primitive", "allreduce"], "--primitive needs --topology"),
    (["--topology", "path", "--n", "4"], "needs one of --schedule FILE or --primitive"),
    (["--topology", "hypercube", "--k", "4", "--primitive", "gossip"], "N <= 8"),
    (["--topology", "path", "--n", "4", "--primitive", "gossip", "--order", "pipelined"],
     "--order applies only"),
    (["--topology", "path", "--n", "4", "--primitive", "gossip", "--mutate", "xbar-select"],
     "not a network-fabric mutant"),
    (["--topology", "path", "--n", "4", "--primitive", "gossip", "--mode", "prove"],
     "--mode prove"),
    (["--topology", "path", "--n", "4", "--primitive", "gossip", "--words", "tagged"],
     "--words applies only"),
    (["--topology", "ring", "--n", "4", "--primitive", "gossip"], "--topology ring"),
    (["--topology", "path", "--k", "4", "--primitive", "gossip"], "--k does not apply"),
    (["--k", "3", "--primitive", "gossip"], "--k applies only with --topology"),
    (["--topology", "shuffle_exchange", "--k", "3", "--primitive", "allreduce"],
     "split or recombine"),
    (["--topology", "path", "--n", "4", "--primitive", "gossip", "--bank-depth", "2"],
     "--bank-depth applies only to hw verilog and hw fpga"),
])
def test_bad_usage_is_refused_before_any_proof(args, needle, capsys, tmp_path):
    assert main(["prove", "--fabric", "network", "-o", str(tmp_path / "p"), *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("args, needle", [
    (["--topology", "path", "--n", "4"], "--topology applies only to --fabric network"),
    (["--primitive", "gossip"], "--primitive applies only to --fabric network"),
    (["--mutate", "drop"], "--mutate drop applies only to --fabric network"),
])
def test_network_options_are_refused_for_the_other_fabrics(args, needle, capsys):
    assert main(["prove", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_a_schedule_off_the_fabric_topology_is_refused(tmp_path, capsys):
    f = tmp_path / "g.json"
    f.write_bytes(dumps(allport_gossip(topology("cycle", n=4))))
    assert main(["prove", "--fabric", "network", "--topology", "path", "--n", "4",
                 "--schedule", str(f)]) == 2
    assert "non-edge" in capsys.readouterr().err


def test_cli_proves_the_reg_node(tmp_path):
    rc, [r] = _cli(tmp_path, "--topology", "path", "--n", "4", "--primitive", "gossip",
                   "--node", "reg")
    assert (rc, r["result"]) == (0, "PASS") and r["name"].endswith("node=reg"), r


# The reg node's passing proofs beyond path 4 (test_cli_proves_the_reg_node) run with
# --runslow only; its mutants fail in the default suite where they are quick.
@pytest.mark.parametrize("name, mutant", [
    ("path4-gossip", "drop"),
    pytest.param("cycle4-gossip", None, marks=SLOW),
    pytest.param("cycle4-gossip", "misroute", marks=SLOW),
    pytest.param("hypercube2-allreduce", None, marks=SLOW),
    pytest.param("hypercube2-allreduce", "combine", marks=SLOW)])
def test_the_reg_node_passes_the_same_proofs_and_its_mutants_fail(tmp_path, name, mutant):
    program = compile_network(CASES[name](), width=PROOF_WIDTH)
    job = network_job(program, name, mutant, node="reg")
    design = job.design()
    assert job.name.endswith("node=reg") and design._node == "reg"
    rtlil.convert(design, name="harness")
    (r,) = run_jobs([job], tmp_path, timeout=1200)
    assert r.result == ("FAIL" if mutant else "PASS"), r
