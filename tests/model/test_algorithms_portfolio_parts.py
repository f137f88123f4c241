"""The portfolio's lower bound against its definition (fast, for `dev.py mutate`)."""

from pipegossip.model.algorithms.portfolio import lower_bound
from pipegossip.model.schedules.topologies import topology


def test_lower_bound_by_definition():
    # path of 8: node 0's item must travel 7 hops (more than ceil(log2 8) = 3)
    assert lower_bound(topology("path", n=8)) == 7
    # broadcast from the middle of a path of 9: 4 hops either way, ceil(log2 9) = 4
    assert lower_bound(topology("path", n=9), "broadcast", 4) == 4
    assert lower_bound(topology("path", n=9), "broadcast", 0) == 8
    # odd n: gossip needs one round more than ceil(log2 n) (one node is idle each round)
    assert lower_bound(topology("complete", n=7)) == 3 + 1
    assert lower_bound(topology("complete", n=7), "broadcast", 0) == 3
    assert lower_bound(topology("hypercube", k=4)) == 4
