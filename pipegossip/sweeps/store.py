"""The content-addressed result store behind every sweep (``--store DIR``).

A job's key is the SHA-256 of its function's qualified name, its
configuration as canonical JSON (sorted keys), the versions of the tools
it depends on and a digest of its code (:func:`code_digest`: the sources of
the job's module and of every pipegossip module it imports, so that a row
computed by other code is never reused); the value is the job's JSON result.
Layout of a store::

    STORE/.pipegossip-store              marks the folder as a store (format version)
    STORE/objects/ab/abcd....json        one record per successful job
    STORE/objects/ab/abcd....d/NAME      its small artefacts, if any
    STORE/SWEEP/table.jsonl              the latest run of sweep SWEEP, one line per job
    STORE/SWEEP/...                      that sweep's figures

Every file is written with :func:`pipegossip.infra.files.atomic_write`, and a
record only after its artefacts, so a record that exists is whole: an
interrupted sweep leaves nothing half-written and resumes from the records.
Only successful results are stored; failures are reported in the sweep's
table and retried on the next run.

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
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path

from ..infra.files import atomic_write
from ..model.errors import ConfigError

__all__ = ["STORE_MARKER", "ARTEFACTS", "DEFAULT_STORE", "MAX_ENTRY_BYTES", "tool_versions",
           "code_digest", "canonical_json", "job_key", "ResultStore"]

#: Marker file that makes a folder a result store.
STORE_MARKER = ".pipegossip-store"
#: Key of a job result holding ``{file name: text}`` artefacts kept beside the record.
ARTEFACTS = "_artefacts"
#: The store used when ``--store`` is not given, relative to the current folder.
DEFAULT_STORE = os.path.join("out", "sweeps")
#: Largest record or table read from a store (a record is a few kilobytes,
#: a table about 200 bytes a job).
MAX_ENTRY_BYTES = 64 << 20
_FORMAT = 1


def _warn(message: str) -> None:
    print(f"pipegossip: warning: {message}", file=sys.stderr, flush=True)


def _read_entry(path: Path) -> str | None:
    """The text of a store entry, or None if missing or not a bounded regular file."""
    try:
        # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        _warn(f"skipped sweep store entry {str(path)!r}: {e.strerror}")
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a folder"
                    if stat.S_ISDIR(st.st_mode) else "a device or socket")
            _warn(f"skipped sweep store entry {str(path)!r}: {kind}"
                  f"{' behind a link' if path.is_symlink() else ''}, not a regular file")
            return None
        data = f.read(MAX_ENTRY_BYTES + 1)
    if len(data) > MAX_ENTRY_BYTES:
        _warn(f"skipped sweep store entry {str(path)!r}: over {MAX_ENTRY_BYTES:,} bytes")
        return None
    return data.decode("utf-8", errors="replace")


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
        or, without ``create``, not a store.
    """

    def __init__(self, root: str | os.PathLike, create: bool = True):
        self.root = Path(root)
        shown = os.fspath(root)
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(f"store {shown!r} is a file, not a folder")
        if not create and not (self.root / STORE_MARKER).is_file():
            raise ConfigError(f"{shown!r} is not a sweep store (no {STORE_MARKER} file)")
        if self.root.is_dir():
            # A twin command creating the same store may be writing its marker
            # (``.pipegossip-store.*.tmp``): that is not a foreign entry.
            if not (self.root / STORE_MARKER).is_file() and any(
                    not e.name.startswith(STORE_MARKER + ".") for e in self.root.iterdir()):
                raise ConfigError(f"store {shown!r} is a non-empty folder that is not a "
                                  f"sweep store (no {STORE_MARKER} file); choose a new folder")
            if not os.access(self.root, os.W_OK | os.X_OK):
                raise ConfigError(f"store {shown!r} is not writable")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"cannot create store {shown!r}: {e.strerror or e}") from None
        if not (self.root / STORE_MARKER).is_file():
            atomic_write(self.root / STORE_MARKER, canonical_json({"format": _FORMAT}) + "\n")

    def _record_path(self, key: str) -> Path:
        return self.root / "objects" / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The stored record of ``key``, or None (a damaged record counts as missing)."""
        text = _read_entry(self._record_path(key))
        try:
            record = json.loads(text) if text is not None else None
        except (ValueError, RecursionError):
            return None
        return record if isinstance(record, dict) and isinstance(record.get("result"), dict) \
            else None

    def put(self, key: str, record: dict) -> dict:
        """Store a successful job's record (artefacts first, then the record itself).

        ``record["result"][ARTEFACTS]``, if present, maps file names to text;
        those are written beside the record and replaced in it by their names.
        Returns the record as stored.
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
        atomic_write(path, json.dumps(stored, sort_keys=True) + "\n")
        return stored

    def artefact(self, key: str, name: str) -> Path:
        """Where artefact ``name`` of job ``key`` is kept."""
        return self._record_path(key).with_suffix(".d") / name

    def records(self) -> Iterator[dict]:
        """Every stored record, in key order."""
        objects = self.root / "objects"
        for path in sorted(objects.glob("??/*.json")) if objects.is_dir() else ():
            record = self.get(path.stem)
            if record is not None:
                yield record

    def sweep_dir(self, sweep: str) -> Path:
        """The folder of one sweep's table and figures, created if missing."""
        folder = self.root / sweep
        folder.mkdir(exist_ok=True)
        _make_room(folder / "table.jsonl")
        return folder

    def tables(self) -> dict[str, list[dict]]:
        """Each sweep's latest table (``SWEEP/table.jsonl``), by sweep name."""
        tables = {}
        for path in sorted(self.root.glob("*/table.jsonl")):
            rows = []
            text = _read_entry(path)
            for line in (text or "").splitlines():
                try:
                    row = json.loads(line)
                except (ValueError, RecursionError):
                    continue  # written atomically, so only a hand edit gets here
                if isinstance(row, dict):
                    rows.append(row)
            tables[path.parent.name] = rows
        return tables
