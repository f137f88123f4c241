"""The network fast top's checker against planted fabric faults, one output at a time.

A stand-in fabric (:class:`Planted`: the real
:class:`~pipegossip.hw.network.fabric.NetworkFabric` inside, every port passed
through) flips one output in one run: a trace lane, a word, an accumulator,
``busy``/``done``/``cycle``/``length``, or a read-back value of one
(node, slot). Every run of the fast top (sim/fast/network.py, Amaranth's
simulator, one simulation for all of them) must name the trace judge's
first mismatch of the same faulty fabric (sim/judge/network.py, one trace
simulation), and the flip must show as the check it aims at; flips of
values no check reads (a silent port's slot or word) must pass in both.
Seconds per run of this file, so ``dev.py mutate sim/fast/network.py`` runs
it first.
"""

from __future__ import annotations

import pytest
from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring

from pipegossip.hw.network.fabric import LATENCY, NetworkFabric, network_size
from pipegossip.hw.network.load import item_words
from pipegossip.model.algorithms.path_cycle import cycle_gossip
from pipegossip.model.algorithms.reduce import allreduce_schedule, reduce_schedule
from pipegossip.model.schedules.network_program import ACC, compile_network
from pipegossip.model.schedules.program import NONE
from pipegossip.model.schedules.topologies import topology
from pipegossip.sim.fast import network as fast_hw
from pipegossip.sim.judge.network import expected_lanes, judge_network, mismatch_place
from pipegossip.sim.network import run as trace_run
from pipegossip.sim.network.fast import fast_place, run_fast_amaranth, span_of
from pipegossip.sim.network.run import network_job

SEED = 3
CYCLE4 = topology("cycle", n=4)
#: A plant's check: PASS (both modes must see no mismatch), ANY (a mismatch, whichever).
PASS, ANY = "pass", "any"


class Planted(wiring.Component):
    """``fabric`` with, in its ``i``-th run (counted by ``start``), ``plants[i]`` applied.

    A plant is ``(path, where, mask)``: the output at ``path`` (as the
    signature flattens it) is XORed with ``mask`` in clock cycle ``where``
    of the run (0: the start cycle), or, for ``where = (node, slot)``, while
    the read-back address (registered, as the fabric's read latency 1) is
    that node and slot (slot None: any of the node's). A list of plants
    applies them all in that run (a wrong word on both ends of a link).
    None: a clean run.
    """

    def __init__(self, fabric: NetworkFabric, plants: list):
        self.fabric, self.plants = fabric, plants
        super().__init__(fabric.signature)

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.fabric = self.fabric
        t, runs = Signal(32), Signal(16)
        rn, rs = Signal.like(self.read.node), Signal.like(self.read.slot)
        with m.If(self.start):
            m.d.sync += [t.eq(1), runs.eq(runs + 1)]
        with m.Else():
            m.d.sync += t.eq(t + 1)
        m.d.sync += [rn.eq(self.read.node), rs.eq(self.read.slot)]
        now, run = Mux(self.start, 0, t), Mux(self.start, runs, runs - 1)
        ours = self.signature.flatten(self)
        theirs = self.fabric.signature.flatten(self.fabric)
        for (path, member, value), (_, _, inner) in zip(ours, theirs):
            if member.flow == wiring.In:
                m.d.comb += inner.eq(value)
                continue
            flip = 0
            for i, plant in ((i, x) for i, ps in enumerate(self.plants)
                             for x in (ps if isinstance(ps, list) else [ps])):
                if plant is None or plant[0] != path:
                    continue
                _, where, mask = plant
                if isinstance(where, int):
                    at = now == where
                else:
                    at = (rn == where[0]) & (rs == where[1] if where[1] is not None else 1)
                flip = flip | Mux((run == i) & at, mask, 0)
            m.d.comb += value.eq(inner ^ flip)
        return m


