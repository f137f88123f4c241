"""Schedule -> per-node cycle programs for the schedule-driven fabric.

The schedule fabric (``pipegossip.hw.schedule``) gives every node one output
word and one input word per clock cycle (``ports = 1``), a store of
``slots`` item words with a held bit each, and a program memory of ``depth``
entries. This module turns a validated :class:`~.ir.Schedule` into the
programs those memories hold, and into everything a judge compares the
hardware with (the per-cycle trace, the final stores, the reductions).

Compiler rules
--------------
* Every item of a message is one word; a message to several receivers is one
  word per item, multicast (the receivers all select the sender).
* Round by round, each word is placed in the earliest cycle of its round in
  which its sender sends nothing else and none of its receivers receives
  anything else, and after the previous item of the same message (so a
  message's items keep their order). A round whose messages each carry one
  item and whose nodes send and receive at most once takes one cycle; a
  round whose largest message carries ``s`` items takes ``s`` cycles; a round
  whose load exceeds the ports (several messages from or to one node) is
  split over more cycles. ``cycles == R`` exactly when every round fits.
* An empty round before the last busy one keeps one idle cycle (so the trace
  reads back to the same rounds); trailing empty rounds are dropped, as are
  messages without items (a telephone call with nothing new to say).
* Item ``i`` lives in store slot ``i`` (``s*n + v`` for node ``v``'s item of
  session ``s``); polling's question ``"q"`` lives in slot ``n*h``.
* Gather and polling *combine* at the root by default: the first arrival of
  each response is stored and also added into the root's accumulator
  (wrapping addition modulo ``2**width``: associative and commutative, so
  the result does not depend on the arrival order).
* ``reduce``/``allreduce`` *forward accumulators*: every node's
  accumulator starts with its own token (item ``v``, loaded by an ACC
  write); a message is one word, the sender's whole accumulator (a message
  that sends a part of it is refused with the network fabric's words,
  :func:`~.accsets.message_words`), and its receivers combine it without
  storing it. The word is placed like any other; a sender's accumulator is
  checked in the cycle it is sent, so a round serialised over several
  cycles never sends what the node combined earlier in the same round.
* Refused (:class:`ProgramError`): a schedule the validator rejects, more
  cycles than ``depth``, more items than ``slots``, ``ports != 1``, a
  combined message that is not its sender's whole accumulator, a token
  counted twice, and a reduce/allreduce whose accumulators would not end
  complete.

Node ``v`` starts holding its items ``v, v+n, ...`` (polling: the root also
holds ``"q"``; other nodes' responses are loaded at the start too, since the
hardware cannot tell when a response "exists"; the validator already checked
that nobody speaks before hearing the question).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .accsets import ACC, ProgramError, check_complete, combine_words, message_words, step_sets
from .ir import Q_ID, Message, Schedule
from .validate import check, items_per_node

__all__ = ["ProgramError", "FieldLayout", "field_offset",
           "EntryLayout", "bits_for", "Program", "compile_schedule",
           "cycles_for", "slots_for", "canonical", "question_word", "NONE", "ACC", "WHOLE_ACC"]

#: "no item / no source" in the program arrays.
NONE = -1


def field_offset(fields, name: str) -> int:
    """Bit offset of field ``name`` in a word packed from ``(name, width)`` pairs, LSB first."""
    at = 0
    for f, w in fields:
        if f == name:
            return at
        at += w
    raise KeyError(name)
#: Primitives whose every message is its sender's whole accumulator, one word.
WHOLE_ACC = ("reduce", "allreduce")
#: How the refusals name this fabric.
FABRIC = "the schedule fabric"


def question_word(width: int) -> int:
    """The word carrying polling's question ``"q"``: all ones."""
    return (1 << width) - 1


def bits_for(count: int) -> int:
    """Bits of a number ``0 .. count-1`` (at least 1)."""
    return max(1, (count - 1).bit_length())


