"""Bounds by model: only bounds that hold for a schedule's model, topology and
primitive are listed, and every listed bound holds for the generators."""

import pytest

from pipegossip.model.algorithms.allport import allport_gossip
from pipegossip.model.algorithms.limits import cyclic_shift, one_factor, recursive_doubling
from pipegossip.model.algorithms.path_cycle import GENERATORS as PATH_CYCLE
from pipegossip.model.algorithms.reduce import allreduce_schedule, reduce_schedule
from pipegossip.model.schedules.bounds import bounds_for, round_bound
from pipegossip.model.schedules.ir import Message, Schedule, complete
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import check


def _metric(v, name):
    return {"R": v.R, "S": v.S, "calls": v.calls, "messages": v.messages}[name]


CASES = [lambda: allport_gossip(topology("cycle", n=8)),
         lambda: allport_gossip(topology("path", n=6)),
         lambda: allport_gossip(topology("hypercube", k=4)),
         lambda: allport_gossip(topology("torus", a=3, b=4)),
         lambda: reduce_schedule(topology("mesh", a=3, b=4), 5),
         lambda: reduce_schedule(topology("hypercube", k=4), 9),
         lambda: reduce_schedule(complete(6), 2),
         lambda: allreduce_schedule(topology("hypercube", k=4)),
         lambda: allreduce_schedule(topology("torus", a=4, b=5)),
         lambda: allreduce_schedule(topology("star", k=4)),
         # the dimension-wise allreduces (parts of accumulators forwarded) and tree reduces
         lambda: allreduce_schedule(topology("cycle", n=8)),
         lambda: allreduce_schedule(topology("cycle", n=9)),
         lambda: allreduce_schedule(topology("path", n=6)),
         lambda: allreduce_schedule(topology("mesh", a=3, b=4)),
         lambda: reduce_schedule(topology("cycle", n=8), 3),
         lambda: reduce_schedule(topology("path", n=6), 0),
         lambda: reduce_schedule(topology("torus", a=4, b=4), 5),
         lambda: one_factor(8), lambda: cyclic_shift(8), lambda: recursive_doubling(8),
         lambda: PATH_CYCLE["cycle-gossip"](8, 2), lambda: PATH_CYCLE["path-gossip"](7, 1)]


@pytest.mark.parametrize("make", CASES)
def test_every_listed_bound_holds(make):
    s = make()
    v = check(s)
    bounds = bounds_for(s, v.items_per_node)
    assert bounds
    for b in bounds:
        got = _metric(v, b.metric)
        assert (got >= b.value) if b.kind == "lower" else (got <= b.value), (str(b), got)


def test_allport_ring_gets_no_one_receive_bound():
    s = allport_gossip(topology("cycle", n=8))
    v = check(s)
    assert (v.R, v.S) == (4, 4)
    text = [str(b) for b in bounds_for(s)]
    # the one-receive linear-cost bound S >= n-1 = 7 does not hold for Fstar
    assert not any(t.startswith("S >= 7") for t in text)
    assert any(t.startswith("S >= 4 (linear cost, all-port") for t in text)
    assert round_bound(s).value == 4 and "all-port (Fstar)" in round_bound(s).source


def test_single_receive_bound_only_for_single_receive_models():
    star = Schedule.from_rounds([[Message(v, (0,), (v,)) for v in range(1, 6)]],
                                topology=complete(6), model="Fstar", p=1, primitive="reduce",
                                root=0)
    assert check(star).R == 1
    assert [str(b).split(" (")[0] for b in bounds_for(star)] == ["R >= 1"]
    f1 = reduce_schedule(complete(6), 0)
    assert round_bound(f1).value == 3 and "ceil(log2 n)" in round_bound(f1).source


def test_allreduce_and_allport_bounds_values():
    t = topology("hypercube", k=6)
    assert round_bound(allreduce_schedule(t)).value == 6
    assert round_bound(allreduce_schedule(topology("torus", a=4, b=5))).value == 4
    s = allport_gossip(topology("torus", a=4, b=4))
    assert round_bound(s).value == 4  # max(diameter 4, ceil(15/4) = 4)
    wide = Schedule(topology=s.topology, model="Fstar", p=None, round_ptr=s.round_ptr,
                    src=s.src, dst_ptr=s.dst_ptr, dst=s.dst, item_ptr=s.item_ptr,
                    items=s.items)
    assert round_bound(wide).value == 4 and "unlimited p: R >= diameter" in round_bound(wide).source
