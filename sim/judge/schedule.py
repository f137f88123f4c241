"""The judge of the schedule fabric: a :class:`~.record.ScheduleRun` held against its program.

One function, :func:`judge_schedule`, in the judge family beside
:func:`pipegossip.sim.judge.fsm.judge`; it fills the one :class:`~.verdict.Verdict`
with :class:`~.verdict.Mismatch` es of the existing kinds. The "model" is the
compiled :class:`~pipegossip.model.schedules.program.Program` (the verdict's
``config``; its ``model`` is None). Checks, cycle by cycle where they are
per cycle:

* ``trace``: in clock cycle ``t + latency`` every node sends exactly the
  program's slot or its accumulator (or nothing) and receives from exactly
  the program's source into the program's slot and/or its accumulator (or
  nothing); nothing is sent or received outside
  the program's cycles; and the schedule read back from the trace equals the
  compiled one (:func:`~pipegossip.model.schedules.program.canonical`);
* ``delivery``: every sent word is its slot's tagged word (an accumulator
  sent: the model's sum of its tokens in that cycle), every received word
  the word its source sent; after the run every node's store holds
  exactly the model's items (held bits) with their words; every item reached
  every node the primitive needs it at (a check independent of the
  compiler); accumulators equal the model's sums, and the root's (every
  node's, allreduce) equals the primitive's reduction (gather, polling:
  every other node's items; reduce, allreduce: every token; wrapping sum);
* ``busy``/``done``/``cycle``: busy in cycles 1..L+latency, ``done`` after
  them, ``cycle`` = t in exchange cycles and 0 otherwise, ``length`` = L;
* ``timeout``/``record``: the run ended and the producer saw no x/z.

A :class:`~pipegossip.model.schedules.stream.StreamProgram` (G gossips back
to back, slots reused, the next gossips' words loaded while the fabric runs)
is judged the same way against its physical program, and further: every
sent and every received word is the tagged word of the item (gossip ``g``,
node ``v``: session ``g``) the program moves in that cycle; every node
received every other node's word of every gossip with the right value; the
final stores hold each slot's last item; and every timed load the record
captured is the right word, in its window of the load timetable, not lost
to a receive into the same slot at the same edge, none missing (``delivery``
mismatches with the load's cycle and node). :func:`port_figures` measures
per-port utilisation and all-to-alls per 1000 cycles from the record.
"""

from __future__ import annotations

from itertools import zip_longest

import numpy as np

from ...hw.schedule.load import slot_words
from ...model.errors import FormatError
from ...model.schedules.program import ACC, NONE, WHOLE_ACC, Program, canonical
from ...model.schedules.stream import StreamProgram
from ..record import ScheduleRun
from .verdict import Mismatch, Verdict

__all__ = ["judge_schedule", "schedule_verdict_json", "port_figures", "control_checks"]


def control_checks(record: ScheduleRun, L: int) -> list[Mismatch]:
    """The producer's problems, the run's end, and the fabric-wide outputs of a program run.

    Shared by the program-driven fabrics' judges: ``busy`` in clock cycles
    1..L+latency, ``done`` after them, ``cycle`` = t in exchange cycle
    ``t + latency`` and 0 otherwise, ``length`` = ``L``.
    """
    out: list[Mismatch] = []
    add = out.append
    S, lat = record.samples, record.latency
    T = len(S["busy"])
    for p in record.problems:
        add(Mismatch("record", None, None, "a clean sample", p))
    if record.ended != "done":
        add(Mismatch("timeout", None, None, f"done after {L + lat} cycles",
                     f"ended {record.ended} after {T} samples"))
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
    return out


