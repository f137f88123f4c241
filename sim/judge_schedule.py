"""The judge of the schedule fabric: a :class:`~.record.ScheduleRun` held against its program.

One function, :func:`judge_schedule`, in the judge family beside
:func:`pipegossip.sim.judge.judge`; it fills the one :class:`~.verdict.Verdict`
with :class:`~.verdict.Mismatch` es of the existing kinds. The "model" is the
compiled :class:`~pipegossip.model.schedules.program.Program` (the verdict's
``config``; its ``model`` is None). Checks, cycle by cycle where they are
per cycle:

* ``trace``: in clock cycle ``t + latency`` every node sends exactly the
  program's slot (or nothing) and receives from exactly the program's source
  into the program's slot (or nothing); nothing is sent or received outside
  the program's cycles; and the schedule read back from the trace equals the
  compiled one (:func:`~pipegossip.model.schedules.program.canonical`);
* ``delivery``: every sent word is its slot's tagged word, every received
  word the word its source sent; after the run every node's store holds
  exactly the model's items (held bits) with their words; every item reached
  every node the primitive needs it at (a check independent of the
  compiler); accumulators equal the model's sums, and the root's equals the
  primitive's reduction (every other node's items, wrapping sum);
* ``busy``/``done``/``cycle``: busy in cycles 1..L+latency, ``done`` after
  them, ``cycle`` = t in exchange cycles and 0 otherwise, ``length`` = L;
* ``timeout``/``record``: the run ended and the producer saw no x/z.
"""

from __future__ import annotations

import numpy as np

from ..hw.schedule.load import slot_words
from ..model.errors import FormatError
from ..model.schedules.program import NONE, Program, canonical
from .record import ScheduleRun
from .verdict import Mismatch, Verdict

__all__ = ["judge_schedule", "schedule_verdict_json"]


