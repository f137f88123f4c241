"""Streaming access to waveform dumps (VCD and FST), read with pywellen.

A dump is read in two passes. :func:`open_dump` reads only the declarations:
the scope tree, each variable's name, width and signal, and the timescale.
:meth:`Dump.replay` then streams the value changes of a chosen few
variables into a :class:`ChangeSink`, one timestamp at a time, without
keeping the history: memory stays flat however long the dump is.

Variable names are normalised so that the same port reads the same from
every simulator: Amaranth's simulator writes escaped, bracketed names for
arrays and structures (``\\action[0]``, ``\\delivery[2].valid``), Verilator
and Amaranth's plain signals use ``__`` joins (``action__0``); both become
``action__0`` / ``delivery__2__valid`` (see :func:`normalise_name`).

Reader
------
Both formats are parsed by ``pywellen`` (the Python binding of wellen, the
waveform library of the Surfer viewer): its header parse accepts what
Verilator 5 declares (the ``$rootio`` scope, ``$auto$...`` names), and its
streaming mode filters the wanted signals in Rust, so only their changes
reach Python. wellen maps the file into memory: the resident size counts
the file's pages (page cache, given back under pressure) while the process's
own memory stays flat. This module is the adapter that keeps the ``Dump`` /
``Var`` / ``replay`` interface the read-back was written against.

One gap is filled with pyvcd's tokenizer (``vcd.reader``): wellen 0.25
takes a trailing ``[k]`` of a VCD name as a bit index that pywellen does not
expose, so ``\\action[0]`` and ``\\action[1]`` both come back as
``\\action``. When a scope holds such a collision, the names as declared are
re-read with pyvcd (see :func:`_declared_names`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..model.errors import FormatError
from ..model.inputs import check_input_file

__all__ = [
    "Var", "Dump", "ChangeSink", "open_dump", "normalise_name", "decode_value",
    "DUMP_SUFFIXES",
]

#: File suffixes read as dumps (anything else is taken as a run-table text).
DUMP_SUFFIXES = (".vcd", ".fst")

_UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "fs": 1e-15}
#: A VCD without ``$timescale`` is read in picoseconds (what Verilator writes).
_DEFAULT_TIMESCALE = 1e-12


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
        The name as written in the dump, without a bit range.
    size : int
        Width in bits (1 for string variables).
    kind : str
        The variable type in lower case (``wire``, ``reg``, ``string`` ...).
    handle : str
        The reader's signal id; aliases (one signal declared in several
        scopes) share it.
    """

    scope: str
    name: str
    raw: str
    size: int
    kind: str
    handle: str

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

        Raises
        ------
        FormatError
            The value changes are malformed. Exceptions raised by ``sink``
            pass through unchanged.
        """
        by_handle: dict[str, list[int]] = {}
        for k, var in enumerate(wanted):
            by_handle.setdefault(var.handle, []).append(k)
        strings = {var.handle for var in wanted if var.kind == "string"}
        # A pywellen stream can be consumed once: each replay opens the file anew.
        wave = _load(self.path, self.format)
        signals = {}
        for v in wave.all_vars():
            signals.setdefault(str(v.signal_ref), v)
        include = [v for h, v in signals.items() if h in by_handle]
        last: list[int | None] = [None]
        sink_error: list[BaseException] = []

        def on_change(t: int, signal, value) -> None:
            try:
                if t != last[0]:
                    last[0] = t
                    sink.time(t)
                handle = str(signal)
                # pywellen hands a bit vector with x/z bits over as its digit string.
                if isinstance(value, str) and handle not in strings:
                    value = None
                for i in by_handle[handle]:
                    sink.change(i, value)
            except BaseException as e:
                sink_error.append(e)
                raise

        try:
            with _native_output_silenced():
                wave.stream_changes(on_change, include)
        except BaseException as e:
            if sink_error and e is sink_error[0]:
                raise
            raise _format_error(self.path, self.format, e) from None
        sink.end()


def open_dump(path: str | Path) -> Dump:
    """Read the declarations of a ``.vcd`` or ``.fst`` file.

    Raises
    ------
    FormatError
        If the file cannot be read or is not a dump of that format.
    """
    # Dumps are streamed, so no size limit; folders, FIFOs and devices are refused.
    path = check_input_file(path, "dump", max_bytes=None)
    fmt = path.suffix.lower()[1:]
    if f".{fmt}" not in DUMP_SUFFIXES:
        raise FormatError(f"{str(path)!r}: not a dump (expected a .vcd or .fst file)")
    wave = _load(path, fmt)
    ts = wave.timescale
    exponent = None if ts is None else ts.unit.to_exponent()
    dump = Dump(path, fmt, _DEFAULT_TIMESCALE if exponent is None
                else ts.factor * 10.0 ** exponent)
    names = None
    if fmt == "vcd" and _indices_dropped(wave):
        names = _declared_names(path)

    def visit(scope, where: str) -> None:
        table = dump.scopes.setdefault(where, {})
        variables = scope.vars()
        raws = [v.name for v in variables]
        declared = None if names is None else names.get(where)
        if declared is not None and len(declared) == len(raws):
            raws = declared
        for v, raw in zip(variables, raws):
            size = 1 if v.is_string else v.bitwidth or 1
            kind = "string" if v.is_string else v.var_type.lower()
            var = Var(where, normalise_name(raw), raw, size, kind, str(v.signal_ref))
            table.setdefault(var.name, var)
        for child in scope.scopes():
            visit(child, child.full_name)

    for top in wave.scopes():
        visit(top, top.full_name)
    if not dump.scopes:
        raise FormatError(f"{str(path)!r}: not a readable {fmt.upper()} file (no scopes "
                          "declared)")
    return dump


# --- pywellen -----------------------------------------------------------------------


@contextlib.contextmanager
def _native_output_silenced():
    """Keep wellen's own printing off the terminal while it runs.

    wellen prints warnings with Rust's ``println!`` (``WARN: time decreased
    ... Skipping!`` for a dump cut inside a timestamp) straight to file
    descriptor 1, where they would corrupt ``--format json`` output, and a
    Rust panic on malformed input writes its message and backtrace to
    descriptor 2 before pyo3 turns it into an exception. Both descriptors
    point at the null device meanwhile; the reason reaches the user as the
    :class:`FormatError` instead.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        saved = (os.dup(1), os.dup(2))
    except OSError:  # no descriptors to protect (a detached process)
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (null, *saved):
            os.close(fd)