class FieldLayout:
    """Bit fields of one program-memory entry, low bits first (subclasses list ``fields``).

    Shared by the schedule fabric's :class:`EntryLayout` and the network
    fabric's per-node layout, so both encode and decode entries one way.
    """

    @property
    def fields(self) -> tuple[tuple[str, int], ...]:
        raise NotImplementedError

    @property
    def width(self) -> int:
        return sum(w for _, w in self.fields)

    def offset(self, name: str) -> int:
        return field_offset(self.fields, name)

    def encode(self, **values: int) -> int:
        """One entry from field values (missing fields are 0)."""
        unknown = set(values) - {f for f, _ in self.fields}
        if unknown:
            raise KeyError(f"no entry field {sorted(unknown)[0]!r}")
        word, at = 0, 0
        for f, w in self.fields:
            v = int(values.get(f, 0))
            if not 0 <= v < 1 << w:
                raise ValueError(f"entry field {f}={v} does not fit {w} bits")
            word |= v << at
            at += w
        return word

    def decode(self, word: int) -> dict[str, int]:
        out, at = {}, 0
        for f, w in self.fields:
            out[f] = (word >> at) & ((1 << w) - 1)
            at += w
        return out


@dataclass(frozen=True)
class EntryLayout(FieldLayout):
    """The bit layout of one schedule-fabric program-memory entry (low bits first).

    ========== ============ ===============================================
    field      bits         meaning
    ========== ============ ===============================================
    send       1            put ``send_slot``'s word on the output
    send_slot  SW           store slot sent
    recv       1            take the input from ``source`` and store it
    source     PW           the node whose output the input selects
    combine    1            add the input from ``source`` into the
                            accumulator (with or without ``recv``)
    recv_slot  SW           store slot written
    send_acc   1            with ``send``: the output is the accumulator,
                            not ``send_slot``'s word
    ========== ============ ===============================================

    ``SW = ceil(log2 slots)``, ``PW = ceil(log2 n)`` (each at least 1).
    """

    n: int
    slots: int

    @property
    def slot_bits(self) -> int:
        return bits_for(self.slots)

    @property
    def node_bits(self) -> int:
        return bits_for(self.n)

    @property
    def fields(self) -> tuple[tuple[str, int], ...]:
        sw, pw = self.slot_bits, self.node_bits
        return (("send", 1), ("send_slot", sw), ("recv", 1), ("source", pw), ("combine", 1),
                ("recv_slot", sw), ("send_acc", 1))


def canonical(s: Schedule) -> list[list[tuple]]:
    """Rounds ``1..R`` as sorted ``(src, sorted dst, items)``, messages without items dropped.

    Two schedules that differ only in message order within a round, in the
    order of a message's receivers, or in item-less messages compare equal.
    """
    v = check(s)
    out = []
    for r in range(1, v.R + 1):
        # a combined message's items are a set of tokens: their order says nothing
        msgs = [(m.src, tuple(sorted(m.dst)),
                 tuple(sorted(m.items) if s.primitive in WHOLE_ACC else m.items))
                for m in s.round_messages(r) if m.items]
        out.append(sorted(msgs, key=repr))
    return out


