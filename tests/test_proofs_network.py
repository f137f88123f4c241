"""Formal proofs of the network fabric (SymbiYosys + z3): path 4, cycle 4, hypercube k=2.

Each proof loads a compiled schedule through the load port with any-constant
words, runs it and reads back an any-constant victim
(:class:`~pipegossip.hw.proofs.network_harness.NetworkHarness`); each mutant
(the program loaded with one fault) must fail.
"""

import pytest

from pipegossip.hw.proofs.suite import PROOF_WIDTH, network_job, run_jobs
from pipegossip.model.algorithms.path_cycle import cycle_gossip, path_gossip
from pipegossip.model.algorithms.reduce import allreduce_schedule
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
