"""Schedule -> per-node cycle programs for the network fabric (one full-duplex link per edge).

The network fabric (``pipegossip.hw.network``) has one node per vertex of a
topology and one full-duplex link per edge: no crossbar. Node ``v`` numbers
its links ``0 .. deg(v)-1`` by its neighbours in ascending order; *port*
``offset[v] + j`` is link ``j`` of node ``v`` (its outgoing half carries what
``v`` sends to that neighbour, its incoming half what it receives from it).
Per clock cycle each node chooses, per port, which word it sends (a store
slot or its accumulator; the same word may go out on several ports) and
whether the word arriving on the port is written to a store slot and/or
combined into its accumulator. This module turns a validated
:class:`~.ir.Schedule` into those programs and into everything the judge
compares the hardware with.

Compiler rules
--------------
* **Words of a message.** ``gossip``, ``broadcast``, ``gather``: one word per
  item, a store word (item ``i`` lives in slot ``i``, ``s*n + v`` for node
  ``v``'s item of session ``s``). ``reduce``/``allreduce``: one word, the
  sender's accumulator; the message's token set must equal what the
  accumulator holds (a part of it cannot be sent: refused), and the
  receivers combine it. ``polling``: one word, the sender's accumulator of
  responses, which the sender then *drains* (its accumulator restarts
  empty), so a response travels towards the root exactly once and no sum
  counts it twice; every node starts with its own response in its
  accumulator, and the accumulator may carry only responses the message
  lists. A polling message that lists no response is the question alone:
  the question word (all ones) of store slot 0, which the root holds from
  the start and every receiver stores (its held bit: the node heard the
  question). A message with responses carries the question implicitly (the
  validator has already checked that nobody speaks before hearing it).
* **Rounds.** Word ``k`` of a message goes in cycle ``k`` of its round, so a
  round whose largest message carries ``s`` words takes ``s`` cycles and a
  round of one-word messages one cycle; an empty round inside the schedule
  keeps one idle cycle, trailing empty rounds and messages without items are
  dropped. Every valid ``H1``, ``F1``, ``Hstar``, ``Fstar`` or ``port``
  schedule puts at most one message on a directed link per round, so no
  link ever carries two words in one cycle (checked anyway).
* **Combining.** The accumulator's operation is chosen at build time
  (:data:`OPS`: wrapping sum, xor); both are associative and commutative
  with identity 0, so the order of arrivals does not matter. Gather combines
  at the root, as on the schedule fabric: the first arrival of each item is
  stored and combined.
* Refused (:class:`ProgramError`): a message on a non-edge of the fabric's
  topology, more cycles than ``depth``, more items than ``slots``, a
  combined message that does not send the sender's whole accumulator (or
  sends responses it does not list), a combination that would count a token
  twice, and a polling/reduce/allreduce whose accumulators would not end
  complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .accsets import ACC, check_complete, combine_words, message_words, step_sets
from .ir import COMBINING, Schedule
from .network_banks import DirEntry, assign_banks, fresh_sends
from .program import NONE, FieldLayout, ProgramError, bits_for, question_word
from .topologies import Topology
from .validate import check, items_per_node

__all__ = ["OPS", "ACC", "combine_words", "NetworkLayout", "NetworkProgram", "links_of",
           "compile_network", "COMBINING", "QUESTION_SLOT", "DirEntry", "assign_banks"]

#: Accumulator operations a network fabric may be built with.
OPS = ("sum", "xor")
#: The store slot of polling's question word.
QUESTION_SLOT = 0
#: How the refusals name this fabric.
FABRIC = "the network fabric"


def pieces_of(s: Schedule) -> dict[frozenset, int]:
    """Token sets a ``reduce``/``allreduce`` forwards as a *part* of its sender's set.

    A message whose set is not everything its sender holds cannot be the
    sender's accumulator; the network fabric sends it from a store slot
    instead, which must hold exactly that combined word: one the sender
    received (or its own token, loaded into its store). Each such set gets
    one store slot, the same on every node (so a slot's word is one value,
    the combination of its tokens, everywhere), numbered by size and then by
    tokens. Empty for every other primitive and for schedules that only send
    whole sets.
    """
    if s.primitive not in ("reduce", "allreduce"):
        return {}
    held = [frozenset((v,)) for v in range(s.n)]
    parts: set[frozenset] = set()
    for r in range(1, s.rounds_total + 1):
        got = []
        for m in s.round_messages(r):
            if not m.items:
                continue
            word = frozenset(int(i) for i in m.items)
            if word != held[m.src]:
                parts.add(word)
            got += [(d, word) for d in m.dst]
        for d, word in got:
            held[d] = held[d] | word
    order = sorted(parts, key=lambda x: (len(x), sorted(x)))
    return {x: i for i, x in enumerate(order)}


def links_of(topology: Topology) -> list[list[int]]:
    """Per node, its neighbours in ascending order: link ``j`` of ``v`` goes to ``links[v][j]``."""
    return [topology.neighbours(v) for v in range(topology.n)]


@dataclass(frozen=True)
class NetworkLayout(FieldLayout):
    """The program-memory entry of a network node of ``degree`` links (low bits first).

    Per link ``j``: ``tx{j}`` (send on the link), ``txacc{j}`` (the word is
    the accumulator, else store slot ``txslot{j}``), ``txslot{j}``,
    ``txbank{j}`` and ``txaddr{j}`` (where that slot's word is: a bank and
    an address in it, see :func:`assign_banks`), ``txnew{j}`` (that word
    arrives in the cycle before, on link ``txbank{j}``: a node with
    registered link ends takes it from that link, :func:`fresh_sends`); then ``drain`` (the
    accumulator restarts empty after this cycle's sends); then per link
    ``j``: ``rx{j}`` (store the arriving word as slot ``rxslot{j}``, in the
    link's own bank), ``rxslot{j}``, ``comb{j}`` (combine it into the
    accumulator). ``SW = ceil(log2 slots)`` bits per slot field, ``BB =
    ceil(log2 (degree + 1))`` per bank, ``AB = ceil(log2 bank_depth)`` per
    address (``bank_depth`` defaults to ``slots``).
    """

    degree: int
    slots: int
    bank_depth: int | None = None

    @property
    def slot_bits(self) -> int:
        return bits_for(self.slots)

    @property
    def banks(self) -> int:
        """One bank per link, then the node's own bank (its loaded items)."""
        return self.degree + 1

    @property
    def depth_of_bank(self) -> int:
        return self.slots if self.bank_depth is None else self.bank_depth

    @property
    def bank_bits(self) -> int:
        return bits_for(self.banks)

    @property
    def addr_bits(self) -> int:
        return bits_for(self.depth_of_bank)

    @property
    def dir_width(self) -> int:
        """A directory entry: ``valid``, the bank, the address (low bits first).

        The address has ``AB + 1`` bits, the width of the hardware's write
        counters it is compared with.
        """
        return 2 + self.bank_bits + self.addr_bits

    def dir_encode(self, at: DirEntry | None) -> int:
        return 0 if at is None else 1 | at.bank << 1 | at.addr << (1 + self.bank_bits)

    @property
    def fields(self) -> tuple[tuple[str, int], ...]:
        sw, bb, ab = self.slot_bits, self.bank_bits, self.addr_bits
        tx = [f for j in range(self.degree)
              for f in ((f"tx{j}", 1), (f"txacc{j}", 1), (f"txslot{j}", sw),
                        (f"txbank{j}", bb), (f"txaddr{j}", ab), (f"txnew{j}", 1))]
        rx = [f for j in range(self.degree)
              for f in ((f"rx{j}", 1), (f"rxslot{j}", sw), (f"comb{j}", 1))]
        return (*tx, ("drain", 1), *rx)


@dataclass(eq=False)
class NetworkProgram:
    """Per-node cycle programs of one schedule on the network fabric, and the expected run.

    Ports are numbered ``offset[v] + j`` (link ``j`` of node ``v``); arrays
    are ``(cycles, ports)`` or ``(cycles, n)``, cycle ``c`` (0-based) being
    program cycle ``c+1``.

    Attributes
    ----------
    schedule : Schedule
    topology : Topology
        The fabric's topology (the schedule's unless compiled for another).
    op : str
        The accumulator operation (:data:`OPS`).
    width, depth, slots : int
    links : list of list of int
        Neighbours of every node, ascending (:func:`links_of`).
    tx : numpy.ndarray
        What each port sends: a store slot, :data:`ACC` or :data:`NONE`.
    rx : numpy.ndarray
        Store slot each port's arriving word is written to, or :data:`NONE`.
    comb : numpy.ndarray
        bool: the arriving word is combined into the node's accumulator.
    drain : numpy.ndarray
        ``(cycles, n)`` bool: the node's accumulator restarts empty after the cycle.
    round_of : numpy.ndarray
        ``(cycles,)`` the schedule round of each cycle.
    initial, final : numpy.ndarray
        ``(n, slots)`` held bits at the start and, by the model, at the end.
    acc_sets : list of list of frozenset
        ``acc_sets[c][v]``: the items combined in node ``v``'s accumulator at
        the start of cycle ``c`` (``c = cycles``: at the end).
    rounds, S : int
        The schedule's ``R`` and ``S`` (the validator's metrics).
    bank_depth : int
        Words per bank of every node's store (:func:`assign_banks`).
    tx_bank, tx_addr : numpy.ndarray
        ``(cycles, ports)``: where each sent slot's word is read from.
    tx_new : numpy.ndarray
        ``(cycles, ports)`` bool: the sent slot's word is first stored in the
        cycle before (:func:`fresh_sends`).
    directory : list of dict
        Per node, slot -> :class:`DirEntry` of every slot it stores.
    bank_need : int
        The most words any bank takes: the smallest bank depth that runs it.
    """

    schedule: Schedule
    topology: Topology
    op: str
    width: int
    depth: int
    slots: int
    links: list[list[int]]
    tx: np.ndarray
    rx: np.ndarray
    comb: np.ndarray
    drain: np.ndarray
    round_of: np.ndarray
    initial: np.ndarray
    final: np.ndarray
    acc_sets: list[list[frozenset]]
    rounds: int
    S: int
    bank_depth: int
    tx_bank: np.ndarray
    tx_addr: np.ndarray
    directory: list[dict[int, DirEntry]]
    bank_need: int
    tx_new: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)
    slot_sets: list = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.topology.n

    @property
    def cycles(self) -> int:
        return len(self.round_of)

    @property
    def items(self) -> int:
        return items_per_node(self.schedule)

    @property
    def offsets(self) -> list[int]:
        """First port of every node, then the port count."""
        return [0, *np.cumsum([len(x) for x in self.links]).tolist()]

    @property
    def ports(self) -> int:
        return self.offsets[-1]

    def port(self, v: int, w: int) -> int:
        """The port of node ``v`` on its link to ``w``."""
        return self.offsets[v] + self.links[v].index(w)

    def peer(self, port: int) -> int:
        """The port at the other end of ``port``'s link."""
        v = int(np.searchsorted(self.offsets, port, side="right")) - 1
        return self.port(self.links[v][port - self.offsets[v]], v)

    def node_of(self, port: int) -> int:
        return int(np.searchsorted(self.offsets, port, side="right")) - 1

    def layout(self, v: int) -> NetworkLayout:
        return NetworkLayout(len(self.links[v]), self.slots, self.bank_depth)

    @property
    def algorithm(self) -> str:
        return self.schedule.origin.get("algorithm") or "schedule"

    @property
    def slug(self) -> str:
        return (f"{self.algorithm}-{self.topology.name}{self.n}-{self.schedule.primitive}"
                f"-{self.op}-w{self.width}-d{self.depth}")

    def header(self) -> str:
        return (f"schedule {self.algorithm} on the network fabric of {self.topology.name} "
                f"n={self.n} model={self.schedule.model} R={self.rounds} S={self.S} "
                f"cycles={self.cycles} op={self.op}")

    def question_slot(self) -> int | None:
        """Polling's question lives in slot :data:`QUESTION_SLOT`; None otherwise."""
        return QUESTION_SLOT if self.schedule.primitive == "polling" else None

    def slot_words(self, words: list[int]) -> list[int]:
        """Every store slot's word, from ``words`` (item ``i``'s word at index ``i``).

        Item ``i`` lives in slot ``i`` (gossip, broadcast, gather); polling's
        question slot holds the question word (all ones); other slots 0.
        """
        if self.schedule.primitive in COMBINING:
            out = [0] * self.slots
            if self.question_slot() is not None:
                out[QUESTION_SLOT] = question_word(self.width)
            for x, part in enumerate(self.slot_sets):
                if part is not None:
                    out[x] = combine_words(self.op, (words[i] for i in sorted(part)),
                                           self.width)
            return out
        return [words[x] if x < len(words) else 0 for x in range(self.slots)]

    # ------------------------------------------------------------ expected values
    def acc_values(self, words: list[int]) -> list[list[int]]:
        """``(cycles + 1) x n`` accumulator values; ``words[i]`` is item ``i``'s word."""
        return [[combine_words(self.op, (words[i] for i in sorted(a)), self.width) for a in row]
                for row in self.acc_sets]

    def sent_words(self, words: list[int]) -> np.ndarray:
        """``(cycles, ports)`` object array: the word each port sends, None when silent."""
        acc, slot = self.acc_values(words), self.slot_words(words)
        out = np.full(self.tx.shape, None, dtype=object)
        for c, p in zip(*np.nonzero(self.tx != NONE)):
            x = int(self.tx[c, p])
            out[c, p] = acc[c][self.node_of(int(p))] if x == ACC else slot[x]
        return out

    def initial_acc(self, words: list[int]) -> list[int]:
        return self.acc_values(words)[0]

    def entries(self) -> list[list[int]]:
        """Per node, its ``cycles`` encoded entries (:meth:`layout`)."""
        out = []
        for v in range(self.n):
            lay, base, deg = self.layout(v), self.offsets[v], len(self.links[v])
            rows = []
            for c in range(self.cycles):
                f: dict[str, int] = {"drain": int(self.drain[c, v])}
                for j in range(deg):
                    t, r = int(self.tx[c, base + j]), int(self.rx[c, base + j])
                    f.update({f"tx{j}": t != NONE, f"txacc{j}": t == ACC,
                              f"txslot{j}": max(t, 0), f"txbank{j}": self.tx_bank[c, base + j],
                              f"txaddr{j}": self.tx_addr[c, base + j],
                              f"txnew{j}": bool(self.tx_new[c, base + j]), f"rx{j}": r != NONE,
                              f"rxslot{j}": max(r, 0), f"comb{j}": int(self.comb[c, base + j])})
                rows.append(lay.encode(**f))
            out.append(rows)
        return out

    def directory_words(self) -> list[list[int]]:
        """Per node, every slot's encoded directory entry (0: the node does not store it)."""
        return [[self.layout(v).dir_encode(self.directory[v].get(x)) for x in range(self.slots)]
                for v in range(self.n)]