@dataclass(eq=False)
class Program:
    """Per-node cycle programs of one schedule, and what the hardware must show.

    Arrays are ``(cycles, n)``; cycle ``c`` (0-based) is program cycle ``c+1``.

    Attributes
    ----------
    schedule : Schedule
        The input schedule.
    width, depth, slots : int
        The fabric's word width, program depth and store size it was compiled for.
    send : numpy.ndarray
        Slot each node puts on its output, :data:`ACC` (its accumulator) or :data:`NONE`.
    source : numpy.ndarray
        Node whose output each node's input takes, or :data:`NONE`.
    recv : numpy.ndarray
        Slot each node stores its input in, or :data:`NONE` (set when ``source``
        is, except for a combined accumulator word, which is not stored).
    combine : numpy.ndarray
        bool: the input is added into the node's accumulator.
    round_of : numpy.ndarray
        ``(cycles,)``: the schedule round (1-based) each cycle belongs to.
    initial, final : numpy.ndarray
        ``(n, slots)`` bool: held bits at the start and, by the model, at the end.
    rounds : int
        ``R`` of the schedule.
    dropped : int
        Messages without items, not executed.
    acc_sets : list of list of frozenset
        ``acc_sets[c][v]``: the tokens (item ids) in node ``v``'s accumulator
        at the start of cycle ``c`` (``c = cycles``: at the end).
    """

    schedule: Schedule
    width: int
    depth: int
    slots: int
    send: np.ndarray
    source: np.ndarray
    recv: np.ndarray
    combine: np.ndarray
    round_of: np.ndarray
    initial: np.ndarray
    final: np.ndarray
    rounds: int
    dropped: int = 0
    notes: list[str] = field(default_factory=list)
    acc_sets: list[list[frozenset]] = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.schedule.n

    @property
    def cycles(self) -> int:
        """Program length: clock cycles of exchange (``== rounds`` when every round fits)."""
        return len(self.round_of)

    @property
    def items(self) -> int:
        """``h``: items per node."""
        return items_per_node(self.schedule)

    @property
    def layout(self) -> EntryLayout:
        return EntryLayout(self.n, self.slots)

    @property
    def algorithm(self) -> str:
        return self.schedule.origin.get("algorithm") or "schedule"

    @property
    def slug(self) -> str:
        """A file-name-safe name (the judge's verdict shows it)."""
        return f"{self.algorithm}-n{self.n}-{self.schedule.primitive}-w{self.width}-d{self.depth}"

    def header(self) -> str:
        return (f"schedule {self.algorithm} ({self.schedule.origin.get('source', '')}); "
                f"n={self.n} model={self.schedule.model} R={self.rounds} cycles={self.cycles}")

    def question_slot(self) -> int | None:
        return self.n * self.items if self.schedule.primitive == "polling" else None

    # ------------------------------------------------------------ the data
    def slot_owner(self, slot: int) -> tuple[int, int] | None:
        """``(node, session)`` whose item lives in ``slot``; None for the question and spare slots.

        Words are the caller's (the judge uses the one tagged-word scheme of
        ``pipegossip.hw.words``): the model side only says whose word it is.
        """
        if 0 <= slot < self.n * self.items:
            return slot % self.n, slot // self.n
        return None

    def expected_store(self, words: list[int]) -> list[list[int | None]]:
        """``store[v][slot]``: the word node ``v`` must hold at the end, None where not held.

        ``words[slot]`` is the word loaded for each slot.
        """
        return [[words[x] if self.final[v, x] else None for x in range(self.slots)]
                for v in range(self.n)]

    def acc_values(self, words: list[int]) -> list[list[int]]:
        """``(cycles + 1) x n`` accumulators: the wrapping sum of their tokens' words."""
        return [[combine_words("sum", (words[i] for i in sorted(a)), self.width) for a in row]
                for row in self.acc_sets]

    def expected_accumulators(self, words: list[int]) -> list[int]:
        """Each node's accumulator at the end: the wrapping sum of the words it combined."""
        return self.acc_values(words)[-1]

    def initial_accs(self, words: list[int]) -> list[int] | None:
        """Every node's initial accumulator (its own token's word) when forwarding; else None."""
        if self.schedule.primitive not in WHOLE_ACC:
            return None
        return self.acc_values(words)[0]

    def reduction(self, words: list[int]) -> int | None:
        """The reduction :meth:`reduction_nodes` must end with, by the primitive.

        Gather and polling with combining: every other node's items summed;
        reduce, allreduce: every token. Computed from the primitive's
        definition, not from the program, so it also checks the compiler:
        None when nothing is combined.
        """
        s, mask = self.schedule, (1 << self.width) - 1
        if s.primitive in WHOLE_ACC:
            return sum(words[i] for i in range(self.n * self.items)) & mask
        if s.primitive not in ("gather", "polling") or not self.combine.any():
            return None
        total = sum(words[i] for i in range(self.n * self.items) if i % self.n != s.root)
        return total & mask

    def reduction_nodes(self) -> list[int]:
        """The nodes whose accumulators end with :meth:`reduction`: every node for allreduce."""
        s = self.schedule
        return list(range(self.n)) if s.primitive == "allreduce" else [s.root]

    def entries(self) -> np.ndarray:
        """``(n, cycles)`` encoded program-memory entries (:class:`EntryLayout`)."""
        lay = self.layout
        out = np.zeros((self.n, self.cycles), dtype=object)
        for c in range(self.cycles):
            for v in range(self.n):
                s, r = int(self.send[c, v]), int(self.source[c, v])
                x = int(self.recv[c, v])
                out[v, c] = lay.encode(
                    send=s != NONE, send_slot=max(s, 0), send_acc=s == ACC,
                    recv=r != NONE and x != NONE,
                    source=max(r, 0), combine=bool(self.combine[c, v]), recv_slot=max(x, 0))
        return out

    # ------------------------------------------------------------ read-back
    def _items(self, c: int, u: int, slot: int) -> list:
        if slot == ACC:  # the tokens the sender's accumulator holds in that cycle
            return sorted(self.acc_sets[c][u]) if c < len(self.acc_sets) else []
        return ["q" if slot == self.question_slot() else int(slot)]

    def read_back(self, send: np.ndarray, source: np.ndarray, recv: np.ndarray) -> Schedule:
        """The schedule a trace shows: ``(cycles, n)`` arrays as in :attr:`send` etc.

        Cycles are grouped into rounds by :attr:`round_of`; in each cycle a
        sender's word goes to every node whose input selected it; a round's
        words from one sender to one receiver set form one message, items in
        cycle order.
        """
        rounds: list[list[Message]] = []
        for r in range(1, self.rounds + 1):
            msgs: dict[tuple, list] = {}
            for c in np.flatnonzero(self.round_of == r):
                for u in range(self.n):
                    if send[c, u] == NONE:
                        continue
                    dsts = tuple(int(v) for v in np.flatnonzero(source[c] == u))
                    key = (u, dsts)
                    msgs.setdefault(key, []).extend(self._items(int(c), u, int(send[c, u])))
            rounds.append([Message(u, d, tuple(items)) for (u, d), items in msgs.items()])
        s = self.schedule
        return Schedule.from_rounds(rounds, topology=s.topology, model=s.model, p=s.p,
                                    primitive=s.primitive, root=s.root,
                                    origin=dict(s.origin))


