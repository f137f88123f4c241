"""The content-addressed result store behind every sweep (``--store DIR``).

A job's key is the SHA-256 of its function's qualified name, its
configuration as canonical JSON (sorted keys), the versions of the tools
it depends on and a digest of its code (:func:`code_digest`: the sources of
the job's module and of every pipegossip module it imports, so that a row
computed by other code is never reused); the value is the job's JSON result.
Layout of a store::

    STORE/.pipegossip-store              marks the folder as a store: {"format": 2}
    STORE/objects/ab/abcd....json        one object per successful job: its record
                                         and the record's SHA-256
    STORE/objects/ab/abcd....d/NAME      its small artefacts, if any
    STORE/SWEEP/table.jsonl              the latest run of sweep SWEEP, one line per job
    STORE/SWEEP/...                      that sweep's figures

Every file is written with :func:`pipegossip.infra.files.atomic_write`, and a
record only after its artefacts, so a record that exists is whole: an
interrupted sweep leaves nothing half-written and resumes from the records.
Only successful results are stored; failures are reported in the sweep's
table and retried on the next run.

Every object is verified when it is read (:meth:`ResultStore.lookup`): its
``sha256`` must be the SHA-256 of the record's canonical JSON, the record's
``key`` its file name, and :func:`job_key` of the record's own job,
configuration, versions and code that same key. An object that fails
(truncated, random bytes, edited by hand, moved to another name) is
*damaged*: a sweep says so in one line naming it and computes the job again;
``sweep-report`` refuses the store, naming it. Objects of format 1 (no
checksum, written before this check) are *unverified*: a sweep computes them
again (one line counts them), ``sweep-report`` leaves them out (one line).
A folder in an object's place is refused (one line; it is not removed, as
it may hold anything). A marker of another format (a newer pipegossip) or
an unreadable marker is refused.

Entries are read only when they are regular files of at most
:data:`MAX_ENTRY_BYTES` (opened without blocking, checked on the open
file): a FIFO, a device or a link to one (``/dev/zero``), or an oversized
file in place of a record or a table is skipped with one warning line on
standard error, never waited on or read without end; before a write, such an
entry is removed (the link, not what it points to) so the store's own file
takes its place.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import os
import re
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ..infra.files import atomic_write
from ..model.errors import ConfigError

__all__ = ["STORE_MARKER", "ARTEFACTS", "DEFAULT_STORE", "MAX_ENTRY_BYTES", "FORMAT",
           "tool_versions", "code_digest", "canonical_json", "job_key", "record_checksum",
           "Lookup", "ResultStore"]

#: Marker file that makes a folder a result store.
STORE_MARKER = ".pipegossip-store"
#: Key of a job result holding ``{file name: text}`` artefacts kept beside the record.
ARTEFACTS = "_artefacts"
#: The store used when ``--store`` is not given, relative to the current folder.
DEFAULT_STORE = os.path.join("out", "sweeps")
#: Largest record or table read from a store (a record is a few kilobytes,
#: a table about 200 bytes a job).
MAX_ENTRY_BYTES = 64 << 20
#: The store format this version writes: 2 = every object checksummed. It reads 1 and 2.
FORMAT = 2
_READS = (1, 2)


def _warn(message: str) -> None:
    print(f"pipegossip: warning: {message}", file=sys.stderr, flush=True)


class _Unreadable(Exception):
    """A store entry that is there but cannot be read as a file; the message says why."""

    def __init__(self, path: Path, why: str, folder: bool = False):
        super().__init__(why)
        self.path, self.why, self.folder = path, why, folder


def _read_bytes(path: Path) -> bytes | None:
    """The bytes of a store entry; None if missing.

    Raises
    ------
    _Unreadable
        Not a regular file (checked on the open file, opened without
        blocking so a FIFO cannot hang us), over :data:`MAX_ENTRY_BYTES`, or
        an error reading it.
    """
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise _Unreadable(path, e.strerror or str(e), folder=os.path.isdir(path)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a folder"
                    if stat.S_ISDIR(st.st_mode) else "a device or socket")
            raise _Unreadable(path, f"{kind}{' behind a link' if path.is_symlink() else ''}, "
                              "not a regular file", folder=stat.S_ISDIR(st.st_mode))
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(MAX_ENTRY_BYTES + 1)
    except OSError as e:
        raise _Unreadable(path, e.strerror or str(e)) from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_ENTRY_BYTES:
        raise _Unreadable(path, f"over {MAX_ENTRY_BYTES:,} bytes")
    return data


def _read_entry(path: Path) -> str | None:
    """The text of a store table, or None if missing or not a bounded regular file
    (with one warning line)."""
    try:
        data = _read_bytes(path)
    except _Unreadable as e:
        _warn(f"skipped sweep store entry {str(path)!r}: {e.why}")
        return None
    return None if data is None else data.decode("utf-8", errors="replace")


def _make_room(path: Path) -> None:
    """Remove a link, FIFO or device where the store is about to write a file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        _warn(f"replaced sweep store entry {str(path)!r}: it was not a regular file")
        os.unlink(path)


