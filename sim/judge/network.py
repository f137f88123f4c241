"""The judge of the network fabric: a :class:`~.run.NetworkRun` held against its program.

One function, :func:`judge_network`, in the judge family beside
:func:`~.schedule.judge_schedule`; it fills the one
:class:`~.verdict.Verdict` (``config`` the compiled
:class:`~pipegossip.model.schedules.network_program.NetworkProgram`, ``model``
None). Checks, cycle by cycle and link by link where they are per cycle:

* ``trace``: in clock cycle ``t + latency`` every port sends exactly the
  program's word source (a store slot, the accumulator, or nothing), stores
  the arriving word in exactly the program's slot (or not at all) and
  combines it exactly when the program says; nothing outside the program's
  cycles;
* ``delivery``: every sent word is the model's (a slot's tagged word, or
  the accumulator's combination at that cycle); the word arriving on a port
  is the word its link's other end sent, and where the port stores or
  combines, the model's word; every node's accumulator equals the model's
  in every sampled cycle; after the run the stores hold exactly the
  model's items with their words and the read-back accumulators the model's
  combinations; and, independent of the compiler, the primitive is complete
  (gossip: every node every item; broadcast: the root's items; gather: the
  root every item; polling and reduce: the root's accumulator is the
  combination of all ``n`` tokens; allreduce: every node's);
* ``busy``/``done``/``cycle``/``timeout``/``record``: as for the schedule
  fabric (:func:`~.schedule.control_checks`).

Mismatches name the clock cycle and the node; a port's note names its link
(``port 5: p2 -> p3``).
"""

from __future__ import annotations

import numpy as np

from ...hw.network.load import item_words
from ...model.schedules.network_program import ACC, NetworkProgram, combine_words
from ...model.schedules.program import NONE
from .schedule import control_checks
from ..network.run import NetworkRun
from .verdict import Mismatch, Verdict

__all__ = ["judge_network", "network_verdict_json", "expected_lanes", "completion_needs",
           "mismatch_place", "CHECKS"]


def _src(x: int) -> str:
    return "-" if x == NONE else ("acc" if x == ACC else f"slot {x}")


def completion_needs(program: NetworkProgram, words: list[int]
                     ) -> tuple[list[tuple[int, np.ndarray]], dict[int, int]]:
    """What the primitive's end state needs, from its definition alone (not from the program).

    ``(held, accs)``: ``held`` lists ``(node, items)``, every one of which the
    node's store must hold; ``accs`` maps a node to the combination its
    accumulator must end with (polling and reduce: the root; allreduce: every
    node). Shared by the judge and the fast mode's expected read-back.
    """
    s, n, h = program.schedule, program.n, program.items
    items = np.arange(n * h)
    if s.primitive in ("polling", "reduce", "allreduce"):
        want = combine_words(program.op, words[:n], program.width)
        nodes = range(n) if s.primitive == "allreduce" else [s.root]
        return [], {v: want for v in nodes}
    if s.primitive == "gossip":
        return [(v, items) for v in range(n)], {}
    if s.primitive == "broadcast":
        return [(v, s.root + n * np.arange(h)) for v in range(n)], {}
    return [(s.root, items)], {}  # gather


def _complete(program: NetworkProgram, record: NetworkRun, words: list[int]) -> list[Mismatch]:
    """The primitive's end state (:func:`completion_needs`) against the read-back."""
    s, n = program.schedule, program.n
    out: list[Mismatch] = []
    need, accs = completion_needs(program, words)
    for v, want in accs.items():
        if int(record.acc[v]) != want:
            out.append(Mismatch("delivery", None, v, f"{program.op} of all {n} tokens "
                                f"{want:#x}", f"{int(record.acc[v]):#x}",
                                f"incomplete {s.primitive}"))
    held = np.asarray(record.held, dtype=bool)
    for v, xs in need:
        lack = [int(x) for x in xs if x >= held.shape[1] or not held[v, x]]
        if lack:
            out.append(Mismatch("delivery", None, v, "every item", f"lacks items {lack[:8]}",
                                f"incomplete {s.primitive}"))
    return out