def _plants(p, g, r) -> dict:
    """name -> (program, plant, the check it must show as: PASS none, ANY any but none)."""
    lanes = {q: expected_lanes(q, item_words(q, SEED), span_of(q), LATENCY) for q in (p, g, r)}
    L = p.cycles
    out = {}

    def first(q, cond):
        """The first (cycle, port) of ``q``'s expected lanes where cond(lanes, k, port)."""
        w = lanes[q]
        return next((k, x) for k in range(span_of(q)) for x in range(q.ports)
                    if cond(w, k, x))

    k, x = first(p, lambda w, k, x: w["tx"][k, x] == ACC)
    out["tx-valid-off"] = (p, (("tx", x, "valid"), k, 1), "trace")
    out["tx-acc-off"] = (p, (("tx", x, "acc"), k, 1), "trace")
    out["tx-slot-of-acc"] = (p, (("tx", x, "slot"), k, 1), PASS)  # the slot of an acc send
    out["tx-word"] = (p, (("tx", x, "word"), k, 0x10), "tx_word")
    k, x = first(g, lambda w, k, x: w["tx"][k, x] >= 0)
    out["tx-slot"] = (g, (("tx", x, "slot"), k, 1), "trace")
    out["gossip-tx-word"] = (g, (("tx", x, "word"), k, 0x4), ANY)  # whichever check comes first
    k, x = first(g, lambda w, k, x: w["tx"][k, x] == NONE and w["rx"][k, x] == NONE
                 and k > LATENCY)
    out["silent-slot"] = (g, (("tx", x, "slot"), k, 1), PASS)
    out["silent-word"] = (g, (("tx", x, "word"), k, 0x8), PASS)
    out["silent-rx-slot"] = (g, (("rx", x, "slot"), k, 1), PASS)
    out["silent-tx-on"] = (g, (("tx", x, "valid"), k, 1), "trace")
    out["silent-rx-on"] = (g, (("rx", x, "valid"), k, 1), "trace")
    out["silent-comb-on"] = (g, (("rx", x, "comb"), k, 1), "trace")
    k, x = first(g, lambda w, k, x: w["rx"][k, x] >= 0)
    out["rx-slot"] = (g, (("rx", x, "slot"), k, 1), "trace")
    out["rx-word"] = (g, (("rx", x, "word"), k, 0x20), "rx_word")
    out["rx-valid-off"] = (g, (("rx", x, "valid"), k, 1), "trace")
    k, x = first(p, lambda w, k, x: bool(w["comb"][k, x]))
    out["comb-off"] = (p, (("rx", x, "comb"), k, 1), "trace")
    out["comb-word"] = (p, (("rx", x, "word"), k, 0x2), "rx_word")
    # a receive that combines and does not store (the reduce's): its word is compared in its
    # own cycle, not first by the accumulator it goes into one cycle later
    k, x = first(r, lambda w, k, x: bool(w["comb"][k, x]) and w["rx"][k, x] == NONE)
    out["comb-only-word"] = (r, (("rx", x, "word"), k, 0x2), "rx_word")
    # the same wrong word on both ends of the link, the sender a higher node: no link
    # mismatch, and the receiver's word comes before the sender's (the judge's node order)
    q = r.peer(x)
    assert r.node_of(q) > r.node_of(x)
    out["comb-only-wire"] = (r, [(("tx", q, "word"), k, 0x2), (("rx", x, "word"), k, 0x2)],
                             "rx_word")
    # the highest port first sending: a lower node's check may come first, as the judge orders
    k, x = max(((k, x) for k in range(span_of(g)) for x in range(g.ports)
                if lanes[g]["tx"][k, x] >= 0), key=lambda kx: (kx[1], -kx[0]))
    out["last-port-word"] = (g, (("tx", x, "word"), k, 0x1), ANY)
    out["last-port-valid"] = (g, (("tx", x, "valid"), k, 1), "trace")
    for v in (0, p.n - 1):
        out[f"acc-{v}"] = (p, (("acc", v), L + LATENCY, 0x40), "acc")
    out["acc-start"] = (p, (("acc", 1), 0, 0x1), "acc")
    for kk in (1, L + LATENCY, L + LATENCY + 1):
        out[f"busy-{kk}"] = (p, (("busy",), kk, 1), "busy")
        out[f"cycle-{kk}"] = (p, (("cycle",), kk, 1), "cycle")
    out["busy-start"] = (p, (("busy",), 0, 1), PASS)  # the start cycle's busy is not checked
    out["cycle-start"] = (p, (("cycle",), 0, 1), PASS)
    out["done-1"] = (p, (("done",), 1, 1), "done")
    out["done-late"] = (p, (("done",), L + LATENCY + 2, 1), "done")
    out["length"] = (p, (("length",), 0, 1), "cycle")
    out["length-later"] = (p, (("length",), 1, 1), PASS)  # read in the start cycle only
    for q, tag in ((p, "acc"), (g, "gossip")):
        v, x = next((v, x) for v in range(q.n - 1, -1, -1) for x in range(q.slots)
                    if q.final[v, x])
        out[f"{tag}-final-held"] = (q, (("read", "held"), (v, x), 1), "final_held")
        out[f"{tag}-final-word"] = (q, (("read", "word"), (v, x), 0x80), "final_word")
        e = next(x for x in range(q.slots) if not q.final[0, x]) if tag == "acc" else None
        if e is not None:
            out["empty-final-word"] = (q, (("read", "word"), (0, e), 0x80), PASS)
            out["empty-final-held"] = (q, (("read", "held"), (0, e), 1), "final_held")
    for v in (0, p.n - 1):
        out[f"final-acc-{v}"] = (p, (("read", "acc"), (v, None), 0x4), "final_acc")
    return out