def tool_versions(tools: Sequence[str]) -> dict[str, str]:
    """Installed versions of ``pipegossip`` and the given distributions.

    A distribution that is not installed is recorded as ``"absent"``, so its
    later installation changes the key.
    """
    versions = {}
    for name in ("pipegossip", *tools):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def _spec(name: str, specs: dict):
    """The import spec of module ``name`` when it is Python source, else None.

    Found as the import system finds it (each finder of ``sys.meta_path``
    asked in turn, below the parent package's search path) but without
    importing anything: a package's ``__init__`` may load Amaranth, seconds
    that a cached sweep does not need. A name below a plain module (``A.B``
    for a function B of module A) is None. ``specs`` memoises the answers.
    """
    if name not in specs:
        parent, _, _ = name.rpartition(".")
        spec, where = None, None
        if parent:
            above = _spec(parent, specs)
            where = above.submodule_search_locations if above is not None else None
        if not parent or where is not None:
            loaded = sys.modules.get(name)
            spec = getattr(loaded, "__spec__", None) if loaded is not None else None
            for finder in sys.meta_path if spec is None else ():
                try:
                    spec = finder.find_spec(name, where)
                except (AttributeError, ImportError, ValueError):  # not a finder of names
                    spec = None
                if spec is not None:
                    break
        specs[name] = spec if spec is not None and (spec.origin or "").endswith(".py") else None
    return specs[name]


def _read_source(path: str) -> bytes:
    """A module's source bytes (the digest's only input; tests replace it)."""
    with open(path, "rb") as f:
        return f.read()


def _statements(body: list) -> Iterator[ast.AST]:
    """Every statement of ``body``, nested ones included (imports are statements:
    walking the expressions too would take ten times as long)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _imported(source: bytes, name: str, is_package: bool) -> set[str]:
    """Every module name ``source`` (of module ``name``) may import, anywhere in it.

    ``from A import B`` names ``A`` and ``A.B`` (B may be a submodule);
    imports inside functions, classes and blocks count, since they may run with
    the job.
    """
    names = set()
    for node in _statements(ast.parse(source).body):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name if is_package else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


@functools.lru_cache(maxsize=None)
def code_digest(module: str, namespace: str = "pipegossip") -> str:
    """Hex SHA-256 of the code a job of ``module`` runs: part of its store key.

    The sources of ``module`` and, transitively, of every module of the
    ``namespace`` package it imports (at any level, packages' ``__init__``
    included), each named by its module name, not its path, so an unchanged
    tree gives the same digest in any checkout or installation. Editing any
    of them gives another key, so a row computed by older code is not
    reused; editing code the job never imports keeps the cache. Computed
    once per process and module (the sources are read once: a sweep's keys
    all see the same code). Other distributions count by their versions
    (:func:`tool_versions`), not their code.
    """
    specs: dict = {}
    digests: dict[str, str] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        spec = None if name in digests else _spec(name, specs)
        if spec is None:
            continue
        source = _read_source(spec.origin)
        digests[name] = hashlib.sha256(source).hexdigest()
        for found in _imported(source, name, spec.submodule_search_locations is not None):
            parts = found.split(".")
            if parts[0] == namespace:  # the module and the packages above it all run
                todo.extend(".".join(parts[:k]) for k in range(1, len(parts) + 1))
    text = "".join(f"{name} {digests[name]}\n" for name in sorted(digests))
    return hashlib.sha256(text.encode()).hexdigest()


def canonical_json(value: object) -> str:
    """JSON with sorted keys and no spaces: the same text for equal values."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def job_key(name: str, config: Mapping, versions: Mapping[str, str], code: str = "") -> str:
    """The store key of a job: hex SHA-256 of its name, configuration, tool versions
    and code digest (:func:`code_digest`)."""
    text = canonical_json({"job": name, "config": config, "versions": versions, "code": code})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_checksum(record: Mapping) -> str:
    """Hex SHA-256 of a record's canonical JSON: the checksum its object carries."""
    return hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


_KEY = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Lookup:
    """What the store holds for one key (:meth:`ResultStore.lookup`).

    ``state`` is ``valid`` (``record`` is the verified record), ``missing``,
    ``damaged`` (``why`` says how) or ``unverified`` (a format-1 object,
    without a checksum).
    """

    state: str
    path: Path
    record: dict | None = None
    why: str = ""


