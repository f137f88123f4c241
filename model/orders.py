"""Broadcast-order families: the composer's input (docs/reference.md "Programs and the composer").

Every family returns a read-only ``(N, N-1)`` int32 array; row ``i`` is
processor i's broadcast order ``P_i``, a permutation of the N-1 other ids.
Families are built with NumPy so N = 4096 costs milliseconds, not seconds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .inputs import read_input_json
from .errors import ConfigError, FormatError

__all__ = [
    "FAMILIES",
    "RANDOM_GENERATOR",
    "identity_orders",
    "pipelined_orders",
    "random_orders",
    "validate_orders",
    "load_orders",
    "make_orders",
]

FAMILIES = ("identity", "pipelined", "random")

#: Named in every run-table header so a random configuration is reproducible.
RANDOM_GENERATOR = "numpy.PCG64"

Orders = np.ndarray


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.int32)
    a.flags.writeable = False
    return a


def check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ConfigError(f"N must be an integer, got {n!r}")
    if n < 2:
        raise ConfigError(f"N must be at least 2, got {n}")
    return int(n)


def identity_orders(n: int) -> Orders:
    """``P_i = 0, 1, ..., N-1`` without i."""
    n = check_n(n)
    # Row i is 0..N-2 with every entry >= i bumped by one.
    base = np.arange(n - 1, dtype=np.int32)
    return _frozen(base[None, :] + (base[None, :] >= np.arange(n)[:, None]))


def pipelined_orders(n: int) -> Orders:
    """``P_i = i+1, ..., N-1, 0, ..., i-1``: i cyclic left shifts."""
    n = check_n(n)
    return _frozen((np.arange(n)[:, None] + np.arange(1, n)[None, :]) % n)


def random_orders(n: int, seed: int) -> Orders:
    """One pseudo-random permutation per processor.

    The generator is NumPy's PCG64 seeded with ``seed``; processor i's order
    is the i-th draw, so the same (N, seed) always gives the same orders.
    """
    n = check_n(n)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    identity = identity_orders(n)
    return _frozen(np.stack([rng.permutation(identity[i]) for i in range(n)]))


def validate_orders(n: int, orders: Sequence[Sequence[object]] | np.ndarray) -> Orders:
    """Check an explicit order list (docs/reference.md) and return it as an array.

    Raises
    ------
    ConfigError
        Naming the processor and the bad value.
    """
    n = check_n(n)
    if isinstance(orders, np.ndarray):
        if orders.shape == (n, n - 1) and np.issubdtype(orders.dtype, np.integer):
            rows = np.sort(orders, axis=1)
            if np.array_equal(rows, identity_orders(n)):
                return _frozen(orders)
        orders = orders.tolist()
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence):
        raise ConfigError(f"orders must be a list of {n} lists, got {type(orders).__name__}")
    if len(orders) != n:
        raise ConfigError(f"orders must hold {n} lists (one per processor), got {len(orders)}")
    result = []
    for i, order in enumerate(orders):
        if isinstance(order, (str, bytes)) or not isinstance(order, Sequence):
            raise ConfigError(f"processor {i}: order must be a list, got {order!r}")
        seen: set[int] = set()
        for entry in order:
            if isinstance(entry, bool) or not isinstance(entry, (int, np.integer)):
                raise ConfigError(f"processor {i}: order entry {entry!r} is not an integer")
            j = int(entry)
            if j == i:
                raise ConfigError(f"processor {i}: order names its own processor ({j})")
            if not 0 <= j < n:
                raise ConfigError(f"processor {i}: order entry {j} is outside 0..{n - 1}")
            if j in seen:
                raise ConfigError(f"processor {i}: order repeats id {j}")
            seen.add(j)
        missing = sorted(set(range(n)) - {i} - seen)
        if missing:
            raise ConfigError(f"processor {i}: order misses id {missing[0]}"
                              + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        result.append([int(j) for j in order])
    return _frozen(np.array(result, dtype=np.int32).reshape(n, n - 1))


def load_orders(path: str | os.PathLike) -> list[list[object]]:
    """Read a JSON file holding a list of N lists (processor i's order).

    The file goes through :func:`pipegossip.model.inputs.read_input_json`, so a
    FIFO, a binary file or deeply nested JSON is refused in one line.
    """
    data = read_input_json(path, "order file")
    if not isinstance(data, list):
        raise FormatError(f"order file {os.fspath(path)!r} must hold a JSON list of lists")
    return data


def make_orders(n: int, family: str, seed: int | None = None) -> Orders:
    """Orders for a named family (``identity``, ``pipelined``, ``random``)."""
    if family == "identity":
        return identity_orders(n)
    if family == "pipelined":
        return pipelined_orders(n)
    if family == "random":
        if seed is None:
            raise ConfigError("the random family needs a seed")
        return random_orders(n, seed)
    raise ConfigError(f"unknown order family {family!r} (expected one of {', '.join(FAMILIES)} "
                      "or a JSON file)")
