"""A compiled network program as one memory image: its load writes, then the checks.

The network fabric's image is the schedule fabric's format
(:mod:`pipegossip.hw.schedule.image`: one :class:`ImageLayout`, ``$readmemh``
hex, JSON, UART upload, one set of kind codes): the load writes of
:func:`~.load.network_writes` with their own load kinds (header, directory,
:attr:`ImageKind.DIRECTORY` = load kind 4, items, initial accumulators,
program entries encoded by the model's
:class:`~pipegossip.model.schedules.network_program.NetworkLayout`), then one
check per node and store slot and one per accumulator (the final state the
compiler's model expects), then the end. The network board top
(:mod:`pipegossip.hw.fpga.network_board`) replays and checks it on chip.
"""

from __future__ import annotations

from ...model.schedules.network_program import NONE, NetworkProgram
from ..ports import NetworkSize
from ..schedule.image import (Entry, FAULTS, ImageKind, flip_expected, image_checks,
                              image_load)
from .fabric import network_size
from .load import item_words, network_writes

__all__ = ["network_image", "network_image_size", "plant_network_fault", "fault_candidates",
           "FAULTS"]


def network_image_size(program: NetworkProgram) -> NetworkSize:
    """The size of the network fabric ``program`` was compiled for."""
    return network_size(program.topology, program.width, program.depth, program.slots,
                        program.bank_depth)


def network_image(program: NetworkProgram, seed: int = 0) -> list[Entry]:
    """The image of ``program`` with the words of ``seed`` (see the module docstring)."""
    words = item_words(program, seed)
    slots = program.slot_words(words)
    out: list[Entry] = [image_load(w) for w in network_writes(program, seed)]
    store = [[slots[x] if program.final[v, x] else None for x in range(program.slots)]
             for v in range(program.n)]
    return out + image_checks(store, program.acc_values(words)[-1])


def fault_candidates(program: NetworkProgram, seed: int = 0) -> list[tuple[int, int]]:
    """The receives ``(cycle, port)`` whose loss shows at their node and nowhere else.

    The node sends nothing after that cycle, and either the slot it stores
    arrives there only then, or the word it combines is not 0 (``seed``'s
    words), so its accumulator ends wrong.
    """
    words = item_words(program, seed)
    sent = program.sent_words(words)
    offsets = program.offsets
    arrivals: dict[tuple[int, int], int] = {}
    for c, p in zip(*(program.rx != NONE).nonzero()):
        key = (program.node_of(int(p)), int(program.rx[c, p]))
        arrivals[key] = arrivals.get(key, 0) + 1
    out = []
    for c in range(program.cycles):
        for p in range(program.ports):
            d, x = program.node_of(p), int(program.rx[c, p])
            quiet_after = not (program.tx[c + 1:, offsets[d]:offsets[d + 1]] != NONE).any()
            stored = (x != NONE and not program.initial[d, x] and arrivals[(d, x)] == 1)
            combined = bool(program.comb[c, p]) and sent[c, program.peer(p)] != 0
            if quiet_after and (stored or combined):
                out.append((c, p))
    return out


def plant_network_fault(program: NetworkProgram, image: list[Entry], kind: str,
                        seed: int = 0, at: tuple[int, int] | None = None
                        ) -> tuple[list[Entry], int]:
    """A copy of ``image`` with one planted fault, and the node that must fail.

    ``expected``: the last node's first expected word has bit 0 flipped.
    ``program``: the receive ``at`` (default the latest of
    :func:`fault_candidates`: latest cycle, then highest port) is dropped
    (the entry's ``rx`` and ``comb`` bits of that link cleared).
    """
    if kind == "expected":
        return flip_expected(image)
    if kind != "program":
        raise ValueError(f"unknown fault {kind!r} (expected one of {', '.join(FAULTS)})")
    if at is None:
        candidates = fault_candidates(program, seed)
        if not candidates:
            raise ValueError("the program has no receive whose loss shows at one node only")
        at = max(candidates)
    c, p = at
    d = program.node_of(p)
    j, lay = p - program.offsets[d], program.layout(d)
    entry = int(program.entries()[d][c])
    where = image.index((int(ImageKind.PROGRAM), d, c, entry))
    out = list(image)
    out[where] = (int(ImageKind.PROGRAM), d, c,
                  entry & ~((1 << lay.offset(f"rx{j}")) | (1 << lay.offset(f"comb{j}"))))
    return out, d
