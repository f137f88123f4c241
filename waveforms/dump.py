"""Streaming access to waveform dumps (VCD, and FST through libfst).

A dump is read in two passes. :func:`open_dump` reads only the declarations:
the scope tree, each variable's name, width and identifier, and the
timescale. :meth:`Dump.replay` then streams the value changes of a chosen
few variables into a :class:`ChangeSink`, one timestamp at a time, without
keeping the history: memory stays flat however long the dump is.

Variable names are normalised so that the same port reads the same from
every simulator: Amaranth's simulator writes escaped, bracketed names for
arrays and structures (``\\action[0]``, ``\\delivery[2].valid``), Verilator
and Amaranth's plain signals use ``__`` joins (``action__0``); both become
``action__0`` / ``delivery__2__valid`` (see :func:`normalise_name`).

Formats
-------
VCD
    Scanned here on raw bytes, declarations and value changes alike.
    pyvcd's tokenizer (``vcd.reader``, 0.4.x as Amaranth 0.5 pins it)
    refuses the ``$rootio`` scope and ``$auto$...`` names Verilator 5
    declares, and builds a Python object per change (about 0.3 M
    changes/s); the read-back needs a handful of the thousands of signals a
    Verilator dump holds, and skipping the rest on bytes is about 10x
    faster. (pyvcd writes the golden dumps and the GTKWave save files.)
FST
    Read with ``pylibfst`` (the FST C library of GTKWave), restricted to
    the wanted signals with ``fstReaderSetFacProcessMask``; the library
    calls back in time order, so the same sink works unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..model.errors import FormatError

__all__ = [
    "Var", "Dump", "ChangeSink", "open_dump", "normalise_name", "decode_value",
    "DUMP_SUFFIXES",
]

#: File suffixes read as dumps (anything else is taken as a run-table text).
DUMP_SUFFIXES = (".vcd", ".fst")

_UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "fs": 1e-15}
_CHUNK = 1 << 20


def normalise_name(name: str) -> str:
    """One spelling for a port, whichever simulator wrote it.

    Drops a leading ``\\`` (Verilog escaped identifier) and a trailing bit
    range, and turns ``[k]`` and ``.field`` into ``__k`` and ``__field``:
    ``\\delivery[2].valid`` -> ``delivery__2__valid``.
    """
    name = name.strip()
    if name.startswith("\\"):
        name = name[1:]
    name = re.sub(r"\s*\[\d+:\d+\]$", "", name)
    name = re.sub(r"\[(\d+)\]", r"__\1", name)
    return name.replace(".", "__")


def decode_value(raw: str) -> int | str | None:
    """A dump value as ``int`` (two-state bits), ``None`` (any x/z bit) or ``str``.

    ``raw`` is the binary digits of a bit vector, MSB first, or the text of
    a string variable (prefixed with ``s``).
    """
    if raw.startswith(("s", "S")):
        return raw[1:]
    try:
        return int(raw, 2)
    except ValueError:
        return None


@dataclass(frozen=True)
class Var:
    """One declared variable.

    Attributes
    ----------
    scope : str
        Dotted scope path, e.g. ``TOP.pipegossip_fabric``.
    name : str
        Normalised name (:func:`normalise_name`).
    raw : str
        The name as written in the dump.
    size : int
        Width in bits (1 for string variables).
    kind : str
        The VCD variable type (``wire``, ``reg``, ``string`` ...).
    handle : object
        The dump's identifier: VCD id code (bytes) or FST handle (int).
    """

    scope: str
    name: str
    raw: str
    size: int
    kind: str
    handle: object

    @property
    def path(self) -> str:
        return f"{self.scope}.{self.raw}" if self.scope else self.raw


class ChangeSink(Protocol):
    """Receives a replay: ``time`` before each timestamp's changes, ``end`` last."""

    def time(self, t: int) -> None: ...

    def change(self, index: int, value: int | str | None) -> None: ...

    def end(self) -> None: ...


