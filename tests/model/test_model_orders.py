import numpy as np
import pytest

from pipegossip.model import ConfigError, RunConfig, identity_orders, pipelined_orders, random_orders
from pipegossip.model.orders import validate_orders


def test_identity_and_pipelined_orders_match_spec():
    assert identity_orders(4).tolist() == [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]
    assert pipelined_orders(4).tolist() == [[1, 2, 3], [2, 3, 0], [3, 0, 1], [0, 1, 2]]


@pytest.mark.parametrize("n", [2, 3, 7, 64])
def test_every_family_gives_permutations_of_the_others(n):
    for orders in (identity_orders(n), pipelined_orders(n), random_orders(n, 3)):
        assert orders.shape == (n, n - 1)
        for i, row in enumerate(orders.tolist()):
            assert sorted(row) == [j for j in range(n) if j != i]


def test_random_orders_are_reproducible_and_seed_dependent():
    assert np.array_equal(random_orders(9, 5), random_orders(9, 5))
    assert not np.array_equal(random_orders(9, 5), random_orders(9, 6))
    # One permutation per processor (docs/reference.md), not one shared order.
    rows = random_orders(9, 5).tolist()
    relative = {tuple(j for j in r if j not in (0, 1, 2)) for r in rows[:3]}
    assert len(relative) > 1


def test_orders_are_read_only():
    with pytest.raises(ValueError):
        identity_orders(3)[0, 0] = 2


@pytest.mark.parametrize("orders, message", [
    ([[1, 1], [0, 2], [0, 1]], "processor 0: order repeats id 1"),
    ([[0, 2], [0, 2], [0, 1]], "processor 0: order names its own processor (0)"),
    ([[1, 2], [0, 2], [0]], "processor 2: order misses id 1"),
    ([[1, 3], [0, 2], [0, 1]], "processor 0: order entry 3 is outside 0..2"),
    ([[1, 2], [0, 2.5], [0, 1]], "processor 1: order entry 2.5 is not an integer"),
    ([[1, 2], [0, "2"], [0, 1]], "processor 1: order entry '2' is not an integer"),
    ([[1, 2], [0, 2]], "orders must hold 3 lists"),
    ([[1, 2], 5, [0, 1]], "processor 1: order must be a list"),
])
def test_bad_explicit_orders_name_processor_and_value(orders, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate_orders(3, orders)


@pytest.mark.parametrize("kwargs, message", [
    (dict(n=1, order="identity"), "N must be at least 2, got 1"),
    (dict(n=4, order="identity", sessions=0), "sessions must be at least 1, got 0"),
    (dict(n=4, order="identity", channels=0), "channels must be at least 1, got 0"),
    (dict(n=4, order="identity", channels=3), r"channels must be at most floor\(N/2\) = 2"),
    (dict(n=4, order="identity", receive="some"), "receive must be one of"),
    (dict(n=4, order="spiral"), "unknown order family 'spiral'"),
])
def test_bad_configurations_are_refused(kwargs, message):
    n, order = kwargs.pop("n"), kwargs.pop("order")
    with pytest.raises(ConfigError, match=message):
        RunConfig.family(n, order, **kwargs)


def test_config_equality_json_round_trip_and_slug():
    c = RunConfig.family(6, "random", 4, receive="any", substitute=True, sessions=2, channels=3)
    assert RunConfig.from_json(c.to_json()) == c
    assert hash(RunConfig.from_json(c.to_json())) == hash(c)
    assert c.slug == "n6-random-seed4-any-sub-k2-c3"
    e = RunConfig.explicit(c.orders.tolist())
    assert e.order_name == "explicit" and e != c and e.slug.startswith("n6-explicit-")
    assert "seed=4 rng=numpy.PCG64" in c.header()
