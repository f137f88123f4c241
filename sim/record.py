"""The one trace record of a fabric run, and the cocotb job that asks for it.

:class:`HwRun` is simulator-neutral: the cocotb testbench
(:mod:`pipegossip.sim.fsm.testbench`), the Amaranth-simulator runner
(:mod:`pipegossip.sim.fsm.amaranth_run`) and the waveform read-back
(:mod:`pipegossip.waveforms.readback`) each produce one, and
:func:`pipegossip.sim.judge.fsm.judge` is the only code that holds one against the
model. It holds the fabric's ports once per clock cycle, sampled as a flip-flop
would capture them: the outputs (action/peer rows, used, busy, done, cycle,
stall, the delivery fields with source, session and word, ``ready``) and the
inputs driven (start, hold, ``valid``/``payload``, hence the handshakes), plus
how the run ended and where it came from. Field names derive from the port
table (:mod:`pipegossip.hw.ports`, see :func:`record_field`).

Cycle numbers follow the pinned cycle contract: cycle 0 is the cycle in which
``start`` is high (sampled at the edge ending it), cycle t = 1..L shows step
t, negative cycles are the idle cycles before the start.

A record may lack fields (a dump without ``delivery`` ports): the judge then
names the checks it could not make. A record without the trace (``action``
and ``peer``) is refused.

The runner writes a :class:`Job` (JSON) for the cocotb testbench, which runs
inside the simulator process; the testbench writes one :class:`HwRun` per
requested run (JSON) back. Both sides import this module, so the file format
is defined once.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..hw.ports import PORTS, lane_names, scalar_names
from ..model.config import RunConfig
from ..model.runtable import IDLE, RunTable

__all__ = ["RunSpec", "Job", "HwRun", "SCALAR_FIELDS", "LANE_FIELDS", "WORD_FIELDS",
           "TRACE_FIELDS", "PORT_OF_FIELD", "record_field", "JOB_ENV"]

#: Environment variable through which the runner hands the job file to the testbench.
JOB_ENV = "PIPEGOSSIP_COSIM_JOB"


def record_field(key: str) -> str:
    """The record's field for port-table key ``key``.

    The ``words`` stream's fields keep their names (``payload``, ``valid``,
    ``ready``); the ``delivery`` fields get a ``d`` (``dvalid``, ``dword``);
    other ports keep their key.
    """
    group, _, member = key.partition("__")
    if group == "words":
        return member
    if group == "delivery":
        return "d" + member
    return key


#: Record field -> port-table key (``"dword"`` -> ``"delivery__word"``).
PORT_OF_FIELD = {record_field(p.key): p.key for p in PORTS}
#: Per-cycle samples of one value each.
SCALAR_FIELDS = tuple(record_field(k) for k in scalar_names())
#: Per-cycle samples of one value per processor.
LANE_FIELDS = tuple(record_field(k) for k in lane_names())
#: Lane fields holding words, which may be wider than 64 bits (their width is the word width).
WORD_FIELDS = tuple(record_field(p.key) for p in PORTS if p.width(2, 1, 1 << 20) == 1 << 20)
#: The fields without which there is nothing to judge.
TRACE_FIELDS = ("action", "peer")


@dataclass
class RunSpec:
    """One run of the fabric inside a simulation.

    Attributes
    ----------
    word_seed : int or None
        Seed of the tagged words (:class:`pipegossip.hw.words.WordScheme`);
        None when unknown (a dump): the judge then expects the words the
        record shows taken at the handshakes.
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

    word_seed: int | None = 0
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
    """The samples of one run, cycle ``first_cycle`` first: the one trace record.

    Attributes
    ----------
    spec : RunSpec
        What the producer was asked to do (word seed, hold, cycle budget).
    n : int
        Number of processors.
    first_cycle : int
        Cycle number of sample 0 (negative: idle cycles before the start).
    samples : dict of str to numpy.ndarray
        ``SCALAR_FIELDS`` as ``(T,)`` arrays, ``LANE_FIELDS`` as ``(T, N)``;
        a field the producer could not see is absent (see :attr:`missing`).
    ended : str
        ``"done"`` (done rose and the tail was sampled), ``"stall"`` (stopped
        after the watchdog rose) or ``"timeout"`` (``max_cycles`` reached, or
        a dump that ends while busy).
    wall_seconds : float
        Wall time the producer spent in this run's cycles.
    extra : dict
        ``after_reset``: the run follows a reset (``done`` low before it).
    origin : str
        Where the samples come from (``"cocotb verilator"``, ``"Amaranth
        simulator"``, ``"dump run.vcd scope=TOP.fabric run=1"``).
    problems : list of str
        What the producer saw but could not record as a sample (x/z values,
        a port contradicting another); the judge lists each as a mismatch.
    summary : dict or None
        A fast-mode record (:mod:`pipegossip.sim.fast.mode`): the hardware
        checker's summary of the run instead of per-cycle samples (which are
        then empty, and every field is :attr:`missing`); the judge holds it
        against the model with summary checks.

    Raises
    ------
    ValueError
        When the trace (``action`` and ``peer``) is missing.
    """

    spec: RunSpec
    n: int
    first_cycle: int
    samples: dict[str, np.ndarray]
    ended: str
    wall_seconds: float = 0.0
    extra: dict = field(default_factory=dict)
    origin: str = ""
    problems: list[str] = field(default_factory=list)
    summary: dict | None = None

    def __post_init__(self) -> None:
        absent = [k for k in TRACE_FIELDS if k not in self.samples]
        if absent:
            raise ValueError(f"a trace record needs {' and '.join(TRACE_FIELDS)}; "
                             f"{self.origin or 'this record'} lacks {', '.join(absent)}")

    @property
    def missing(self) -> tuple[str, ...]:
        """Fields of the port table that this record does not hold."""
        return tuple(k for k in SCALAR_FIELDS + LANE_FIELDS if k not in self.samples)

    def has(self, *names: str) -> bool:
        """Whether every field in ``names`` was recorded."""
        return all(k in self.samples for k in names)

    @property
    def cycles(self) -> np.ndarray:
        """The cycle number of every sample."""
        return np.arange(len(self.samples["action"])) + self.first_cycle

    @property
    def last_cycle(self) -> int:
        """The last sampled cycle."""
        return int(self.first_cycle + len(self.samples["action"]) - 1)

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
        """Cycles from cycle 1 on in which ``busy`` was high (the hardware's L).

        Without ``busy``: cycles up to the last one in which a processor was
        not idle.
        """
        if self.summary is not None:
            return int(self.summary["busy_cycles"])
        if "busy" in self.samples:
            return int(self.window("busy", 1, self.last_cycle).sum())
        acting = np.flatnonzero((self.window("action", 1, self.last_cycle) != IDLE).any(axis=1))
        return int(acting[-1]) + 1 if acting.size else 0

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
        if "used" in self.samples:
            used[:t] = self.window("used", 1, length)
            return RunTable(actions, peers, used)
        return RunTable(actions, peers)  # used counted from the trace

    def to_json(self) -> dict:
        return dict(spec=asdict(self.spec), n=self.n, first_cycle=self.first_cycle,
                    ended=self.ended, wall_seconds=self.wall_seconds, extra=self.extra,
                    origin=self.origin, problems=list(self.problems), summary=self.summary,
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
                   extra=dict(data.get("extra", {})), origin=data.get("origin", ""),
                   problems=list(data.get("problems", [])), summary=data.get("summary"))