@dataclass
class Dump:
    """A dump's declarations; :meth:`replay` streams its value changes.

    Attributes
    ----------
    path : pathlib.Path
    format : str
        ``vcd`` or ``fst``.
    timescale : float
        Seconds per time unit.
    scopes : dict
        Scope path -> {normalised name -> :class:`Var`}, in declaration order.
    """

    path: Path
    format: str
    timescale: float
    scopes: dict[str, dict[str, Var]] = field(default_factory=dict)

    @property
    def timescale_text(self) -> str:
        for unit, sec in _UNIT_SECONDS.items():
            for mag in (1, 10, 100):
                if abs(self.timescale - mag * sec) <= 1e-6 * mag * sec:
                    return f"{mag} {unit}"
        return f"{self.timescale:g} s"

    def replay(self, wanted: list[Var], sink: ChangeSink) -> None:
        """Stream the changes of ``wanted`` into ``sink``.

        ``sink.change(k, value)`` names the variable by its index ``k`` in
        ``wanted``. Timestamps with no wanted change may be skipped.
        """
        by_handle: dict[object, list[int]] = {}
        for k, var in enumerate(wanted):
            by_handle.setdefault(var.handle, []).append(k)
        if self.format == "vcd":
            _replay_vcd(self.path, by_handle, sink)
        else:
            _replay_fst(self.path, by_handle, sink)
        sink.end()


def open_dump(path: str | Path) -> Dump:
    """Read the declarations of a ``.vcd`` or ``.fst`` file.

    Raises
    ------
    FormatError
        If the file cannot be read or is not a dump of that format.
    """
    path = Path(path)
    if not path.is_file():
        raise FormatError(f"no such dump file: {str(path)!r}")
    suffix = path.suffix.lower()
    if suffix == ".fst":
        return _open_fst(path)
    if suffix != ".vcd":
        raise FormatError(f"{str(path)!r}: not a dump (expected a .vcd or .fst file)")
    return _open_vcd(path)


# --- VCD ----------------------------------------------------------------------------


def _header_tokens(path: Path):
    """Whitespace-separated tokens of the declarations, up to ``$enddefinitions``."""
    with open(path, "rb") as f:
        carry = b""
        while True:
            chunk = f.read(_CHUNK)
            data = carry + chunk
            if chunk:
                cut = max(data.rfind(b" "), data.rfind(b"\n"), data.rfind(b"\t"), data.rfind(b"\r"))
                carry, data = (data, b"") if cut < 0 else (data[cut + 1:], data[:cut])
            for tok in data.split():
                yield tok
                if tok == b"$enddefinitions":
                    return
            if not chunk:
                return


def _open_vcd(path: Path) -> Dump:
    """Parse the declarations (IEEE 1364 section 18.2.3).

    Not with pyvcd's tokenizer: pyvcd 0.4 refuses scope and variable names
    that start with ``$``, and Verilator 5 writes both (``$scope module
    $rootio $end``, ``$var wire 1 X $auto$verilog_backend... $end``).
    """
    dump = Dump(path, "vcd", 1e-12)
    stack: list[str] = []
    toks = _header_tokens(path)
    ended = False

    def until_end() -> list[bytes]:
        out = []
        for t in toks:
            if t == b"$end":
                return out
            out.append(t)
        raise FormatError(f"{str(path)!r}: declarations end inside a $-command")

    try:
        for tok in toks:
            if tok == b"$scope":
                body = until_end()
                if len(body) < 2:
                    raise FormatError(f"{str(path)!r}: $scope without a name")
                stack.append(body[1].decode("utf-8", "replace"))
                dump.scopes.setdefault(".".join(stack), {})
            elif tok == b"$upscope":
                until_end()
                if stack:
                    stack.pop()
            elif tok == b"$var":
                body = [t.decode("utf-8", "replace") for t in until_end()]
                if len(body) < 4 or not body[1].isdigit():
                    raise FormatError(f"{str(path)!r}: bad $var {' '.join(body)!r}")
                kind, size, ident, raw = body[0], int(body[1]), body[2], body[3]
                # A separate single index is an array element; a range is the bits.
                if len(body) > 4 and re.fullmatch(r"\[\d+\]", body[4]):
                    raw += body[4]
                scope = ".".join(stack)
                var = Var(scope, normalise_name(raw), raw, size, kind, ident.encode())
                dump.scopes.setdefault(scope, {}).setdefault(var.name, var)
            elif tok == b"$timescale":
                dump.timescale = _timescale(b"".join(until_end()).decode(), path)
            elif tok == b"$enddefinitions":
                ended = True
                break
            elif tok.startswith(b"$"):
                until_end()
            else:
                raise FormatError(f"{str(path)!r}: unexpected {tok[:40]!r} in the declarations")
    except UnicodeDecodeError:
        raise FormatError(f"{str(path)!r}: not a VCD file") from None
    if not ended or not dump.scopes:
        raise FormatError(f"{str(path)!r}: not a readable VCD file (no scopes and "
                          "$enddefinitions)")
    return dump


