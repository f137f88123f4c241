"""The judge: any trace record held against the golden model.

This is the only place where hardware is compared with the model. Every
producer (the cocotb testbench, the Amaranth-simulator runner, the waveform
read-back, ``hwsim``) makes a :class:`~pipegossip.sim.record.HwRun` and
calls :func:`judge` (a normal run) or :func:`judge_watchdog` (a run with the
``hold`` input set); every caller reads the one :class:`Verdict`.

The model is :func:`pipegossip.model.simulate` with ``table=True``; nothing
here decides what a processor should do. For a normal run the judge demands,
cycle by cycle:

* ``trace``: every processor's action code AND peer equal the model's run-table
  in cycles 1..L, and idle (0, peer 0) afterwards;
* ``used``: the ``used`` output equals the model's utilisation string;
* ``busy``/``done``/``cycle``: busy in exactly cycles 1..L, ``done`` from cycle
  L+1 on, ``cycle`` = t during the run and 0 otherwise (so L matches);
* ``stall``: never high;
* ``delivery``: exactly the model's transfers, each at its step, to its
  receiver, with the right source id, session and tagged word
  (:mod:`pipegossip.hw.words`, or the word the record shows taken when its
  seed is unknown); nothing after ``done``; and, independently of the model,
  every word reaches every other processor exactly once per session;
* ``handshake``: each processor takes session 0's word with ``start`` and
  session s+1's word in the cycle of its last action of session s (read off
  the model's run-table);
* ``idle``: before the start every output is at rest;
* ``record``: the producer saw nothing it could not record (x/z values).

A check whose ports the record lacks is not passed silently: the verdict
lists it in :attr:`Verdict.unchecked`.

A :class:`Verdict` lists every :class:`Mismatch` and renders a report whose
first lines name the first differing cycle and processor, with the model's
and the hardware's rows around it printed one above the other.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np

from ...model.config import RunConfig
from ...model.engine import simulate
from ...model.result import RunResult
from ...model.runtable import R, S, RunTable
from ...hw.words import WordScheme
from ..record import HwRun
from .verdict import KINDS, Mismatch, Verdict, show

__all__ = ["Mismatch", "Verdict", "judge", "judge_watchdog", "show", "model_result",
           "session_ends", "KINDS"]

#: The record fields each check needs, beyond the trace.
NEEDS = {"used": ("used",), "busy": ("busy",), "done": ("done",), "cycle": ("cycle",),
         "stall": ("stall",), "delivery": ("dvalid", "dsource", "dsession"),
         "delivery words": ("dvalid", "dsource", "dsession", "dword"),
         "handshake": ("ready", "valid")}


@lru_cache(maxsize=64)
def model_result(config: RunConfig) -> RunResult:
    """The model's run with its table (cached: tests judge one config many times)."""
    return simulate(config, table=True)


def session_ends(table: RunTable, sessions: int) -> np.ndarray:
    """``ends[p, s]``: the step of processor p's last action of session s.

    Each session is 2(N-1) used slots of a processor (docs/reference.md),
    so the end of session s is its 2(N-1)(s+1)-th used slot in the model's table.
    """
    n = table.n
    per = 2 * (n - 1)
    ends = np.zeros((n, sessions), dtype=np.int64)
    for p in range(n):
        steps = np.flatnonzero((table.actions[p] == S) | (table.actions[p] == R)) + 1
        ends[p] = steps[per - 1::per][:sessions]
    return ends


def _unchecked(run: HwRun) -> list[str]:
    """The checks of :data:`NEEDS` whose fields ``run`` lacks, each naming them."""
    out = []
    for check, fields in NEEDS.items():
        absent = [f for f in fields if f not in run.samples]
        if absent and not (check == "delivery words" and "dvalid" not in run.samples):
            out.append(f"{check} (no {', '.join(absent)})")
    return out