def _needs(program: Program) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, slots) every one of which must be held at the end, by the primitive alone."""
    s, n, h = program.schedule, program.n, program.items
    items = np.arange(n * h)
    if s.primitive in WHOLE_ACC:  # nothing is stored: the accumulators say it all
        return np.arange(0), items[:0]
    if s.primitive == "gossip":
        return np.arange(n), items
    if s.primitive == "broadcast":
        return np.arange(n), s.root + n * np.arange(h)
    return np.array([s.root]), items  # gather, polling


def judge_schedule(program: Program | StreamProgram, record: ScheduleRun,
                   seed: int | None = None) -> Verdict:
    """Every way ``record`` differs from ``program``'s expected run.

    Parameters
    ----------
    program : Program or StreamProgram
        The compiled schedule that was loaded (a streaming one: with its
        load timetable).
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
    stream = program if isinstance(program, StreamProgram) else None
    verdict_config, program = program, (stream.program if stream else program)
    words = slot_words(program, seed or 0)
    out: list[Mismatch] = []
    add = out.append
    n, L, lat = program.n, program.cycles, record.latency
    T = len(record.samples["busy"])
    if record.n != n:
        add(Mismatch("record", None, None, f"{n} nodes", f"{record.n}"))
        return Verdict(config=verdict_config, run=record, model=None, mismatches=out)
    out += control_checks(record, L)

    # the trace, cycle by cycle, and the words on it
    exp_send = np.full((T, n), NONE, dtype=np.int64)
    exp_src = np.full((T, n), NONE, dtype=np.int64)
    exp_recv = np.full((T, n), NONE, dtype=np.int64)
    exp_comb = np.zeros((T, n), dtype=bool)
    lo, hi = lat + 1, min(T, L + lat + 1)
    if hi > lo:
        exp_send[lo:hi] = program.send[:hi - lo]
        exp_src[lo:hi] = program.source[:hi - lo]
        exp_recv[lo:hi] = program.recv[:hi - lo]
        exp_comb[lo:hi] = program.combine[:hi - lo]
    sv, ss, sw, sa = (record.lane(f) for f in ("send_valid", "send_slot", "send_word",
                                               "send_acc"))
    rv, rs, rslot, rw, rc = (record.lane(f) for f in ("recv_valid", "recv_source", "recv_slot",
                                                      "recv_word", "recv_comb"))
    got_send = np.where(sv != 0, np.where(sa != 0, ACC, ss), NONE)
    got_src = np.where((rv != 0) | (rc != 0), rs, NONE)
    got_recv = np.where(rv != 0, rslot, NONE)
    got_comb = rc != 0
    for k, v in zip(*np.nonzero((got_send != exp_send) | (got_src != exp_src)
                                | (got_recv != exp_recv) | (got_comb != exp_comb))):
        add(Mismatch("trace", int(k), int(v),
                     _slot(exp_send[k, v], exp_src[k, v], exp_recv[k, v], exp_comb[k, v]),
                     _slot(got_send[k, v], got_src[k, v], got_recv[k, v], got_comb[k, v])))
    accs = program.acc_values(words)
    for k, v in zip(*np.nonzero(sv != 0)):
        x = int(ss[k, v])
        if stream is not None:
            continue  # a slot's word changes over time: _stream_checks
        if sa[k, v]:
            c = int(k) - lo
            if 0 <= c < L and int(sw[k, v]) != accs[c][v]:
                add(Mismatch("delivery", int(k), int(v), f"sends accumulator {accs[c][v]:#x}",
                             f"{int(sw[k, v]):#x}", "combine"))
        elif x < len(words) and int(sw[k, v]) != words[x]:
            add(Mismatch("delivery", int(k), int(v), f"sends word {words[x]:#x} of slot {x}",
                         f"{int(sw[k, v]):#x}"))
    for k, v in zip(*np.nonzero((rv != 0) | (rc != 0))):
        u = int(rs[k, v])
        if u < n and sv[k, u] and int(rw[k, v]) != int(sw[k, u]):
            add(Mismatch("delivery", int(k), int(v), f"the word p{u} sends ({int(sw[k, u]):#x})",
                         f"{int(rw[k, v]):#x}"))
    if hi - lo == L:
        sent = got_send[lo:hi]
        if stream is not None:  # physical slots -> items (a wrong slot reads as another item)
            sent = np.where(sent == exp_send[lo:hi], stream.logical.send, sent)
        back = (stream.logical if stream else program).read_back(sent, got_src[lo:hi],
                                                                 got_recv[lo:hi])
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
    if stream is not None:
        items = stream.final_items()
        iw = slot_words(stream.logical, seed or 0)
        final_word = [[iw[i] if i != NONE else 0 for i in row] for row in items]
    else:
        final_word = [words] * n
    for v in range(n):
        for x in range(program.slots):
            held = int(record.held[v][x])
            if held != int(final[v, x]):
                add(Mismatch("delivery", None, v, f"slot {x} {'held' if final[v, x] else 'empty'}",
                             "held" if held else "empty", "final store"))
            elif held and int(record.store[v][x]) != final_word[v][x]:
                add(Mismatch("delivery", None, v, f"slot {x} = {final_word[v][x]:#x}",
                             f"{int(record.store[v][x]):#x}", "final store"))
    if stream is not None:
        out += _stream_checks(stream, record, seed or 0, exp_send, exp_src, exp_recv)
    else:
        nodes, need = _needs(program)
        held = np.asarray(record.held, dtype=bool)
        for v in nodes:
            lack = [int(x) for x in need if not held[v, x]]
            if lack:
                add(Mismatch("delivery", None, int(v), "every item", f"lacks items {lack[:8]}",
                             f"incomplete {program.schedule.primitive}"))
    acc = accs[-1]
    for v in range(n):
        if int(record.acc[v]) != acc[v]:
            add(Mismatch("delivery", None, v, f"accumulator {acc[v]:#x}",
                         f"{int(record.acc[v]):#x}", "combine"))
    red = program.reduction(words)
    for v in (program.reduction_nodes() if red is not None else []):
        if int(record.acc[v]) != red:
            add(Mismatch("delivery", None, v, f"reduction {red:#x}",
                         f"{int(record.acc[v]):#x}", "combined result"))
    out.sort(key=Mismatch.sort_key)
    return Verdict(config=verdict_config, run=record, model=None, mismatches=out)


