"""Bit-level building blocks shared by the fabric's components.

Widths of the pinned ports, a Sklansky parallel prefix (log-depth instead
of a ripple chain, so N-wide "lowest set bit" and "how many lower senders
fired" stay shallow), and one-hot helpers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from amaranth.hdl import Cat, Const, Module, Signal, Value

__all__ = [
    "peer_width", "session_width", "used_width", "counter_width",
    "prefix_inclusive", "prefix_exclusive", "first_set", "one_hot_to_binary",
    "any_of", "or_tree", "count_ones", "thermometer_add",
]

def peer_width(n: int) -> int:
    """Bits of a processor id: ``max(1, ceil(log2 N))``."""
    return max(1, (n - 1).bit_length())


def session_width(sessions: int) -> int:
    """Bits of a session number 0..sessions-1 (at least 1)."""
    return max(1, (sessions - 1).bit_length())


def used_width(n: int) -> int:
    """Bits of the used-slot count 0..N: ``ceil(log2(N+1))``."""
    return n.bit_length()


def counter_width(n: int, sessions: int) -> int:
    """Bits of a step counter that can hold any run's length L.

    Every step of a valid run fires at least one of its
    ``sessions * N * (N-1)`` transfers (docs/reference.md "Measures"), so that count
    bounds L without running the model.
    """
    return (sessions * n * (n - 1)).bit_length()


def prefix_inclusive(m: Module, items: Sequence[Value], op: Callable[[Value, Value], Value],
                     name: str = "prefix") -> list[Value]:
    """``out[i] = op(items[0], ..., items[i])`` as a Sklansky prefix network.

    Depth ``ceil(log2 len(items))`` applications of ``op`` (which must be
    associative); ``len(items)/2 * log2 len(items)`` applications in all.
    Every application drives a signal of its own (added to ``m`` as
    combinational logic): Amaranth expressions are trees, so reusing an
    unnamed result would copy its whole cone at every use.
    """
    counter = itertools.count()

    def keep(value: Value) -> Value:
        value = Value.cast(value)
        sig = Signal(value.shape(), name=f"{name}_{next(counter)}")
        m.d.comb += sig.eq(value)
        return sig

    def build(part: list[Value]) -> list[Value]:
        if len(part) <= 1:
            return part
        half = (len(part) + 1) // 2
        left = build(part[:half])
        right = build(part[half:])
        return left + [keep(op(left[-1], r)) for r in right]

    return build(list(items))


def prefix_exclusive(m: Module, items: Sequence[Value], op: Callable[[Value, Value], Value],
                     zero: Value, name: str = "prefix") -> list[Value]:
    """``out[i] = op(items[0], ..., items[i-1])``; ``out[0] = zero``."""
    items = list(items)
    if not items:
        return []
    return [zero] + prefix_inclusive(m, items[:-1], op, name)


def any_of(bits: Sequence[Value]) -> Value:
    """OR of 1-bit values (constant 0 for none)."""
    bits = list(bits)
    return Cat(*bits).any() if bits else Const(0, 1)


def or_tree(values: Sequence[Value]) -> Value:
    """Bitwise OR of equally wide values as a balanced tree (depth log2 N)."""
    values = list(values)
    if not values:
        raise ValueError("or_tree needs at least one value")
    while len(values) > 1:
        values = [values[k] | values[k + 1] if k + 1 < len(values) else values[k]
                  for k in range(0, len(values), 2)]
    return values[0]


def count_ones(bits: Sequence[Value]) -> Value:
    """How many of the 1-bit ``bits`` are set: a balanced tree of adds.

    Depth ``ceil(log2 len(bits))``, result ``ceil(log2 len(bits)) + 1`` bits.
    Python's ``sum`` builds a chain N adds deep, and Amaranth's Verilog
    back-end walks an expression recursively (three Python frames per
    operator), so that chain hit Python's recursion limit at N = 362.
    Both operands of every add have one width: Verilator's WIDTH lint flags
    an add whose operands differ by more than a single bit, and Amaranth
    drops constant zero padding, so a level's unpaired value is widened by
    an add of a 1-bit zero (which the lint accepts) rather than by ``Cat``.
    """
    values = [Value.cast(b) for b in bits]
    if not values:
        return Const(0, 1)
    while len(values) > 1:
        paired = [values[k] + values[k + 1] for k in range(0, len(values) - 1, 2)]
        if len(values) % 2:
            paired.append(values[-1] + Const(0, 1))
        values = paired
    return values[0]


def first_set(m: Module, bits: Sequence[Value], name: str = "first") -> list[Value]:
    """The lowest-index set bit of ``bits`` as a one-hot list (all 0 if none).

    Built on a parallel prefix OR (logic added to ``m``), so its depth grows
    with log N.
    """
    bits = list(bits)
    below = prefix_exclusive(m, bits, lambda a, b: a | b, Const(0, 1), name)
    return [b & ~lo for b, lo in zip(bits, below)]


def one_hot_to_binary(bits: Sequence[Value], width: int,
                      labels: Sequence[int] | None = None) -> Value:
    """Encode a one-hot (or all-zero) list: the label of the set bit, else 0.

    ``labels[k]`` is the number bit k stands for (default k). Each output bit
    is an OR of the inputs whose label has that bit set.
    """
    bits = list(bits)
    labels = list(range(len(bits))) if labels is None else list(labels)
    out = [any_of([b for b, lab in zip(bits, labels) if (lab >> w) & 1]) for w in range(width)]
    return Cat(*out)


def thermometer_add(limit: int) -> Callable[[Value, Value], Value]:
    """Saturating sum of two thermometer codes of ``limit`` bits.

    Bit t of a code means "at least t+1"; the result is ``min(a + b, limit)``
    in the same code. Pure AND-OR logic (two levels per bit), with no adder
    or comparator, so it maps to shallow LUTs and the emitted Verilog has no
    mixed-width arithmetic.
    """
    def op(a: Value, b: Value) -> Value:
        def at_least(code: Value, x: int) -> Value:
            return Const(1, 1) if x == 0 else code[x - 1]
        out = []
        for t in range(1, limit + 1):
            out.append(any_of([at_least(a, x) & at_least(b, t - x) for x in range(t + 1)]))
        return Cat(*out)

    return op