def judge(config: RunConfig, width: int, run: HwRun) -> Verdict:
    """Hold one normal run (``hold`` = 0) against the model of ``config``.

    Parameters
    ----------
    config : RunConfig
        The configuration the fabric was built for.
    width : int
        Word width in bits (sizes the tagged words).
    run : HwRun
        The record, from any producer.

    Returns
    -------
    Verdict
        Every mismatch, first cycle first, and the checks the record's
        fields did not allow.
    """
    model = model_result(config)
    out: list[Mismatch] = []
    if run.n != config.n:
        out.append(Mismatch("trace", None, None, f"N={config.n}", f"N={run.n}",
                            "the record holds another fabric"))
        return Verdict(config, run, model, out)
    if run.summary is not None:
        return _judge_summary(config, run, model)
    table = model.table
    n, length = config.n, model.length
    unchecked = _unchecked(run)
    add = out.append
    last = run.last_cycle

    if run.ended != "done":
        add(Mismatch("timeout", last, None, f"done after cycle {length}",
                     f"no done within {run.spec.max_cycles} cycles"
                     if run.ended == "timeout" else "stopped by the watchdog"))

    # Trace, used, busy, done, cycle, stall: every sampled cycle from the start on.
    for t in range(0, last + 1):
        inside = 1 <= t <= length
        act = run.at("action", t)
        peer = run.at("peer", t)
        if inside:
            ea, ep = table.actions[:, t - 1], table.peers[:, t - 1]
        else:
            ea, ep = np.zeros(n, np.uint8), np.zeros(n, np.int32)
        for p in np.flatnonzero((act != ea) | (peer != ep)):
            add(Mismatch("trace", t, int(p), show(int(ea[p]), int(ep[p])),
                         show(int(act[p]), int(peer[p])),
                         "" if inside else ("after done" if t > length else "start cycle")))
        expect = dict(used=int(model.utilization[t - 1]) if inside else 0, busy=int(inside),
                      done=int(t > length), cycle=t if inside else 0, stall=0)
        if t == 0:
            del expect["done"]  # at the start cycle done still shows the previous run
        for name, want in expect.items():
            if name not in run.samples:
                continue
            got = int(run.at(name, t))
            if got != want:
                add(Mismatch(name, t, None, str(want), str(got)))

    if run.has(*NEEDS["delivery"]):
        _check_deliveries(config, width, run, model, out, unchecked)
    if run.has(*NEEDS["handshake"]):
        _check_handshakes(config, run, table, out)
    _check_idle(run, out)
    _record_problems(run, out)
    out.sort(key=Mismatch.sort_key)
    return Verdict(config, run, model, out, unchecked)


def _judge_summary(config: RunConfig, run: HwRun, model: RunResult) -> Verdict:
    """A fast-mode record (:mod:`~pipegossip.sim.fast.mode`): the in-hardware checker's summary.

    The checker compared every output with the model's rows every cycle and
    names the first differing cycle (its processor, when the first kind is
    per processor); the totals it counted independently of those rows are
    held against the model here: L (busy cycles, ``done`` rising at L+1),
    the number of deliveries, the sum of ``used``, the state after the tail,
    and rest outside the run.
    """
    s = run.summary
    out: list[Mismatch] = []
    add = out.append
    length = model.length
    first = s.get("first_mismatch")
    if first is not None:
        kinds = first["kinds"]
        add(Mismatch(kinds[0], first["cycle"], first["processor"], "the model's slot",
                     "a different value (fast-mode checker)",
                     "also " + ", ".join(kinds[1:]) if len(kinds) > 1 else ""))
    if not s["finished"]:
        add(Mismatch("timeout", None, None, f"cycles 0..{length} checked",
                     "the checker did not finish"))
    if s["done_at"] != length + 1:
        add(Mismatch("done", s["done_at"] or None, None, f"done from cycle {length + 1}",
                     f"done from cycle {s['done_at']}" if s["done_at"] else "no done"))
    if s["busy_cycles"] != length:
        add(Mismatch("busy", None, None, f"{length} busy cycles", f"{s['busy_cycles']}"))
    if s["deliveries"] != len(model.deliveries):
        add(Mismatch("delivery", None, None, f"{len(model.deliveries)} deliveries",
                     f"{s['deliveries']} deliveries"))
    if s["used_sum"] != int(model.utilization.sum()):
        add(Mismatch("used", None, None, f"sum {int(model.utilization.sum())}",
                     f"sum {s['used_sum']}"))
    final = s["final"]
    if final["busy"] or final["stall"] or not final["done"]:
        add(Mismatch("done", None, None, "busy=0 done=1 stall=0 after the run",
                     " ".join(f"{k}={v}" for k, v in final.items())))
    if not s["at_rest"]:
        add(Mismatch("idle", None, None, "every output at rest outside the run",
                     "an output was not"))
    _record_problems(run, out)
    out.sort(key=Mismatch.sort_key)
    return Verdict(config, run, model, out)


