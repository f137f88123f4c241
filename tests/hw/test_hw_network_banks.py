# amaranth: UnusedElaboratable=no
"""The network fabric's banked store: placement by the compiler, bank depth, read-back."""

import numpy as np
import pytest

from pipegossip.hw.network import NetworkFabric, network_size
from pipegossip.hw.network.fabric import DIRECTORY
from pipegossip.hw.network.load import network_writes
from pipegossip.hw.ports import NETWORK_PORTS
from pipegossip.model.algorithms.allport import allport_gossip
from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.algorithms.path_cycle import cycle_gossip
from pipegossip.model.algorithms.polling import polling_hypercube
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.program import NONE, ProgramError
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.judge.network import judge_network
from pipegossip.sim.network.run import (NETWORK_LINK_FIELDS, NETWORK_NODE_FIELDS,
                                        NETWORK_SCALAR_FIELDS, faulty_writes, network_job,
                                        network_record, run_network_amaranth)
from pipegossip.sim.schedule.cosim import amaranth_runs


def _run_banked(programs, bank_depth, jobs=None, seed=0):
    """``run_network_amaranth`` on a fabric built with ``bank_depth``."""
    p0 = programs[0]
    size = network_size(p0.topology, p0.width, max(p.depth for p in programs), p0.slots,
                        bank_depth)
    dut = NetworkFabric(p0.topology, size.width, size.depth, size.slots, p0.op, bank_depth)
    jobs = jobs or [network_job(p.slug, p, seed) for p in programs]
    return amaranth_runs(dut, jobs, size, NETWORK_PORTS,
                         lambda s: size.ports if s.per_link else size.n,
                         NETWORK_SCALAR_FIELDS, NETWORK_LINK_FIELDS + NETWORK_NODE_FIELDS,
                         lambda job, rows, store, held, acc, ended, wall: network_record(
                             job, size, rows, store, held, acc, ended, wall, "Amaranth"))


def test_each_link_fills_its_own_bank_in_arrival_order():
    p = compile_network(matching_schedule(topology("hypercube", k=3)))
    for v in range(p.n):
        deg = len(p.links[v])
        seen: dict[int, list[int]] = {b: [] for b in range(deg + 1)}
        for x in np.flatnonzero(p.initial[v]):
            seen[deg].append(int(x))
        for c in range(p.cycles):
            for j in range(deg):
                x = int(p.rx[c, p.offsets[v] + j])
                if x != NONE:
                    seen[j].append(x)
        for b, slots in seen.items():
            for a, x in enumerate(slots):
                if p.directory[v][x].bank == b:  # its first copy: here, at its arrival index
                    assert p.directory[v][x].addr == a
        assert set(p.directory[v]) == set(np.flatnonzero(p.final[v]))
    # the matching gossip on Q_3: dimension 3's link brings 4 words, the most in one bank
    assert p.bank_need == 4


def test_a_send_reads_the_bank_and_address_where_the_slot_was_stored():
    p = compile_network(cycle_gossip(8, 1))
    for c, q in zip(*np.nonzero(p.tx >= 0)):
        v = p.node_of(int(q))
        assert (p.tx_bank[c, q], p.tx_addr[c, q]) == p.directory[v][int(p.tx[c, q])]


def test_a_bank_depth_below_the_need_is_refused_with_the_need():
    s = matching_schedule(topology("hypercube", k=3))
    with pytest.raises(ProgramError, match=r"bank_depth=3: build with --bank-depth 4 or more"):
        compile_network(s, bank_depth=3)
    assert compile_network(s, bank_depth=4).bank_need == 4
    with pytest.raises(ProgramError, match="bank depth must be a positive integer"):
        compile_network(s, bank_depth=0)


@pytest.mark.parametrize("make", [lambda: matching_schedule(topology("hypercube", k=3)),
                                  lambda: allport_gossip(topology("cycle", n=8)),
                                  lambda: polling_hypercube(3)])
def test_the_shallowest_banks_a_schedule_needs_run_it(make):
    s = make()
    need = compile_network(s).bank_need
    p = compile_network(s, bank_depth=need, slots=8)
    assert p.layout(0).depth_of_bank == need
    (r,) = _run_banked([p], need, seed=3)
    v = judge_network(p, r)
    assert v.match, v.report()


def test_a_second_program_on_the_same_build_finds_no_stale_directory_entry():
    hc = topology("hypercube", k=3)
    # polling stores only the question slot: every other slot the gossip stored must read empty
    progs = [compile_network(matching_schedule(hc), depth=8, bank_depth=4),
             compile_network(polling_hypercube(3), depth=8, slots=8, bank_depth=4)]
    for p, r in zip(progs, _run_banked(progs, 4, seed=2)):
        assert judge_network(p, r).match, judge_network(p, r).report()
    assert sum(len(d) for d in progs[1].directory) < progs[1].n * progs[1].slots
    written = {w[:3] for w in network_writes(progs[1])}
    assert all((DIRECTORY, v, x) in written for v in range(8) for x in range(8))


def test_a_lost_word_reads_back_empty():
    # a dropped receive is never written: its bank's count stays short, so the last
    # address of that bank is not held any more (and the judge says so at the end)
    p = compile_network(cycle_gossip(8, 1))
    job = network_job("drop", p, 1, faulty_writes(p, "drop", 1))
    (r,) = run_network_amaranth([p], jobs=[job])
    v = judge_network(p, r)
    lost = [m for m in v.mismatches if m.note == "final store" and m.got == "empty"]
    assert lost and all(m.processor == 0 for m in lost), v.report()
