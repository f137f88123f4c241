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
from dataclasses import dataclass

from .model.config import RunConfig
from .model.engine import simulate
from .model.reference import simulate_reference
from .model.sweeps import TABLE8_N

__all__ = ["CASES", "BenchResult", "run_case", "measure"]


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


#: name -> (what, target seconds, target MiB or None, function)
CASES = {
    "identity-1024": ("identity N=1024, utilisation + metrics", 10.0, 1024.0, _identity_1024),
    "pipelined-4096": ("pipelined N=4096, utilisation + metrics", 10.0, None, _pipelined_4096),
    "table8": ("Table 8 sweep, identity + Alg. 2 + any, N=2..2048", 60.0, None,
               lambda: _table8(simulate)),
    "table8-baseline": ("same sweep, literal per-step simulator", None, None,
                        lambda: _table8(simulate_reference)),
}


@dataclass(frozen=True)
class BenchResult:
    case: str
    seconds: float
    peak_mib: float
    detail: str


def run_case(name: str) -> None:
    """Child-process side: run one case and print its measurements as JSON."""
    start = time.perf_counter()
    detail = CASES[name][3]()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"case": name, "seconds": seconds, "peak_mib": peak, "detail": detail}))


def measure(name: str) -> BenchResult:
    """Run one case in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c",
                          f"from pipegossip.bench import run_case; run_case({name!r})"],
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return BenchResult(data["case"], data["seconds"], data["peak_mib"], data["detail"])
