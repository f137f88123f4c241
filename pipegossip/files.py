"""The one place outputs are written, so that no command destroys or half-writes a file.

Rules every command follows through this module:

* **Files** (:func:`atomic_write`): written to a temporary file beside the
  real target and renamed over it, so a reader never sees half a file and an
  interrupted or failed write leaves the previous file intact. A symbolic
  link is followed, never replaced; pipes, character devices and ``-``
  (standard output) are written directly; missing folders on the way are
  created; a folder, a path ending in ``/`` or a path under a file is
  refused with the user's own path in the message.
* **Folders** (:func:`atomic_directory`): filled under a temporary name and
  moved into place on success. An existing folder is only ever reused when it
  is empty or carries the marker file :data:`MARKER` that this module leaves
  in every folder it writes; then only the entries the tool wrote before are
  replaced. A folder with anything else in it is refused: the tool never
  deletes what it did not write.
* :func:`check_output_file` and :func:`check_output_dir` run the same checks
  up front, so a command can refuse a bad output path before long work.

Failures are :class:`OutputError` (a usage problem, exit status 2) or the
``OSError`` of the write itself (full disk, closed stream).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["MARKER", "OutputError", "atomic_output", "atomic_write", "atomic_directory",
           "check_output_file", "check_output_dir", "mark_output_dir"]

#: Left in every folder pipegossip writes; lists the entries it wrote there.
MARKER = ".pipegossip-output"


class OutputError(Exception):
    """An output path that cannot be used; printed as one line, exit status 2."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _is_stream(path: str | os.PathLike) -> bool:
    return os.fspath(path) == "-"


def check_output_file(path: str | os.PathLike) -> Path:
    """Check that ``path`` can receive a file; return where the bytes will go.

    Symbolic links are resolved (the link stays, its target is written).

    Raises
    ------
    OutputError
        The path ends in a separator, names a folder, or its folder is missing
        or not writable.
    """
    text = os.fspath(path)
    if text == "-":
        return Path(text)
    if text.endswith(("/", os.sep)):
        raise OutputError(f"{text!r} names a folder; give a file name")
    real = Path(os.path.realpath(text))
    if real.is_dir():
        raise OutputError(f"{text!r} is a folder; give a file name")
    if real.exists() and not real.is_file():
        return real  # pipe, device or socket: written directly
    # A missing folder is created when the file is written (like `out/` on a
    # fresh clone), so only the nearest existing one must be a writable folder.
    parent = real.parent
    while not parent.exists() and parent.parent != parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"cannot write {text!r}: {str(parent)!r} is not a folder")
    if not _can_create_in(parent):
        raise OutputError(f"cannot write {text!r}: {str(parent)!r} is not writable")
    return real


_CHECK_PREFIX = ".pipegossip-check."


def _can_create_in(folder: Path) -> bool:
    """Whether a file can really be created in ``folder``.

    ``os.access`` answers yes to root for read-only mounts and for ``/proc``
    or ``/sys``, where creating anything fails; so a temporary file is made
    and removed (hidden, named like this module's other temporaries).
    """
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        fd, tmp = tempfile.mkstemp(prefix=_CHECK_PREFIX, suffix=".tmp", dir=folder)
    except OSError:
        return False
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass
    return True


class _WholeWrites:
    """Standard output that writes everything or raises ``BrokenPipeError``.

    A buffered write into a pipe whose reader left (``| head -c 100``)
    returns the part the pipe took and drops the error, so a command would
    end with status 0 having written a fraction of its output.
    """

    def __init__(self, buffer, binary: bool):
        self._buffer = buffer
        self._binary = binary

    def write(self, data) -> int:
        raw = data if self._binary else data.encode("utf-8")
        view = memoryview(raw)
        while view:
            written = self._buffer.write(view)
            if not written:
                raise BrokenPipeError(errno.EPIPE, "standard output closed")
            view = view[written:]
        return len(data)

    def __getattr__(self, name):
        return getattr(self._buffer, name)