def compile_network(s: Schedule, *, topology: Topology | None = None, op: str = "sum",
                    width: int = 8, depth: int | None = None,
                    slots: int | None = None, bank_depth: int | None = None) -> NetworkProgram:
    """Compile ``s`` into per-node programs for the network fabric of ``topology``.

    Parameters
    ----------
    s : Schedule
        Validated here (an invalid one raises the validator's ScheduleError).
    topology : Topology, optional
        The fabric's topology; default the schedule's. Every message must
        use its edges.
    op : {"sum", "xor"}
        The accumulator operation the fabric was built with.
    width : int
    depth : int, optional
        Program entries per node; default exactly the cycles needed.
    slots : int, optional
        Store words per node; default exactly the items needed (at least 1).
    bank_depth : int, optional
        Words per bank of the fabric's stores; default ``slots``.

    Raises
    ------
    ProgramError
        See the module docstring.
    """
    v = check(s)
    topo = s.topology if topology is None else topology
    if op not in OPS:
        raise ProgramError(f"unknown accumulator operation {op!r} (expected one of "
                           f"{', '.join(OPS)})")
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ProgramError(f"width must be a positive integer, not {width!r}")
    if topo.n != s.n:
        raise ProgramError(f"the schedule has {s.n} nodes, the fabric's topology "
                           f"{topo.name} {topo.n}")
    if topo.edges is None and topo.n > 64:
        raise ProgramError(f"the network fabric of complete({topo.n}) would have "
                           f"{topo.n * (topo.n - 1)} ports: at most complete(64)")
    n, h = s.n, items_per_node(s)
    combining = s.primitive in COMBINING
    piece_slot = pieces_of(s)
    slot_sets: list[frozenset | None] = list(piece_slot)
    need = max(len(slot_sets), 1) if combining else n * h
    slots = need if slots is None else slots
    if need > slots:
        raise ProgramError(f"the schedule has {need} items per store ({h} per node) but the "
                           f"fabric's store holds {slots}: build with more slots")
    links = links_of(topo)
    offsets = [0, *np.cumsum([len(x) for x in links]).tolist()]
    port_of = [{w: offsets[u] + j for j, w in enumerate(links[u])} for u in range(n)]
    acc = [{u} if combining else set() for u in range(n)]
    held = np.zeros((n, slots), dtype=bool)
    if not combining:
        own = np.arange(n * h)
        held[own % n, own] = True
    if s.primitive == "polling":
        held[s.root, QUESTION_SLOT] = True
    for u in range(n):  # an own token sent alone later is in the store from the start
        if frozenset((u,)) in piece_slot:
            held[u, piece_slot[frozenset((u,))]] = True
    slot_sets += [None] * (slots - len(slot_sets))
    initial = held.copy()
    tx_rows, rx_rows, comb_rows, drain_rows, round_of = [], [], [], [], []
    acc_sets = [[frozenset(a) for a in acc]]
    P = offsets[-1]
    for r in range(1, v.R + 1):
        cyc: list[tuple] = []  # per cycle of the round: (tx, rx, comb, drain)
        arrivals: list[tuple[int, int, int]] = []  # (node, slot, cycle) stored this round
        for m in s.round_messages(r):
            if not m.items:
                continue
            for d in m.dst:
                if d not in port_of[m.src]:
                    raise ProgramError(f"round {r}: message {m.src} -> {d} uses a non-edge of "
                                       f"the fabric's topology {topo.name}")
            piece = piece_slot.get(frozenset(m.items)) if piece_slot else None
            if piece is not None and acc[m.src] != set(slot_sets[piece]):
                if not held[m.src, piece]:
                    raise ProgramError(
                        f"round {r}: node {m.src} sends tokens {sorted(slot_sets[piece])[:8]}, "
                        f"neither its whole accumulator {sorted(acc[m.src])[:8]} nor one word "
                        f"it received or started with: {FABRIC} forwards words, it cannot "
                        "split or recombine them")
                words = [piece]  # a word the sender stored: a part of its accumulator
            else:
                words = message_words(s, m.items, m.src, m.dst, acc, r, QUESTION_SLOT, FABRIC)
            for k, x in enumerate(words):
                while len(cyc) <= k:
                    cyc.append((np.full(P, NONE), np.full(P, NONE), np.zeros(P, bool),
                                np.zeros(n, bool)))
                tx, rx, cb, dr = cyc[k]
                for d in m.dst:
                    out, inp = port_of[m.src][d], port_of[d][m.src]
                    if tx[out] != NONE:
                        raise ProgramError(f"round {r}: two words on link {m.src} -> {d} in "
                                           f"one cycle")
                    tx[out] = x
                    if x == ACC or piece_slot:
                        cb[inp] = True
                        got_set = frozenset(acc[m.src]) if x == ACC else slot_sets[x]
                        if got_set in piece_slot:  # a word this receiver may forward later
                            rx[inp] = piece_slot[got_set]
                            arrivals.append((d, piece_slot[got_set], k))
                    else:
                        rx[inp] = x
                        arrivals.append((d, x, k))
                        if (s.primitive == "gather" and d == s.root and not held[d, x]
                                and all(a[:2] != (d, x) for a in arrivals[:-1])):
                            cb[inp] = True
                if x == ACC and s.primitive == "polling":
                    dr[m.src] = True
        if not cyc:  # an empty round inside the schedule keeps one idle cycle
            cyc.append((np.full(P, NONE), np.full(P, NONE), np.zeros(P, bool),
                        np.zeros(n, bool)))
        for k, (tx, rx, cb, dr) in enumerate(cyc):
            got = []
            for p in np.flatnonzero(cb):
                d = int(np.searchsorted(offsets, p, side="right")) - 1
                w = links[d][p - offsets[d]]
                x = int(tx[port_of[w][d]])
                got.append((d, acc[w] if x == ACC else
                            set(slot_sets[x]) if slot_sets[x] is not None else {x}))
            acc = step_sets(acc, dr, got, r)
            acc_sets.append([frozenset(a) for a in acc])
            tx_rows.append(tx)
            rx_rows.append(rx)
            comb_rows.append(cb)
            drain_rows.append(dr)
            round_of.append(r)
        for d, x, _ in arrivals:
            held[d, x] = True
    cycles = len(round_of)
    depth = max(cycles, 1) if depth is None else depth
    if cycles > depth:
        raise ProgramError(f"the schedule needs {cycles} cycles (R={v.R} rounds, S={v.S}) but "
                           f"the program memory holds depth={depth} entries: build with "
                           f"--depth {cycles} or more")
    check_complete(s, acc, FABRIC)

    def arr(rows, shape, dtype):
        return np.array(rows, dtype=dtype).reshape(shape)

    tx = arr(tx_rows, (cycles, P), np.int64)
    rx = arr(rx_rows, (cycles, P), np.int64)
    bank_depth = slots if bank_depth is None else bank_depth
    if isinstance(bank_depth, bool) or not isinstance(bank_depth, int) or bank_depth < 1:
        raise ProgramError(f"bank depth must be a positive integer, not {bank_depth!r}")
    tx_bank, tx_addr, directory, bank_need = assign_banks(tx, rx, initial, links, bank_depth)
    notes = [] if cycles == v.R else [f"{cycles} cycles for R={v.R} rounds: multi-word "
                                      f"messages take a cycle per word"]
    return NetworkProgram(
        schedule=s, topology=topo, op=op, width=width, depth=depth, slots=slots, links=links,
        tx=tx, rx=rx,
        comb=arr(comb_rows, (cycles, P), bool), drain=arr(drain_rows, (cycles, n), bool),
        round_of=np.asarray(round_of, dtype=np.int64), initial=initial, final=held,
        acc_sets=acc_sets, rounds=v.R, S=v.S, bank_depth=bank_depth, tx_bank=tx_bank,
        tx_addr=tx_addr, directory=directory, bank_need=bank_need,
        tx_new=fresh_sends(tx, rx, initial, links), notes=notes,
        slot_sets=slot_sets)
