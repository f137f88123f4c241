"""Streaming programs: G back-to-back gossips on the schedule fabric, slots reused round-robin.

A streaming program runs ``G`` copies of a one-item-per-node gossip schedule
(cyclic-shift: ``N-1`` rounds) back to back, copy ``g`` right after copy
``g-1``, and loads the next copies' source words *while* the earlier ones
drain, so the store holds only ``banks`` gossips' worth of words.

Rules
-----
* **Items.** Gossip ``g``'s item of node ``v`` is item ``g*n + v`` (session
  ``g`` of the tagged-word scheme with ``G`` sessions): the repeated schedule
  (:func:`repeat_schedule`) is an ordinary ``h = G`` schedule, compiled by
  :func:`~.program.compile_schedule` into the *logical* program (item ``i``
  in slot ``i``), which fixes every cycle's sends and receives.
* **Slots.** The store has ``banks * n`` slots; item ``g*n + v`` lives in
  slot ``(g mod banks)*n + v`` at every node. Gossips ``0 .. banks-1`` are
  loaded before the start (as any program); every later item is a *timed
  load* into its owner's store while the fabric runs.
* **Load windows** (clock cycles, cycle 0 = the start cycle; program cycle
  ``t``'s send slot is read in clock cycle ``t`` and exchanged in ``t+1``;
  a receive of program cycle ``t`` is written at the edge ending ``t+1``; a
  load write driven in clock cycle ``k`` is written at the edge ending ``k``
  and seen by reads in cycle ``k`` on): item ``i`` of node ``v`` may be
  written in cycles ``earliest .. latest`` where ``earliest`` is one after
  the last read of the slot's previous item at ``v`` (and two after its
  last receive there) and ``latest`` is the program cycle of ``v``'s first
  send of ``i``. A write in the cycle a receive into the same slot of the
  same node lands is lost (the hardware lets the receive win); the
  timetable never puts one there (:func:`load_timetable`).
* **Reuse at receivers.** A receive of item ``i`` into a slot at node ``u``
  must come no earlier than ``u``'s last send of the slot's previous item;
  otherwise :class:`~.program.ProgramError` asks for more banks.
* Refused: a base schedule that is not a gossip of one item per node, fewer
  than one gossip or bank, a load window that is empty, a timetable the
  chosen load path cannot meet.

Pure model: numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .ir import Message, Schedule
from .program import NONE, Program, ProgramError, compile_schedule
from .validate import check, items_per_node

__all__ = ["repeat_schedule", "StreamLoad", "StreamProgram", "compile_stream", "load_timetable",
           "VIA_LOAD", "VIA_ITEM"]

#: Timed loads through the shared ``load`` port (one ITEM write per clock cycle, fabric-wide).
VIA_LOAD = "load"
#: Timed loads through each node's own ``item`` port (one write per node per clock cycle).
VIA_ITEM = "item"


def repeat_schedule(base: Schedule, gossips: int) -> Schedule:
    """``gossips`` copies of ``base`` back to back; copy g's item of node v is ``g*n + v``.

    Raises
    ------
    ProgramError
        ``base`` is not a gossip with one item per node, or ``gossips < 1``.
    """
    if isinstance(gossips, bool) or not isinstance(gossips, int) or gossips < 1:
        raise ProgramError(f"gossips must be a positive integer, not {gossips!r}")
    v = check(base)
    if base.primitive != "gossip" or items_per_node(base) != 1:
        raise ProgramError(f"streaming repeats a gossip of one item per node, not a "
                           f"{base.primitive} with h={items_per_node(base)}")
    n = base.n
    rounds = []
    for g in range(gossips):
        for r in range(1, v.R + 1):
            rounds.append([Message(m.src, tuple(m.dst), tuple(int(x) + g * n for x in m.items))
                           for m in base.round_messages(r)])
    origin = dict(base.origin)
    origin["source"] = f"{origin.get('source', '')}; {gossips} back-to-back".lstrip("; ")
    return Schedule.from_rounds(rounds, topology=base.topology, model=base.model, p=base.p,
                                primitive="gossip", root=base.root, origin=origin)


@dataclass(frozen=True)
class StreamLoad:
    """One timed load: item ``item`` into ``slot`` of node ``node`` in clock cycles
    ``earliest .. latest`` (cycle 0 = the start cycle)."""

    item: int
    node: int
    slot: int
    earliest: int
    latest: int


@dataclass(eq=False)
class StreamProgram:
    """A streaming program: the physical program the fabric runs, and its load timetable.

    Attributes
    ----------
    logical : Program
        The repeated schedule compiled with item ``i`` in slot ``i``: which
        item every node sends and receives in every cycle.
    program : Program
        What is loaded: the logical program with slots mapped round-robin
        (``banks * n`` slots used); ``initial`` = gossips ``0 .. banks-1``
        (loaded before the start), ``final`` = every slot ever written.
    gossips, banks : int
    loads : list of StreamLoad
        Every item loaded while the fabric runs, with its window.
    """

    logical: Program
    program: Program
    gossips: int
    banks: int
    loads: list[StreamLoad]

    @property
    def n(self) -> int:
        return self.program.n

    @property
    def cycles(self) -> int:
        return self.program.cycles

    @property
    def schedule(self) -> Schedule:
        """The repeated schedule (``G`` gossips)."""
        return self.logical.schedule

    @property
    def rounds(self) -> int:
        return self.logical.rounds

    @property
    def algorithm(self) -> str:
        return self.logical.algorithm

    @property
    def slug(self) -> str:
        return f"{self.algorithm}-n{self.n}-stream{self.gossips}-b{self.banks}"

    def header(self) -> str:
        return (f"{self.logical.header()}; {self.gossips} gossips streamed, {self.banks} "
                f"bank(s), {len(self.loads)} timed loads")

    def gossip_of(self, item: int) -> int:
        return item // self.n

    def slot_of(self, item: int) -> int:
        """The store slot of ``item`` (at every node)."""
        return (item // self.n) % self.banks * self.n + item % self.n

    def final_items(self) -> np.ndarray:
        """``(n, slots)``: the item each store slot holds after the run, :data:`NONE` if none."""
        n, slots = self.n, self.program.slots
        out = np.full((n, slots), NONE, dtype=np.int64)
        # (slots past banks * n stay empty)
        when = np.full((n, slots), -1, dtype=np.int64)
        for v in range(n):
            for i in np.flatnonzero(self.logical.initial[v]):
                if int(i) < self.banks * n:
                    out[v, self.slot_of(int(i))] = int(i)
        for ld in self.loads:
            if ld.earliest > when[ld.node, ld.slot]:
                out[ld.node, ld.slot], when[ld.node, ld.slot] = ld.item, ld.earliest
        for c, v in zip(*np.nonzero(self.logical.recv != NONE)):
            i = int(self.logical.recv[c, v])
            x = self.slot_of(i)
            if c + 2 > when[v, x]:  # program cycle c+1, written at the edge ending c+2
                out[v, x], when[v, x] = i, c + 2
        return out


def _uses(logical: Program, n: int):
    """Per (node, item): program cycles (1-based) of its sends and receives there."""
    sends: dict[tuple[int, int], list[int]] = {}
    recvs: dict[tuple[int, int], list[int]] = {}
    for arr, into in ((logical.send, sends), (logical.recv, recvs)):
        for c, v in zip(*np.nonzero(arr != NONE)):
            into.setdefault((int(v), int(arr[c, v])), []).append(int(c) + 1)
    return sends, recvs


def compile_stream(base: Schedule, gossips: int, *, banks: int = 2, width: int = 8,
                   depth: int | None = None, slots: int | None = None) -> StreamProgram:
    """Compile ``gossips`` back-to-back copies of ``base`` with ``banks`` gossips' worth of slots.

    Parameters
    ----------
    base : Schedule
        A gossip of one item per node (cyclic-shift for the crossbar's limit).
    gossips : int
        ``G``, copies run back to back in one program.
    banks : int
        Gossips' worth of store slots (``slots = banks * n``); at most ``G``
        are used.
    width, depth : int
        As for :func:`~.program.compile_schedule`.
    slots : int, optional
        The fabric's store size (it sets the entry layout); default and
        minimum ``banks * n``.

    Raises
    ------
    ProgramError
        See the module's rules.
    """
    if isinstance(banks, bool) or not isinstance(banks, int) or banks < 1:
        raise ProgramError(f"banks must be a positive integer, not {banks!r}")
    rep = repeat_schedule(base, gossips)
    logical = compile_schedule(rep, width=width, depth=depth)
    n = rep.n
    banks = min(banks, gossips)
    slots = banks * n if slots is None else slots
    if slots < banks * n:
        raise ProgramError(f"{banks} bank(s) of {n} words need {banks * n} slots but the "
                           f"fabric's store holds {slots}: build with more slots")
    sp = StreamProgram(logical=logical, program=logical, gossips=gossips, banks=banks, loads=[])
    slot = np.vectorize(lambda i: NONE if i == NONE else sp.slot_of(int(i)), otypes=[np.int64])
    send, recv = slot(logical.send), slot(logical.recv)
    sends, recvs = _uses(logical, n)
    # receivers: a slot is overwritten only after its previous item's last send there
    for c, u in zip(*np.nonzero(logical.recv != NONE)):
        i = int(logical.recv[c, u])
        if i >= banks * n:
            prev = i - banks * n
            last = max(sends.get((int(u), prev), [0]))
            if c + 1 < last:
                raise ProgramError(
                    f"with {banks} bank(s) node {u} receives item {i} in cycle {c + 1} into "
                    f"slot {sp.slot_of(i)} before sending the slot's item {prev} in cycle "
                    f"{last}: use more banks")
    loads = []
    for i in range(banks * n, gossips * n):
        v, prev = i % n, i - banks * n
        earliest = max([t + 1 for t in sends.get((v, prev), [])]
                       + [t + 2 for t in recvs.get((v, prev), [])] + [0])
        firsts = sends.get((v, i), [])
        if not firsts:
            raise ProgramError(f"node {v} never sends its item {i}: nothing to stream")
        latest = min(firsts)
        if earliest > latest:
            raise ProgramError(f"item {i} of node {v} must be loaded after cycle {earliest - 1} "
                               f"and by cycle {latest}: use more banks")
        loads.append(StreamLoad(i, v, sp.slot_of(i), earliest, latest))
    initial = np.zeros((n, slots), dtype=bool)
    own = np.arange(banks * n)
    initial[own % n, own] = True
    prog = replace(logical, send=send, recv=recv, slots=slots, initial=initial,
                   final=np.zeros((n, slots), dtype=bool),
                   notes=logical.notes + [f"{gossips} back-to-back gossips, {banks} bank(s) of "
                                          f"{n} slots, {len(loads)} timed loads"])
    sp.program, sp.loads = prog, loads
    prog.final = sp.final_items() != NONE
    return sp


def _collides(sp: StreamProgram, node: int, slot: int, cycle: int) -> bool:
    """A receive into ``slot`` of ``node`` lands at the edge ending ``cycle``."""
    c = cycle - 2  # program cycle cycle-1, 0-based row
    return 0 <= c < sp.cycles and int(sp.program.recv[c, node]) == slot


def load_timetable(sp: StreamProgram, via: str = VIA_ITEM) -> list[tuple[int, StreamLoad]]:
    """When each timed load is written: ``(clock cycle, load)``, earliest deadline first.

    ``via`` :data:`VIA_ITEM` gives every node one write per cycle (its own
    port), :data:`VIA_LOAD` one write per cycle for the whole fabric. A
    cycle in which a receive into the same slot of the same node lands is
    never used.

    Raises
    ------
    ProgramError
        The path cannot write every word inside its window.
    """
    if via not in (VIA_ITEM, VIA_LOAD):
        raise ProgramError(f"loads go via {VIA_ITEM!r} or {VIA_LOAD!r}, not {via!r}")
    lanes: dict[int, list[StreamLoad]] = {}
    for ld in sp.loads:
        lanes.setdefault(ld.node if via == VIA_ITEM else 0, []).append(ld)
    out = []
    for todo in lanes.values():
        todo = sorted(todo, key=lambda x: (x.earliest, x.latest, x.item))
        pending: list[StreamLoad] = []
        k, j = 0, 0
        while j < len(todo) or pending:
            if not pending and todo[j].earliest > k:
                k = todo[j].earliest
            while j < len(todo) and todo[j].earliest <= k:
                pending.append(todo[j])
                j += 1
            pending.sort(key=lambda x: (x.latest, x.item))
            pick = next((x for x in pending if not _collides(sp, x.node, x.slot, k)), None)
            if pick is not None:
                if k > pick.latest:
                    raise ProgramError(
                        f"the {via} port cannot write item {pick.item} of node {pick.node} by "
                        f"cycle {pick.latest} ({len(sp.loads)} timed loads in "
                        f"{sp.cycles} cycles): use the per-node item ports or more banks")
                pending.remove(pick)
                out.append((k, pick))
            k += 1
    return sorted(out, key=lambda e: (e[0], e[1].node))
