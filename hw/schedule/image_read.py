"""The load-image reader: an image file back into its entries and the sizes it was made for.

:func:`read_image` reads what ``pipegossip hw program`` writes (``$readmemh``
hex or JSON, format :data:`~.image.IMAGE_FORMAT`) and refuses, in one line,
anything else: an image of an earlier format (other kind codes) with the
hint to compile it again, a file whose entries do not decode. Every image
carries the sizes it was compiled for (:func:`~.image.image_sizes`);
:func:`cannot_run` holds them against a build's (:func:`build_sizes` of a
fabric's size, or :func:`verilog_sizes` read off a generated Verilog file's
header) and names the first reason it cannot run there, which
:func:`check_runs` raises. The co-simulation (``sim cosim --image``) and
``pipegossip hw image`` both refuse through :func:`check_runs`.

What a build must have to run an image (the entries encode store slots and
banks in fields sized by the build, so those must be equal): the same
fabric, node count (network: topology and link ends), word width and store
slots (the schedule fabric: as many or more slots with the same slot field
width), the network fabric's bank depth and accumulator operation, and a
program depth of at least the image's program cycles.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ...model.errors import FormatError
from ..ports import NetworkSize, ScheduleSize
from .image import (FIRST_CHECK, IMAGE_FORMAT, OLD_FORMATS, Entry, ImageKind, image_writes,
                    topology_label)

__all__ = ["LoadImage", "read_image", "build_sizes", "verilog_sizes", "cannot_run",
           "check_runs", "ImageRefused"]

#: Keys of the sizes every image names, and the network fabric's further keys.
_KEYS = ("fabric", "n", "width", "depth", "slots", "cycles")
_NETWORK_KEYS = ("bank_depth", "op", "ports", "topology")
_INTS = ("n", "width", "depth", "slots", "cycles", "bank_depth", "ports")


class ImageRefused(FormatError):
    """An image that cannot be read, or cannot run on the build it is loaded into."""


@dataclass(frozen=True)
class LoadImage:
    """An image read back: what it was compiled for, and its entries ``(kind, node, addr, data)``."""

    path: str
    sizes: dict
    entries: list[Entry]

    @property
    def size(self) -> ScheduleSize:
        """The fabric size its layout was encoded with."""
        z = self.sizes
        return ScheduleSize(z["n"], z["width"], z["depth"], z["slots"])

    def writes(self) -> list[tuple[int, int, int, int]]:
        """The load-port writes it replays (its entries up to the first check)."""
        return image_writes(self.entries)


def _hint(path: str, old: str) -> ImageRefused:
    return ImageRefused(f"{path}: an image of the earlier format {old} (other kind codes: "
                        f"ACC 6, DIRECTORY 8, checks 3..5); compile it again with "
                        f"`pipegossip hw program`, which writes {IMAGE_FORMAT}")


def _sizes(path: str, pairs: dict) -> dict:
    fabric = pairs.get("fabric")
    keys = _KEYS + (_NETWORK_KEYS if fabric == "network" else ())
    missing = [k for k in keys if k not in pairs]
    if fabric not in ("schedule", "network") or missing:
        raise ImageRefused(f"{path}: the image does not say what it was compiled for "
                           f"(missing {', '.join(missing) or 'fabric'})")
    out = {}
    for k in keys:
        v = pairs[k]
        if k in _INTS:
            try:
                v = int(v)
            except (TypeError, ValueError):
                raise ImageRefused(f"{path}: image size {k}={v!r} is not a number") from None
        out[k] = v
    return out


def _decode(path: str, words: list[int], fields: list[tuple[str, int]]) -> list[Entry]:
    out = []
    width = sum(w for _, w in fields)
    for i, word in enumerate(words):
        if word >> width:
            raise ImageRefused(f"{path}: entry {i} has more than the {width} bits of its fields")
        e, at = [], 0
        for _, w in fields:
            e.append((word >> at) & ((1 << w) - 1))
            at += w
        out.append(tuple(e))
    return out


_FIELD = re.compile(r"(\w+)\[(\d+):(\d+)\]")


def _read_hex(path: str, text: str) -> LoadImage:
    lines = text.splitlines()
    comments = [x[2:].strip() for x in lines if x.startswith("//")]
    for old in OLD_FORMATS + ("kinds: 0 PROGRAM, 1 ITEM, 2 HEADER, 3 EXPECT_WORD",):
        if any(old in c for c in comments):
            raise _hint(path, OLD_FORMATS[0])
    head = next((c for c in comments if c.startswith(IMAGE_FORMAT + " ")), None)
    if head is None:
        raise ImageRefused(f"{path}: not a pipegossip load image (no '{IMAGE_FORMAT}' line; "
                           f"`pipegossip hw program` writes one)")
    sizes = _sizes(path, dict(kv.split("=", 1) for kv in head.split()[1:] if "=" in kv))
    layout = next((c for c in comments if "entries of" in c), "")
    fields = [(m[0], int(m[1]) - int(m[2]) + 1) for m in _FIELD.findall(layout)]
    if [f for f, _ in fields] != ["kind", "node", "addr", "data"]:
        raise ImageRefused(f"{path}: the image's field line is missing or garbled")
    try:
        words = [int(x, 16) for x in lines if x.strip() and not x.startswith("//")]
    except ValueError as e:
        raise ImageRefused(f"{path}: a line is not hex ({e})") from None
    return LoadImage(path, sizes, _decode(path, words, fields))


def _read_json(path: str, doc: dict) -> LoadImage:
    fmt = doc.get("format")
    if fmt in OLD_FORMATS:
        raise _hint(path, fmt)
    if fmt != IMAGE_FORMAT:
        raise ImageRefused(f"{path}: not a pipegossip load image (format {fmt!r}, expected "
                           f"{IMAGE_FORMAT!r})")
    sizes = _sizes(path, doc.get("sizes") or {})
    try:
        entries = [tuple(int(x) for x in e) for e in doc["entries"]]
        fields = [(f["name"], int(f["bits"])) for f in doc["fields"]]
    except (KeyError, TypeError, ValueError) as e:
        raise ImageRefused(f"{path}: the image's entries or fields are garbled ({e})") from None
    if any(len(e) != 4 for e in entries) or [f for f, _ in fields] != [
            "kind", "node", "addr", "data"]:
        raise ImageRefused(f"{path}: the image's entries or fields are garbled")
    for i, e in enumerate(entries):
        if any(not 0 <= v < 1 << w for v, (_, w) in zip(e, fields)):
            raise ImageRefused(f"{path}: entry {i} does not fit its fields")
    return LoadImage(path, sizes, entries)


def read_image(path) -> LoadImage:
    """Read an image file (hex or JSON, by its content).

    Raises
    ------
    ImageRefused
        Unreadable, of an earlier format (with the hint to compile it again),
        without its sizes, or with entries that do not decode.
    """
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ImageRefused(f"{path}: cannot read the image ({getattr(e, 'strerror', None) or e})"
                           ) from None
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ImageRefused(f"{path}: not valid JSON ({e.msg}, line {e.lineno})") from None
        image = _read_json(path, doc if isinstance(doc, dict) else {})
    else:
        image = _read_hex(path, text)
    kinds = {e[0] for e in image.entries}
    last_load = ImageKind.DIRECTORY if image.sizes["fabric"] == "network" else ImageKind.ACC
    if not image.entries or image.entries[-1][0] != ImageKind.END or any(
            FIRST_CHECK > k > last_load for k in kinds):
        raise ImageRefused(f"{path}: the image does not end with its END entry, or holds a "
                           f"kind its fabric does not load")
    return image


def build_sizes(size: ScheduleSize, *, topology=None, op: str | None = None) -> dict:
    """A build's sizes in the image's terms (``size`` a :class:`NetworkSize` for the network
    fabric, with its ``topology`` and ``op``)."""
    if isinstance(size, NetworkSize):
        return {"fabric": "network", "n": size.n, "width": size.width, "depth": size.depth,
                "slots": size.slots, "bank_depth": size.bank_depth or size.slots, "op": op,
                "ports": size.ports,
                "topology": None if topology is None else topology_label(topology)}
    return {"fabric": "schedule", "n": size.n, "width": size.width, "depth": size.depth,
            "slots": size.slots}


_TOPOLOGY = re.compile(r"topology=(\S+?\(.*?\))")


def verilog_sizes(path) -> dict:
    """The sizes a generated fabric's Verilog names in its header (``hw verilog`` output).

    Raises
    ------
    ImageRefused
        Not a schedule or network fabric's Verilog from ``pipegossip hw verilog``.
    """
    path = str(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = [f.readline() for _ in range(3)]
    except OSError as e:
        raise ImageRefused(f"{path}: cannot read the Verilog ({e.strerror or e})") from None
    kind = next((k for k in ("schedule", "network") if f" {k} fabric" in head[0]), None)
    if kind is None or not head[0].startswith("// pipegossip "):
        raise ImageRefused(f"{path}: not the Verilog of a schedule or network fabric from "
                           f"`pipegossip hw verilog`")
    line = head[1][2:]
    out: dict = {"fabric": kind}
    m = _TOPOLOGY.search(line)
    if m:
        out["topology"] = m.group(1).replace(" ", "")
        line = line.replace(m.group(0), "")
    for kv in line.split():
        if "=" in kv:
            k, v = kv.split("=", 1)
            out[k] = int(v) if k in _INTS else v
    if kind == "network":
        out.setdefault("bank_depth", out.get("slots"))
    return out


def cannot_run(image: dict, build: dict) -> str | None:
    """Why a build of sizes ``build`` cannot run an image compiled for ``image``; None if it can.

    Both are dicts as :func:`~.image.image_sizes` and :func:`build_sizes` make
    them; a key the build leaves None (an unknown topology) is not compared.
    """
    if image["fabric"] != build["fabric"]:
        return (f"it is an image for the {image['fabric']} fabric, the build is the "
                f"{build['fabric']} fabric's")
    keys = ["n", "width"]
    if image["fabric"] == "network":
        keys += ["topology", "ports", "slots", "bank_depth", "op"]
    for k in keys:
        if build.get(k) is not None and image[k] != build[k]:
            return f"{k} {image[k]} in the image, {build[k]} in the build"
    if image["fabric"] == "schedule":
        def bits(slots: int) -> int:
            return ScheduleSize(2, 1, 1, slots).slot_bits
        if image["slots"] > build["slots"] or bits(image["slots"]) != bits(build["slots"]):
            return (f"slots {image['slots']} in the image, {build['slots']} in the build "
                    "(its program entries' slot fields would not decode)")
    if image["cycles"] > build["depth"]:
        return f"the program has {image['cycles']} cycles, the build's depth is {build['depth']}"
    return None


def check_runs(image: LoadImage, build: dict, where: str) -> None:
    """Refuse, in one line, to load ``image`` into the build ``where`` of sizes ``build``.

    Raises
    ------
    ImageRefused
        Naming the first reason and how to compile an image that runs there.
    """
    why = cannot_run(image.sizes, build)
    if why is not None:
        z = build
        hint = ("--verilog " + where if where.endswith(".v") else
                f"--width {z['width']} --slots {z['slots']}"
                + (f" --bank-depth {z['bank_depth']} --op {z['op']}"
                   if z["fabric"] == "network" and z.get("op") else ""))
        raise ImageRefused(f"{image.path} cannot run on {where}: {why}; compile it for that "
                           f"build (`pipegossip hw program SCHEDULE.json {hint}`)")

