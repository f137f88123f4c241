"""Streaming throughput read off a hardware trace (issue 5.3).

With ``sessions = k`` every processor broadcasts k words back to back
(docs/reference.md "Sessions"). The paper's claim for pipelined gossiping: in steady state
one broadcast completes every 2 cycles and the average utilisation is
``mu = N - 1``. :func:`throughput` measures both from what the fabric did,
its delivery outputs and its ``used`` output, not from the model:

* a broadcast (source p, session s) completes in the cycle its last receiver
  takes the word; the gaps between consecutive completions give the rate;
* the steady region is the window from the first completion to the
  ``N(k-1)+1``-th: ``k-1`` sessions' worth of broadcasts after the pipeline
  has filled, before the last session drains it. ``mu`` over it is the used
  slots per cycle the fabric sustains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .record import HwRun

__all__ = ["Throughput", "throughput", "completions"]


def completions(run: HwRun, n: int, sessions: int) -> np.ndarray:
    """``done[p, s]``: the cycle broadcast (p, s) reached its last receiver (0 if never)."""
    out = np.zeros((n, sessions), dtype=np.int64)
    last = int(run.cycles[-1])
    valid = run.window("dvalid", 1, last)
    src = run.window("dsource", 1, last)
    sess = run.window("dsession", 1, last)
    for ti, p in zip(*np.nonzero(valid)):
        s_, p_ = int(sess[ti, p]), int(src[ti, p])
        if 0 <= p_ < n and 0 <= s_ < sessions:
            out[p_, s_] = max(out[p_, s_], int(ti) + 1)
    return out


@dataclass
class Throughput:
    """What :func:`throughput` measured.

    Attributes
    ----------
    length : int
        The hardware's L (busy cycles).
    completion_cycles : list of int
        Sorted completion cycles of all N*k broadcasts.
    gaps : list of int
        Differences between consecutive completions.
    steady : tuple of int
        First and last cycle of the steady region.
    steady_mu : float
        Used slots per cycle over the steady region.
    """

    n: int
    sessions: int
    length: int
    completion_cycles: list[int]
    gaps: list[int]
    steady: tuple[int, int]
    steady_mu: float

    @property
    def cycles_per_broadcast(self) -> float:
        return float(np.mean(self.gaps)) if self.gaps else float("nan")

    def to_json(self) -> dict:
        return dict(N=self.n, sessions=self.sessions, L=self.length,
                    completion_cycles=self.completion_cycles, gaps=self.gaps,
                    cycles_per_broadcast=self.cycles_per_broadcast,
                    steady_first=self.steady[0], steady_last=self.steady[1],
                    steady_mu=self.steady_mu)


def throughput(run: HwRun, n: int, sessions: int) -> Throughput:
    """Measure the streaming rate of one hardware run with ``sessions >= 2``."""
    if sessions < 2:
        raise ValueError(f"a steady state needs at least 2 sessions, got {sessions}")
    done = completions(run, n, sessions)
    if (done == 0).any():
        p, s = (int(x[0]) for x in np.nonzero(done == 0))
        raise ValueError(f"broadcast of p{p}, session {s} never completed")
    cyc = sorted(int(c) for c in done.ravel())
    first, last = cyc[0], cyc[n * (sessions - 1)]
    used = run.window("used", first + 1, last)
    mu = float(used.sum()) / (last - first) if last > first else float("nan")
    return Throughput(n, sessions, run.busy_cycles, cyc, list(np.diff(cyc).tolist()),
                      (first + 1, last), mu)
