"""The network fabric's record, and its runs in Amaranth's simulator.

:class:`NetworkRun` is the schedule fabric's :class:`~.record.ScheduleRun`
with per-port samples: ``tx_*``/``rx_*`` are ``(T, ports)``, ``acc`` is
``(T, n)`` (every node's accumulator in every cycle). Both producers (the
Amaranth simulator here, the cocotb testbench on Verilator) load with
:func:`pipegossip.hw.network.load.network_writes` and sample every output of
:data:`~pipegossip.hw.ports.NETWORK_PORTS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...hw.network.fabric import DIRECTORY, LATENCY, NetworkFabric, network_size
from ...hw.network.load import network_writes
from ...hw.ports import NETWORK_PORTS, NetworkSize
from ...model.schedules.network_program import NetworkProgram
from ...model.errors import ConfigError
from ...model.schedules.program import ProgramError
from ..record import RunSpec, ScheduleRun, schedule_record_field
from ..schedule.cosim import TAIL, amaranth_runs

__all__ = ["NetworkRun", "NETWORK_SCALAR_FIELDS", "NETWORK_LINK_FIELDS",
           "NETWORK_NODE_FIELDS", "network_job", "run_network_amaranth", "check_fits",
           "network_record", "FAULTS", "faulty_writes", "faults_that_apply"]


def _fields(per: str) -> tuple[str, ...]:
    return tuple(schedule_record_field(p.key) for p in NETWORK_PORTS
                 if p.direction == "out" and p.group != "read"
                 and {"scalar": not p.per_processor, "link": p.per_link,
                      "node": p.per_processor and not p.per_link}[per])


#: Per-cycle samples, one value each (busy, done, cycle, length).
NETWORK_SCALAR_FIELDS = _fields("scalar")
#: Per-cycle samples, one per port (tx_valid, ..., rx_word).
NETWORK_LINK_FIELDS = _fields("link")
#: Per-cycle samples, one per node (acc).
NETWORK_NODE_FIELDS = _fields("node")


@dataclass
class NetworkRun(ScheduleRun):
    """The samples of one network-fabric run and the stores read back after it.

    As :class:`~.record.ScheduleRun`; ``ports`` is the number of link ends,
    the second axis of the ``tx_*``/``rx_*`` samples.
    """

    ports: int = 0

    def to_json(self) -> dict:
        return dict(super().to_json(), ports=self.ports)

    @classmethod
    def _sample(cls, key: str, values: list, data: dict) -> np.ndarray:
        if key in NETWORK_NODE_FIELDS:  # accumulators: words of any width
            return np.array(values, dtype=object).reshape(-1, int(data["n"]))
        arr = np.array(values, dtype=object) if key.endswith("_word") else \
            np.asarray(values, np.int64)
        return arr.reshape(-1, int(data["ports"])) if key in NETWORK_LINK_FIELDS else arr

    @classmethod
    def from_json(cls, data: dict, **extra) -> NetworkRun:
        return super().from_json(data, ports=int(data["ports"]), **extra)


#: Faults a test may load instead of the right program (same build, both simulators):
#: ``drop``: a receive's store bit cleared (the word is lost); ``misroute``: a send (what
#: it sends and where the word is read) moved to the node's next link; ``combine``: a
#: combine bit flipped; ``word``: a loaded item's word with its low bit flipped;
#: ``acc``: an initial accumulator with its low bit flipped; ``directory``: a stored slot's
#: directory entry made invalid (the read-back finds the slot empty). The last three leave
#: the trace intact: only the words, accumulators or the read-back show them.
FAULTS = ("drop", "misroute", "combine", "word", "acc", "directory")


def _sends(f: dict, j: int) -> tuple:
    """What link ``j`` of a decoded entry sends: (send, accumulator, slot)."""
    return f[f"tx{j}"], f[f"txacc{j}"], f[f"txslot{j}"]


def faulty_writes(program: NetworkProgram, fault: str, seed: int = 0, skip: int = 0) -> list:
    """``program``'s load writes with one entry altered by ``fault`` (:data:`FAULTS`).

    The first entry (in node, then cycle order) the fault applies to, after
    ``skip`` such entries, is altered: ``drop`` needs a storing receive,
    ``misroute`` a send from a node with two or more links whose next link
    sends something else (else the swap would change nothing), ``combine``
    any receive or send, ``word`` a loaded item, ``acc`` an initial
    accumulator, ``directory`` a valid directory entry.

    Raises
    ------
    ValueError
        An unknown fault.
    ConfigError
        A program with no such entry (one line naming the faults that apply).
    """
    if fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r} (expected one of {', '.join(FAULTS)})")
    writes = _altered(program, fault, seed, skip)
    if writes is not None:
        return writes
    if skip:
        raise ConfigError(f"fault {fault!r} does not apply to {program.slug} after {skip} "
                          "entries")
    others = [f for f in faults_that_apply(program, seed) if f != fault]
    raise ConfigError(f"--fault {fault} does not apply to {program.slug}: {_WHY[fault]}; "
                      f"faults that apply: {', '.join(others) or 'none'} "
                      "(docs/network-fabric.md)")


def _altered(program: NetworkProgram, fault: str, seed: int, skip: int) -> list | None:
    """:func:`faulty_writes`, or None when ``fault`` finds no entry (past ``skip``)."""
    writes = network_writes(program, seed)
    from ...hw.schedule.fabric import LoadKind
    altered = {"word": LoadKind.ITEM, "acc": LoadKind.ACC, "directory": DIRECTORY}.get(fault)
    for k, (kind, v, c, data) in enumerate(writes):
        if kind == altered and (data or fault != "directory"):
            if skip:
                skip -= 1
                continue
            # the low bit: an item's or accumulator's word, a directory entry's valid bit
            writes[k] = (kind, v, c, data ^ 1)
            return writes
        if kind != LoadKind.PROGRAM:
            continue
        lay = program.layout(v)
        deg = lay.degree
        for j in range(deg):
            f = lay.decode(data)
            if fault == "drop" and f[f"rx{j}"]:
                f[f"rx{j}"] = 0
            elif (fault == "misroute" and f[f"tx{j}"] and deg > 1
                  and _sends(f, j) != _sends(f, (j + 1) % deg)):
                # a swap between two links sending the same word would change nothing
                t = (j + 1) % deg
                # the whole send moves, where its word is read included: a send that
                # kept its bank and address would still carry its own word
                for name in ("tx", "txacc", "txslot", "txbank", "txaddr", "txnew"):
                    f[f"{name}{j}"], f[f"{name}{t}"] = f[f"{name}{t}"], f[f"{name}{j}"]
            elif fault == "combine" and (f[f"rx{j}"] or f[f"comb{j}"]):
                f[f"comb{j}"] ^= 1
            else:
                continue
            if skip:
                skip -= 1
                continue
            writes[k] = (kind, v, c, lay.encode(**f))
            return writes
    return None


#: Why a fault finds nothing to alter in a program.
_WHY = {"drop": "no receive stores a word (every received word is combined)",
        "misroute": "no node sends two different words on two links in one cycle",
        "combine": "no receive to flip between storing and combining",
        "word": "no item word is loaded", "acc": "no accumulator is loaded",
        "directory": "no directory entry is loaded"}


def faults_that_apply(program: NetworkProgram, seed: int = 0) -> list[str]:
    """The faults of :data:`FAULTS` that find an entry to alter in ``program``."""
    return [f for f in FAULTS if _altered(program, f, seed, 0) is not None]


def network_job(name: str, program: NetworkProgram, seed: int,
                writes: list | None = None) -> dict:
    """One run of a testbench job: its load writes and cycle budget."""
    return dict(name=name, writes=writes if writes is not None else network_writes(program, seed),
                timed=[], word_seed=seed, max_cycles=program.cycles + LATENCY + 8, tail=TAIL)


def check_fits(programs: Sequence[NetworkProgram], size: NetworkSize) -> None:
    """Refuse a program compiled for another topology, store or depth than the build's."""
    for p in programs:
        bank = size.bank_depth or size.slots
        if (p.n != size.n or p.ports != size.ports or p.slots != size.slots
                or p.cycles > size.depth or p.width != size.width or p.bank_depth != bank):
            raise ProgramError(f"{p.slug} was compiled for n={p.n}, {p.ports} ports, "
                               f"{p.slots} slots, width {p.width}, {p.cycles} cycles, bank "
                               f"depth {p.bank_depth}; the fabric has n={size.n}, {size.ports} "
                               f"ports, {size.slots} slots, width {size.width}, depth "
                               f"{size.depth}, bank depth {bank}")