def cycles_for(s: Schedule, ports: int = 1) -> int:
    """Clock cycles ``s`` takes on a fabric with ``ports`` words in and out per node per cycle."""
    return len(_place(s, ports)[1])


def slots_for(s: Schedule) -> int:
    """Store words per node ``s`` needs: every item, plus polling's question."""
    return s.n * items_per_node(s) + (1 if s.primitive == "polling" else 0)


def _place(s: Schedule, ports: int):
    """First-fit placement: (per word (cycle, src, dsts, item, message), round of each cycle).

    A reduce/allreduce message is one word, :data:`ACC`, whatever it lists.
    """
    v = check(s)
    words, round_of, base = [], [], 0
    for r in range(1, v.R + 1):
        sends: list[dict[int, int]] = []
        recvs: list[dict[int, int]] = []
        last = 0
        for m in s.round_messages(r):
            prev = -1
            for item in ([ACC] if s.primitive in WHOLE_ACC and m.items else m.items):
                c = prev + 1
                while True:
                    while len(sends) <= c:
                        sends.append({})
                        recvs.append({})
                    if (sends[c].get(m.src, 0) < ports
                            and all(recvs[c].get(d, 0) < ports for d in m.dst)):
                        break
                    c += 1
                sends[c][m.src] = sends[c].get(m.src, 0) + 1
                for d in m.dst:
                    recvs[c][d] = recvs[c].get(d, 0) + 1
                words.append((base + c, m.src, m.dst, Q_ID if item == "q" else item, m))
                prev = c
                last = max(last, c + 1)
        length = max(last, 1)  # an empty round inside the schedule keeps one idle cycle
        round_of += [r] * length
        base += length
    return words, round_of


