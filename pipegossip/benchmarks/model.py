"""Benchmarks of the golden model (``pipegossip bench``).

Each case runs in a fresh Python process so that its time and its peak
resident memory are its own. The targets are those of the model's issue,
on the project's 2-core reference machine:

* identity, N = 1024 (786,431 steps): utilisation string and metrics in
  <= 10 s and <= 1 GiB peak memory;
* pipelined, N = 4096: <= 10 s;
* the Table 8 sweep (identity + Algorithm 2 + ``any``, N = 2, 4, ..., 2048):
  <= 60 s in total.

``--baseline`` also times the literal per-step simulator
(:mod:`.reference`) on the same sweep, to say how much the engine gains.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass

from ..model.config import RunConfig
from ..model.engine import simulate
from ..model.reference import simulate_reference
from ..model.sweeps import TABLE8_N

__all__ = ["CASES", "BASELINE_CASES", "LARGE_CASES", "RATIOS", "BenchResult", "run_case",
           "measure"]


def _identity_1024() -> str:
    r = simulate(RunConfig.family(1024, "identity"))
    return r.summary()


def _pipelined_4096() -> str:
    r = simulate(RunConfig.family(4096, "pipelined"))
    return r.summary()


def _table8(engine) -> str:
    last = None
    for n in TABLE8_N:
        last = engine(RunConfig.family(n, "identity", receive="any", substitute=True))
    return f"{len(TABLE8_N)} runs, N=2..2048; last: {last.summary()}"


def _conjecture21(n: int) -> str:
    """The engine as Table 8 and Conjecture 21 call it (utilisation + metrics)."""
    r = simulate(RunConfig.family(n, "identity", receive="any", substitute=True))
    return r.summary()


def _conjecture21_reference(n: int) -> str:
    r = simulate_reference(RunConfig.family(n, "identity", receive="any", substitute=True))
    return r.summary()


def _conjecture21_metrics(n: int) -> str:
    """Metrics only at large N; says how the time and memory split."""
    t0 = time.perf_counter()
    config = RunConfig.family(n, "identity", receive="any", substitute=True)
    t1 = time.perf_counter()
    tracemalloc.start()
    r = simulate(config, deliveries=False)
    _, engine_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t2 = time.perf_counter()
    return (f"{r.summary()}; configuration {t1 - t0:.1f} s, simulate {t2 - t1:.1f} s "
            f"(its own peak {engine_peak / 2**20:.0f} MiB of NumPy/Python allocations)")


#: name -> (what, target seconds, target MiB or None, function)
CASES = {
    "identity-1024": ("identity N=1024, utilisation + metrics", 10.0, 1024.0, _identity_1024),
    "pipelined-4096": ("pipelined N=4096, utilisation + metrics", 10.0, None, _pipelined_4096),
    "table8": ("Table 8 sweep, identity + Alg. 2 + any, N=2..2048", 60.0, None,
               lambda: _table8(simulate)),
    "table8-baseline": ("same sweep, literal per-step simulator", None, None,
                        lambda: _table8(simulate_reference)),
    "conj21-512": ("identity + Alg. 2 + any N=512, engine", None, None,
                   lambda: _conjecture21(512)),
    "conj21-512-baseline": ("identity + Alg. 2 + any N=512, literal per-step simulator",
                            None, None, lambda: _conjecture21_reference(512)),
    "conj21-1024": ("identity + Alg. 2 + any N=1024, engine", None, None,
                    lambda: _conjecture21(1024)),
    "conj21-1024-baseline": ("identity + Alg. 2 + any N=1024, literal per-step simulator",
                             None, None, lambda: _conjecture21_reference(1024)),
    "conj21-4096": ("identity + Alg. 2 + any N=4096, metrics only", None, None,
                    lambda: _conjecture21_metrics(4096)),
    "conj21-16384": ("identity + Alg. 2 + any N=16384, metrics only", None, None,
                     lambda: _conjecture21_metrics(16384)),
}

#: Cases run only with ``--baseline`` (or named with ``--case``).
BASELINE_CASES = ("table8-baseline", "conj21-512-baseline", "conj21-1024-baseline")

#: Cases run only with ``--large`` (or named with ``--case``).
LARGE_CASES = ("conj21-16384",)

#: (engine case, baseline case) -> least speed-up asked for, or None. The
#: ratio is of whole-process wall times, as issue 18 measured it.
RATIOS = {
    ("table8", "table8-baseline"): None,
    ("conj21-512", "conj21-512-baseline"): None,
    ("conj21-1024", "conj21-1024-baseline"): 10.0,
}


@dataclass(frozen=True)
class BenchResult:
    """One case: ``seconds`` inside the child after its imports, ``process_seconds``
    the child's whole wall time (interpreter start and imports included) and
    ``process_cpu_seconds`` its user + system CPU time, the figure to trust on
    a machine shared with other work."""

    case: str
    seconds: float
    peak_mib: float
    detail: str
    process_seconds: float = 0.0
    process_cpu_seconds: float = 0.0


def run_case(name: str) -> None:
    """Child-process side: run one case and print its measurements as JSON."""
    start = time.perf_counter()
    detail = CASES[name][3]()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"case": name, "seconds": seconds, "peak_mib": peak, "detail": detail}))


def measure(name: str) -> BenchResult:
    """Run one case in a fresh interpreter."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c",
                          f"from pipegossip.benchmarks.model import run_case; run_case({name!r})"],
                         capture_output=True, text=True, check=True)
    process = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return BenchResult(data["case"], data["seconds"], data["peak_mib"], data["detail"], process,
                       cpu)
