"""Dumps of the program-driven fabrics: their companions, and the runs read back for the judge.

``sim cosim --fabric schedule|network --schedule F.json --waves`` dumps the
whole Verilator simulation (every load write, every run, every read-back) and
writes beside it, through :func:`write_companions`:

* ``<stem>.run.json``: what the judge needs besides the dump: the fabric, its
  size, the word seed, and per run its name, the schedule (its JSON, so the
  dump is judged without the file) and the compiler's options;
* ``<stem>.gtkw``: a GTKWave save file with the control and load ports on
  top and one group per node: its program entry (the node's fetched entry,
  where the dump holds it), each of its links' words (network: per port
  ``tx``/``rx``; schedule: ``send``/``recv``), its store writes (the
  receives' ``valid``/``slot``, the ``item`` port), its accumulator, and its
  stream ports where the fabric has them.

:func:`read_program_dump` takes such a dump back into the very record the
cocotb testbench writes (:class:`~pipegossip.sim.record.ScheduleRun`,
network :class:`~pipegossip.sim.network.run.NetworkRun`), sampled as the
testbench samples: sample k of a run is the value just before the k-th
rising edge after the start edge ``e0`` (the first with ``start`` high and
``busy`` low), up to ``TAIL`` cycles after ``done``; then one read-back per
node and slot, address in one cycle, answer in the next. The one judge
(:func:`~pipegossip.sim.judge.network.judge_network`, ``judge_schedule``)
holds it against the program compiled again from ``.run.json``, so a
fault loaded in the live run is named at the same first mismatch.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..infra.files import atomic_write
from ..model.errors import FormatError
from .dump import open_dump

__all__ = ["RUN_SUFFIX", "write_companions", "read_program_dump", "ProgramRun",
           "has_program_run"]

#: The companion naming a program-driven fabric's dump.
RUN_SUFFIX = ".run.json"
_FORMAT = "pipegossip-program-dump/1"


def _fabric_scope(d) -> str | None:
    """The scope of the fabric's ports: the one with ``load__valid`` that holds the nodes
    (Verilator also copies the top's ports into ``$rootio``)."""
    found = [s for s, vs in d.scopes.items() if "load__valid" in vs]
    with_nodes = [s for s in found if f"{s}.node0" in d.scopes]
    return (with_nodes or found or [None])[0]


def _companion(dump: Path, suffix: str) -> Path:
    return Path(f"{Path(dump).with_suffix('')}{suffix}")


def has_program_run(dump) -> bool:
    """Whether ``dump`` has a ``.run.json`` beside it (a program-driven fabric's dump)."""
    return _companion(Path(dump), RUN_SUFFIX).is_file()


def write_companions(dump: Path, fabric: str, size, programs, names, seed: int,
                     home: Path | None = None) -> None:
    """Write ``<stem>.run.json`` and ``<stem>.gtkw`` beside ``dump`` (see the module doc)."""
    from ..model.schedules.ir import dumps
    runs = []
    for name, p in zip(names, programs):
        opts = dict(width=p.width, depth=p.depth, slots=p.slots)
        if fabric == "network":
            opts.update(op=p.op, bank_depth=p.bank_depth, topology=p.topology.to_json())
        runs.append(dict(name=name, schedule=json.loads(dumps(p.schedule)), compile=opts))
    doc = dict(format=_FORMAT, fabric=fabric, size=asdict(size), seed=seed, runs=runs)
    atomic_write(_companion(dump, RUN_SUFFIX), json.dumps(doc) + "\n")
    _write_gtkw(dump, fabric, size, programs[0], home)


# ------------------------------------------------------------------ GTKWave
def _groups(fabric: str, size, program) -> list[tuple[str, list[str]]]:
    """Per node: its group name and its ports (top-level names)."""
    out = []
    for v in range(size.n):
        if fabric == "network":
            ports = range(program.offsets[v], program.offsets[v + 1])
            sig = [f"{d}__{p}__{f}" for p in ports for d, fs in
                   (("tx", ("valid", "acc", "slot", "word")), ("rx", ("valid", "slot", "comb",
                                                                    "word"))) for f in fs]
            sig.append(f"acc__{v}")
        else:
            sig = [f"send__{v}__{f}" for f in ("valid", "slot", "word", "acc")]
            sig += [f"recv__{v}__{f}" for f in ("valid", "source", "slot", "word", "comb")]
            sig += [f"item__{v}__{f}" for f in ("valid", "slot", "word")]
        out.append((f"node{v}", sig))
    return out


def _write_gtkw(dump: Path, fabric: str, size, program, home: Path | None) -> None:
    from vcd.gtkw import GTKWSave
    d = open_dump(dump)
    top = _fabric_scope(d)
    ports = d.scopes[top]
    stem = Path(dump).with_suffix("")

    def named(path: Path) -> str:
        return str(path if home is None else Path(home).resolve() / path.name)

    def trace(g, scope: str, var) -> None:
        rng = f"[{var.size - 1}:0]" if var.size > 1 else ""
        g.trace(f"{scope}.{var.raw}{rng}", alias=var.name,
                datafmt="hex" if var.size > 1 else "bin")

    buf = io.StringIO()
    g = GTKWSave(buf)
    g.comment(f"pipegossip: the {fabric} fabric with N={size.n} in scope {top}",
              "one group per node: program entry, its links' words, store writes, "
              "accumulator")
    g.dumpfile(named(Path(dump)))
    g.savefile(named(Path(f"{stem}.gtkw")))
    parts = top.split(".")
    for k in range(1, len(parts) + 1):
        g.treeopen(".".join(parts[:k]))
    for name in ("clk", "rst", "start", "busy", "done", "cycle", "length", "load__valid",
                 "load__kind", "load__node", "load__addr", "load__data", "read__node",
                 "read__slot", "read__word", "read__held", "read__acc"):
        if name in ports:
            trace(g, top, ports[name])
    for v, (group, sig) in enumerate(_groups(fabric, size, program)):
        with g.group(group, closed=True):
            node_scope = f"{top}.node{v}"
            entry = d.scopes.get(node_scope, {}).get("prd__data")
            if entry is not None:
                trace(g, node_scope, entry)
            for name in sig:
                if name in ports:
                    trace(g, top, ports[name])
    atomic_write(Path(f"{stem}.gtkw"), buf.getvalue())


# ------------------------------------------------------------------ read back
@dataclass
class ProgramRun:
    """One run read back from a dump: its name, the program, the record and the verdict."""

    name: str
    program: object
    record: object
    verdict: object


class _Edges:
    """A replay's values just before every rising edge of ``clk`` (index by name)."""

    def __init__(self, names: list[str]):
        self.names = names
        self.clk = names.index("clk")
        self.cur: list = [None] * len(names)
        self.pending: dict[int, object] = {}
        self.rows: list[tuple] = []

    def time(self, t: int) -> None:
        self._flush()

    def change(self, index: int, value) -> None:
        self.pending[index] = value

    def end(self) -> None:
        self._flush()
        # the values after the last edge: what an edge after the dump's end would take
        # (the testbench's last read-back answer is sampled there)
        self.rows.append(tuple(self.cur))

    def _flush(self) -> None:
        if not self.pending:
            return
        if self.pending.get(self.clk, self.cur[self.clk]) == 1 and self.cur[self.clk] == 0:
            self.rows.append(tuple(self.cur))
        for k, v in self.pending.items():
            self.cur[k] = v
        self.pending = {}


def _table(fabric: str):
    """``(port table, scalar fields, lane fields, record maker, count(size, spec))``."""
    from ..sim.record import SCHEDULE_LANE_FIELDS, SCHEDULE_SCALAR_FIELDS
    if fabric == "network":
        from ..hw.ports import NETWORK_PORTS
        from ..sim.network.run import (NETWORK_LINK_FIELDS, NETWORK_NODE_FIELDS,
                                       NETWORK_SCALAR_FIELDS, network_record)
        return (NETWORK_PORTS, NETWORK_SCALAR_FIELDS, NETWORK_LINK_FIELDS + NETWORK_NODE_FIELDS,
                network_record, lambda z, s: z.ports if s.per_link else z.n)
    from ..hw.ports import SCHEDULE_PORTS
    from ..sim.schedule.cosim import _record
    return (SCHEDULE_PORTS, SCHEDULE_SCALAR_FIELDS, SCHEDULE_LANE_FIELDS, _record,
            lambda z, s: z.n)


def _program(fabric: str, run: dict):
    from ..model.schedules.ir import loads
    s = loads(json.dumps(run["schedule"]))
    c = run["compile"]
    if fabric == "network":
        from ..model.schedules.network_program import compile_network
        from ..model.schedules.topologies import topology_from_json
        return compile_network(s, topology=topology_from_json(c["topology"]), op=c["op"],
                               width=c["width"], depth=c["depth"], slots=c["slots"],
                               bank_depth=c["bank_depth"])
    from ..model.schedules.program import compile_schedule
    return compile_schedule(s, width=c["width"], depth=c["depth"], slots=c["slots"])


def read_program_dump(path, run: int | None = None) -> list[ProgramRun]:
    """The runs of a program-driven fabric's dump (all, or the ``run``-th, from 1), each
    read back into its record and judged.

    Raises
    ------
    FormatError
        No ``.run.json`` beside the dump, a dump without the fabric's ports,
        or fewer runs in the dump than its ``.run.json`` names.
    """
    from ..hw.ports import NetworkSize, ScheduleSize
    from ..sim.record import schedule_record_field
    from ..sim.schedule.cosim import TAIL
    path = Path(path)
    side = _companion(path, RUN_SUFFIX)
    try:
        doc = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FormatError(f"{path}: no readable {side.name} beside it ({e})") from None
    if doc.get("format") != _FORMAT:
        raise FormatError(f"{side}: not a {_FORMAT} file")
    fabric = doc["fabric"]
    size = (NetworkSize if fabric == "network" else ScheduleSize)(**doc["size"])
    table, scalar_fields, lane_fields, make_record, count = _table(fabric)
    d = open_dump(path)
    scope = _fabric_scope(d)
    if scope is None:
        raise FormatError(f"{path}: no {fabric} fabric's ports in the dump")
    vars_ = d.scopes[scope]
    fields: dict[str, object] = {}
    names = ["clk", "rst", "start", "load__valid", "read__node", "read__slot",
             "read__word", "read__held", "read__acc"]
    for spec in table:
        f = schedule_record_field(spec.key)
        if f in scalar_fields:
            fields[f] = spec.key
        elif f in lane_fields:
            fields[f] = [spec.verilog_name(i) for i in range(count(size, spec))]
    for f, v in fields.items():
        names += v if isinstance(v, list) else [v]
    names = list(dict.fromkeys(names))
    missing = [x for x in names if x not in vars_]
    if missing:
        raise FormatError(f"{path}: scope {scope} lacks {', '.join(missing[:5])}")
    sink = _Edges(names)
    d.replay([vars_[x] for x in names], sink)
    col = {x: i for i, x in enumerate(names)}
    rows = sink.rows

    def at(e: int, x: str):
        v = rows[e][col[x]] if e < len(rows) else None
        return 0 if v is None else int(v)

    out: list[ProgramRun] = []
    e, loads = 0, 0
    runs = doc["runs"]
    for k, r in enumerate(runs):
        # the start edge: start high while not busy, out of reset
        while e < len(rows) and not (at(e, "start") and not at(e, "busy") and not at(e, "rst")):
            loads = loads + 1 if at(e, "load__valid") else 0
            e += 1
        if e >= len(rows):
            raise FormatError(f"{path}: the dump holds {k} run(s); {side.name} names "
                              f"{len(runs)}")
        program = _program(fabric, r)
        max_cycles = program.cycles + 1 + 8
        samples = {f: [] for f in fields}
        done_at, ended, c = None, None, 0
        while True:
            for f, x in fields.items():
                samples[f].append([at(e + c, y) for y in x] if isinstance(x, list)
                                  else at(e + c, x))
            if done_at is None and c > 0 and samples["done"][-1]:
                done_at = c
            if done_at is not None and c - done_at + 1 >= TAIL:
                ended = "done"
                break
            if c >= max_cycles:
                ended = "timeout"
                break
            c += 1
        base = e + c + 1  # the first read-back address is sampled at this edge
        store = [[0] * size.slots for _ in range(size.n)]
        held = [[0] * size.slots for _ in range(size.n)]
        acc = [0] * size.n
        j = 0
        for v in range(size.n):
            for x in range(size.slots):
                a = base + j
                if (at(a, "read__node"), at(a, "read__slot")) != (v, x):
                    raise FormatError(f"{path}: run {k + 1}'s read-back of node {v} slot {x} "
                                      f"is not where the testbench puts it (edge {a})")
                store[v][x], held[v][x] = at(a + 1, "read__word"), at(a + 1, "read__held")
                acc[v] = at(a + 1, "read__acc")
                j += 1
        job = dict(name=r["name"], word_seed=doc["seed"], tail=TAIL, max_cycles=max_cycles,
                   writes=[None] * loads)
        record = make_record(job, size, samples, store, held, acc, ended, 0.0,
                             f"dump {path.name}")
        out.append(ProgramRun(r["name"], program, record, None))
        e = base + j
        loads = 0
    if run is not None:
        if not 1 <= run <= len(out):
            raise FormatError(f"{path}: --run {run}: the dump holds {len(out)} run(s)")
        out = [out[run - 1]]
    for pr in out:
        if fabric == "network":
            from ..sim.judge.network import judge_network
            pr.verdict = judge_network(pr.program, pr.record)
        else:
            from ..sim.judge.schedule import judge_schedule
            pr.verdict = judge_schedule(pr.program, pr.record)
    return out