def network_record(job: dict, size: NetworkSize, rows: dict, store, held, acc, ended: str,
                   wall: float, origin: str) -> NetworkRun:
    """A :class:`NetworkRun` from one run's sampled rows and read-back."""
    samples = {}
    for f, v in rows.items():
        word = f.endswith("_word") or f in NETWORK_NODE_FIELDS
        arr = np.array(v, dtype=object if word else np.int64)
        if f in NETWORK_LINK_FIELDS:
            arr = arr.reshape(len(v), size.ports)
        elif f in NETWORK_NODE_FIELDS:
            arr = arr.reshape(len(v), size.n)
        samples[f] = arr
    return NetworkRun(spec=RunSpec(word_seed=job["word_seed"], tail=job["tail"],
                                   max_cycles=job["max_cycles"], idle=0),
                      n=size.n, name=job["name"], samples=samples, store=store, held=held,
                      acc=acc, ended=ended, latency=LATENCY, load_cycles=len(job["writes"]),
                      wall_seconds=wall, origin=origin, ports=size.ports)


def run_network_amaranth(programs: Sequence[NetworkProgram], *, seed: int = 0,
                         names: Sequence[str] | None = None, depth: int | None = None,
                         jobs: Sequence[dict] | None = None,
                         store: str = "banks", node: str = "wire") -> list[NetworkRun]:
    """Load and run ``programs`` (one topology, width, op) on one simulated network fabric.

    ``jobs`` (as :func:`network_job` makes them) replace the programs' own
    loads, e.g. with :func:`faulty_writes`.
    """
    p0 = programs[0]
    size = network_size(p0.topology, p0.width, depth or max(p.depth for p in programs),
                        p0.slots, None if p0.bank_depth == p0.slots else p0.bank_depth,
                        store=store, node=node)
    check_fits(programs, size)
    if any(p.op != p0.op or p.topology is not p0.topology and
           p.topology.to_json() != p0.topology.to_json() for p in programs):
        raise ProgramError("programs of one fabric need one topology and one operation")
    if jobs is None:
        jobs = [network_job(names[i] if names else p.slug, p, seed)
                for i, p in enumerate(programs)]
    dut = NetworkFabric(p0.topology, size.width, size.depth, size.slots, p0.op,
                        size.bank_depth, store=size.store, node=size.node)

    def record(job, rows, store, held, acc, ended, wall):
        return network_record(job, size, rows, store, held, acc, ended, wall,
                              "Amaranth simulator")

    return amaranth_runs(dut, jobs, size, NETWORK_PORTS,
                         lambda s: size.ports if s.per_link else size.n,
                         NETWORK_SCALAR_FIELDS, NETWORK_LINK_FIELDS + NETWORK_NODE_FIELDS, record)