def compile_schedule(s: Schedule, *, width: int = 8, depth: int | None = None,
                     slots: int | None = None, ports: int = 1,
                     combine: bool | None = None) -> Program:
    """Compile ``s`` into per-node programs for the schedule fabric.

    Parameters
    ----------
    s : Schedule
        Validated here (an invalid one raises the validator's ScheduleError).
    width : int
        Word width of the fabric (words of the judge's tagged-word scheme).
    depth : int, optional
        Program entries per node; default: exactly the cycles needed.
    slots : int, optional
        Store words per node; default: exactly the items needed.
    ports : int
        Words in and out per node per cycle; the fabric has 1.
    combine : bool, optional
        Combine at the root; default for gather and polling.

    Raises
    ------
    ProgramError
        ``ports != 1``, or the schedule does not fit ``depth`` or ``slots``.
    """
    if ports != 1:
        raise ProgramError(f"the schedule fabric has one port per node, not {ports} "
                           f"(cycles_for() counts other port numbers)")
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ProgramError(f"width must be a positive integer, not {width!r}")
    n, h = s.n, items_per_node(s)
    polling = s.primitive == "polling"
    need_slots = slots_for(s)
    slots = need_slots if slots is None else slots
    if need_slots > slots:
        raise ProgramError(f"the schedule has {need_slots} items per store "
                           f"({h} per node{', plus the question' if polling else ''}) but the "
                           f"fabric's store holds {slots}: build with more slots")
    words, round_of = _place(s, ports)
    cycles = len(round_of)
    depth = max(cycles, 1) if depth is None else depth
    if cycles > depth:
        raise ProgramError(f"the schedule needs {cycles} cycles (R={check(s).R} rounds) but "
                           f"the program memory holds depth={depth} entries: build with "
                           f"--depth {cycles} or more")
    combine = (s.primitive in ("gather", "polling")) if combine is None else combine
    qslot = n * h
    send = np.full((cycles, n), NONE, dtype=np.int64)
    source = np.full((cycles, n), NONE, dtype=np.int64)
    recv = np.full((cycles, n), NONE, dtype=np.int64)
    comb = np.zeros((cycles, n), dtype=bool)
    initial = np.zeros((n, slots), dtype=bool)
    own = np.arange(n * h)
    initial[own % n, own] = True
    if polling:
        initial[s.root, qslot] = True
    held = initial.copy()
    sent = {}  # (cycle, node) -> the message whose accumulator it sends
    for c, u, dsts, item, m in words:  # in message order within each round
        if item == ACC:
            send[c, u], sent[c, u] = ACC, m
            for d in dsts:
                source[c, d], comb[c, d] = u, True
            continue
        x = qslot if item == Q_ID else int(item)
        send[c, u] = x
        for d in dsts:
            source[c, d] = u
            recv[c, d] = x
            if combine and d == s.root and item != Q_ID and not held[d, x]:
                comb[c, d] = True
            held[d, x] = True
    v = check(s)
    acc_sets = _acc_sets(s, send, source, recv, comb, sent, round_of)
    dropped = int(np.count_nonzero(np.diff(s.item_ptr) == 0))
    notes = []
    if cycles != v.R:
        notes.append(f"{cycles} cycles for R={v.R} rounds: rounds with multi-item messages "
                     f"or more load than the ports take several cycles")
    if dropped:
        notes.append(f"{dropped} message(s) without items not executed")
    return Program(schedule=s, width=width, depth=depth, slots=slots, send=send, source=source,
                   recv=recv, combine=comb, round_of=np.asarray(round_of, dtype=np.int64),
                   initial=initial, final=held, rounds=v.R, dropped=dropped, notes=notes,
                   acc_sets=acc_sets)


def _acc_sets(s: Schedule, send, source, recv, comb, sent, round_of) -> list[list[frozenset]]:
    """Every accumulator's tokens cycle by cycle; refuses part-of-accumulator sends.

    A sender's accumulator is checked in the cycle its word goes out (the
    placement may serialise a round over several cycles).
    """
    n = s.n
    acc = [{u} if s.primitive in WHOLE_ACC else set() for u in range(n)]
    out = [[frozenset(a) for a in acc]]
    busy = set(np.flatnonzero(comb.any(axis=1)).tolist()) | {c for c, _ in sent}
    for c in range(len(round_of)):
        if c not in busy:  # nothing combined: the same row (gossip of many nodes stays small)
            out.append(out[-1])
            continue
        r = int(round_of[c])
        for u in range(n):
            if (c, u) in sent:
                m = sent[c, u]
                message_words(s, m.items, u, m.dst, acc, r, NONE, FABRIC)
        got = [(d, acc[int(source[c, d])] if send[c, source[c, d]] == ACC else {int(recv[c, d])})
               for d in np.flatnonzero(comb[c])]
        acc = step_sets(acc, [False] * n, got, r)
        out.append([frozenset(a) for a in acc])
    if s.primitive in WHOLE_ACC:
        check_complete(s, acc, FABRIC)
    return out
