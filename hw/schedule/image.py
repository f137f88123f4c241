"""A compiled schedule as one memory image: the load writes, then the checks of its result.

The image is what ``pipegossip program`` writes (``$readmemh`` hex or JSON)
and what the schedule board top
(:class:`~pipegossip.hw.fpga.schedule_selftest.ScheduleSelfTest`) holds in
its image memory and replays: every load-port write of
:func:`~.load.load_writes` (kinds 0..2 as :class:`~.fabric.LoadKind`, and
:attr:`ImageKind.ACC` for the load port's ``ACC`` writes), then
one check per node and store slot and one per accumulator (kinds 3..5,
the final state the golden model expects), then :attr:`ImageKind.END`.
A driver of the bare fabric's load port replays the entries of kinds 0..2
and 6 (as load kind 3) and stops at the first check (:func:`image_writes`).
The network fabric's image (:mod:`pipegossip.hw.network.image`) uses this
layout with a 4-bit kind field and the kind :attr:`ImageKind.DIRECTORY`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ...model.schedules.program import Program, field_offset
from ..ports import NetworkSize, ScheduleSize
from .fabric import LoadKind
from .load import load_writes, slot_words

__all__ = ["ImageKind", "ImageLayout", "Entry", "FAULTS", "schedule_image", "image_capacity",
           "image_load", "image_checks", "image_writes", "flip_expected", "plant_fault",
           "hex_text", "image_json", "uart_bytes", "UART_WRITE", "UART_RUN"]

#: One image entry: ``(kind, node, addr, data)``.
Entry = tuple[int, int, int, int]


class ImageKind(enum.IntEnum):
    """``kind`` of an image entry (0..2 are the fabric's :class:`~.fabric.LoadKind`).

    The load port's ``LoadKind.ACC`` (3) is :attr:`ACC` (6) here: 3..5 are
    the checks, so the kind alone tells a load from a check.
    """

    PROGRAM = LoadKind.PROGRAM
    ITEM = LoadKind.ITEM
    HEADER = LoadKind.HEADER
    #: Node ``node`` must end holding slot ``addr`` with the word ``data``.
    EXPECT_WORD = 3
    #: Node ``node`` must end without slot ``addr`` (held bit clear).
    EXPECT_EMPTY = 4
    #: Node ``node``'s accumulator must end equal to ``data``.
    EXPECT_ACC = 5
    #: Node ``node``'s initial accumulator is ``data`` (the load port's ``LoadKind.ACC``).
    ACC = 6
    #: The image ends here.
    END = 7
    #: Network images only (their kind field has 4 bits): ``data`` is the directory entry
    #: of store slot ``addr`` of node ``node`` (the network fabric's load kind 4).
    DIRECTORY = 8


#: Kinds of ``--fault``: a wrong expected word, or a receive dropped from the program.
FAULTS = ("expected", "program")

#: The UART upload protocol's command bytes (docs/fpga.md): ``W`` addr(2) data(B) writes
#: one image entry, ``R`` runs the image.
UART_WRITE = ord("W")
UART_RUN = ord("R")


@dataclass(frozen=True)
class ImageLayout:
    """Bit fields of one image entry, low bits first: kind, node, addr, data.

    ``kind`` has 3 bits, 4 for a network fabric (:class:`~..ports.NetworkSize`,
    whose images also hold :attr:`ImageKind.DIRECTORY` entries); ``addr``
    holds a program address or a store slot; ``data`` a program entry, a
    word or a program length, whichever is widest.
    """

    size: ScheduleSize

    @property
    def kind_bits(self) -> int:
        return 4 if isinstance(self.size, NetworkSize) else 3

    @property
    def kinds(self) -> list[ImageKind]:
        """The kinds this layout's images may hold."""
        return [k for k in ImageKind if k < 1 << self.kind_bits]

    @property
    def fields(self) -> tuple[tuple[str, int], ...]:
        z = self.size
        return (("kind", self.kind_bits), ("node", z.node_bits),
                ("addr", max(z.addr_bits, z.slot_bits)),
                ("data", max(z.entry_bits, z.width, z.count_bits)))

    @property
    def width(self) -> int:
        return sum(w for _, w in self.fields)

    @property
    def data_bytes(self) -> int:
        """Bytes of one entry in the UART protocol."""
        return (self.width + 7) // 8

    def offset(self, name: str) -> int:
        return field_offset(self.fields, name)

    def encode(self, entry: Entry) -> int:
        word, at = 0, 0
        for (name, w), value in zip(self.fields, entry):
            if not 0 <= value < 1 << w:
                raise ValueError(f"image field {name}={value} does not fit {w} bits")
            word |= value << at
            at += w
        return word

    def decode(self, word: int) -> Entry:
        out, at = [], 0
        for _, w in self.fields:
            out.append((word >> at) & ((1 << w) - 1))
            at += w
        return tuple(out)


def image_load(write) -> Entry:
    """A load-port write as an image entry (kind ``ACC`` moves to :attr:`ImageKind.ACC`)."""
    kind, node, addr, data = write
    return (int(ImageKind.ACC) if kind == LoadKind.ACC else int(kind), node, addr, data)


def image_capacity(size: ScheduleSize) -> int:
    """Entries of the longest image a fabric of ``size`` runs (the board's image memory).

    Header, every slot's item, every initial accumulator, every program
    entry, every slot's check, every accumulator's check, the end; a
    network fabric's image also holds every slot's directory entry.
    """
    z = size
    directory = z.n * z.slots if isinstance(z, NetworkSize) else 0
    return 1 + z.n * z.slots + directory + z.n + z.n * z.depth + z.n * z.slots + z.n + 1


def schedule_image(program: Program, seed: int = 0) -> list[Entry]:
    """The image of ``program`` with the words of ``seed`` (see the module docstring)."""
    words = slot_words(program, seed)
    out: list[Entry] = [image_load(w) for w in load_writes(program, seed)]
    return out + image_checks(program.expected_store(words),
                              program.expected_accumulators(words))


def image_checks(store: list[list[int | None]], accs: list[int]) -> list[Entry]:
    """The checks of an image, then its end: ``store[v][x]`` the word node ``v`` must end
    with in slot ``x`` (None: must not hold it), ``accs[v]`` its final accumulator."""
    out: list[Entry] = []
    for v, row in enumerate(store):
        for x, word in enumerate(row):
            out.append((int(ImageKind.EXPECT_EMPTY), v, x, 0) if word is None
                       else (int(ImageKind.EXPECT_WORD), v, x, word))
    out += [(int(ImageKind.EXPECT_ACC), v, 0, acc) for v, acc in enumerate(accs)]
    out.append((int(ImageKind.END), 0, 0, 0))
    return out


def image_writes(image: list[Entry]) -> list[tuple[int, int, int, int]]:
    """The load-port writes an image replays (the inverse of :func:`image_load`): its
    entries up to the first check; :attr:`ImageKind.DIRECTORY` stays as it is."""
    out = []
    for kind, node, addr, data in image:
        if ImageKind.EXPECT_WORD <= kind <= ImageKind.EXPECT_ACC or kind == ImageKind.END:
            break
        out.append((int(LoadKind.ACC) if kind == ImageKind.ACC else int(kind), node, addr, data))
    return out


def flip_expected(image: list[Entry]) -> tuple[list[Entry], int]:
    """``--fault expected``: the last node's first expected word with bit 0 flipped; the node.

    An image without expected words (a reduce that keeps no word) gets the
    last node's expected accumulator flipped instead.
    """
    out = list(image)
    kind = (ImageKind.EXPECT_WORD if any(e[0] == ImageKind.EXPECT_WORD for e in out)
            else ImageKind.EXPECT_ACC)
    last = max(e[1] for e in out if e[0] == kind)
    at = next(i for i, e in enumerate(out) if e[0] == kind and e[1] == last)
    k, v, x, d = out[at]
    out[at] = (k, v, x, d ^ 1)
    return out, v


def plant_fault(program: Program, image: list[Entry], kind: str) -> tuple[list[Entry], int]:
    """A copy of ``program``'s ``image`` with one planted fault, and the node that must fail.

    ``expected``: the last node's first expected word has bit 0 flipped.
    ``program``: the latest first arrival of an item that its receiver never
    sends on (latest cycle, then highest node) is dropped from the program
    (its receive and combine bits cleared), so that node, and no other,
    ends without that item.
    """
    out = list(image)
    if kind == "expected":
        return flip_expected(out)
    if kind == "program":
        held = program.initial.copy()
        candidates = []
        for c in range(program.cycles):
            for v in range(program.n):
                x = int(program.recv[c, v])
                if x >= 0 and not held[v, x] and not (program.send[c + 1:, v] == x).any():
                    candidates.append((c, v))
            for v in range(program.n):
                if program.recv[c, v] >= 0:
                    held[v, program.recv[c, v]] = True
        if not candidates:
            raise ValueError("the program delivers nothing: no receive to drop")
        c, v = max(candidates)
        lay = program.layout
        at = out.index((int(ImageKind.PROGRAM), v, c, int(program.entries()[v, c])))
        keep = ~((1 << lay.offset("recv")) | (1 << lay.offset("combine")))
        out[at] = (int(ImageKind.PROGRAM), v, c, out[at][3] & keep)
        return out, v
    raise ValueError(f"unknown fault {kind!r} (expected one of {', '.join(FAULTS)})")


def hex_text(size: ScheduleSize, image: list[Entry], title: str) -> str:
    """``$readmemh`` text: a comment naming the fields, then one entry per line."""
    lay = ImageLayout(size)
    digits = (lay.width + 3) // 4
    fields = ", ".join(f"{name}[{lay.offset(name) + w - 1}:{lay.offset(name)}]"
                       for name, w in lay.fields)
    kinds = ", ".join(f"{k.value} {k.name}" for k in lay.kinds)
    lines = [f"// {title}",
             f"// n={size.n} width={size.width} depth={size.depth} slots={size.slots}; "
             f"{len(image)} entries of {lay.width} bits: {fields}",
             f"// kinds: {kinds}"]
    lines += [f"{lay.encode(e):0{digits}x}" for e in image]
    return "\n".join(lines) + "\n"


def image_json(size: ScheduleSize, image: list[Entry], program: Program, seed: int) -> dict:
    """The image as JSON: the size, the field layout, the entries decoded and encoded.

    A network fabric's image (``size`` a :class:`~..ports.NetworkSize`, ``program``
    a network program) also names its topology, operation and bank depth.
    """
    lay = ImageLayout(size)
    network = isinstance(size, NetworkSize)
    extra = ({"topology": program.topology.to_json(), "op": program.op,
              "bank_depth": program.bank_depth} if network else {})
    return {
        "format": "pipegossip-schedule-image/1",
        "fabric": "network" if network else "schedule",
        "size": {"n": size.n, "width": size.width, "depth": size.depth, "slots": size.slots},
        **extra,
        "cycles": program.cycles,
        "seed": seed,
        "fields": [{"name": name, "offset": lay.offset(name), "bits": w} for name, w in lay.fields],
        "kinds": {k.name: k.value for k in lay.kinds},
        "entries": [list(e) for e in image],
        "words": [f"{lay.encode(e):x}" for e in image],
    }


def uart_bytes(size: ScheduleSize, image: list[Entry]) -> bytes:
    """The UART upload of ``image``: one ``W`` command per entry, then ``R``."""
    lay = ImageLayout(size)
    if len(image) > image_capacity(size):
        raise ValueError(f"the image has {len(image)} entries, the board holds "
                         f"{image_capacity(size)}")
    out = bytearray()
    for addr, e in enumerate(image):
        out.append(UART_WRITE)
        out += addr.to_bytes(2, "little") + lay.encode(e).to_bytes(lay.data_bytes, "little")
    out.append(UART_RUN)
    return bytes(out)
