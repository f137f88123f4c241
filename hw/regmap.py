"""The control interface's register map, declared once.

:data:`REGISTERS` is the one description of the registers behind the
program-driven fabrics' AXI4-Lite and Wishbone control port
(:class:`~pipegossip.hw.control.ControlBlock`). Everything else is generated
from it: the block's address decode and read multiplexer (Amaranth, hence
the Verilog), the Markdown table of docs/integration.md
(:func:`markdown_table`) and the C header (:func:`c_header`);
``tests/hw/test_hw_regmap.py`` checks the three against each other.

Registers are 32 bits wide at 4-byte-aligned byte offsets; the map is the
same for every fabric size (sizes are read from the ``NODES`` .. ``LOAD_WORDS``
registers), so one driver serves every build. Access codes:

``ro``   read only (writes ignored);
``rw``   read and write;
``w1``   write 1 to act (a command; reads 0);
``w1c``  sticky flag, write 1 to clear;
``wo``   write only (reads 0).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Field", "Register", "REGISTERS", "ACCESS", "register", "ADDR_BITS", "MAGIC",
           "VERSION", "FABRIC_CODES", "markdown_table", "c_header", "DATA_BITS", "check_map"]

#: Bits of a register; the bus's data width.
DATA_BITS = 32
#: Byte-address bits of the control port (a 4 KiB window).
ADDR_BITS = 12
#: ``ID.MAGIC``: "PG".
MAGIC = 0x5047
#: ``ID.VERSION``: bumped whenever a register moves or changes meaning.
VERSION = 1
#: ``ID.FABRIC``: which fabric sits behind the block.
FABRIC_CODES = {"schedule": 1, "network": 2}

ACCESS = ("ro", "rw", "w1", "w1c", "wo")


@dataclass(frozen=True)
class Field:
    """One field of a register: bits ``lsb .. lsb + width - 1``."""

    name: str
    lsb: int
    width: int
    access: str
    doc: str
    reset: int = 0

    @property
    def mask(self) -> int:
        """The field's bits in the register."""
        return ((1 << self.width) - 1) << self.lsb

    def __post_init__(self):
        if self.access not in ACCESS:
            raise ValueError(f"field {self.name}: access must be one of {ACCESS}, "
                             f"not {self.access!r}")
        if self.lsb < 0 or self.width < 1 or self.lsb + self.width > DATA_BITS:
            raise ValueError(f"field {self.name}: bits {self.lsb}+{self.width} do not fit "
                             f"{DATA_BITS}")


@dataclass(frozen=True)
class Register:
    """One register at byte ``offset``."""

    name: str
    offset: int
    fields: tuple[Field, ...]
    doc: str

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"register {self.name} has no field {name!r}")


def _ro(name: str, doc: str) -> tuple[Field, ...]:
    return (Field(name, 0, 32, "ro", doc),)