def _record_problems(run: HwRun, out: list[Mismatch]) -> None:
    for problem in run.problems:
        out.append(Mismatch("record", None, None, "a clean record", problem))


def _expected_words(config: RunConfig, width: int, run: HwRun) -> list[list[int | None]] | None:
    """``words[src][session]`` the deliveries must carry, or None if unknowable.

    With a known seed, the tagged words (:class:`~pipegossip.hw.words.WordScheme`);
    otherwise what the record shows each processor taking at its handshakes.
    """
    if run.spec.word_seed is not None:
        return WordScheme(config.n, config.sessions, width, run.spec.word_seed).table()
    if not run.has("ready", "valid", "payload"):
        return None
    words: list[list[int | None]] = [[None] * config.sessions for _ in range(config.n)]
    taken = run.window("ready", 0, run.last_cycle) & run.window("valid", 0, run.last_cycle)
    payload = run.window("payload", 0, run.last_cycle)
    for p in range(config.n):
        for s, ti in enumerate(np.flatnonzero(taken[:, p])[:config.sessions]):
            words[p][s] = int(payload[ti, p])
    return words


def _check_deliveries(config: RunConfig, width: int, run: HwRun, model: RunResult,
                      out: list[Mismatch], unchecked: list[str]) -> None:
    words = _expected_words(config, width, run) if run.has("dword") else None
    if words is None and run.has("dword"):
        unchecked.append("delivery words (unknown seed and no ready, valid, payload)")
    last = run.last_cycle
    expected = {}
    for step, src, dst, sess in model.deliveries.rows():
        expected[(step, dst)] = (src, sess, None if words is None else words[src][sess])
    got = {}
    valid = run.window("dvalid", 1, last)
    for ti, p in zip(*np.nonzero(valid)):
        t = int(ti) + 1
        got[(t, int(p))] = (int(run.at("dsource", t)[p]), int(run.at("dsession", t)[p]),
                            None if words is None else int(run.at("dword", t)[p]))

    def fmt(d) -> str:
        word = "" if d[2] is None else f"word {d[2]:#x} "
        return f"{word}from p{d[0]} session {d[1]}"

    for key in sorted(set(expected) | set(got)):
        t, p = key
        e, g = expected.get(key), got.get(key)
        if e == g or (e is not None and g is not None and e[2] is None and e[:2] == g[:2]):
            continue  # a word nobody was seen taking cannot be wrong
        note = "after done" if t > model.length else ""
        add = out.append
        if g is None:
            add(Mismatch("delivery", t, p, fmt(e), "no delivery"))
        elif e is None:
            add(Mismatch("delivery", t, p, "no delivery", fmt(g), note))
        else:
            add(Mismatch("delivery", t, p, fmt(e), fmt(g)))

    # Gossip itself, whatever the schedule: each word to every other processor,
    # once per session. Catches a duplicate the per-step comparison names only
    # as "unexpected".
    seen = Counter((g[0], p, g[1]) for (t, p), g in got.items())
    for src in range(config.n):
        for dst in range(config.n):
            if src == dst:
                continue
            for sess in range(config.sessions):
                c = seen.get((src, dst, sess), 0)
                if c != 1:
                    out.append(Mismatch("delivery", None, dst, "1 delivery",
                                        f"{c} deliveries",
                                        f"word of p{src}, session {sess}"))