# ---------------------------------------------------------------------------
# The schedule fabric's record: a sibling of HwRun in the same module.
# (the FSM fabric's action/peer trace does not exist there: every node may
# send and receive in the same cycle).


def schedule_record_field(key: str) -> str:
    """The :class:`ScheduleRun` field of schedule-port key ``key`` (``send__word`` -> ``send_word``)."""
    return key.replace("__", "_")


def _schedule_fields(per_node: bool) -> tuple[str, ...]:
    from ..hw.ports import OUT, SCHEDULE_PORTS
    return tuple(schedule_record_field(p.key) for p in SCHEDULE_PORTS
                 if p.direction == OUT and p.per_processor == per_node
                 and p.group not in ("read",))


#: Per-cycle samples of the schedule fabric, one value each (busy, done, cycle, length).
SCHEDULE_SCALAR_FIELDS = _schedule_fields(False)
#: Per-cycle samples, one per node (send_valid, ..., recv_word).
SCHEDULE_LANE_FIELDS = _schedule_fields(True)


@dataclass
class ScheduleRun:
    """The samples of one schedule-fabric run and the stores read back after it.

    Cycle 0 is the start cycle; program cycle t is exchanged in clock cycle
    ``t + latency``.

    Attributes
    ----------
    spec : RunSpec
        ``word_seed`` (the tagged words loaded), ``max_cycles``, ``tail``.
    n : int
    name : str
        Which schedule was loaded (its file or generator).
    samples : dict of str to numpy.ndarray
        :data:`SCHEDULE_SCALAR_FIELDS` ``(T,)`` and :data:`SCHEDULE_LANE_FIELDS`
        ``(T, N)``, sample 0 = cycle 0.
    store, held : list of list of int
        ``[node][slot]`` read back through the read port after the run.
    acc : list of int
        Each node's accumulator after the run.
    ended : str
        ``"done"`` or ``"timeout"``.
    latency : int
        The fabric's ``LATENCY``.
    load_cycles : int
        Clock cycles spent loading (one write per cycle).
    loads : list of list of int
        The store writes driven while the run was sampled (streaming), as
        ``[cycle, via, node, slot, word]``: driven in clock ``cycle`` (taken
        at the edge ending it), ``via`` 0 the ``load`` port (kind ITEM), 1
        the node's ``item`` port (``pipegossip.hw.schedule.load.TimedWrite``).
    """

    spec: RunSpec
    n: int
    name: str
    samples: dict[str, np.ndarray]
    store: list[list[int]]
    held: list[list[int]]
    acc: list[int]
    ended: str
    latency: int = 1
    load_cycles: int = 0
    wall_seconds: float = 0.0
    origin: str = ""
    problems: list[str] = field(default_factory=list)
    first_cycle: int = 0
    loads: list[list[int]] = field(default_factory=list)

    @property
    def busy_cycles(self) -> int:
        """Cycles in which ``busy`` was high (program length + latency)."""
        return int(np.asarray(self.samples["busy"]).sum())

    @property
    def last_cycle(self) -> int:
        return len(self.samples["busy"]) - 1

    def lane(self, name: str) -> np.ndarray:
        """``(T, N)`` samples of a per-node field."""
        return np.asarray(self.samples[name])

    def to_json(self) -> dict:
        return dict(spec=asdict(self.spec), n=self.n, name=self.name, ended=self.ended,
                    latency=self.latency, load_cycles=self.load_cycles,
                    wall_seconds=self.wall_seconds, origin=self.origin,
                    problems=list(self.problems), store=self.store, held=self.held,
                    acc=self.acc, loads=[list(map(int, w)) for w in self.loads],
                    samples={k: np.asarray(v).tolist() for k, v in self.samples.items()})

    @classmethod
    def _sample(cls, key: str, values: list, data: dict) -> np.ndarray:
        """One sample array of a JSON record (words stay Python ints: any width)."""
        arr = np.array(values, dtype=object) if key.endswith("_word") else \
            np.asarray(values, np.int64)
        return arr.reshape(-1, int(data["n"])) if key in SCHEDULE_LANE_FIELDS else arr

    @classmethod
    def from_json(cls, data: dict, **extra) -> ScheduleRun:
        samples = {k: cls._sample(k, v, data) for k, v in data["samples"].items()}
        return cls(spec=RunSpec(**data["spec"]), n=int(data["n"]), name=data.get("name", ""),
                   samples=samples, store=data["store"], held=data["held"], acc=data["acc"],
                   ended=data["ended"], latency=int(data.get("latency", 1)),
                   load_cycles=int(data.get("load_cycles", 0)),
                   wall_seconds=float(data.get("wall_seconds", 0.0)),
                   origin=data.get("origin", ""), problems=list(data.get("problems", [])),
                   loads=[list(map(int, w)) for w in data.get("loads", [])], **extra)


__all__ += ["ScheduleRun", "SCHEDULE_SCALAR_FIELDS", "SCHEDULE_LANE_FIELDS",
            "schedule_record_field"]