@contextmanager
def atomic_output(path: str | os.PathLike, binary: bool = False, temp_path: bool = False):
    """Stream an output to ``path`` and put it in place only when the block succeeds.

    The one writer behind every file pipegossip writes (:func:`atomic_write`
    is its one-shot form). Yields an open file (text as UTF-8, or binary),
    or with ``temp_path`` the temporary file's path for a tool that writes
    by name (a simulator's waveform dump). On any exception, interrupt or
    ``SystemExit`` the temporary file is removed and the previous ``path`` is
    left as it was. Pipes, devices and ``-`` are written directly (they
    cannot be renamed over); symbolic links are followed.
    """
    real = Path("-") if _is_stream(path) else check_output_file(path)
    direct = _is_stream(path) or (real.exists() and not real.is_file())
    if direct and temp_path:
        raise OutputError(f"{os.fspath(path)!r} must be a regular file for this output")
    if _is_stream(path):
        sys.stdout.flush()  # text already written goes out first
        yield _WholeWrites(sys.stdout.buffer, binary)
        sys.stdout.flush()
        return
    if direct:
        with open(real, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            yield f
        return
    try:
        mode = stat.S_IMODE(real.stat().st_mode)  # keep an existing file's permissions
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    real.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        if temp_path:
            os.close(fd)
            yield Path(tmp)
        else:
            with os.fdopen(fd, "wb" if binary else "w",
                           **({} if binary else {"encoding": "utf-8"})) as f:
                yield f
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` without ever leaving half a file.

    Parameters
    ----------
    path : path-like
        The output; ``-`` is standard output. See the module docstring for
        links, pipes and devices.
    data : str or bytes

    Returns
    -------
    pathlib.Path
        The path as given.
    """
    if not isinstance(data, (str, bytes)):
        raise TypeError(f"atomic_write takes str or bytes, not {type(data).__name__}")
    with atomic_output(path, binary=isinstance(data, bytes)) as f:
        f.write(data)
    return Path(path)


def _marked_entries(folder: Path) -> list[str] | None:
    """Entries a previous run listed in the folder's marker, or None if unmarked."""
    marker = folder / MARKER
    if not marker.is_file():
        return None
    try:
        entries = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, str) and e and "/" not in e
            and e not in (".", "..")]


def check_output_dir(path: str | os.PathLike) -> Path:
    """Check that ``path`` may receive a folder of outputs; return the real folder.

    Raises
    ------
    OutputError
        The path is a file, or a folder holding anything pipegossip did not
        write, or its parent cannot be written.
    """
    text = os.fspath(path)
    real = Path(os.path.realpath(text))
    if real.exists() and not real.is_dir():
        raise OutputError(f"output {text!r} exists and is not a folder")
    if real.is_dir():
        # (a concurrent twin's writability check may flash by: not foreign)
        if any(not e.name.startswith(_CHECK_PREFIX) for e in real.iterdir()) \
                and _marked_entries(real) is None:
            raise OutputError(f"output folder {text!r} is not empty and was not written by "
                              f"pipegossip (no {MARKER} file); choose a new or empty folder")
        if not _can_create_in(real):
            raise OutputError(f"cannot write into {text!r}: not writable")
        return real
    parent = real.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not _can_create_in(parent):
        raise OutputError(f"cannot create {text!r}: {str(parent)!r} is not writable")
    return real


def mark_output_dir(path: str | os.PathLike, names) -> None:
    """Record ``names``, entries the tool wrote into folder ``path``, in its marker.

    For outputs written into a folder file by file (sweep tables, build
    folders reused by the next run): the entries listed by earlier runs are
    kept, so :func:`check_output_dir` accepts the folder next time and
    :func:`atomic_directory` would replace only what is listed.
    """
    real = Path(os.path.realpath(os.fspath(path)))
    entries = sorted(set(_marked_entries(real) or []) | {str(n) for n in names} - {MARKER})
    atomic_write(real / MARKER, json.dumps(entries) + "\n")


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    elif entry.exists() or entry.is_symlink():
        entry.unlink()


@contextmanager
def atomic_directory(path: str | os.PathLike):
    """Fill a temporary folder, then put its contents at ``path`` only on success.

    A new ``path`` appears whole (one rename). An existing empty or marked
    folder keeps its identity (it may be the current folder): the entries the
    previous run listed in its marker are removed, the new ones renamed in,
    and anything else in it is left alone. On any failure or interrupt the
    temporary folder is removed and ``path`` is untouched. Yields the
    temporary folder.
    """
    real = check_output_dir(path)
    real.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        yield tmp
        written = sorted(e.name for e in tmp.iterdir() if e.name != MARKER)
        (tmp / MARKER).write_text(json.dumps(written) + "\n", encoding="utf-8")
        if not real.exists():
            try:
                os.replace(tmp, real)
                return
            except OSError:
                if not real.is_dir():  # not a concurrent twin's finished folder
                    raise
        check_output_dir(path)  # nothing foreign appeared while we worked
        for name in set(_marked_entries(real) or []) - set(written):
            _remove(real / name)
        for name in written + [MARKER]:
            if (real / name).is_dir() and not (real / name).is_symlink():
                shutil.rmtree(real / name)
            os.replace(tmp / name, real / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
