"""The comparison table and the generate-and-validate benchmark of schedules."""

from __future__ import annotations

import math
import time
import tracemalloc
from collections.abc import Callable

from ..model.config import RunConfig
from ..model.schedules.bounds import round_bound
from ..model.schedules.compile_run import schedule_of_config
from ..model.schedules.ir import Schedule
from ..model.schedules.validate import validate

__all__ = ["TABLE_ALGORITHMS", "NETWORK_ROWS_MAX_N", "network_cases", "comparison_rows", "bench_case", "estimate_bytes", "default_sizes",
           "BENCH_SIZES", "BENCH_LIMIT"]


def _algorithms() -> dict[str, Callable[[int], Schedule]]:
    from ..model.algorithms.limits import cyclic_shift, one_factor, recursive_doubling
    return {
        "pipelined": lambda n: schedule_of_config(RunConfig.family(n, "pipelined")),
        "identity+alg2": lambda n: schedule_of_config(
            RunConfig.family(n, "identity", receive="any", substitute=True)),
        "one-factor": one_factor,
        "cyclic-shift": cyclic_shift,
        "recursive-doubling": recursive_doubling,
    }


#: Rows of the table, in order: seed-000 runs first, then the generators.
TABLE_ALGORITHMS = ("pipelined", "identity+alg2", "one-factor", "cyclic-shift",
                    "recursive-doubling")


#: The network generators' rows (all-port, allreduce, reduce) stop here:
#: the all-port greedy's work grows as n^2 times its rounds.
NETWORK_ROWS_MAX_N = 256


def network_cases(n: int) -> list[tuple[str, Callable[[], Schedule]]]:
    """The network generators' rows for ``n``, each with its all-port gossip (hypercube,
    cycle, torus), allreduce and reduce to node 0: hypercube (n = 2^k), cycle (n >= 3),
    path, the squarest torus ``a x b`` with ``3 <= a <= b`` and the squarest mesh with
    ``2 <= a <= b``."""
    from ..model.algorithms.allport import allport_gossip
    from ..model.algorithms.reduce import allreduce_schedule, reduce_schedule
    from ..model.schedules.topologies import topology
    if n > NETWORK_ROWS_MAX_N:
        return []
    graphs = []

    def squarest(low: int) -> int | None:
        return max((d for d in range(low, math.isqrt(n) + 1) if n % d == 0), default=None)

    if n & (n - 1) == 0 and n >= 4:
        graphs.append(("hypercube", topology("hypercube", k=n.bit_length() - 1), True))
    if n >= 3:
        graphs.append(("cycle", topology("cycle", n=n), True))
    if n >= 2:
        graphs.append(("path", topology("path", n=n), False))
    a = squarest(3)
    if a is not None:
        graphs.append((f"torus {a}x{n // a}", topology("torus", a=a, b=n // a), True))
    a = squarest(2)
    if a is not None:
        graphs.append((f"mesh {a}x{n // a}", topology("mesh", a=a, b=n // a), False))
    out = []
    for label, t, allport in graphs:
        if allport:
            out.append((f"all-port {label}", lambda t=t: allport_gossip(t)))
        out.append((f"allreduce {label}", lambda t=t: allreduce_schedule(t)))
        out.append((f"reduce {label}", lambda t=t: reduce_schedule(t, 0)))
    return out


def comparison_rows(sizes: list[int]) -> list[dict]:
    """One row per (n, algorithm): model, p, R, bound, messages, efficiency.

    The gossip generators on the complete graph first, then the network
    generators of :func:`network_cases`, each beside its largest R bound.
    """
    algs = _algorithms()
    rows = []
    for n in sizes:
        cases = [(name, lambda name=name: algs[name](n)) for name in TABLE_ALGORITHMS]
        for name, make in cases + network_cases(n):
            s = make()
            v = validate(s)
            if not v.valid:  # a generator bug, never user input
                raise AssertionError(f"{name} n={n}: {v.error}")
            b = round_bound(s, v.items_per_node)
            rows.append({"n": n, "algorithm": name, "model": s.model,
                         "p": s.p, "R": v.R, "bound": int(b.value) if b else None,
                         "messages": v.messages, "calls": v.calls,
                         "efficiency": round(v.efficiency, 4)})
    return rows


#: Sizes the benchmark tries, and the memory it may use.
BENCH_SIZES = (256, 1024, 4096)
BENCH_LIMIT = 4 << 30


def estimate_bytes(n: int) -> int:
    """Peak bytes to generate and validate an n-node p=1 gossip schedule.

    Measured (``schedule-bench``, n = 4096): generating and validating each
    peak at about 72 bytes per message (the schedule's int64 columns plus one
    pass's temporaries); 80 bytes per message plus the n x n knowledge bits
    leaves a margin.
    """
    return 80 * n * (n - 1) + n * n // 8


def _timed(gen: Callable[[int], Schedule], n: int) -> tuple[float, float, object]:
    t0 = time.perf_counter()
    s = gen(n)
    t1 = time.perf_counter()
    v = validate(s)
    return t1 - t0, time.perf_counter() - t1, v


def bench_case(name: str, n: int) -> dict:
    """Time generating, then validating, one schedule; then trace their peak memory.

    Timing and tracing are separate passes: tracemalloc slows allocation-heavy
    code, so traced times would overstate the cost.
    """
    from ..model.algorithms.limits import cyclic_shift, one_factor
    gen = {"one-factor": one_factor, "cyclic-shift": cyclic_shift}[name]
    gen_s, val_s, v = _timed(gen, n)
    del v
    tracemalloc.start()
    try:
        s = gen(n)
        _, gen_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        v = validate(s)
        _, val_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {"algorithm": name, "n": n, "messages": v.messages, "R": v.R, "valid": v.valid,
            "generate_s": round(gen_s, 3), "validate_s": round(val_s, 3),
            "generate_peak_mib": round(gen_peak / 2**20, 1),
            "validate_peak_mib": round(val_peak / 2**20, 1)}


def default_sizes(min_n: int, max_n: int) -> list[int]:
    """Powers of two from ``min_n`` to ``max_n``."""
    lo = max(2, min_n)
    return [1 << k for k in range(math.ceil(math.log2(lo)), int(math.log2(max_n)) + 1)
            if lo <= 1 << k <= max_n]
