# amaranth: UnusedElaboratable=no
"""The registered-link node (``node="reg"``) runs what the wire node runs, cycle for cycle.

``hw/network/reg_node.py`` moves the clock edges (every link is a register,
sends are chosen a cycle ahead, a word arriving now is taken from its link
when it is sent on in the next cycle) but must not change anything at the
fabric's ports: the same samples at every port in every cycle, the same held
words, accumulators and verdicts, on both stores, and the same first mismatch
for every loaded fault. The lean build (``trace=False``) has no trace ports
but the same datapath: its accumulators, control outputs and read-back equal
the trace build's in every cycle.
"""

import numpy as np
import pytest

from pipegossip.hw.network import NetworkFabric, network_size
from pipegossip.hw.network.export import network_verilog_text
from pipegossip.hw.network.reg_node import RegNode
from pipegossip.hw.ports import NETWORK_PORTS, network_ports
from pipegossip.model.algorithms.allport import allport_gossip
from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.algorithms.path_cycle import cycle_gossip, path_gossip
from pipegossip.model.algorithms.polling import polling_hypercube
from pipegossip.model.algorithms.reduce import allreduce_schedule, reduce_schedule
from pipegossip.model.schedules.network_banks import fresh_sends
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.judge.network import judge_network
from pipegossip.sim.network.cosim import cosim_network
from pipegossip.sim.network.run import (FAULTS, NETWORK_NODE_FIELDS, NETWORK_SCALAR_FIELDS,
                                        faulty_writes, network_job, run_network_amaranth)
from pipegossip.sim.schedule.cosim import amaranth_runs

HC3 = topology("hypercube", k=3)
MESH = topology("mesh", a=2, b=3)


def _hc3_programs():
    """Gossip, all-port gossip (words sent on in the cycle after they arrive: the bypass),
    polling (drain, question slot), allreduce, then gossip again on the same build."""
    return [compile_network(matching_schedule(HC3), depth=8),
            compile_network(allport_gossip(HC3), depth=8),
            compile_network(polling_hypercube(3), depth=8, slots=8),
            compile_network(allreduce_schedule(HC3), depth=8, slots=8),
            compile_network(matching_schedule(HC3), depth=8)]


def _same(a, b, what):
    assert a.samples.keys() == b.samples.keys()
    for key in a.samples:
        assert np.array_equal(a.samples[key], b.samples[key]), (what, key)
    assert np.array_equal(a.held, b.held), what
    held = np.asarray(a.held, bool)
    assert np.array_equal(np.asarray(a.store, object)[held],
                          np.asarray(b.store, object)[held]), what
    assert np.array_equal(np.asarray(a.acc, object), np.asarray(b.acc, object)), what


@pytest.mark.parametrize("store", ["banks", "single"])
def test_the_reg_node_gives_the_wire_node_s_samples_in_every_cycle(store):
    progs = _hc3_programs()
    assert progs[1].tx_new.any()  # the all-port gossip forwards words the cycle after
    wire = run_network_amaranth(progs, seed=5, store=store)
    reg = run_network_amaranth(progs, seed=5, store=store, node="reg")
    for p, a, b in zip(progs, wire, reg):
        v = judge_network(p, b)
        assert v.match, v.report()
        assert b.busy_cycles == p.cycles + b.latency
        _same(a, b, (store, p.slug))


def test_parts_of_accumulators_and_dimension_wise_reduces_run_on_the_reg_node():
    # allreduce on cycle(8) forwards single tokens from store slots; the mesh's
    # dimension-wise allreduce forwards rows' words; a reduce combines several links at once
    progs = [compile_network(allreduce_schedule(topology("cycle", n=8))),
             compile_network(allreduce_schedule(MESH)),
             compile_network(reduce_schedule(MESH, 0))]
    assert any(x is not None for x in progs[0].slot_sets)
    assert any(int(row.sum()) > 1 for row in progs[2].comb.reshape(progs[2].cycles, -1)[:, :3])
    for p in progs:
        (a,) = run_network_amaranth([p], seed=3)
        (b,) = run_network_amaranth([p], seed=3, node="reg")
        v = judge_network(p, b)
        assert v.match, v.report()
        _same(a, b, p.slug)


@pytest.mark.parametrize("fault", FAULTS)
def test_every_fault_has_the_same_first_mismatch_on_both_nodes(fault):
    p = compile_network(polling_hypercube(3) if fault in ("combine", "acc")
                        else allport_gossip(HC3))
    job = network_job("faulty", p, 2, faulty_writes(p, fault, 2))
    (a,) = run_network_amaranth([p], jobs=[job])
    (b,) = run_network_amaranth([p], jobs=[job], node="reg")
    va, vb = judge_network(p, a), judge_network(p, b)
    assert not vb.match
    assert va.first_mismatch.to_json() == vb.first_mismatch.to_json()


SLOW = pytest.mark.slow  # the fast top in Amaranth's simulator: a minute or more each


@pytest.mark.parametrize("fault", ["drop", pytest.param("misroute", marks=SLOW),
                                   pytest.param("word", marks=SLOW)])
def test_the_fast_mode_finds_a_fault_on_the_reg_node_where_the_trace_mode_does(fault):
    p = allport_gossip(HC3)
    kw = dict(simulator="amaranth", fault=fault, node="reg", rerun=False)
    fast = cosim_network([("ap", p)], mode="fast", **kw)
    trace = cosim_network([("ap", p)], mode="trace", **kw)
    (vf,), (vt,) = [r.verdict for r in fast.results], [r.verdict for r in trace.results]
    assert not vf.match and not vt.match
    ff, ft = vf.first_mismatch, vt.first_mismatch
    assert (ff.kind, ff.cycle, ff.processor) == (ft.kind, ft.cycle, ft.processor)