#: The map, in address order. Field semantics: docs/integration.md.
REGISTERS: tuple[Register, ...] = (
    Register("ID", 0x000, (
        Field("FABRIC", 0, 8, "ro", "1 schedule fabric, 2 network fabric"),
        Field("VERSION", 8, 8, "ro", "register-map version (1)"),
        Field("MAGIC", 16, 16, "ro", "0x5047 (\"PG\")"),
    ), "identifies the block"),
    Register("NODES", 0x004, _ro("COUNT", "nodes N"), "the fabric's size"),
    Register("WIDTH", 0x008, _ro("BITS", "word width W"), "the fabric's size"),
    Register("DEPTH", 0x00C, _ro("ENTRIES", "program entries per node"), "the fabric's size"),
    Register("SLOTS", 0x010, _ro("COUNT", "store slots per node"), "the fabric's size"),
    Register("PROGRAMS", 0x014, _ro("COUNT", "resident programs P (1: no program select)"),
             "the fabric's size"),
    Register("LOAD_WORDS", 0x018, _ro("COUNT", "LOAD_DATA writes per load (data bits / 32, "
                                      "rounded up)"), "the fabric's size"),
    Register("CTRL", 0x020, (
        Field("AUTO", 0, 1, "rw", "re-arm after every start: collectives back to back"),
        Field("IRQ_EN", 1, 1, "rw", "drive irq while STATUS.DONE"),
    ), "run control"),
    Register("CMD", 0x024, (
        Field("ARM", 0, 1, "w1", "request one start: taken when idle and READY"),
        Field("CLEAR", 1, 1, "w1", "zero the counters and STATUS.LOAD_ERR"),
        Field("DISARM", 2, 1, "w1", "withdraw a pending start (and clear AUTO's re-arm)"),
    ), "commands"),
    Register("STATUS", 0x028, (
        Field("BUSY", 0, 1, "ro", "the fabric runs a collective"),
        Field("DONE", 1, 1, "ro", "a collective has ended, no start since"),
        Field("ARMED", 2, 1, "ro", "a start is pending"),
        Field("READY", 3, 1, "ro", "the stream side can take the next start"),
        Field("LOAD_ERR", 8, 1, "w1c", "a LOAD_GO was dropped: busy, armed, or an unknown kind"),
    ), "status"),
    Register("PROG_SEL", 0x02C, (
        Field("SEL", 0, 8, "rw", "program the next start runs (bits past log2 P read 0)"),
    ), "program select"),
    Register("LENGTH", 0x030, _ro("CYCLES", "the loaded program's length L"), "program"),
    Register("CYCLE", 0x034, _ro("T", "program cycle exchanged now, 0 when idle"), "program"),
    Register("LOAD_ADDR", 0x040, (Field("ADDR", 0, 32, "rw", "addr of the next load"),),
             "load window"),
    Register("LOAD_DATA", 0x044, (
        Field("DATA", 0, 32, "wo", "shifts 32 bits into the staged data (most significant "
              "word first)"),
    ), "load window"),
    Register("LOAD_GO", 0x048, (
        Field("KIND", 0, 4, "wo", "image entry kind (pipegossip hw program's codes)"),
        Field("NODE", 8, 24, "wo", "node of the entry"),
    ), "issues one image entry: a load write, or a check (self-checking build)"),
    Register("READ_NODE", 0x050, (Field("NODE", 0, 32, "rw", "node read back"),), "read-back"),
    Register("READ_SLOT", 0x054, (Field("SLOT", 0, 32, "rw", "slot read back"),), "read-back"),
    Register("READ_PART", 0x058, (Field("PART", 0, 32, "rw", "32-bit part of READ_WORD and "
                                        "READ_ACC (0: bits 31..0)"),), "read-back"),
    Register("READ_WORD", 0x05C, _ro("WORD", "the slot's word (part READ_PART), idle only"),
             "read-back"),
    Register("READ_ACC", 0x060, _ro("ACC", "the node's accumulator (part READ_PART)"),
             "read-back"),
    Register("READ_HELD", 0x064, (Field("HELD", 0, 1, "ro", "the slot is held"),),
             "read-back"),
    Register("CLOCKS", 0x070, _ro("COUNT", "clock cycles since CLEAR (wraps)"), "counters"),
    Register("BUSY_CYCLES", 0x074, _ro("COUNT", "cycles with STATUS.BUSY since CLEAR"),
             "counters"),
    Register("COLLECTIVES", 0x078, _ro("COUNT", "collectives ended since CLEAR"), "counters"),
    Register("CHECKS", 0x07C, _ro("COUNT", "check entries run since CLEAR (self-checking "
                                  "build; else 0)"), "counters"),
    Register("MISMATCHES", 0x080, _ro("COUNT", "check entries that failed since CLEAR "
                                      "(self-checking build; else 0)"), "counters"),
)

_BY_NAME = {r.name: r for r in REGISTERS}


