"""Reading a schedule file round by round, so that no file pipegossip writes is too large to check.

A file of at most :data:`HELD_BYTES` of text (256 MiB, plain or decompressed) is
parsed whole, as :func:`~.ir.loads` always has. A larger one, such as Table 1's
de Bruijn_13 gossip (401 MB, 67 million item ids), is read as a **stream**: its
header first, then one round at a time, each round's ids parsed straight into NumPy
arrays (no Python object per id) and handed on; :func:`validate_file` checks them as
they come with :func:`~.validate_rounds.validate_rounds`, so the schedule is never
held. What a streamed read keeps is one chunk of text, one round's arrays and the
validator's knowledge matrix; what it may cost is bounded up front:

* text: at most :data:`~pipegossip.model.inputs.MAX_STREAM_BYTES` (16 GiB) in all,
  counted as it is decompressed (a gzip bomb of valid text stops there), and no run
  of whitespace over :data:`MAX_WHITESPACE` (a bomb of blanks stops at once);
* memory: one round's entries (receivers plus item ids) at most
  :data:`MAX_ROUND_ENTRIES`, 8 bytes each; the knowledge matrix at most the
  validator's 2^33 bits (1 GiB);
* rounds: at most :data:`MAX_ROUNDS`.

A streamed file must be laid out as pipegossip writes it: the header keys before
``"rounds"``, and nothing after it (JSON allows other orders; a file that uses one is
refused with a line that says so). The same rules as the whole read apply to every
key and message, by the same code (:func:`~.ir._header`, :func:`~.ir._message`);
the common layout of a message is parsed by one regular expression and NumPy, every
other spelling by :mod:`json`, message by message.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Callable

import numpy as np

from .. import inputs
from ..errors import FormatError
from .ir import Q_ID, Schedule, _header, _message, loads
from .validate import _MAX_BITS, Validation, _fail
from .validate_rounds import validate_rounds
from .validate_static import ScheduleError

__all__ = ["HELD_BYTES", "MAX_WHITESPACE", "MAX_ROUND_ENTRIES", "MAX_ROUNDS",
           "MAX_HELD_ENTRIES", "Streamed", "open_schedule", "load", "validate_file"]

#: Text parsed whole (plain or decompressed); a larger schedule file is streamed.
HELD_BYTES = inputs.MAX_INPUT_BYTES
#: Longest run of whitespace a streamed file may hold (pipegossip writes a few blanks).
MAX_WHITESPACE = 1 << 20
#: Most receivers plus item ids in one round of a streamed file (2 GiB as int64).
MAX_ROUND_ENTRIES = 1 << 28
#: Most rounds in a streamed file.
MAX_ROUNDS = 1 << 20
#: Most receivers plus item ids of a streamed file built into a held schedule
#: (:func:`load`, for the commands that need the whole schedule): 2 GiB as int64.
MAX_HELD_ENTRIES = 1 << 28

_WS = re.compile(rb"[ \t\n\r]*")
_NUM = rb"-?(?:0|[1-9][0-9]*)"
_W = rb"[ \t\n\r]*"
#: A message as pipegossip writes it (any JSON whitespace); the lists' insides are
#: checked and parsed by :func:`_ints`.
_MSG = re.compile(rb"\{" + _W + rb'"src"' + _W + rb":" + _W + rb"(" + _NUM + rb")" + _W + rb","
                  + _W + rb'"dst"' + _W + rb":" + _W + rb"\[([^\]\[{}\"]*)\]" + _W + rb"," + _W
                  + rb'"items"' + _W + rb":" + _W + rb'\[([^\]\[{}]*)\]' + _W + rb"\}")
#: Spellings :func:`_ints` leaves to :mod:`json`: leading zeros, 19 digits or more
#: (past int64 and :func:`~.ir._int`'s range), a sign not before a digit, two numbers
#: with only blanks between them (NumPy would stop at the second, unseen), an empty
#: element (NumPy reads ", ," as a 0).
_ODD = re.compile(rb"(?<![0-9])0[0-9]|[0-9]{19}|-(?![0-9])|[0-9]-|[0-9][ \t\n\r]+[0-9-]"
                  rb"|,[ \t\n\r]*,|\A[ \t\n\r]*,|,[ \t\n\r]*\Z")
_DIGITS = b"0123456789,- \t\n\r"
#: Text of lists parsed at once (a round's ids arrive in pieces of about this much).
_BATCH = 8 << 20


def _ints(parts: list[bytes], items: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """Counts and values of the insides of JSON integer lists (``"q"`` as -1 for items);
    None when any is spelt otherwise (the caller then reads it with :mod:`json`)."""
    counts = np.fromiter((p.count(b",") + 1 if p.strip() else 0 for p in parts),
                         dtype=np.int64, count=len(parts))
    text = b",".join(p for p in parts if p.strip())
    if items:
        if b"-" in text:  # a negative item: json's reading names the rule
            return None
        text = text.replace(b'"q"', b"-1")
    if text.translate(None, _DIGITS) or _ODD.search(text):
        return None
    if not text:
        return counts, np.zeros(0, np.int64)
    with warnings.catch_warnings():  # a short read is caught by the count below
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            values = np.fromstring(text.decode("ascii"), dtype=np.int64, sep=",")
        except ValueError:  # an empty element ("1,,2"): NumPy refuses it
            return None
    if len(values) != int(counts.sum()):
        return None
    return counts, values


class _Text:
    """Bytes of a stream with a read position, refilled a chunk at a time."""

    def __init__(self, chunks, subject: str):
        self.chunks, self.subject = iter(chunks), subject
        self.buf, self.pos, self.offset = b"", 0, 0  # offset: bytes before buf

    def _more(self) -> bool:
        chunk = next(self.chunks, None)
        if chunk is None:
            return False
        self.offset += self.pos
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def error(self, why: str) -> FormatError:
        return FormatError(f"{self.subject}: {why} (byte {self.offset + self.pos})")

    def peek(self) -> int | None:
        """The next byte after whitespace, or None at the end."""
        run = 0
        while True:
            end = _WS.match(self.buf, self.pos).end()
            run += end - self.pos
            self.pos = end
            if run > MAX_WHITESPACE:
                raise self.error(f"more than {MAX_WHITESPACE:,} bytes of whitespace in a row "
                                 "(a file read as a stream may not have that)")
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return None

    def expect(self, char: bytes, why: str) -> None:
        if self.peek() != char[0]:
            raise self.error(why)
        self.pos += 1

    def through(self, char: int, limit: int) -> int:
        """Refill until the buffer holds ``char`` at or after the position; its index.

        Linear in what is read: the chunks are searched one by one and joined once."""
        at = self.buf.find(bytes((char,)), self.pos)
        if at >= 0:
            return at
        parts, size = [self.buf[self.pos:]], len(self.buf) - self.pos
        while True:
            chunk = next(self.chunks, None)
            if chunk is None:
                raise self.error("the file ends inside a value")
            hit = chunk.find(bytes((char,)))
            parts.append(chunk)
            if hit >= 0:
                self.offset += self.pos
                self.buf, self.pos = b"".join(parts), 0
                return size + hit
            size += len(chunk)
            if size > limit:
                raise self.error(f"a value of more than {limit:,} bytes")

    def value(self, limit: int = 1 << 20):
        """One small JSON value (a header key or value), decoded."""
        self.peek()
        decoder = json.JSONDecoder()
        while True:
            raw = self.buf[self.pos:self.pos + limit]
            more = len(self.buf) - self.pos < limit
            try:
                text = raw.decode("utf-8")
                obj, used = decoder.raw_decode(text)
            except (ValueError, UnicodeDecodeError) as e:
                if more and self._more():
                    continue  # the value may go on in the next chunk
                why = e.msg if isinstance(e, json.JSONDecodeError) else "not UTF-8 text"
                raise self.error(f"not valid JSON: {why}") from None
            if used == len(text) and more and self._more():
                continue  # a number may go on in the next chunk
            self.pos += len(text[:used].encode("utf-8"))
            return obj


@dataclass
class Streamed:
    """A schedule file too large to hold, opened: its header, and its rounds on demand.

    Attributes
    ----------
    header : Schedule
        Topology, model, ``p``, primitive, root and origin; no rounds.
    subject : str
        The file as messages name it.
    """

    header: Schedule
    subject: str
    _first: Iterator | None
    _reopen: Callable[[], Iterator] | None

    def rounds(self) -> Iterator[tuple]:
        """Yield ``(src, dst_ptr, dst, item_ptr, items)`` per round, read from the file
        (a second call reads it again; standard input can be read once)."""
        if self._first is not None:
            first, self._first = self._first, None
            return first
        if self._reopen is None:
            raise FormatError(f"{self.subject}: standard input can be read once; this check "
                              "needs a second pass (more than one item per node): give a file")
        return self._reopen()

    def held(self) -> Schedule:
        """The whole schedule, built from the rounds (at most :data:`MAX_HELD_ENTRIES`)."""
        cols = {k: [] for k in ("src", "dst", "items")}
        round_ptr, dst_ptr, item_ptr = [0], [np.zeros(1, np.int64)], [np.zeros(1, np.int64)]
        m = d = i = 0
        for src, dp, dst, ip, items in self.rounds():
            if d + i + len(dst) + len(items) > MAX_HELD_ENTRIES:
                raise FormatError(f"{self.subject}: over {MAX_HELD_ENTRIES:,} receivers and "
                                  "item ids, more than a command holds in memory (`schedule "
                                  "check` reads it as a stream)")
            cols["src"].append(src)
            cols["dst"].append(dst)
            cols["items"].append(items)
            dst_ptr.append(dp[1:] + d)
            item_ptr.append(ip[1:] + i)
            m, d, i = m + len(src), d + len(dst), i + len(items)
            round_ptr.append(m)
        h = self.header
        return Schedule(topology=h.topology, model=h.model, p=h.p, primitive=h.primitive,
                        root=h.root, origin=h.origin, round_ptr=round_ptr,
                        src=np.concatenate(cols["src"] or [np.zeros(0, np.int64)]),
                        dst_ptr=np.concatenate(dst_ptr),
                        dst=np.concatenate(cols["dst"] or [np.zeros(0, np.int64)]),
                        item_ptr=np.concatenate(item_ptr),
                        items=np.concatenate(cols["items"] or [np.zeros(0, np.int64)]))


def _shown(path) -> str:
    return "standard input" if os.fspath(path) == inputs.STDIN else os.fspath(path)


def _chunks(path):
    return inputs.input_chunks(path, "schedule file")


def open_schedule(path) -> Schedule | Streamed:
    """Open a schedule file: held when its text is at most :data:`HELD_BYTES` (as
    :func:`~.ir.load` reads it), else :class:`Streamed` (its header read).

    Raises
    ------
    FormatError
        One line naming the file: unreadable, over a bound of the module docstring,
        or breaking a rule of the format (for a streamed file, of its header; its
        rounds' faults are raised as they are read).
    """
    chunks = _chunks(path)
    held = bytearray()
    start = None  # where the text starts: what no schedule starts with is refused at once
    for chunk in chunks:
        held += chunk
        if start is None:
            start = len(held) - len(held.lstrip(b" \t\n\r")) if held.strip(b" \t\n\r") \
                else None
            if start is not None and held[start] != ord("{"):
                raise FormatError(f"{_shown(path)}: a schedule file holds one JSON object "
                                  f"(byte {start})")
            if start is None and len(held) > MAX_WHITESPACE:
                raise FormatError(f"{_shown(path)}: more than {MAX_WHITESPACE:,} bytes of "
                                  "whitespace in a row (byte 0)")
        if len(held) > HELD_BYTES:
            break
    else:
        try:
            return loads(held)
        except FormatError as e:
            raise FormatError(f"{_shown(path)}: {e}") from None
    # the text read so far goes first, a chunk at a time (no second copy of it)
    view = memoryview(held)
    prefix = (bytes(view[a:a + (1 << 20)]) for a in range(0, len(view), 1 << 20))
    header, first = _open_stream(chain(prefix, chunks), _shown(path))
    reopen = None if os.fspath(path) == inputs.STDIN else \
        (lambda: _open_stream(_chunks(path), _shown(path))[1])
    return Streamed(header, _shown(path), first, reopen)


def load(path) -> Schedule:
    """A schedule file of any size, held: parsed whole up to :data:`HELD_BYTES` of text
    (as :func:`~.ir.load`), else built round by round from the stream (at most
    :data:`MAX_HELD_ENTRIES` entries). What every command that needs the whole
    schedule reads it with."""
    opened = open_schedule(path)
    return opened.held() if isinstance(opened, Streamed) else opened


def _open_stream(chunks, subject: str) -> tuple[Schedule, Iterator]:
    """The header of a streamed file and the generator of its rounds."""
    t = _Text(chunks, subject)
    t.expect(b"{", "a schedule file holds one JSON object")
    head: dict = {}
    while True:
        if t.peek() == ord("}"):
            break
        key = t.value()
        if not isinstance(key, str):
            raise t.error("not valid JSON: expected a key")
        t.expect(b":", "not valid JSON: expected ':'")
        if key == "rounds":
            head["rounds"] = None
            break
        head[key] = t.value()
        nxt = t.peek()
        if nxt == ord(","):
            t.pos += 1
        elif nxt != ord("}"):
            raise t.error("not valid JSON: expected ',' or '}'")
    zero = np.zeros(1, np.int64)
    try:
        header = Schedule(round_ptr=zero, src=zero[:0], dst_ptr=zero, dst=zero[:0],
                          item_ptr=zero, items=zero[:0], **_header(head))
    except FormatError as e:
        raise FormatError(f"{subject}: {e}") from None
    return header, _rounds(t, subject)


def _rounds(t: _Text, subject: str) -> Iterator[tuple]:
    if t.peek() != ord("["):
        raise FormatError(f"{subject}: rounds must be a list of rounds")
    t.pos += 1
    r = 0
    if t.peek() == ord("]"):
        t.pos += 1
    else:
        while True:
            r += 1
            if r > MAX_ROUNDS:
                raise t.error(f"more than {MAX_ROUNDS:,} rounds")
            yield _round(t, subject, r)
            nxt = t.peek()
            if nxt == ord("]"):
                t.pos += 1
                break
            if nxt != ord(","):
                raise t.error(f"round {r}: not valid JSON: expected ',' or ']' after the round")
            t.pos += 1
    nxt = t.peek()
    if nxt == ord(","):
        raise t.error("a schedule file read as a stream ends with its \"rounds\" "
                      "(keys follow them here)")
    if nxt != ord("}"):
        raise t.error("not valid JSON: expected '}' after the rounds")
    t.pos += 1
    if t.peek() is not None:
        raise t.error("not valid JSON: extra data after the schedule")


def _round(t: _Text, subject: str, r: int) -> tuple:
    """Round ``r``'s arrays ``(src, dst_ptr, dst, item_ptr, items)``."""
    if t.peek() != ord("["):
        raise FormatError(f"{subject}: round {r}: must be a list of messages")
    t.pos += 1
    src, dparts, iparts, slow = [], [], [], {}
    out = {"dst": ([], []), "items": ([], [])}  # counts, values per batch
    entries = size = m = 0

    def flush():
        nonlocal size, entries
        for key, parts in (("dst", dparts), ("items", iparts)):
            got = _ints(parts, key == "items")
            if got is None:  # spelt otherwise somewhere: json names the first fault
                got = _slow(parts, key, r, m - len(parts), subject)
            out[key][0].append(got[0])
            out[key][1].append(got[1])
            entries += len(got[1])
            parts.clear()
        size = 0
        if entries > MAX_ROUND_ENTRIES:
            raise FormatError(f"{subject}: round {r}: more than {MAX_ROUND_ENTRIES:,} "
                              "receivers and item ids in one round")

    if t.peek() == ord("]"):
        t.pos += 1
    else:
        while True:
            if t.peek() != ord("{"):
                raise FormatError(f"{subject}: round {r}, message {m}: must be an object")
            end = t.through(ord("}"), 8 * MAX_ROUND_ENTRIES)
            hit = _MSG.match(t.buf, t.pos, end + 1)
            if hit is not None:
                src.append(int(hit.group(1)))
                dparts.append(hit.group(2))
                iparts.append(hit.group(3))
                t.pos = hit.end()
            else:  # another spelling: read it with json, by the whole read's rules
                got = _json_message(t, f"round {r}, message {m}", subject)
                src.append(got[0])
                dparts.append(got[1])
                iparts.append(got[2])
            size += len(dparts[-1]) + len(iparts[-1])
            m += 1
            if size > _BATCH:
                flush()
            nxt = t.peek()
            if nxt == ord("]"):
                t.pos += 1
                break
            if nxt != ord(","):
                raise t.error(f"round {r}, message {m - 1}: not valid JSON: expected ',' or "
                              "']' after the message")
            t.pos += 1
    flush()
    dcount, icount = np.concatenate(out["dst"][0]), np.concatenate(out["items"][0])
    dst_ptr = np.zeros(len(src) + 1, np.int64)
    np.cumsum(dcount, out=dst_ptr[1:])
    item_ptr = np.zeros(len(src) + 1, np.int64)
    np.cumsum(icount, out=item_ptr[1:])
    return (np.array(src, np.int64), dst_ptr, np.concatenate(out["dst"][1]), item_ptr,
            np.concatenate(out["items"][1]))


def _json_message(t: _Text, where: str, subject: str) -> tuple[int, bytes, bytes]:
    """A message in another spelling, checked by :func:`~.ir._message`; its src and its
    lists' insides as canonical text."""
    try:
        msg = t.value(limit=8 * MAX_ROUND_ENTRIES)
    except FormatError as e:
        raise FormatError(f"{subject}: {where}: {str(e).split(': ', 1)[1]}") from None
    src, dst, dst_ptr, items, item_ptr = [], [], [0], [], [0]
    try:
        _message(msg, where, src, dst, dst_ptr, items, item_ptr)
    except FormatError as e:
        raise FormatError(f"{subject}: {e}") from None
    return (src[0], ",".join(map(str, dst)).encode(),
            ",".join('"q"' if x == Q_ID else str(x) for x in items).encode())


def _slow(parts: list[bytes], key: str, r: int, m0: int, subject: str):
    """Counts and values of list insides that :func:`_ints` did not take, or the
    whole read's error for the first message whose list breaks a rule."""
    counts, values = [], []
    for j, p in enumerate(parts):
        where = f"round {r}, message {m0 + j}"
        try:
            lst = json.loads(b"[" + p + b"]")
        except ValueError as e:
            raise FormatError(f"{subject}: {where}: {key}: not valid JSON: "
                              f"{getattr(e, 'msg', e)}") from None
        msg = {"src": 0, "dst": lst if key == "dst" else [],
               "items": lst if key == "items" else []}
        src, dst, dst_ptr, items, item_ptr = [], [], [0], [], [0]
        try:
            _message(msg, where, src, dst, dst_ptr, items, item_ptr)
        except FormatError as e:
            raise FormatError(f"{subject}: {e}") from None
        got = dst if key == "dst" else items
        counts.append(len(got))
        values.extend(got)
    return np.array(counts, np.int64), np.array(values, np.int64)


def validate_file(opened: Streamed) -> Validation:
    """Validate a streamed schedule, round by round, as :func:`~.validate.validate` would
    the whole of it.

    The items per node ``h`` come from the largest item id, as the whole path reads
    them: the first pass checks with ``h = 1`` and records the largest id it saw; only
    if that pass fails with an id past ``n`` is the file read again, for the largest id
    of all, and checked with its ``h`` (rounds before any id past ``n`` check the same
    under every ``h``, so a fault found before one stands).
    """
    s, n = opened.header, opened.header.n
    top = [-1]

    def watched():
        for rnd in opened.rounds():
            if len(rnd[4]):
                top[0] = max(top[0], int(rnd[4].max()))
            yield rnd

    v = validate_rounds(s, watched(), h=1)
    if v.valid or top[0] < n:
        return v
    top, where = -1, (1, 0)
    for r, (src, dp, dst, ip, items) in enumerate(opened.rounds(), 1):
        if len(items) and int(items.max()) > top:
            top = int(items.max())
            where = (r, int(np.searchsorted(ip, int(np.argmax(items)), side="right")) - 1)
    h = top // n + 1
    if n * n * h > _MAX_BITS:
        return _fail(n, ScheduleError(*where, f"unknown item {top} (too many items per node)"))
    return validate_rounds(s, opened.rounds(), h=h)