@SLOW
def test_the_fast_mode_matches_on_the_reg_node():
    report = cosim_network([("ap", allport_gossip(HC3)), ("poll", polling_hypercube(3))],
                           simulator="amaranth", mode="fast", node="reg")
    assert all(r.verdict.match for r in report.results), [r.verdict.report()
                                                          for r in report.results]


def _lean_runs(progs, trace: bool):
    p0 = progs[0]
    size = network_size(p0.topology, p0.width, p0.depth, p0.slots, node="reg", trace=trace)
    dut = NetworkFabric(p0.topology, size.width, size.depth, size.slots, p0.op, node="reg",
                        trace=trace)
    jobs = [network_job(p.slug, p, 4) for p in progs]
    return amaranth_runs(dut, jobs, size, NETWORK_PORTS,
                         lambda s: size.ports if s.per_link else size.n,
                         NETWORK_SCALAR_FIELDS, tuple(NETWORK_NODE_FIELDS),
                         lambda job, rows, store, held, acc, ended, wall:
                         (rows, store, held, acc))


def test_the_lean_build_runs_the_trace_build_s_datapath_cycle_by_cycle():
    progs = _hc3_programs()
    for (ra, sa, ha, aa), (rb, sb, hb, ab) in zip(_lean_runs(progs, True),
                                                  _lean_runs(progs, False)):
        assert ra == rb  # busy, done, cycle, length and every accumulator, every cycle
        assert (ha, aa) == (hb, ab)
        held = np.asarray(ha, bool)
        assert np.array_equal(np.asarray(sa, object)[held], np.asarray(sb, object)[held])


def test_the_lean_build_has_no_trace_ports_and_keeps_the_slot_fields_out():
    lean = network_size(HC3, depth=8, node="reg", trace=False)
    names = {p.name for p in network_ports(lean)}
    assert not any(n.startswith(("tx__", "rx__")) for n in names)
    assert {"acc__0", "read__word", "load__data", "busy"} <= names
    assert {p.name for p in network_ports(network_size(HC3, depth=8))} > names
    text = network_verilog_text(HC3, depth=8, node="reg", trace=False)
    assert "node=reg lean" in text.splitlines()[1] and "tx__0__word" not in text
    node = RegNode(3, 8, 8, 8, trace=False)
    kept = {f for f, _ in node.kept_fields}
    assert "txslot0" not in kept and "rxslot2" not in kept and "txnew1" in kept
    # the single store reads and writes by slot: it keeps them, and leaves out the bank
    # addresses it never reads (so hypercube(3)'s programs fit three iCE40 block RAMs a node)
    for trace in (True, False):
        single = {f for f, _ in RegNode(3, 8, 8, 8, store="single", trace=trace).kept_fields}
        assert "txslot0" in single and "txbank2" in single and "txaddr0" not in single
    assert sum(w for _, w in RegNode(3, 8, 8, 8, store="single").kept_fields) <= 48


def test_fresh_sends_mark_exactly_the_words_sent_on_the_cycle_after_they_arrive():
    # path(4) gossip: a word arriving in cycle c and sent on in c + 1 is fresh;
    # own items and words held longer are not
    p = compile_network(path_gossip(4, 1))
    fresh = fresh_sends(p.tx, p.rx, p.initial, p.links)
    assert np.array_equal(fresh, p.tx_new)
    for c in range(p.cycles):
        for q in range(p.ports):
            x, v = int(p.tx[c, q]), p.node_of(q)
            arrived = [c2 for c2 in range(p.cycles) for q2 in range(p.offsets[v],
                       p.offsets[v + 1]) if int(p.rx[c2, q2]) == x]
            want = x >= 0 and not p.initial[v, x] and bool(arrived) and min(arrived) == c - 1
            assert bool(fresh[c, q]) == want, (c, q)
    assert fresh.any() and not fresh[0].any()


def test_a_word_arriving_twice_is_fresh_only_after_its_first_arrival():
    # cycle(4) gossip: every node hears some items from both sides
    p = compile_network(cycle_gossip(4, 1))
    assert np.array_equal(p.tx_new, fresh_sends(p.tx, p.rx, p.initial, p.links))
    for v in range(p.n):
        first = {}
        for c in range(p.cycles):
            for q in range(p.offsets[v], p.offsets[v + 1]):
                if p.rx[c, q] >= 0:
                    first.setdefault(int(p.rx[c, q]), c)
        for c in range(p.cycles):
            for q in range(p.offsets[v], p.offsets[v + 1]):
                x = int(p.tx[c, q])
                assert bool(p.tx_new[c, q]) == (x >= 0 and first.get(x) == c - 1
                                                and not p.initial[v, x])


def test_bad_node_parameters_are_refused():
    with pytest.raises(ValueError, match="node must be one of wire, reg, not 'fast'"):
        NetworkFabric(HC3, node="fast")
    with pytest.raises(ValueError, match="lean build .* reg node only"):
        network_size(HC3, trace=False)
    with pytest.raises(TypeError, match="trace must be a bool"):
        RegNode(3, 8, 8, 8, trace=1)


def test_the_command_line_takes_node_for_the_network_fabric_only(capsys):
    from pipegossip.cli import main
    assert main(["sim", "cosim", "--node", "reg", "--schedule", "x.json"]) == 2
    assert "--node applies only to --fabric network" in capsys.readouterr().err
    assert main(["hw", "fpga", "--fabric", "network", "--topology", "hypercube", "--k", "3",
                 "--no-trace", "-o", "out/never"]) == 2
    assert "needs --node reg" in capsys.readouterr().err