def _rows(sp: StreamProgram, record: ScheduleRun, arr: np.ndarray) -> np.ndarray:
    """A ``(cycles, n)`` program array laid on the record's clock cycles (NONE outside)."""
    T, lat = len(record.samples["busy"]), record.latency
    out = np.full((T, sp.n), NONE, dtype=np.int64)
    lo, hi = lat + 1, min(T, sp.cycles + lat + 1)
    if hi > lo:
        out[lo:hi] = arr[:hi - lo]
    return out


def _stream_checks(sp: StreamProgram, record: ScheduleRun, seed: int, exp_send: np.ndarray,
                   exp_src: np.ndarray, exp_recv: np.ndarray) -> list[Mismatch]:
    """Words per gossip, arrival of every word at every node, and the timed loads."""
    out: list[Mismatch] = []
    add = out.append
    n, G = sp.n, sp.gossips
    iw = slot_words(sp.logical, seed)
    item_send = _rows(sp, record, sp.logical.send)
    item_recv = _rows(sp, record, sp.logical.recv)
    sv, ss, sw = (record.lane(f) for f in ("send_valid", "send_slot", "send_word"))
    rv, rs, rslot, rw = (record.lane(f) for f in ("recv_valid", "recv_source", "recv_slot",
                                                  "recv_word"))

    def name(i: int) -> str:
        return f"item {i} (gossip {i // n}, p{i % n})"

    for k, v in zip(*np.nonzero((sv != 0) & (item_send != NONE))):
        i = int(item_send[k, v])
        if int(sw[k, v]) != iw[i]:
            add(Mismatch("delivery", int(k), int(v), f"sends {iw[i]:#x}, {name(i)}",
                         f"{int(sw[k, v]):#x}"))
    got = np.zeros((n, G * n), dtype=bool)
    got[np.arange(G * n) % n, np.arange(G * n)] = True  # a node's own words
    for k, v in zip(*np.nonzero((rv != 0) & (item_recv != NONE))):
        i = int(item_recv[k, v])
        if int(rw[k, v]) != iw[i]:
            add(Mismatch("delivery", int(k), int(v), f"receives {iw[i]:#x}, {name(i)}",
                         f"{int(rw[k, v]):#x}"))
        elif int(rs[k, v]) == exp_src[k, v] and int(rslot[k, v]) == exp_recv[k, v]:
            got[v, i] = True
    for v in range(n):
        lack = [int(i) for i in np.flatnonzero(~got[v])]
        if lack:
            add(Mismatch("delivery", None, v, f"every word of {G} gossips",
                         f"lacks {', '.join(name(i) for i in lack[:4])}"
                         + (f" and {len(lack) - 4} more" if len(lack) > 4 else ""),
                         "incomplete gossip"))
    # the timed loads: right word, in the window, not lost, none missing
    want: dict[tuple[int, int], list] = {}
    for ld in sp.loads:
        want.setdefault((ld.node, ld.slot), []).append(ld)
    seen: dict[tuple[int, int], list] = {}
    for w in record.loads:
        seen.setdefault((int(w[2]), int(w[3])), []).append(w)
    for key in sorted(set(want) | set(seen)):
        rec = sorted(seen.get(key, []), key=lambda w: w[0])
        # a load in an expected load's window is that load's (so a missing load is
        # named in its own window, not at the next one); the rest pair up in order
        pairs, late = [], []
        for ld in sorted(want.get(key, []), key=lambda x: x.earliest):
            w = next((w for w in rec if ld.earliest <= w[0] <= ld.latest), None)
            if w is None:
                late.append(ld)
            else:
                rec.remove(w)
                pairs.append((ld, w))
        pairs += zip_longest(late, rec)
        for ld, w in pairs:
            if w is None:
                add(Mismatch("delivery", ld.earliest, ld.node,
                             f"a load of {name(ld.item)} into slot {ld.slot} in cycles "
                             f"{ld.earliest}..{ld.latest}", "none", "load timetable"))
                continue
            k, _, v, x, word = (int(a) for a in w)
            if 0 < k < len(rv) and rv[k, v] and int(rslot[k, v]) == x:
                add(Mismatch("delivery", k, v, f"a load into slot {x} that lands",
                             "a receive into the same slot at the same edge (the receive "
                             "wins: the load is lost)", "load"))
            if ld is None:
                add(Mismatch("delivery", k, v, "no load", f"a load into slot {x}",
                             "load timetable"))
                continue
            if not ld.earliest <= k <= ld.latest:
                add(Mismatch("delivery", k, v, f"{name(ld.item)} loaded into slot {x} in "
                             f"cycles {ld.earliest}..{ld.latest}", f"loaded in cycle {k}",
                             "load timetable"))
            if word != iw[ld.item]:
                add(Mismatch("delivery", k, v, f"load word {iw[ld.item]:#x} of {name(ld.item)}",
                             f"{word:#x}", "load"))
    return out