def register(name: str) -> Register:
    """The register ``name`` (``"STATUS"``)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"the control block has no register {name!r}") from None


def check_map(registers=REGISTERS) -> None:
    """Refuse a map with a misaligned or shared offset or overlapping fields (ValueError)."""
    seen: dict[int, str] = {}
    for r in registers:
        if r.offset % 4 or r.offset >= 1 << ADDR_BITS:
            raise ValueError(f"register {r.name}: offset {r.offset:#x} not word-aligned in "
                             f"the {1 << ADDR_BITS}-byte window")
        if r.offset in seen:
            raise ValueError(f"registers {seen[r.offset]} and {r.name} share {r.offset:#x}")
        seen[r.offset] = r.name
        used = 0
        for f in r.fields:
            if used & f.mask:
                raise ValueError(f"register {r.name}: field {f.name} overlaps another")
            used |= f.mask


check_map()


def _bits(f: Field) -> str:
    return f"{f.lsb}" if f.width == 1 else f"{f.lsb + f.width - 1}:{f.lsb}"


def markdown_table() -> str:
    """The register table of docs/integration.md (one row per field)."""
    rows = ["| offset | register | field | bits | access | reset | meaning |",
            "|---|---|---|---|---|---|---|"]
    for r in REGISTERS:
        for f in r.fields:
            rows.append(f"| `{r.offset:#05x}` | `{r.name}` | `{f.name}` | {_bits(f)} | "
                        f"{f.access} | {hex(f.reset) if f.access == 'rw' else '-'} | "
                        f"{f.doc.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def c_header(prefix: str = "PIPEGOSSIP") -> str:
    """A C header: per register ``<P>_<REG>_OFFSET``, per field ``_LSB``, ``_WIDTH``, ``_MASK``."""
    if not prefix.isidentifier() or prefix.upper() != prefix:
        raise ValueError(f"C header prefix must be an upper-case identifier, not {prefix!r}")
    guard = f"{prefix}_REGS_H"
    out = [f"/* {prefix.lower()} control block registers, map version {VERSION}.",
           " * Generated by pipegossip (hw/regmap.py); do not edit. */",
           f"#ifndef {guard}", f"#define {guard}", "",
           f"#define {prefix}_MAGIC 0x{MAGIC:04x}u",
           f"#define {prefix}_MAP_VERSION {VERSION}u"]
    for name, code in FABRIC_CODES.items():
        out.append(f"#define {prefix}_FABRIC_{name.upper()} {code}u")
    for r in REGISTERS:
        out += ["", f"/* {r.name}: {r.doc} */",
                f"#define {prefix}_{r.name}_OFFSET 0x{r.offset:03x}u"]
        for f in r.fields:
            base = f"{prefix}_{r.name}_{f.name}"
            out += [f"#define {base}_LSB {f.lsb}u", f"#define {base}_WIDTH {f.width}u",
                    f"#define {base}_MASK 0x{f.mask:08x}u"]
    out += ["", f"#endif /* {guard} */", ""]
    return "\n".join(out)


def entry_writes(entry: tuple[int, int, int, int], load_words: int) -> list[tuple[int, int]]:
    """The register writes ``(offset, value)`` that issue one image entry through LOAD_GO.

    ``entry`` is ``(kind, node, addr, data)`` as ``pipegossip hw program``
    writes it; ``load_words`` the block's ``LOAD_WORDS``. LOAD_DATA takes
    the data most significant word first; words above the highest non-zero
    one are left out (LOAD_GO clears the staged data).
    """
    kind, node, addr, data = (int(x) for x in entry)
    go = register("LOAD_GO")
    out = [(register("LOAD_ADDR").offset, addr)]
    top = max(0, min(load_words, -(-data.bit_length() // DATA_BITS)))
    out += [(register("LOAD_DATA").offset, (data >> (DATA_BITS * i)) & 0xFFFF_FFFF)
            for i in reversed(range(top))]
    out.append((go.offset, (kind << go.field("KIND").lsb) | (node << go.field("NODE").lsb)))
    return out


__all__ += ["entry_writes"]