def _check_handshakes(config: RunConfig, run: HwRun, table: RunTable,
                      out: list[Mismatch]) -> None:
    ends = session_ends(table, config.sessions)
    last = run.last_cycle
    taken = run.window("ready", 0, last) & run.window("valid", 0, last)
    for p in range(config.n):
        want = [0] + [int(c) for c in ends[p, :config.sessions - 1]]
        got = [int(c) for c in np.flatnonzero(taken[:, p])]
        for s in range(max(len(want), len(got))):
            w = want[s] if s < len(want) else None
            g = got[s] if s < len(got) else None
            if w == g:
                continue
            out.append(Mismatch(
                "handshake", min(c for c in (w, g) if c is not None), p,
                f"word {s} taken in cycle {w}" if w is not None else f"no word {s} taken",
                f"taken in cycle {g}" if g is not None else "not taken",
                "words stream, ready & valid"))
            break


def _check_idle(run: HwRun, out: list[Mismatch]) -> None:
    for t in range(run.first_cycle, 0):
        for name in ("busy", "stall", "cycle", "used"):
            if name in run.samples and int(run.at(name, t)) != 0:
                out.append(Mismatch("idle", t, None, f"{name}=0",
                                    f"{name}={int(run.at(name, t))}", "before start"))
        for name in ("action", "peer", "dvalid"):
            if name not in run.samples:
                continue
            for p in np.flatnonzero(run.at(name, t)):
                out.append(Mismatch("idle", t, int(p), f"{name}=0",
                                    f"{name}={int(run.at(name, t)[p])}", "before start"))
        want_done = 0 if run.extra.get("after_reset", True) else 1
        if "done" in run.samples and int(run.at("done", t)) != want_done:
            out.append(Mismatch("idle", t, None, f"done={want_done}",
                                f"done={int(run.at('done', t))}",
                                "after reset" if want_done == 0 else "after the previous run"))


def judge_watchdog(config: RunConfig, run: HwRun) -> Verdict:
    """Judge a run whose ``hold`` input kept processors from acting.

    Expected: ``stall`` rises while ``busy``, stays high to the end of the
    samples, ``done`` never rises; when every processor is held, no transfer
    happens at all (``used`` 0, no delivery). Needs ``stall``, ``busy``,
    ``done``, ``used`` and ``dvalid``; a record without them is refused.

    Raises
    ------
    ValueError
        The record lacks a port the watchdog check needs.
    """
    absent = [k for k in ("stall", "busy", "done", "used", "dvalid") if k not in run.samples]
    if absent:
        raise ValueError(f"the watchdog check needs {', '.join(absent)}, which "
                         f"{run.origin or 'the record'} lacks")
    out: list[Mismatch] = []
    last = run.last_cycle
    stall = run.window("stall", 1, last)
    rise = np.flatnonzero(stall)
    if rise.size == 0:
        out.append(Mismatch("watchdog", last, None, "stall high", "stall never rose",
                            f"hold={run.spec.hold:#x}"))
    else:
        first = int(rise[0]) + 1
        for t in range(first, last + 1):
            if not run.at("stall", t):
                out.append(Mismatch("watchdog", t, None, "stall stays high", "stall low"))
                break
        if not run.at("busy", first):
            out.append(Mismatch("watchdog", first, None, "busy while stalled", "busy low"))
    for t in np.flatnonzero(run.window("done", 1, last)):
        out.append(Mismatch("watchdog", int(t) + 1, None, "done low", "done high"))
        break
    if run.spec.hold == (1 << config.n) - 1:
        for t in range(1, last + 1):
            if run.at("used", t) or run.at("dvalid", t).any():
                out.append(Mismatch("watchdog", t, None, "no transfer (all held)",
                                    f"used={int(run.at('used', t))}"))
                break
    _check_idle(run, out)
    _record_problems(run, out)
    out.sort(key=Mismatch.sort_key)
    return Verdict(config, run, None, out)
