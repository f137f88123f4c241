"""The one reader for input files: orders, run-tables, schedules, dumps.

Every file a user hands to pipegossip is opened here first, so every command
refuses the same bad inputs with the same kind of line, naming the file and
the problem, and no Python exception reaches the user:

* a missing file, a folder, or anything that is not a regular file (a FIFO
  would block forever, a device may never end);
* a file over the size limit of its kind (checked before reading it);
* binary data (a NUL byte) or text that is not UTF-8 (the line is named);
* JSON that does not parse or nests too deeply.

Standard library only, so the golden model can use it for its own formats.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import numpy as np

from .errors import FormatError

__all__ = ["MAX_INPUT_BYTES", "MAX_JSON_DEPTH", "check_input_file", "read_input_bytes",
           "read_input_text", "read_input_json"]

#: Largest text input read whole (orders, run-tables, schedules): 256 MiB.
MAX_INPUT_BYTES = 256 << 20
#: Deepest JSON nesting accepted; no pipegossip format nests beyond 4.
MAX_JSON_DEPTH = 64


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
    return Path(name)


def read_input_bytes(path: str | os.PathLike, what: str,
                     max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a checked input file (see :func:`check_input_file`)."""
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
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"{name}:{e.lineno}: {what} is not valid JSON: {e.msg} "
                          f"(column {e.colno})") from None
    except RecursionError:
        raise FormatError(f"{what} {name!r} nests too deeply") from None