def expected_lanes(program: NetworkProgram, words: list[int], T: int, lat: int) -> dict:
    """The program's expectations laid on clock cycles ``0 .. T-1`` of a run.

    Program cycle index ``c`` is exchanged in clock cycle ``c + lat + 1``;
    outside the program every port is silent. Keys: ``tx``, ``rx`` (slot,
    :data:`ACC` or :data:`NONE`, ``(T, ports)``), ``comb`` (bool), ``sent``
    (the word each port sends, None when silent) and ``acc`` (``T`` rows of
    every node's accumulator at the start of the cycle). Shared by the judge
    and the fast mode's expected trace, so both hold the hardware to one expectation.
    """
    L = program.cycles
    lo, hi = lat + 1, min(T, L + lat + 1)
    span = max(hi - lo, 0)

    def laid(arr: np.ndarray, fill) -> np.ndarray:
        grid = np.full((T, *arr.shape[1:]), fill, dtype=arr.dtype)
        grid[lo:lo + span] = arr[:span]
        return grid

    accs = program.acc_values(words)
    return dict(tx=laid(program.tx, NONE), rx=laid(program.rx, NONE),
                comb=laid(program.comb, False), sent=laid(program.sent_words(words), None),
                acc=[accs[min(max(k - lat - 1, 0), L)] for k in range(T)])


#: What a mismatch compares (:func:`mismatch_place`), in the judge's order within a node.
CHECKS = ("trace", "busy", "done", "cycle", "tx_word", "rx_word", "link", "acc",
          "final_held", "final_word", "final_acc", "complete", "timeout", "record")


def mismatch_place(m: Mismatch) -> tuple:
    """``(check, cycle, node, port or slot)`` of one of :func:`judge_network`'s mismatches.

    The fast mode's in-hardware checker reports its first mismatch as this
    tuple (:data:`CHECKS`; the port for per-link checks, the slot for
    final-store checks, else None), so the two modes' first mismatches
    compare field by field. Read off the texts this module writes.
    """
    port = int(m.note.split(":")[0][5:]) if m.note.startswith("port ") else None
    if m.kind != "delivery":
        return m.kind, m.cycle, m.processor, port
    if m.cycle is not None:
        check = ("acc" if m.note == "combine" else "tx_word" if m.expected.startswith("sends")
                 else "rx_word" if m.expected.startswith("receives") else "link")
        return check, m.cycle, m.processor, port
    if m.note == "final store":
        slot = int(m.expected.split()[1])
        held = m.expected.endswith(("held", "empty"))
        return "final_held" if held else "final_word", None, m.processor, slot
    return ("final_acc" if m.note == "final accumulator" else "complete"), None, m.processor, None


