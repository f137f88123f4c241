"""The schedule representation and its file format ``pipegossip-schedule/1``.

A schedule is a list of rounds; a round is a list of messages; a message goes
from one ``src`` to one or more ``dst`` and carries a set of items. Node ``v``
starts with its token, item ``v``. Schedules with ``h`` items per node (for
example compiled streaming runs, one item per session) use item ids
``s*n + v`` for node ``v``'s item number ``s``; ``h`` is read off the largest
item id, so the file needs no extra key. Polling adds the question ``"q"``.
In ``reduce`` and ``allreduce`` (and polling's responses) a message's items
are the tokens its one combined word stands for.

Messages are stored column-wise in NumPy arrays (a million messages as Python
objects would cost hundreds of megabytes); :class:`Message` is the per-message
view for building and reading small schedules.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError, json_text
from ..inputs import STDIN, decompress_input, read_input_bytes, strict_json
from .topologies import Topology, topology, topology_from_json

__all__ = ["FORMAT", "MODELS", "PRIMITIVES", "COMBINING", "ROOTLESS", "Q", "Message", "Schedule",
           "dumps", "loads", "load", "save", "complete"]

FORMAT = "pipegossip-schedule/1"
#: Communication models (see docs/schedules.md): one message per node (H1),
#: telephone calls (F1), one message per edge (Hstar), per directed edge
#: (Fstar), crossbar ports with multicast (port).
MODELS = ("H1", "F1", "Hstar", "Fstar", "port")
PRIMITIVES = ("gossip", "broadcast", "gather", "polling", "reduce", "allreduce")
#: Primitives whose messages carry one combined word (a set of items folded by
#: an associative, commutative operation), whatever the number of items.
COMBINING = ("polling", "reduce", "allreduce")
#: Primitives without a root.
ROOTLESS = ("gossip", "allreduce")
#: The polling question; stored as item id -1 in the arrays.
Q = "q"
Q_ID = -1
_KEYS = ("format", "primitive", "root", "model", "p", "topology", "origin", "rounds")
_MSG_KEYS = ("src", "dst", "items")
_ORIGIN_KEYS = ("algorithm", "source")
_INT_LIMIT = 1 << 62


@dataclass(frozen=True)
class Message:
    """One message: ``src`` sends ``items`` to every node of ``dst``."""

    src: int
    dst: tuple[int, ...]
    items: tuple[int | str, ...] = ()

    def to_json(self) -> dict:
        return {"src": self.src, "dst": list(self.dst), "items": list(self.items)}


def _i(a, dtype=np.int64) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=dtype))


@dataclass(eq=False)
class Schedule:
    """A communication schedule.

    Attributes
    ----------
    topology : Topology
    model : str
        One of :data:`MODELS`.
    p : int or None
        At most ``p`` items per message; None is unlimited.
    primitive : str
        One of :data:`PRIMITIVES`.
    root : int or None
        The root of broadcast, gather, polling and reduce; None for gossip
        and allreduce.
    origin : dict
        ``{"algorithm": ..., "source": ...}``: what wrote the schedule.
    round_ptr : numpy.ndarray
        ``(rounds + 1,)``; round ``r`` (1-based) holds messages
        ``round_ptr[r-1] : round_ptr[r]``. Its length fixes the number of
        rounds, trailing empty rounds included.
    src : numpy.ndarray
        ``(M,)`` sender of each message.
    dst_ptr, dst : numpy.ndarray
        Receivers of message ``m`` are ``dst[dst_ptr[m]:dst_ptr[m+1]]``.
    item_ptr, items : numpy.ndarray
        Items of message ``m`` are ``items[item_ptr[m]:item_ptr[m+1]]``; the
        question ``"q"`` is stored as -1.
    """

    topology: Topology
    model: str
    p: int | None
    round_ptr: np.ndarray
    src: np.ndarray
    dst_ptr: np.ndarray
    dst: np.ndarray
    item_ptr: np.ndarray
    items: np.ndarray
    primitive: str = "gossip"
    root: int | None = None
    origin: dict = field(default_factory=lambda: {"algorithm": "", "source": ""})

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise FormatError(f"unknown model {json_text(self.model)} (expected one of {', '.join(MODELS)})")
        if self.primitive not in PRIMITIVES:
            raise FormatError(f"unknown primitive {json_text(self.primitive)} "
                              f"(expected one of {', '.join(PRIMITIVES)})")
        if self.p is not None and (isinstance(self.p, bool) or not isinstance(self.p, int)
                                   or self.p < 1):
            raise FormatError(f"p must be a positive integer or null, got {json_text(self.p)}")
        if self.primitive in ROOTLESS:
            if self.root is not None:
                raise FormatError(f"root must be null for {self.primitive}")
        elif (isinstance(self.root, bool) or not isinstance(self.root, int)
              or not 0 <= self.root < self.n):
            raise FormatError(f"{self.primitive} needs a root in 0..{self.n - 1}, got {json_text(self.root)}")
        if (not isinstance(self.origin, dict) or set(self.origin) != set(_ORIGIN_KEYS)
                or not all(isinstance(self.origin[k], str) for k in _ORIGIN_KEYS)):
            raise FormatError('origin must be {"algorithm": string, "source": string}')
        for name in ("round_ptr", "src", "dst_ptr", "dst", "item_ptr", "items"):
            setattr(self, name, _i(getattr(self, name)))
        m = len(self.src)
        if (self.round_ptr[0] != 0 or self.round_ptr[-1] != m or len(self.dst_ptr) != m + 1
                or len(self.item_ptr) != m + 1 or self.dst_ptr[-1] != len(self.dst)
                or self.item_ptr[-1] != len(self.items)):
            raise ValueError("inconsistent schedule arrays")

    # ----------------------------------------------------------------- views
    @property
    def n(self) -> int:
        return self.topology.n

    @property
    def rounds_total(self) -> int:
        """Number of rounds stored, trailing empty rounds included."""
        return len(self.round_ptr) - 1

    @property
    def messages(self) -> int:
        return len(self.src)

    def round_messages(self, r: int) -> list[Message]:
        """The messages of round ``r`` (1-based)."""
        a, b = int(self.round_ptr[r - 1]), int(self.round_ptr[r])
        return [self.message(m) for m in range(a, b)]

    def message(self, m: int) -> Message:
        """Message number ``m`` counted over the whole schedule (0-based)."""
        d = self.dst[self.dst_ptr[m]:self.dst_ptr[m + 1]].tolist()
        its = [Q if x == Q_ID else x for x in self.items[self.item_ptr[m]:self.item_ptr[m + 1]].tolist()]
        return Message(int(self.src[m]), tuple(d), tuple(its))

    @property
    def rounds(self) -> list[list[Message]]:
        """All rounds as lists of :class:`Message` (for small schedules)."""
        return [self.round_messages(r) for r in range(1, self.rounds_total + 1)]

    def header(self) -> dict:
        return {"format": FORMAT, "primitive": self.primitive, "root": self.root,
                "model": self.model, "p": self.p, "topology": self.topology.to_json(),
                "origin": dict(self.origin)}

    def to_bytes(self, gz: bool = False) -> bytes:
        return dumps(self, gz=gz)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schedule):
            return NotImplemented
        return dumps(self) == dumps(other)

    # ---------------------------------------------------------- construction
    @classmethod
    def from_rounds(cls, rounds: Iterable[Iterable[Message | dict]], *, topology: Topology,
                    model: str, p: int | None, primitive: str = "gossip",
                    root: int | None = None, origin: dict | None = None) -> Schedule:
        """Build from Python rounds of :class:`Message` (or message dicts)."""
        round_ptr, src, dst_ptr, dst, item_ptr, items = [0], [], [0], [], [0], []
        for rnd in rounds:
            for msg in rnd:
                if isinstance(msg, dict):
                    msg = Message(msg["src"], tuple(msg["dst"]), tuple(msg["items"]))
                src.append(msg.src)
                dst.extend(msg.dst)
                dst_ptr.append(len(dst))
                items.extend(Q_ID if x == Q else x for x in msg.items)
                item_ptr.append(len(items))
            round_ptr.append(len(src))
        return cls(topology=topology, model=model, p=p, round_ptr=round_ptr, src=src,
                   dst_ptr=dst_ptr, dst=dst, item_ptr=item_ptr, items=items,
                   primitive=primitive, root=root, origin=origin or _origin("", ""))

    @classmethod
    def unicast(cls, rnd: np.ndarray, src: np.ndarray, dst: np.ndarray, item: np.ndarray, *,
                rounds: int, topology: Topology, model: str, p: int | None = 1,
                origin: dict | None = None) -> Schedule:
        """Build a schedule of one-receiver, one-item messages from flat arrays.

        ``rnd`` holds 1-based rounds; messages keep their given order within a
        round (a stable sort by round).
        """
        rnd = _i(rnd)
        order = np.argsort(rnd, kind="stable")
        m = len(rnd)
        counts = np.bincount(rnd, minlength=rounds + 1)[1:rounds + 1] if m else np.zeros(rounds, np.int64)
        if m and (rnd.min() < 1 or rnd.max() > rounds):
            raise ValueError("message round outside 1..rounds")
        ptr = np.zeros(rounds + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        one = np.arange(m + 1, dtype=np.int64)
        return cls(topology=topology, model=model, p=p, round_ptr=ptr, src=_i(src)[order],
                   dst_ptr=one, dst=_i(dst)[order], item_ptr=one, items=_i(item)[order],
                   origin=origin or _origin("", ""))


def _origin(algorithm: str, source: str) -> dict:
    return {"algorithm": algorithm, "source": source}


# ------------------------------------------------------------------ writing
def _json_list(values: np.ndarray) -> list[str]:
    return [f'"{Q}"' if v == Q_ID else str(v) for v in values.tolist()]


def dumps(s: Schedule, gz: bool = False) -> bytes:
    """The file bytes of ``s``: the same schedule always gives the same bytes.

    One round per line keeps files readable and diffable; gzip output uses
    mtime 0 and no file name so that it is deterministic too.
    """
    head = s.header()
    parts = ["{" + ",\n ".join(f"{json.dumps(k)}: {json.dumps(head[k], ensure_ascii=True)}"
                               for k in _KEYS[:-1]) + ',\n "rounds": [']
    src = s.src.tolist()
    dp, ip = s.dst_ptr.tolist(), s.item_ptr.tolist()
    dst = [str(x) for x in s.dst.tolist()]
    items = _json_list(s.items)
    lines = []
    rp = s.round_ptr.tolist()
    for r in range(len(rp) - 1):
        msgs = [f'{{"src": {src[m]}, "dst": [{", ".join(dst[dp[m]:dp[m + 1]])}], '
                f'"items": [{", ".join(items[ip[m]:ip[m + 1]])}]}}' for m in range(rp[r], rp[r + 1])]
        lines.append("  [" + ", ".join(msgs) + "]")
    parts.append(("\n" + ",\n".join(lines) + "\n ") if lines else "")
    parts.append("]}\n")
    data = "".join(parts).encode("ascii")
    return gzip.compress(data, mtime=0) if gz else data


def save(s: Schedule, path) -> bytes:
    """Write ``s`` to ``path`` (gzip iff the name ends in ``.gz``); return the bytes.

    Commands write through ``pipegossip.infra.files.atomic_write`` instead, which
    never leaves half a file behind.
    """
    data = dumps(s, gz=str(path).endswith(".gz"))
    with open(path, "wb") as f:
        f.write(data)
    return data


# ------------------------------------------------------------------ reading
def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"{what} must be an integer, got {json_text(value)}")
    if not -_INT_LIMIT <= value <= _INT_LIMIT:
        raise FormatError(f"{what} is out of range: {value}")
    return value


def _item(value: object, what: str) -> int:
    # In memory the question "q" is -1 (Q_ID): a -1 in the file must not pass for it.
    value = _int(value, what)
    if value < 0:
        raise FormatError(f"{what} {value} is negative (items are node ids from 0, or \"q\")")
    return value


def _decode(data: bytes) -> object:
    if data[:2] == b"\x1f\x8b":
        # Bounded while decompressing: a gzip bomb is refused, not unpacked.
        data = decompress_input(data, "the schedule")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text (byte {e.start}); is this a schedule file?") from None
    try:
        return strict_json(text)  # a key twice, a lone surrogate: refused
    except json.JSONDecodeError as e:
        raise FormatError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise FormatError("not valid JSON: nested too deeply") from None
    except FormatError:
        raise
    except ValueError as e:  # Python's integer limit: a number of more than 4300 digits
        raise FormatError(f"unreadable number ({str(e).split(';')[0]})") from None


def loads(data: bytes | str) -> Schedule:
    """Read a schedule from file bytes (plain or gzip JSON).

    ``origin`` may be left out (empty strings), and so may ``root`` for
    gossip and allreduce (null); every other key is required.

    Raises
    ------
    FormatError
        Unreadable bytes, bad JSON, unknown or missing keys (all missing keys
        are named), wrong types. Rule violations (bad nodes, edges, items)
        are the validator's job.
    """
    obj = _decode(data.encode() if isinstance(data, str) else data)
    head = _header(obj)
    rounds = obj["rounds"]
    if not isinstance(rounds, list):
        raise FormatError("rounds must be a list of rounds")
    round_ptr, src, dst_ptr, dst, item_ptr, items = [0], [], [0], [], [0], []
    for r, rnd in enumerate(rounds, 1):
        if not isinstance(rnd, list):
            raise FormatError(f"round {r}: must be a list of messages")
        for m, msg in enumerate(rnd):
            _message(msg, f"round {r}, message {m}", src, dst, dst_ptr, items, item_ptr)
        round_ptr.append(len(src))
    return Schedule(round_ptr=round_ptr, src=src, dst_ptr=dst_ptr, dst=dst, item_ptr=item_ptr,
                    items=items, **head)


def _header(obj: object) -> dict:
    """The checked header keys of a decoded schedule file (every key but ``rounds``, whose
    presence is checked): ``Schedule`` keyword arguments."""
    if not isinstance(obj, dict):
        raise FormatError("a schedule file holds one JSON object")
    unknown = [k for k in obj if k not in _KEYS]
    if unknown:
        raise FormatError(f"unknown key {json_text(unknown[0])} (expected {', '.join(_KEYS)})")
    # keys with a meaning when absent: no origin, and no root for a rootless primitive
    obj = {"origin": _origin("", ""), **obj}
    if "root" not in obj and obj.get("primitive") in ROOTLESS:
        obj["root"] = None
    missing = [k for k in _KEYS if k not in obj]
    if missing:
        why = (f" ({obj['primitive']} needs a root)" if missing == ["root"]
               and obj.get("primitive") in PRIMITIVES else "")
        raise FormatError(f"missing key{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(map(repr, missing))}{why}")
    if obj["format"] != FORMAT:
        raise FormatError(f"format must be {FORMAT!r}, got {json_text(obj['format'], 60)}")
    origin = obj["origin"]
    if not isinstance(origin, dict):
        raise FormatError("origin must be an object")
    bad = [k for k in origin if k not in _ORIGIN_KEYS]
    if bad:
        raise FormatError(f"origin: unknown key {json_text(bad[0])} (expected algorithm, source)")
    topo = topology_from_json(obj["topology"])
    p = obj["p"]
    if p is not None:
        p = _int(p, "p")
    root = obj["root"] if obj["root"] is None else _int(obj["root"], "root")
    for key in ("model", "primitive"):
        if not isinstance(obj[key], str):
            raise FormatError(f"{key} must be a string, got {json_text(obj[key])}")
    return dict(topology=topo, model=obj["model"], p=p, primitive=obj["primitive"], root=root,
                origin={k: origin.get(k, "") for k in _ORIGIN_KEYS})


def _message(msg: object, where: str, src: list, dst: list, dst_ptr: list, items: list,
             item_ptr: list) -> None:
    """Check one decoded message and append it to the column lists."""
    if not isinstance(msg, dict):
        raise FormatError(f"{where}: must be an object")
    if len(msg) != 3 or any(k not in msg for k in _MSG_KEYS):
        extra = [k for k in msg if k not in _MSG_KEYS]
        what = f"unknown key {json_text(extra[0])}" if extra else "missing key"
        raise FormatError(f"{where}: {what} (expected src, dst, items)")
    src.append(_int(msg["src"], f"{where}: src"))
    if not isinstance(msg["dst"], list) or not isinstance(msg["items"], list):
        raise FormatError(f"{where}: dst and items must be lists")
    dst.extend(_int(x, f"{where}: dst entry") for x in msg["dst"])
    dst_ptr.append(len(dst))
    items.extend(Q_ID if x == Q else _item(x, f"{where}: item") for x in msg["items"])
    item_ptr.append(len(items))


def load(path) -> Schedule:
    """Read a ``.json`` or ``.json.gz`` schedule file of at most 256 MiB of text, whole
    (gzip is detected by content).

    The file goes through the one input reader
    (:func:`pipegossip.model.inputs.read_input_bytes`): folders, FIFOs,
    devices and oversized files are refused before anything is read; ``-``
    is standard input, counted as it is read; a gzip file's bytes are
    counted as they are decompressed (:data:`~pipegossip.model.inputs.MAX_INPUT_BYTES`).
    :func:`~.read_rounds.load` also reads larger files, round by round.
    """
    data = read_input_bytes(path, "schedule file")
    shown = "<stdin>" if os.fspath(path) == STDIN else os.fspath(path)
    if data[:2] == b"\x1f\x8b":
        data = decompress_input(data, "schedule file", path)  # names the file itself
    try:
        return loads(data)
    except FormatError as e:
        raise FormatError(f"{shown}: {e}") from None


def complete(n: int) -> Topology:
    """The complete graph on ``n`` nodes (the default of H1 and port)."""
    return topology("complete", n=n)
