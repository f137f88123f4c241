"""A compiled schedule as one memory image: the load writes, then the checks of its result.

The image is what ``pipegossip hw program`` writes (``$readmemh`` hex or
JSON) and what the board tops
(:class:`~pipegossip.hw.fpga.schedule_selftest.ScheduleSelfTest`) hold in
their image memory and replay. One format for both program-driven fabrics
(``pipegossip-image/2``, :data:`IMAGE_FORMAT`), with one set of kind codes
(:class:`ImageKind`, a 4-bit field): an entry whose kind is below
:data:`FIRST_CHECK` (8) is a load-port write, and its kind **is** the load
port's ``load__kind`` (0 PROGRAM, 1 ITEM, 2 HEADER, 3 ACC, and the network
fabric's 4 DIRECTORY), so a driver copies the fields onto the load port as
they are; kinds 8..10 are the checks of the final state the golden model
expects, 15 the end. Every load write of :func:`~.load.load_writes` comes
first, then one check per node and store slot and one per accumulator, then
:attr:`ImageKind.END`; a driver of the bare fabric's load port replays the
entries up to the first check (:func:`image_writes`). The network fabric's
image (:mod:`pipegossip.hw.network.image`) adds DIRECTORY entries.

Images of the first format (``pipegossip-schedule-image/1``: ACC was 6,
DIRECTORY 8, the checks 3..5) are refused with a hint by the reader
(:mod:`.image_read`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ...model.schedules.program import Program, field_offset
from ..ports import NetworkSize, ScheduleSize
from .fabric import LoadKind
from .load import load_writes, slot_words

__all__ = ["ImageKind", "ImageLayout", "Entry", "FAULTS", "IMAGE_FORMAT", "OLD_FORMATS",
           "FIRST_CHECK", "KIND_BITS", "image_sizes", "schedule_image", "image_capacity",
           "image_load", "image_checks", "image_writes", "flip_expected", "plant_fault",
           "topology_label", "sizes_text", "hex_text", "image_json", "uart_bytes", "UART_WRITE", "UART_RUN"]

#: One image entry: ``(kind, node, addr, data)``.
Entry = tuple[int, int, int, int]


#: The image format's name (the JSON ``format``, the hex text's second line).
IMAGE_FORMAT = "pipegossip-image/2"
#: Earlier formats, which the reader refuses with a hint (their kinds were others).
OLD_FORMATS = ("pipegossip-schedule-image/1",)
#: Bits of the ``kind`` field, the same for both fabrics.
KIND_BITS = 4
#: The first kind that is no load write: ``kind < FIRST_CHECK`` is ``load__kind``.
FIRST_CHECK = 8


class ImageKind(enum.IntEnum):
    """``kind`` of an image entry: below 8 the load port's own ``load__kind``, then checks.

    One set of codes for the schedule and the network fabric: 0..3 are
    :class:`~.fabric.LoadKind`, 4 the network fabric's directory write, so
    a load entry goes onto the load port unchanged.
    """

    PROGRAM = LoadKind.PROGRAM
    ITEM = LoadKind.ITEM
    HEADER = LoadKind.HEADER
    #: Node ``node``'s initial accumulator is ``data`` (``LoadKind.ACC``).
    ACC = LoadKind.ACC
    #: Network images only: ``data`` is the directory entry of store slot ``addr`` of node
    #: ``node`` (the network fabric's load kind 4).
    DIRECTORY = 4
    #: Node ``node`` must end holding slot ``addr`` with the word ``data``.
    EXPECT_WORD = 8
    #: Node ``node`` must end without slot ``addr`` (held bit clear).
    EXPECT_EMPTY = 9
    #: Node ``node``'s accumulator must end equal to ``data``.
    EXPECT_ACC = 10
    #: The image ends here.
    END = 15


#: Kinds of ``--fault``: a wrong expected word, or a receive dropped from the program.
FAULTS = ("expected", "program")

#: The UART upload protocol's command bytes (docs/fpga.md): ``W`` addr(2) data(B) writes
#: one image entry, ``R`` runs the image.
UART_WRITE = ord("W")
UART_RUN = ord("R")


@dataclass(frozen=True)
class ImageLayout:
    """Bit fields of one image entry, low bits first: kind, node, addr, data.

    ``kind`` has :data:`KIND_BITS` (4) bits for both fabrics; ``addr``
    holds a program address or a store slot; ``data`` a program entry, a
    word or a program length, whichever is widest.
    """

    size: ScheduleSize

    @property
    def kind_bits(self) -> int:
        return KIND_BITS

    @property
    def kinds(self) -> list[ImageKind]:
        """The kinds this layout's images may hold (DIRECTORY only a network fabric's)."""
        return [k for k in ImageKind
                if k != ImageKind.DIRECTORY or isinstance(self.size, NetworkSize)]

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
    """A load-port write as an image entry: the same four fields (kind = ``load__kind``)."""
    kind, node, addr, data = write
    if not 0 <= int(kind) < FIRST_CHECK:
        raise ValueError(f"load kind {kind} is not a load-port kind")
    return (int(kind), node, addr, data)


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
    """The load-port writes an image replays: its entries up to the first check, unchanged
    (an entry's kind below :data:`FIRST_CHECK` is its ``load__kind``)."""
    out = []
    for kind, node, addr, data in image:
        if kind >= FIRST_CHECK:
            break
        out.append((int(kind), node, addr, data))
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


def topology_label(topology) -> str:
    """``cycle(n=4)``, ``mesh(a=2,b=3)``: a topology's name and parameters, no spaces."""
    params = ",".join(f"{k}={v}" for k, v in topology.params.items() if k != "edges")
    return f"{topology.name}({params})"


def image_sizes(size: ScheduleSize, program) -> dict:
    """What an image was compiled for: the fabric, its size, the program's cycles and, for
    the network fabric, the bank depth, the operation, the link ends and the topology.

    The image carries these (hex: its second line; JSON: ``sizes``), and the
    reader (:mod:`.image_read`) refuses to load it into a build that cannot run it.
    """
    network = isinstance(size, NetworkSize)
    out = {"fabric": "network" if network else "schedule", "n": size.n, "width": size.width,
           "depth": size.depth, "slots": size.slots, "cycles": int(program.cycles)}
    if network:
        out.update(bank_depth=int(program.bank_depth), op=program.op, ports=size.ports,
                   topology=topology_label(program.topology))
    return out


def sizes_text(sizes: dict) -> str:
    """The hex image's second line (without ``// ``): the format, then ``key=value`` pairs."""
    return " ".join([IMAGE_FORMAT] + [f"{k}={v}" for k, v in sizes.items()])


def hex_text(size: ScheduleSize, image: list[Entry], title: str,
             sizes: dict | None = None) -> str:
    """``$readmemh`` text: comments naming the format and sizes (``sizes``, as
    :func:`image_sizes` gives them), the fields and the kinds; then one entry per line."""
    lay = ImageLayout(size)
    digits = (lay.width + 3) // 4
    fields = ", ".join(f"{name}[{lay.offset(name) + w - 1}:{lay.offset(name)}]"
                       for name, w in lay.fields)
    kinds = ", ".join(f"{k.value} {k.name}" for k in lay.kinds)
    sizes = sizes or {"fabric": "network" if isinstance(size, NetworkSize) else "schedule",
                      "n": size.n, "width": size.width, "depth": size.depth,
                      "slots": size.slots}
    lines = [f"// {title}",
             f"// {sizes_text(sizes)}",
             f"// {len(image)} entries of {lay.width} bits: {fields}",
             f"// kinds: {kinds}; a kind below {FIRST_CHECK} is a load-port write, "
             f"load__kind = kind"]
    lines += [f"{lay.encode(e):0{digits}x}" for e in image]
    return "\n".join(lines) + "\n"


def image_json(size: ScheduleSize, image: list[Entry], program: Program, seed: int) -> dict:
    """The image as JSON: the format, what it was compiled for (``sizes``), the field layout,
    the entries decoded and encoded.

    A network fabric's image (``size`` a :class:`~..ports.NetworkSize`, ``program``
    a network program) also names its topology, operation and bank depth.
    """
    lay = ImageLayout(size)
    network = isinstance(size, NetworkSize)
    extra = ({"topology": program.topology.to_json(), "op": program.op,
              "bank_depth": program.bank_depth} if network else {})
    return {
        "format": IMAGE_FORMAT,
        "fabric": "network" if network else "schedule",
        "size": {"n": size.n, "width": size.width, "depth": size.depth, "slots": size.slots},
        "sizes": image_sizes(size, program),
        **extra,
        "cycles": program.cycles,
        "seed": seed,
        "fields": [{"name": name, "offset": lay.offset(name), "bits": w} for name, w in lay.fields],
        "kinds": {k.name: k.value for k in lay.kinds},
        "first_check": FIRST_CHECK,
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