def port_figures(program: Program | StreamProgram, record: ScheduleRun) -> dict:
    """Per-port utilisation and all-to-alls per 1000 cycles, measured from ``record``.

    Returns
    -------
    dict
        ``exchange_cycles`` (cycles with ``cycle > 0``), ``busy_cycles``;
        ``send_util`` / ``recv_util``: per node, the fraction of exchange
        cycles in which its port sent / received; ``min_util`` the least of
        them; ``gossips``; ``complete``: the clock cycle in which each
        gossip's last word arrived (from the trace); ``period``: the mean
        cycles between consecutive completions (steady state, G >= 2, else
        None); ``per_1000``: 1000 / period; ``per_1000_run``: gossips per
        1000 busy cycles, fill and drain included.
    """
    ex = np.asarray(record.samples["cycle"]) > 0
    m = max(int(ex.sum()), 1)
    send = (record.lane("send_valid")[ex] != 0).sum(axis=0) / m
    recv = (record.lane("recv_valid")[ex] != 0).sum(axis=0) / m
    sp = program if isinstance(program, StreamProgram) else None
    logical = sp.logical if sp else program
    G = sp.gossips if sp else 1
    n = logical.n
    item_recv = np.full((len(ex), n), NONE, dtype=np.int64)
    lat = record.latency
    lo, hi = lat + 1, min(len(ex), logical.cycles + lat + 1)
    item_recv[lo:hi] = logical.recv[:hi - lo]
    arrived = (record.lane("recv_valid") != 0) & (item_recv != NONE)
    gossip = np.where(arrived, item_recv // n, -1)
    complete = [int(np.flatnonzero((gossip == g).any(axis=1)).max(initial=-1)) for g in range(G)]
    period = (complete[-1] - complete[0]) / (G - 1) if G > 1 else None
    busy = record.busy_cycles
    return dict(exchange_cycles=int(ex.sum()), busy_cycles=busy, gossips=G,
                send_util=[round(float(x), 4) for x in send],
                recv_util=[round(float(x), 4) for x in recv],
                min_util=round(float(min(send.min(), recv.min())), 4), complete=complete,
                period=period, per_1000=None if not period else round(1000 / period, 1),
                per_1000_run=round(1000 * G / busy, 1) if busy else None)


def _slot(send: int, src: int, recv: int, comb: bool = False) -> str:
    s = "-" if send == NONE else ("send acc" if send == ACC else f"send {send}")
    if src == NONE:
        r = "-"
    elif recv == NONE:
        r = f"combine from p{src}" if comb else f"select p{src}"
    else:
        r = f"recv {recv} from p{src}" + (" and combine" if comb else "")
    return f"{s}, {r}"


def schedule_verdict_json(v: Verdict) -> dict:
    """A schedule verdict as JSON (``Verdict.to_json`` reads FSM-fabric run-tables)."""
    p: Program = v.config
    run: ScheduleRun = v.run
    first = v.first_mismatch
    extra = {}
    if isinstance(p, StreamProgram):
        extra = dict(stream=dict(banks=p.banks, timed_loads=len(p.loads),
                                 **port_figures(p, run)))
    return dict(**extra, match=v.match, schedule=run.name, algorithm=p.algorithm, n=p.n,
                primitive=p.schedule.primitive, R=p.rounds, cycles=p.cycles,
                latency=run.latency, busy_cycles=run.busy_cycles,
                load_cycles=run.load_cycles, word_seed=run.spec.word_seed,
                first_mismatch=None if first is None else first.to_json(),
                mismatch_counts=v.counts(), mismatches=[m.to_json() for m in v.mismatches[:100]])
