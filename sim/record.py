"""What the testbench is asked to do and what it brings back.

The runner writes a :class:`Job` (JSON) for the cocotb testbench, which runs
inside the simulator process; the testbench writes one :class:`HwRun` per
requested run (JSON) back. Both sides import this module, so the file format
is defined once.

A :class:`HwRun` is the raw monitor output: every port the testbench drove or
sampled, once per clock cycle, sampled after ``ReadOnly()``. Cycle numbers
follow the pinned cycle contract: cycle 0 is the cycle in which ``start`` is
high (sampled at the edge ending it), cycle t = 1..L shows step t, negative
cycles are the idle cycles before the start. Judging the samples is the
scoreboard's job (:mod:`pipegossip.sim.scoreboard`), not the testbench's.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..model.config import RunConfig
from ..model.runtable import RunTable

__all__ = ["RunSpec", "Job", "HwRun", "SCALAR_FIELDS", "LANE_FIELDS", "WORD_FIELDS", "JOB_ENV"]

#: Environment variable through which the runner hands the job file to the testbench.
JOB_ENV = "PIPEGOSSIP_COSIM_JOB"

#: Per-cycle samples of one value each.
SCALAR_FIELDS = ("start", "busy", "done", "stall", "cycle", "used", "hold")
#: Lane fields holding words, which may be wider than 64 bits.
WORD_FIELDS = ("dword", "payload")
#: Per-cycle samples of one value per processor.
LANE_FIELDS = ("action", "peer", "dvalid", "dsource", "dsession", "dword",
               "ready", "valid", "payload")


@dataclass
class RunSpec:
    """One run of the fabric inside a simulation.

    Attributes
    ----------
    word_seed : int
        Seed of the tagged words (:func:`pipegossip.sim.words.tagged_words`).
    reset : bool
        Pulse ``rst`` before this run (the first run of a job always resets).
    idle : int
        Idle cycles sampled before the start cycle (checks the idle outputs).
    tail : int
        Cycles sampled after ``done`` rose (checks that nothing follows it).
    max_cycles : int
        Give up this many cycles after the start when ``done`` never rises.
    hold : int
        Bit mask driven on the ``hold`` input during the run (0 in normal use).
    spurious_start : int or None
        Cycle in which ``start`` is pulsed again while the fabric is busy; the
        pinned interface says it must be ignored.
    stop_on_stall : int or None
        End the run this many cycles after ``stall`` was first seen.
    """

    word_seed: int = 0
    reset: bool = False
    idle: int = 2
    tail: int = 4
    max_cycles: int = 1000
    hold: int = 0
    spurious_start: int | None = None
    stop_on_stall: int | None = None


@dataclass
class Job:
    """Everything the testbench needs: the configuration, word width and runs."""

    config: dict
    width: int
    runs: list[RunSpec]
    result_path: str

    def run_config(self) -> RunConfig:
        return RunConfig.from_json(self.config)

    def write(self, path: str | Path) -> None:
        data = dict(config=self.config, width=self.width, result_path=self.result_path,
                    runs=[asdict(r) for r in self.runs])
        Path(path).write_text(json.dumps(data), encoding="utf-8")

    @classmethod
    def read(cls, path: str | Path) -> Job:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(config=data["config"], width=int(data["width"]),
                   runs=[RunSpec(**r) for r in data["runs"]], result_path=data["result_path"])


@dataclass
class HwRun:
    """The samples of one run, cycle ``first_cycle`` first.

    Attributes
    ----------
    spec : RunSpec
        What the testbench was asked to do.
    n : int
        Number of processors.
    first_cycle : int
        Cycle number of sample 0 (negative: idle cycles before the start).
    samples : dict of str to numpy.ndarray
        ``SCALAR_FIELDS`` as ``(T,)`` arrays, ``LANE_FIELDS`` as ``(T, N)``.
    ended : str
        ``"done"`` (done rose and the tail was sampled), ``"stall"`` (stopped
        after the watchdog rose) or ``"timeout"`` (``max_cycles`` reached).
    wall_seconds : float
        Wall time the testbench spent in this run's cycles.
    """

    spec: RunSpec
    n: int
    first_cycle: int
    samples: dict[str, np.ndarray]
    ended: str
    wall_seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def cycles(self) -> np.ndarray:
        """The cycle number of every sample."""
        return np.arange(len(self.samples["busy"])) + self.first_cycle

    def at(self, name: str, cycle: int):
        """Sample ``name`` at ``cycle`` (a scalar or an ``(N,)`` row)."""
        return self.samples[name][cycle - self.first_cycle]

    def window(self, name: str, first: int, last: int) -> np.ndarray:
        """Samples of ``name`` for cycles ``first .. last`` (clipped to what was sampled)."""
        lo = max(first - self.first_cycle, 0)
        hi = max(last - self.first_cycle + 1, 0)
        return self.samples[name][lo:hi]

    @property
    def busy_cycles(self) -> int:
        """Cycles from cycle 1 on in which ``busy`` was high (the hardware's L)."""
        return int(self.window("busy", 1, self.cycles[-1]).sum())

    def table(self, length: int | None = None) -> RunTable:
        """The hardware run-table of cycles ``1 .. length`` (default: busy cycles).

        ``used`` is the fabric's own ``used`` output, so the table compares it
        with the model's utilisation string, not a count derived from the trace.
        Cycles that were not sampled read as idle.
        """
        length = self.busy_cycles if length is None else length
        actions = np.zeros((self.n, length), dtype=np.uint8)
        peers = np.zeros((self.n, length), dtype=np.int32)
        used = np.zeros(length, dtype=np.int64)
        got = self.window("action", 1, length)
        t = got.shape[0]
        actions[:, :t] = got.T
        peers[:, :t] = self.window("peer", 1, length).T
        used[:t] = self.window("used", 1, length)
        return RunTable(actions, peers, used)

    def to_json(self) -> dict:
        return dict(spec=asdict(self.spec), n=self.n, first_cycle=self.first_cycle,
                    ended=self.ended, wall_seconds=self.wall_seconds, extra=self.extra,
                    samples={k: v.tolist() for k, v in self.samples.items()})

    @classmethod
    def from_json(cls, data: dict) -> HwRun:
        n = int(data["n"])
        samples = {}
        for k, v in data["samples"].items():
            # Words wider than 63 bits stay Python ints (an object array).
            arr = np.array(v) if k in WORD_FIELDS else np.asarray(v, dtype=np.int64)
            if k in LANE_FIELDS:
                arr = arr.reshape(-1, n)
            samples[k] = arr
        return cls(spec=RunSpec(**data["spec"]), n=n, first_cycle=int(data["first_cycle"]),
                   samples=samples, ended=data["ended"],
                   wall_seconds=float(data.get("wall_seconds", 0.0)),
                   extra=dict(data.get("extra", {})))