def judge_network(program: NetworkProgram, record: NetworkRun,
                  seed: int | None = None) -> Verdict:
    """Every way ``record`` differs from ``program``'s expected run.

    Parameters
    ----------
    program : NetworkProgram
        The compiled schedule that was loaded.
    record : NetworkRun
        The fabric's samples and read-back stores.
    seed : int, optional
        Word seed of the loaded words (default: the record's).
    """
    seed = record.spec.word_seed if seed is None else seed
    words = item_words(program, seed or 0)
    out: list[Mismatch] = []
    add = out.append
    n, P, L, lat = program.n, program.ports, program.cycles, record.latency
    if record.n != n or record.ports != P:
        add(Mismatch("record", None, None, f"{n} nodes, {P} ports",
                     f"{record.n} nodes, {record.ports} ports"))
        return Verdict(config=program, run=record, model=None, mismatches=out)
    out += control_checks(record, L)
    T = len(record.samples["busy"])
    node = [program.node_of(p) for p in range(P)]
    peer = [program.peer(p) for p in range(P)]

    def note(p: int) -> str:
        return f"port {p}: p{node[p]} -> p{node[peer[p]]}"

    want = expected_lanes(program, words, T, lat)
    exp_tx, exp_rx, exp_cb, sent = want["tx"], want["rx"], want["comb"], want["sent"]
    lane = record.lane
    tv, ta, ts, tw = (lane(f) for f in ("tx_valid", "tx_acc", "tx_slot", "tx_word"))
    rv, rs, rc, rw = (lane(f) for f in ("rx_valid", "rx_slot", "rx_comb", "rx_word"))
    got_tx = np.where(tv != 0, np.where(ta != 0, ACC, ts), NONE)
    got_rx = np.where(rv != 0, rs, NONE)
    got_cb = rc != 0
    for k, p in zip(*np.nonzero((got_tx != exp_tx) | (got_rx != exp_rx) | (got_cb != exp_cb))):
        e = (f"send {_src(exp_tx[k, p])}, store {_src(exp_rx[k, p])}"
             f"{', combine' if exp_cb[k, p] else ''}")
        g = (f"send {_src(got_tx[k, p])}, store {_src(got_rx[k, p])}"
             f"{', combine' if got_cb[k, p] else ''}")
        add(Mismatch("trace", int(k), node[p], e, g, note(int(p))))
    for k, p in zip(*np.nonzero((tv != 0) & (exp_tx != NONE))):
        w = sent[k, p]
        if int(tw[k, p]) != w:
            add(Mismatch("delivery", int(k), node[p], f"sends {w:#x} ({_src(exp_tx[k, p])})",
                         f"{int(tw[k, p]):#x}", note(int(p))))
    for k, p in zip(*np.nonzero((exp_rx != NONE) | exp_cb)):
        q = peer[p]
        w = sent[k, q]
        if w is not None and int(rw[k, p]) != w:
            add(Mismatch("delivery", int(k), node[p], f"receives {w:#x} from p{node[q]}",
                         f"{int(rw[k, p]):#x}", note(int(p))))
    for k, p in zip(*np.nonzero(tv != 0)):
        q = peer[p]
        if int(rw[k, q]) != int(tw[k, p]):
            add(Mismatch("delivery", int(k), node[q], f"the word p{node[p]} sends "
                         f"({int(tw[k, p]):#x})", f"{int(rw[k, q]):#x}", note(int(q))))

    # every node's accumulator in every cycle: the value at the start of program cycle t
    got_acc = lane("acc")
    for k in range(T):
        acc_k = want["acc"][k]
        for v in np.flatnonzero([int(got_acc[k, v]) != acc_k[v] for v in range(n)]):
            add(Mismatch("delivery", k, int(v), f"accumulator {acc_k[v]:#x}",
                         f"{int(got_acc[k, v]):#x}", "combine"))

    # the stores and accumulators after the run
    slot_word = program.slot_words(words)
    final_acc = program.acc_values(words)[L]
    for v in range(n):
        for x in range(program.slots):
            held = int(record.held[v][x])
            if held != int(program.final[v, x]):
                add(Mismatch("delivery", None, v, f"slot {x} "
                             f"{'held' if program.final[v, x] else 'empty'}",
                             "held" if held else "empty", "final store"))
            elif held and int(record.store[v][x]) != slot_word[x]:
                add(Mismatch("delivery", None, v, f"slot {x} = {slot_word[x]:#x}",
                             f"{int(record.store[v][x]):#x}", "final store"))
        if int(record.acc[v]) != final_acc[v]:
            add(Mismatch("delivery", None, v, f"accumulator {final_acc[v]:#x}",
                         f"{int(record.acc[v]):#x}", "final accumulator"))
    out += _complete(program, record, words)
    out.sort(key=Mismatch.sort_key)
    return Verdict(config=program, run=record, model=None, mismatches=out)


def network_verdict_json(v: Verdict) -> dict:
    """A network verdict as JSON: ``match``, ``R``, ``S``, ``cycles``, ``latency`` and the rest."""
    p: NetworkProgram = v.config
    run: NetworkRun = v.run
    first = v.first_mismatch
    return dict(match=v.match, schedule=run.name, algorithm=p.algorithm, n=p.n,
                topology=p.topology.to_json(), primitive=p.schedule.primitive,
                model=p.schedule.model, op=p.op, R=p.rounds, S=p.S, cycles=p.cycles,
                latency=run.latency, busy_cycles=run.busy_cycles, load_cycles=run.load_cycles,
                word_seed=run.spec.word_seed,
                first_mismatch=None if first is None else first.to_json(),
                mismatch_counts=v.counts(), mismatches=[m.to_json() for m in v.mismatches[:100]])