def _format_error(path: Path, fmt: str, e: BaseException) -> FormatError:
    """One clean line for a reader failure (a RuntimeError or a Rust panic)."""
    reason = " ".join(str(e).split()) or type(e).__name__
    reason = "".join(c if c.isprintable() and c != "\ufffd" else "?" for c in reason)
    if len(reason) > 120:
        reason = reason[:117] + "..."
    return FormatError(f"{str(path)!r}: not a readable {fmt.upper()} file ({reason})")


def _load(path: Path, fmt: str):
    """``pywellen.Waveform`` of ``path`` in streaming mode.

    Raises
    ------
    FormatError
        For anything wellen refuses: the header is truncated, not VCD/FST,
        binary garbage, or a different format than the suffix says.
    """
    import pywellen

    try:
        with _native_output_silenced():
            wave = pywellen.Waveform(str(path), stream_only=True)
    except BaseException as e:  # pyo3 raises a Rust panic as a BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise _format_error(path, fmt, e) from None
    if wave.file_format.lower() != fmt:
        raise FormatError(f"{str(path)!r}: not a readable {fmt.upper()} file (it holds "
                          f"{wave.file_format})")
    return wave


def _indices_dropped(wave) -> bool:
    """True if two signals of one scope came back under one name.

    That is wellen folding a trailing ``[k]`` into its (unexposed) index.
    """
    for scope in wave.all_scopes():
        seen: dict[str, str] = {}
        for v in scope.vars():
            handle = str(v.signal_ref)
            if seen.setdefault(v.name, handle) != handle:
                return True
    return False


def _declared_names(path: Path) -> dict[str, list[str]] | None:
    """Scope path -> its variables' names as declared, from pyvcd's tokenizer.

    A separate single index (``arr [4]``) is part of the name, a range
    (``bus [7:0]``) is not. None when pyvcd cannot parse the declarations
    (it refuses ``$``-names such as Verilator's ``$rootio``); the names
    wellen gives are kept then.
    """
    from vcd.reader import TokenKind, tokenize

    names: dict[str, list[str]] = {}
    stack: list[str] = []
    try:
        with open(path, "rb") as f:
            for tok in tokenize(f):
                if tok.kind is TokenKind.SCOPE:
                    stack.append(tok.data.ident)
                elif tok.kind is TokenKind.UPSCOPE:
                    stack.pop()
                elif tok.kind is TokenKind.VAR:
                    raw = tok.data.reference
                    if isinstance(tok.data.bit_index, int):
                        raw += f"[{tok.data.bit_index}]"
                    names.setdefault(".".join(stack), []).append(raw)
                elif tok.kind is TokenKind.ENDDEFINITIONS:
                    return names
    except Exception:  # pyvcd's parse errors have no common base class
        return None
    return None