def _timescale(text: str, path: Path) -> float:
    m = re.fullmatch(r"\s*(1|10|100)\s*(s|ms|us|ns|ps|fs)\s*", text)
    if not m:
        raise FormatError(f"{str(path)!r}: bad $timescale {text!r}")
    return int(m.group(1)) * _UNIT_SECONDS[m.group(2)]


def _replay_vcd(path: Path, by_handle: dict[object, list[int]], sink: ChangeSink) -> None:
    """Scan the value-change section token by token on raw bytes.

    Tokens are whitespace separated (IEEE 1364 section 18.2): ``#t`` times,
    ``0!`` scalars, ``b101 !`` / ``r1.5 !`` / ``sTEXT !`` values followed
    by their id, and ``$keyword ... $end`` commands (``$dumpvars`` and
    friends only bracket ordinary changes; ``$comment`` bodies are skipped).
    """
    change, time = sink.change, sink.time
    with open(path, "rb") as f:
        head = b""
        while True:  # find the end of the declarations
            chunk = f.read(_CHUNK)
            if not chunk:
                raise FormatError(f"{str(path)!r}: no $enddefinitions")
            head += chunk
            at = head.find(b"$enddefinitions")
            if at >= 0:
                end = head.find(b"$end", at + len(b"$enddefinitions"))
                if end >= 0:
                    rest = head[end + 4:]
                    break
        pending_value: bytes | None = None  # a vector value whose id is in the next chunk
        in_comment = False
        carry = rest
        while True:
            chunk = f.read(_CHUNK)
            data = carry + chunk
            if chunk:
                # The last token may be cut by the chunk boundary: keep it back.
                cut = max(data.rfind(b" "), data.rfind(b"\n"), data.rfind(b"\t"), data.rfind(b"\r"))
                if cut < 0:
                    carry = data
                    continue
                carry, data = data[cut + 1:], data[:cut]
            tokens = data.split()
            k, count = 0, len(tokens)
            if pending_value is not None and count:
                _vector(pending_value, tokens[0], by_handle, change, path)
                pending_value, k = None, 1
            while k < count:
                tok = tokens[k]
                k += 1
                if in_comment:
                    in_comment = tok != b"$end"
                    continue
                c = tok[0]
                if c == 35:  # '#'
                    try:
                        t = int(tok[1:])
                    except ValueError:
                        raise FormatError(f"{str(path)!r}: bad time {tok[:40]!r}") from None
                    time(t)
                elif c in (48, 49, 120, 122, 88, 90):  # 0 1 x z X Z
                    ks = by_handle.get(tok[1:])
                    if ks:
                        v = 1 if c == 49 else 0 if c == 48 else None
                        for i in ks:
                            change(i, v)
                elif c in (98, 66, 114, 82, 115, 83):  # b B r R s S
                    if k < count:
                        _vector(tok, tokens[k], by_handle, change, path)
                        k += 1
                    else:
                        pending_value = tok
                elif c == 36:  # '$'
                    in_comment = tok == b"$comment"
                else:
                    raise FormatError(f"{str(path)!r}: unexpected token {tok[:40]!r} "
                                      "in the value changes")
            if not chunk:
                break
        if pending_value is not None:
            raise FormatError(f"{str(path)!r}: ends inside a value change")