#: cycle(4)'s allreduce (sends and combines the accumulator) and gossip (stores slots);
#: 6 slots, so every node has empty ones
ALLREDUCE = compile_network(allreduce_schedule(CYCLE4), depth=8, slots=6)
GOSSIP = compile_network(cycle_gossip(4, 1), depth=8, slots=6)
#: the reduce to node 0: its receives combine the accumulator sent and store nothing
REDUCE = compile_network(reduce_schedule(CYCLE4, 0), depth=8, slots=6)
TABLE = _plants(ALLREDUCE, GOSSIP, REDUCE)


@pytest.fixture(scope="module")
def runs(monkeypatch_module):
    p, table = ALLREDUCE, TABLE
    names = ["clean", *table]
    programs = [p] + [q for q, _, _ in table.values()]
    plants = [None] + [plant for _, plant, _ in table.values()]
    jobs = [network_job(nm, q, SEED) for nm, q in zip(names, programs)]

    def planted(*args, **kwargs):
        return Planted(NetworkFabric(*args, **kwargs), plants)

    monkeypatch_module.setattr(fast_hw, "NetworkFabric", planted)
    monkeypatch_module.setattr(trace_run, "NetworkFabric", planted)
    size = network_size(p.topology, p.width, p.depth, p.slots)
    fast = run_fast_amaranth(programs, jobs, size)
    trace = trace_run.run_network_amaranth(programs, seed=SEED, jobs=jobs)
    return {nm: (q, s, judge_network(q, r), want)
            for nm, q, s, r, want in zip(names, programs, fast, trace,
                                         [None, *(w for _, _, w in table.values())])}


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_the_clean_run_passes_in_both(runs):
    q, s, verdict, _ = runs["clean"]
    assert verdict.match and s["finished"] and fast_place(s) is None


def test_the_plants_reach_every_check_but_the_completeness(runs):
    shown = {mismatch_place(v.first_mismatch)[0] for _, _, v, _ in runs.values() if not v.match}
    assert shown >= set(fast_hw.CHECKS) - {"link", "complete", "timeout", "record"}


@pytest.mark.parametrize("name", list(TABLE))
def test_each_planted_fault_is_the_judges_first_mismatch(runs, name):
    q, summary, verdict, want = runs[name]
    assert summary["finished"] == 1
    first = None if verdict.match else mismatch_place(verdict.first_mismatch)
    assert fast_place(summary) == first, verdict.mismatches[:3]
    if want == PASS:
        assert first is None, first
    else:
        assert first is not None and want in (ANY, first[0]), first
