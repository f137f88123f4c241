"""The one reader for input files: orders, run-tables, schedules, dumps.

Every file a user hands to pipegossip is opened here first, so every command
refuses the same bad inputs with the same kind of line, naming the file and
the problem, and no Python exception reaches the user:

* a missing file, a folder, or anything that is not a regular file (a FIFO
  would block forever, a device may never end);
* a file over the size limit of its kind (checked before reading it), and
  standard input (``-``) or a gzip file's decompressed bytes over the same
  limit, counted while reading, so a pipe that never ends or a gzip bomb is
  refused after at most :data:`MAX_INPUT_BYTES` bytes (and at once when the
  bytes are binary);
* binary data (a NUL byte) or text that is not UTF-8 (the line is named);
* JSON that does not parse or nests too deeply.

Standard library only, so the golden model can use it for its own formats.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import zlib
from pathlib import Path

import numpy as np

from .errors import FormatError

__all__ = ["MAX_INPUT_BYTES", "MAX_JSON_DEPTH", "MAX_STREAM_BYTES", "STDIN", "check_input_file",
           "read_input_bytes", "read_input_text", "read_input_json", "decompress_input",
           "input_chunks", "inputs_read", "forget_inputs", "strict_json"]

#: Largest text input read whole (orders, run-tables, schedules): 256 MiB. The
#: same bound holds for standard input and for what a gzip file decompresses
#: to: no compressed or piped input holds more than a file may.
MAX_INPUT_BYTES = 256 << 20
#: Most text an input read as a stream (a schedule past :data:`MAX_INPUT_BYTES`,
#: checked round by round) may hold, decompressed: 16 GiB. It bounds the work of
#: reading one (a gzip bomb of valid text is refused there); the memory is bounded by
#: the reader's chunks, not by this.
MAX_STREAM_BYTES = 16 << 30
#: The name that stands for standard input.
STDIN = "-"
_CHUNK = 1 << 20
#: Deepest JSON nesting accepted; no pipegossip format nests beyond 4.
MAX_JSON_DEPTH = 64

#: ``(st_dev, st_ino) -> name`` of every file read through this module since
#: :func:`forget_inputs`: the command layer's output writer
#: (``pipegossip.files``) refuses to write over any of them, so that no
#: command's output replaces one of its inputs (``-o`` naming the input, a
#: symbolic or hard link to it, or standard input redirected from it).
_READ: dict[tuple[int, int], str] = {}


def _note_input(st: os.stat_result, name: str) -> None:
    if stat.S_ISREG(st.st_mode):
        _READ.setdefault((st.st_dev, st.st_ino), name)


def inputs_read() -> dict[tuple[int, int], str]:
    """The files read as inputs since :func:`forget_inputs`: ``{(device, inode): name}``."""
    return dict(_READ)


def forget_inputs() -> None:
    """Start a new command: no file has been read yet."""
    _READ.clear()


def check_input_file(path: str | os.PathLike, what: str,
                     max_bytes: int | None = MAX_INPUT_BYTES) -> Path:
    """Check that ``path`` is a readable regular file of at most ``max_bytes``.

    Parameters
    ----------
    path : path-like
    what : str
        The kind of file, for messages (``"order file"``).
    max_bytes : int or None
        Size limit; None for none (streamed inputs such as waveform dumps).

    Raises
    ------
    FormatError
        One line naming the file and the problem.
    """
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        raise FormatError(f"{what} {name!r} does not exist") from None
    except OSError as e:
        raise FormatError(f"cannot read {what} {name!r}: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FormatError(f"{what} {name!r} is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise FormatError(f"{what} {name!r} is not a regular file (a pipe, device or socket)")
    if max_bytes is not None and st.st_size > max_bytes:
        raise FormatError(f"{what} {name!r} is {st.st_size:,} bytes, over the limit of "
                          f"{max_bytes:,}")
    if not os.access(name, os.R_OK):
        raise FormatError(f"cannot read {what} {name!r}: permission denied")
    _note_input(st, name)
    return Path(name)


def _shown(what: str, path: str | os.PathLike | None) -> str:
    """``schedule file 'a.json'``, ``schedule file on standard input`` or ``what`` alone."""
    if path is None:
        return what
    return f"{what} on standard input" if os.fspath(path) == STDIN \
        else f"{what} {os.fspath(path)!r}"


def _over(subject: str, max_bytes: int, how: str) -> FormatError:
    return FormatError(f"{subject} {how} more than {max_bytes:,} bytes "
                       f"({max_bytes / (1 << 20):g} MiB), the limit of any input")


def _read_stream(stream, path, what: str, max_bytes: int) -> bytes:
    """Read ``stream`` to its end, refusing it past ``max_bytes``, or at once if binary.

    A pipe may never end (``cat /dev/zero``): its bytes are counted as they
    come. Binary bytes (a NUL) are refused at the first chunk unless the
    stream is gzip, whose decompressed bytes :func:`decompress_input` checks.
    """
    data = bytearray()  # grows in place: no second copy of a large input
    while True:
        chunk = stream.read(min(_CHUNK, max_bytes + 1 - len(data)))
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > max_bytes:
            raise _over(_shown(what, path), max_bytes, "holds")
        if data[:2] != b"\x1f\x8b" and b"\0" in chunk:
            raise FormatError(f"{_shown(what, path)} is binary, not text (NUL byte)")


def decompress_input(data: bytes, what: str, path: str | os.PathLike | None = None,
                     max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """Gunzip ``data`` (every member), refusing past ``max_bytes`` decompressed bytes.

    ``what`` and ``path`` name the input in messages (``path`` None: bytes
    not read from a file).

    The bytes are counted as the decompressor produces them, a megabyte at a
    time, so a gzip bomb costs at most ``max_bytes`` of memory; a NUL byte,
    which no text input holds (a bomb of zeros), is refused at once.

    Raises
    ------
    FormatError
        Not readable as gzip, binary, or over ``max_bytes`` decompressed.
    """
    subject = _shown(what, path)
    out = bytearray()
    view = memoryview(data)
    pos = 0
    try:
        while pos < len(view):
            d = zlib.decompressobj(wbits=31)  # one gzip member
            tail = b""
            while not d.eof:
                if not tail:  # the input goes in a piece at a time: no copy of all of it
                    if pos >= len(view):
                        raise FormatError(f"{subject} is not a readable gzip file "
                                          "(compressed data ends early)")
                    tail = view[pos:pos + _CHUNK]
                    pos += len(tail)
                chunk = d.decompress(tail, _CHUNK)
                tail = d.unconsumed_tail
                out += chunk
                if len(out) > max_bytes:
                    raise _over(subject, max_bytes, "decompresses to")
                if b"\0" in chunk:
                    raise FormatError(f"{subject} decompresses to binary data, "
                                      "not text (NUL byte)")
            pos -= len(d.unused_data)  # the next member starts after this one
            while pos < len(view) and view[pos] == 0:  # zeros padding the last member
                pos += 1
    except zlib.error as e:
        raise FormatError(f"{subject} is not a readable gzip file ({e})") from None
    return bytes(out)


def read_input_bytes(path: str | os.PathLike, what: str,
                     max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a checked input file (see :func:`check_input_file`), or of stdin for ``-``."""
    if os.fspath(path) == STDIN:
        if sys.stdin is None or sys.stdin.closed:  # started with `<&-`
            raise FormatError(f"cannot read {what} from standard input: it is closed")
        try:
            _note_input(os.fstat(sys.stdin.fileno()), "standard input")  # `< file`
        except (OSError, ValueError):
            # A closed descriptor 0 under an open sys.stdin: the read below says so.
            pass
        try:
            return _read_stream(sys.stdin.buffer, path, what, max_bytes)
        except OSError as e:
            raise FormatError(f"cannot read {what} from standard input: {e.strerror}") from None
    checked = check_input_file(path, what, max_bytes)
    try:
        with open(checked, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise FormatError(f"cannot read {what} {os.fspath(path)!r}: {e.strerror}") from None
    if len(data) > max_bytes:  # grew while we read it
        raise FormatError(f"{what} {os.fspath(path)!r} is over the limit of {max_bytes:,} bytes")
    return data


def read_input_text(path: str | os.PathLike, what: str,
                    max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of a checked input file; binary or other encodings are refused."""
    data = read_input_bytes(path, what, max_bytes)
    name = os.fspath(path)
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise FormatError(f"{name}:{line}: {what} is binary, not text (NUL byte)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise FormatError(f"{name}:{line}: {what} is not UTF-8 text "
                          f"(byte {data[e.start]:#04x})") from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list) -> dict:
    """``object_pairs_hook``: an object that names a key twice is refused.

    ``json`` keeps the last value of a repeated key; in a hand-edited input
    that silently drops the first one, which was meant as much as the last.
    """
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return obj


#: A ``\uD800``-``\uDFFF`` escape: JSON may spell half a UTF-16 pair alone, which
#: is no character and cannot be written back as UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lone_surrogate(value, where: str = "") -> str | None:
    """Where in a parsed JSON value a string holds a lone surrogate, or None."""
    stack = [(value, where)]
    while stack:
        v, at = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return at or "a string"
        elif isinstance(v, dict):
            stack.extend((k, f"{at}.{k}" if at else str(k)) for k in v)  # keys too
            stack.extend((x, f"{at}.{k}" if at else str(k)) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, f"{at}[{i}]") for i, x in enumerate(v))
    return None


def strict_json(text: str):
    """``json.loads`` for inputs: a key twice in one object, or a string holding a
    lone surrogate (``"\\ud800"``), is refused.

    Raises
    ------
    json.JSONDecodeError, RecursionError, ValueError
        As ``json.loads``.
    FormatError
        A repeated key (named), or a lone surrogate (where it is), which no
        output could hold: everything accepted can be written back as UTF-8.
    """
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        raise FormatError(f"key {json.dumps(e.key, ensure_ascii=True)} appears twice in one "
                          "object (JSON would keep only the last value)") from None
    if _SURROGATE_ESCAPE.search(text):
        at = _lone_surrogate(value)
        if at is not None:
            raise FormatError(f"{at} holds a lone surrogate (a \\uD800-\\uDFFF escape that "
                              "is not half of a pair): not Unicode text")
    return value


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _depth(text: str) -> int:
    """Deepest bracket nesting of JSON text, strings skipped (no recursion, vectorised)."""
    codes = np.frombuffer(_STRING.sub('""', text).encode("utf-8"), dtype=np.uint8)
    step = ((codes == ord("[")) | (codes == ord("{"))).astype(np.int64)
    step -= (codes == ord("]")) | (codes == ord("}"))
    return int(np.cumsum(step).max(initial=0))


def read_input_json(path: str | os.PathLike, what: str, max_bytes: int = MAX_INPUT_BYTES,
                    max_depth: int = MAX_JSON_DEPTH, text: str | None = None):
    """Parse a checked JSON input file (or ``text`` already read from it).

    Raises
    ------
    FormatError
        Unreadable, not JSON (with line and column), or nested deeper than
        ``max_depth``.
    """
    name = os.fspath(path)
    if text is None:
        text = read_input_text(path, what, max_bytes)
    # Deep nesting would end in RecursionError inside json; refuse it first.
    if text.count("[") + text.count("{") > max_depth and _depth(text) > max_depth:
        raise FormatError(f"{what} {name!r} nests deeper than {max_depth} levels")
    try:
        return strict_json(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"{name}:{e.lineno}: {what} is not valid JSON: {e.msg} "
                          f"(column {e.colno})") from None
    except FormatError as e:  # a key twice, a lone surrogate
        raise FormatError(f"{what} {name!r}: {e}") from None
    except RecursionError:
        raise FormatError(f"{what} {name!r} nests too deeply") from None


def input_chunks(path: str | os.PathLike, what: str, max_bytes: int | None = None,
                 chunk: int = _CHUNK):
    """Yield the text bytes of an input (a file, or standard input for ``-``) a chunk at a
    time, gunzipped when the bytes start as gzip does, refused past ``max_bytes``.

    For inputs read as a stream: memory stays one chunk (and the decompressor's
    window), whatever the input's size, and ``max_bytes`` (default
    :data:`MAX_STREAM_BYTES`, read when called) bounds the work, counted on the text
    as it comes, so a gzip bomb stops there. A NUL byte, which no text input holds,
    is refused in the chunk that has it.

    Raises
    ------
    FormatError
        As :func:`read_input_bytes` and :func:`decompress_input` do.
    """
    limit = MAX_STREAM_BYTES if max_bytes is None else max_bytes
    subject = _shown(what, path)
    stdin = os.fspath(path) == STDIN
    if stdin:
        if sys.stdin is None or sys.stdin.closed:  # started with `<&-`
            raise FormatError(f"cannot read {what} from standard input: it is closed")
        try:
            _note_input(os.fstat(sys.stdin.fileno()), "standard input")  # `< file`
        except (OSError, ValueError):
            pass  # a closed descriptor 0: the read below says so
    f = sys.stdin.buffer if stdin else None
    total = 0
    gz = False

    def counted(out: bytes) -> bytes:
        nonlocal total
        total += len(out)
        if total > limit:
            raise _over(subject, limit, "decompresses to" if gz else "holds")
        if b"\0" in out:
            raise FormatError(f"{subject} " + ("decompresses to binary data, not text"
                                               if gz else "is binary, not text") + " (NUL byte)")
        return out

    try:
        if f is None:
            checked = check_input_file(path, what, None)
            try:
                f = open(checked, "rb")
            except OSError as e:
                raise FormatError(f"cannot read {subject}: {e.strerror}") from None
        pending = f.read(chunk)
        gz = pending[:2] == b"\x1f\x8b"
        if not gz:
            while pending:
                yield counted(pending)
                pending = f.read(chunk)
            return
        d = zlib.decompressobj(wbits=31)  # one gzip member; None between members
        while True:
            if not pending:
                pending = f.read(chunk)
                if not pending:
                    break
            if d is None:
                pending = pending.lstrip(b"\0")  # zeros that pad the last member
                if not pending:
                    continue
                d = zlib.decompressobj(wbits=31)
            out = d.decompress(pending, chunk)
            pending = d.unconsumed_tail
            if out:
                yield counted(out)
            if d.eof:
                pending, d = d.unused_data, None  # the rest of what it was given
        if d is not None:
            raise FormatError(f"{subject} is not a readable gzip file "
                              "(compressed data ends early)")
    except zlib.error as e:
        raise FormatError(f"{subject} is not a readable gzip file ({e})") from None
    except OSError as e:
        raise FormatError(f"cannot read {subject}: {e.strerror}") from None
    finally:
        if f is not None and not stdin:
            f.close()