def _needs(program: Program) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, slots) every one of which must be held at the end, by the primitive alone."""
    s, n, h = program.schedule, program.n, program.items
    items = np.arange(n * h)
    if s.primitive == "gossip":
        return np.arange(n), items
    if s.primitive == "broadcast":
        return np.arange(n), s.root + n * np.arange(h)
    return np.array([s.root]), items  # gather, polling


def judge_schedule(program: Program, record: ScheduleRun, seed: int | None = None) -> Verdict:
    """Every way ``record`` differs from ``program``'s expected run.

    Parameters
    ----------
    program : Program
        The compiled schedule that was loaded.
    record : ScheduleRun
        The fabric's samples and read-back stores.
    seed : int, optional
        Word seed of the loaded words (default: the record's).

    Returns
    -------
    Verdict
        ``config`` is the program (it has ``slug`` and ``header()``), ``model`` None.
    """
    seed = record.spec.word_seed if seed is None else seed
    words = slot_words(program, seed or 0)
    out: list[Mismatch] = []
    add = out.append
    n, L, lat = program.n, program.cycles, record.latency
    S = record.samples
    T = len(S["busy"])
    if record.n != n:
        add(Mismatch("record", None, None, f"{n} nodes", f"{record.n}"))
        return Verdict(config=program, run=record, model=None, mismatches=out)
    for p in record.problems:
        add(Mismatch("record", None, None, "a clean sample", p))
    if record.ended != "done":
        add(Mismatch("timeout", None, None, f"done after {L + lat} cycles",
                     f"ended {record.ended} after {T} samples"))

    # fabric-wide outputs
    for k in range(1, T):
        t = k - lat
        exch = 1 <= t <= L
        if int(S["busy"][k]) != int(1 <= k <= L + lat):
            add(Mismatch("busy", k, None, str(int(1 <= k <= L + lat)), str(int(S["busy"][k]))))
        if int(S["done"][k]) != int(k > L + lat):
            add(Mismatch("done", k, None, str(int(k > L + lat)), str(int(S["done"][k]))))
        if int(S["cycle"][k]) != (t if exch else 0):
            add(Mismatch("cycle", k, None, str(t if exch else 0), str(int(S["cycle"][k]))))
    if T and int(S["length"][0]) != L:
        add(Mismatch("cycle", 0, None, f"length {L}", f"length {int(S['length'][0])}"))

    # the trace, cycle by cycle, and the words on it
    exp_send = np.full((T, n), NONE, dtype=np.int64)
    exp_src = np.full((T, n), NONE, dtype=np.int64)
    exp_recv = np.full((T, n), NONE, dtype=np.int64)
    lo, hi = lat + 1, min(T, L + lat + 1)
    if hi > lo:
        exp_send[lo:hi] = program.send[:hi - lo]
        exp_src[lo:hi] = program.source[:hi - lo]
        exp_recv[lo:hi] = program.recv[:hi - lo]
    sv, ss, sw = (record.lane(f) for f in ("send_valid", "send_slot", "send_word"))
    rv, rs, rslot, rw = (record.lane(f) for f in ("recv_valid", "recv_source", "recv_slot",
                                                  "recv_word"))
    got_send = np.where(sv != 0, ss, NONE)
    got_src = np.where(rv != 0, rs, NONE)
    got_recv = np.where(rv != 0, rslot, NONE)
    for k, v in zip(*np.nonzero((got_send != exp_send) | (got_src != exp_src)
                                | (got_recv != exp_recv))):
        add(Mismatch("trace", int(k), int(v),
                     _slot(exp_send[k, v], exp_src[k, v], exp_recv[k, v]),
                     _slot(got_send[k, v], got_src[k, v], got_recv[k, v])))
    for k, v in zip(*np.nonzero(sv != 0)):
        x = int(ss[k, v])
        if x < len(words) and int(sw[k, v]) != words[x]:
            add(Mismatch("delivery", int(k), int(v), f"sends word {words[x]:#x} of slot {x}",
                         f"{int(sw[k, v]):#x}"))
    for k, v in zip(*np.nonzero(rv != 0)):
        u = int(rs[k, v])
        if u < n and sv[k, u] and int(rw[k, v]) != int(sw[k, u]):
            add(Mismatch("delivery", int(k), int(v), f"the word p{u} sends ({int(sw[k, u]):#x})",
                         f"{int(rw[k, v]):#x}"))
    if hi - lo == L:
        back = program.read_back(got_send[lo:hi], got_src[lo:hi], got_recv[lo:hi])
        want = canonical(program.schedule)
        try:
            got = canonical(back)
        except FormatError as e:  # the trace is not even a valid schedule
            got = [[("invalid", str(e))]]
        if want != got:
            r = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b),
                     min(len(want), len(got)))
            add(Mismatch("trace", None, None, f"round {r + 1} of the schedule",
                         f"read back {got[r] if r < len(got) else 'nothing'}",
                         "read-back schedule"))

    # the stores after the run
    final = program.final
    for v in range(n):
        for x in range(program.slots):
            held = int(record.held[v][x])
            if held != int(final[v, x]):
                add(Mismatch("delivery", None, v, f"slot {x} {'held' if final[v, x] else 'empty'}",
                             "held" if held else "empty", "final store"))
            elif held and int(record.store[v][x]) != words[x]:
                add(Mismatch("delivery", None, v, f"slot {x} = {words[x]:#x}",
                             f"{int(record.store[v][x]):#x}", "final store"))
    nodes, need = _needs(program)
    held = np.asarray(record.held, dtype=bool)
    for v in nodes:
        lack = [int(x) for x in need if not held[v, x]]
        if lack:
            add(Mismatch("delivery", None, int(v), "every item", f"lacks items {lack[:8]}",
                         f"incomplete {program.schedule.primitive}"))
    acc = program.expected_accumulators(words)
    for v in range(n):
        if int(record.acc[v]) != acc[v]:
            add(Mismatch("delivery", None, v, f"accumulator {acc[v]:#x}",
                         f"{int(record.acc[v]):#x}", "combine"))
    red = program.reduction(words)
    if red is not None and int(record.acc[program.schedule.root]) != red:
        add(Mismatch("delivery", None, program.schedule.root, f"reduction {red:#x}",
                     f"{int(record.acc[program.schedule.root]):#x}", "combined result"))
    out.sort(key=Mismatch.sort_key)
    return Verdict(config=program, run=record, model=None, mismatches=out)


def _slot(send: int, src: int, recv: int) -> str:
    s = "-" if send == NONE else f"send {send}"
    r = "-" if src == NONE else f"recv {recv} from p{src}"
    return f"{s}, {r}"


def schedule_verdict_json(v: Verdict) -> dict:
    """A schedule verdict as JSON (``Verdict.to_json`` reads FSM-fabric run-tables)."""
    p: Program = v.config
    run: ScheduleRun = v.run
    first = v.first_mismatch
    return dict(match=v.match, schedule=run.name, algorithm=p.algorithm, n=p.n,
                primitive=p.schedule.primitive, R=p.rounds, cycles=p.cycles,
                latency=run.latency, busy_cycles=run.busy_cycles,
                load_cycles=run.load_cycles, word_seed=run.spec.word_seed,
                first_mismatch=None if first is None else first.to_json(),
                mismatch_counts=v.counts(), mismatches=[m.to_json() for m in v.mismatches[:100]])