def _vector(value: bytes, ident: bytes, by_handle, change, path: Path) -> None:
    ks = by_handle.get(ident)
    if not ks:
        return
    c = value[0]
    if c in (98, 66):
        try:
            v: int | str | None = int(value[1:], 2)
        except ValueError:
            v = None  # x or z bits
    elif c in (115, 83):
        v = value[1:].decode("utf-8", "replace")
    else:
        try:
            v = float(value[1:])
        except ValueError:
            raise FormatError(f"{str(path)!r}: bad real value {value[:40]!r}") from None
    for i in ks:
        change(i, v)


# --- FST ----------------------------------------------------------------------------


def _fst_lib():
    try:
        import pylibfst
    except ImportError:  # pragma: no cover - it is a declared dependency
        raise FormatError("reading FST needs the 'pylibfst' package (pip install pylibfst); "
                          "or write VCD instead") from None
    return pylibfst


def _open_fst(path: Path) -> Dump:
    fst = _fst_lib()
    ffi, lib = fst.ffi, fst.lib
    reader = lib.fstReaderOpen(str(path).encode())
    if reader == ffi.NULL:
        raise FormatError(f"{str(path)!r}: not a readable FST file")
    try:
        dump = Dump(path, "fst", 10.0 ** int(lib.fstReaderGetTimescale(reader)))
        stack: list[str] = []
        lib.fstReaderIterateHierRewind(reader)
        while True:
            h = lib.fstReaderIterateHier(reader)
            if h == ffi.NULL:
                break
            if h.htyp == lib.FST_HT_SCOPE:
                stack.append(fst.string(h.u.scope.name))
                dump.scopes.setdefault(".".join(stack), {})
            elif h.htyp == lib.FST_HT_UPSCOPE:
                if stack:
                    stack.pop()
            elif h.htyp == lib.FST_HT_VAR:
                raw = fst.string(h.u.var.name)
                kind = "string" if h.u.var.typ == lib.FST_VT_GEN_STRING else "wire"
                scope = ".".join(stack)
                var = Var(scope, normalise_name(raw), raw, int(h.u.var.length), kind,
                          int(h.u.var.handle))
                dump.scopes.setdefault(scope, {}).setdefault(var.name, var)
    finally:
        lib.fstReaderClose(reader)
    if not dump.scopes:
        raise FormatError(f"{str(path)!r}: no scopes declared")
    return dump


def _replay_fst(path: Path, by_handle: dict[object, list[int]], sink: ChangeSink) -> None:
    fst = _fst_lib()
    ffi, lib = fst.ffi, fst.lib
    reader = lib.fstReaderOpen(str(path).encode())
    if reader == ffi.NULL:
        raise FormatError(f"{str(path)!r}: not a readable FST file")
    strings = set()
    lib.fstReaderIterateHierRewind(reader)
    while True:
        h = lib.fstReaderIterateHier(reader)
        if h == ffi.NULL:
            break
        if h.htyp == lib.FST_HT_VAR and h.u.var.typ == lib.FST_VT_GEN_STRING:
            strings.add(int(h.u.var.handle))
    last = [None]
    errors: list[BaseException] = []

    def emit(t: int, handle: int, text: str) -> None:
        if t != last[0]:
            last[0] = t
            sink.time(t)
        v = ("s" + text) if handle in strings else text
        for i in by_handle.get(handle, ()):
            sink.change(i, decode_value(v))

    # Exceptions cannot cross the C callback: keep the first, stop forwarding.
    def on_change(_data, t, handle, value) -> None:
        if not errors:
            try:
                emit(int(t), int(handle), ffi.string(value).decode("utf-8", "replace"))
            except BaseException as e:
                errors.append(e)

    def on_varlen(_data, t, handle, value, length) -> None:
        if not errors:
            try:
                emit(int(t), int(handle), bytes(ffi.buffer(value, length)).decode("utf-8", "replace"))
            except BaseException as e:
                errors.append(e)

    try:
        lib.fstReaderClrFacProcessMaskAll(reader)
        for handle in by_handle:
            lib.fstReaderSetFacProcessMask(reader, handle)
        fst.fstReaderIterBlocks2(reader, on_change, on_varlen, None)
    finally:
        lib.fstReaderClose(reader)
    if errors:
        raise errors[0]