def _verify(key: str, path: Path, data: bytes) -> Lookup:
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Lookup("damaged", path, why="not JSON (truncated or overwritten?)")
    if not isinstance(obj, dict):
        return Lookup("damaged", path, why="not a JSON object")
    if "sha256" not in obj and isinstance(obj.get("result"), dict):
        return Lookup("unverified", path, why="format 1, no checksum")
    record = obj.get("record")
    if not isinstance(record, dict) or not isinstance(obj.get("sha256"), str):
        return Lookup("damaged", path, why="no record and checksum")
    if record_checksum(record) != obj["sha256"]:
        return Lookup("damaged", path, why="its checksum does not match its content")
    fields = ("job", "config", "versions", "code")
    if record.get("key") != key or not isinstance(record.get("result"), dict) or any(
            f not in record for f in fields):
        return Lookup("damaged", path, why="its record is not the job of its key")
    try:
        rekey = job_key(*(record[f] for f in fields))
    except (TypeError, ValueError):
        rekey = None
    if rekey != key:
        return Lookup("damaged", path, why="its job, configuration, versions and code do not "
                      "give its key")
    return Lookup("valid", path, record)


class ResultStore:
    """A result store folder (see the module docstring).

    Parameters
    ----------
    root : path-like
        The folder; created on first use. An existing folder must be empty
        or already a store, so that a typo cannot scatter results into a
        folder of the user's.
    create : bool
        False to only open an existing store (for reading it).

    Raises
    ------
    ConfigError
        ``root`` is a file, a foreign non-empty folder, or not writable;
        its marker is unreadable or of another format; or, without
        ``create``, not a store.
    """

    def __init__(self, root: str | os.PathLike, create: bool = True):
        self.root = Path(root)
        self.shown = shown = os.fspath(root)
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(f"store {shown!r} is a file, not a folder")
        if not create and not self._marked():
            raise ConfigError(f"{shown!r} is not a sweep store (no {STORE_MARKER} file)")
        if self.root.is_dir():
            # The entries first, the marker after: a twin command creating the
            # same store writes its marker before anything else (through a
            # temporary ``.pipegossip-store.*``, renamed), so an entry of its
            # seen here means the marker is there by the time we look.
            foreign = [e.name for e in self.root.iterdir()
                       if e.name != STORE_MARKER and not e.name.startswith(STORE_MARKER + ".")]
            if foreign and not self._marked():
                raise ConfigError(f"store {shown!r} is a non-empty folder that is not a "
                                  f"sweep store (no {STORE_MARKER} file); choose a new folder")
            if create and not os.access(self.root, os.W_OK | os.X_OK):
                raise ConfigError(f"store {shown!r} is not writable")
        self.format = self._read_format() if self._marked() else None
        if not create:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"cannot create store {shown!r}: {e.strerror or e}") from None
        if self.format != FORMAT:
            # Atomic (a temporary renamed into place): a twin reads the whole
            # marker or none; two twins write the same bytes.
            atomic_write(self.root / STORE_MARKER, canonical_json({"format": FORMAT}) + "\n")
            self.format = FORMAT

    def _marked(self) -> bool:
        return os.path.lexists(self.root / STORE_MARKER)

    def _read_format(self) -> int:
        marker = self.root / STORE_MARKER
        try:
            data = _read_bytes(marker)
            value = json.loads(data.decode("utf-8")) if data is not None else None
        except _Unreadable as e:
            raise ConfigError(f"store {self.shown!r}: its marker {STORE_MARKER} is "
                              f"unreadable ({e.why})") from None
        except (UnicodeDecodeError, ValueError, RecursionError):
            value = None
        fmt = value.get("format") if isinstance(value, dict) else None
        if not isinstance(fmt, int) or isinstance(fmt, bool):
            raise ConfigError(f"store {self.shown!r}: its marker {STORE_MARKER} is damaged "
                              "(expected {\"format\": N}); choose a new folder")
        if fmt not in _READS:
            raise ConfigError(f"store {self.shown!r} is of format {fmt}, which this pipegossip "
                              f"does not read (it reads formats "
                              f"{', '.join(map(str, _READS))}); a newer pipegossip wrote it?")
        return fmt

    def _record_path(self, key: str) -> Path:
        return self.root / "objects" / key[:2] / f"{key}.json"

    def lookup(self, key: str) -> Lookup:
        """What the store holds for ``key``, verified (see :class:`Lookup`).

        Raises
        ------
        ConfigError
            A folder stands where the object would be (it may hold anything:
            it is neither read nor removed).
        """
        path = self._record_path(key)
        try:
            data = _read_bytes(path)
        except _Unreadable as e:
            if e.folder:
                raise ConfigError(f"sweep store object {str(path)!r} is a folder, not a record; "
                                  "remove it to let the sweep compute that job again") from None
            return Lookup("damaged", path, why=e.why)
        if data is None:
            return Lookup("missing", path)
        return _verify(key, path, data)

    def get(self, key: str) -> dict | None:
        """The verified record of ``key``, or None (missing, damaged or unverified)."""
        found = self.lookup(key)
        return found.record if found.state == "valid" else None

    def put(self, key: str, record: dict) -> dict:
        """Store a successful job's record (artefacts first, then the object itself).

        ``record`` holds the job's ``key``, ``job``, ``config``, ``versions``
        and ``code`` (what :func:`job_key` makes ``key`` of) and its
        ``result``; ``record["result"][ARTEFACTS]``, if present, maps file
        names to text; those are written beside the record and replaced in it
        by their names. Returns the record as stored.
        """
        path = self._record_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        result = dict(record["result"])
        artefacts = result.pop(ARTEFACTS, None) or {}
        if artefacts:
            folder = path.with_suffix(".d")
            folder.mkdir(exist_ok=True)
            for name, text in artefacts.items():
                if "/" in name or name in ("", ".", ".."):
                    raise ValueError(f"artefact name {name!r} must be a plain file name")
                _make_room(folder / name)
                atomic_write(folder / name, text)
            result[ARTEFACTS] = sorted(artefacts)
        stored = {**record, "result": result}
        _make_room(path)
        if path.is_dir():
            raise ConfigError(f"sweep store object {str(path)!r} is a folder, not a record; "
                              "remove it to let the sweep store that job")
        obj = {"format": FORMAT, "sha256": record_checksum(stored), "record": stored}
        atomic_write(path, json.dumps(obj, sort_keys=True) + "\n")
        return stored

    def artefact(self, key: str, name: str) -> Path:
        """Where artefact ``name`` of job ``key`` is kept."""
        return self._record_path(key).with_suffix(".d") / name

    def lookups(self) -> Iterator[Lookup]:
        """What every object of the store holds, in key order (see :meth:`lookup`)."""
        objects = self.root / "objects"
        for path in sorted(objects.glob("??/*.json")) if objects.is_dir() else ():
            if _KEY.fullmatch(path.stem) and path.parent.name == path.stem[:2]:
                yield self.lookup(path.stem)
            else:
                yield Lookup("damaged", path, why="not named by a key")

    def records(self) -> Iterator[dict]:
        """Every verified record, in key order.

        Raises
        ------
        ConfigError
            An object is damaged (the first one named, with how many more):
            nothing read from such a store is trusted for a report.
        """
        found = list(self.lookups())
        damaged = [f for f in found if f.state == "damaged"]
        if damaged:
            more = f" ({len(damaged) - 1} more damaged)" if len(damaged) > 1 else ""
            raise ConfigError(f"sweep store object {str(damaged[0].path)!r} is damaged "
                              f"({damaged[0].why}){more}; run the sweep that made it again to "
                              "compute it again, or remove it")
        unverified = sum(f.state == "unverified" for f in found)
        if unverified:
            _warn(f"left out {unverified} record(s) of store {self.shown!r} written by an older "
                  "pipegossip without a checksum; run their sweeps again to compute them again")
        for f in found:
            if f.state == "valid":
                yield f.record

    def sweep_dir(self, sweep: str) -> Path:
        """The folder of one sweep's table and figures, created if missing."""
        folder = self.root / sweep
        folder.mkdir(exist_ok=True)
        _make_room(folder / "table.jsonl")
        if (folder / "table.jsonl").is_dir():
            raise ConfigError(f"sweep store table {str(folder / 'table.jsonl')!r} is a folder, "
                              "not a file; remove it")
        return folder

    def tables(self) -> dict[str, list[dict]]:
        """Each sweep's latest table (``SWEEP/table.jsonl``), by sweep name."""
        tables = {}
        for path in sorted(self.root.glob("*/table.jsonl")):
            rows = []
            text = _read_entry(path)
            bad = 0
            for line in (text or "").splitlines():
                try:
                    row = json.loads(line)
                except (ValueError, RecursionError):
                    row = None  # written atomically, so only a hand edit gets here
                if isinstance(row, dict):
                    rows.append(row)
                else:
                    bad += 1
            if bad:
                _warn(f"skipped {bad} damaged line(s) of sweep store table {str(path)!r}")
            tables[path.parent.name] = rows
        return tables
