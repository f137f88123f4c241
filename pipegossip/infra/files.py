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
  moved into place on success. Every folder is written for one command (an
  :class:`OutputKind`), and the marker file :data:`MARKER` this module leaves
  in it records that command and the entries it wrote. An existing folder is
  only ever reused by the same command, when it is empty or marked by that
  command; then only the entries listed are replaced. A folder holding
  another command's output, or anything unmarked, is refused with a line
  that says what is there: no command deletes what it did not write.
  Markers of older versions (a plain list of entries, no command) are taken
  as the command's own only when the listed entries are recognisably its
  outputs (:attr:`OutputKind.signature`); otherwise they are refused too.
* **Inputs are never outputs**: while a command runs (:func:`guarding_inputs`,
  which ``pipegossip.cli`` wraps around every command), a file, or an entry a
  folder output would replace, that is the same file (same device and inode,
  so also through a symbolic or hard link) as one of the command's inputs is
  refused. The inputs are the files named on its command line
  (:func:`declare_inputs`) and every file read through the one input reader
  (``pipegossip.model.inputs``), standard input redirected from a file among
  them. Writing *through* a symbolic link to another file is allowed.
* :func:`check_output_file` and :func:`check_output_dir` run the same checks
  up front, so a command can refuse a bad output path before long work.

Failures are :class:`OutputError` (a usage problem, exit status 2) or the
``OSError`` of the write itself (full disk, closed stream).
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import re
import secrets
import shutil
import stat
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

__all__ = ["MARKER", "OutputError", "OutputKind", "atomic_output", "atomic_write",
           "atomic_directory", "check_output_file", "check_output_dir", "mark_output_dir",
           "marked_command", "declare_inputs", "guarding_inputs"]

#: Left in every folder pipegossip writes: ``{"command": ..., "entries": [...]}``.
MARKER = ".pipegossip-output"


@dataclass(frozen=True)
class OutputKind:
    """The command an output folder belongs to, and how to recognise its old folders.

    Attributes
    ----------
    command : str
        The sub-command, as the user types it (``demo``, ``report``...); the
        marker records it and only that command may replace the folder.
    signature : tuple of str
        Entry names the command always writes; with ``extra`` (shell
        patterns of what else it may write) they recognise a folder marked
        by an older version (a plain list, no command) as this command's:
        all of ``signature`` listed and nothing listed outside both. Empty:
        such folders are refused.
    extra : tuple of str
    recognise : callable, optional
        ``recognise(folder) -> bool``: the folder's own files say it is this
        command's output (the FPGA flow's tagged report, the reference
        run-tables' generator line), marker or not.
    """

    command: str
    signature: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    recognise: Callable[[Path], bool] | None = None

    def owns_listed(self, entries: list[str]) -> bool:
        """Whether an old marker listing ``entries`` is recognisably this command's."""
        return bool(self.signature) and set(self.signature) <= set(entries) and all(
            any(fnmatch.fnmatchcase(e, p) for p in self.signature + self.extra)
            for e in entries)


class OutputError(Exception):
    """An output path that cannot be used; printed as one line, exit status 2."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _is_stream(path: str | os.PathLike) -> bool:
    return os.fspath(path) == "-"


#: Whether a command is running (:func:`guarding_inputs`): only then are outputs
#: compared with its inputs (a library caller may rewrite what it read).
_guarding = False
#: ``(st_dev, st_ino) -> name`` of the files named on the running command's line.
_declared: dict[tuple[int, int], str] = {}


def declare_inputs(paths) -> None:
    """Record ``paths`` (those naming an existing regular file) as the running command's
    inputs, so that an output naming one of them is refused before any work."""
    for p in paths:
        try:
            st = os.stat(p)
        except (OSError, ValueError, TypeError):
            continue
        if stat.S_ISREG(st.st_mode):
            _declared.setdefault((st.st_dev, st.st_ino), os.fspath(p))


#: The one input reader's module (looked up by name, never imported here).
_INPUT_READER = __name__.partition(".")[0] + ".model.inputs"


def _read_inputs() -> dict:
    # Looked up, not imported: the input reader pulls in NumPy, and a command that
    # has not imported it has read no input through it.
    inputs = sys.modules.get(_INPUT_READER)
    return inputs.inputs_read() if inputs is not None else {}


@contextmanager
def guarding_inputs():
    """While the block runs, no output may be the same file as an input of it."""
    global _guarding
    inputs = sys.modules.get(_INPUT_READER)
    if inputs is not None:
        inputs.forget_inputs()
    _declared.clear()
    _guarding = True
    try:
        yield
    finally:
        _guarding = False
        _declared.clear()


def _input_at(real: Path) -> str | None:
    """The name of the command's input that ``real`` is the same file as, or None."""
    if not _guarding:
        return None
    try:
        st = os.stat(real)
    except OSError:
        return None
    key = (st.st_dev, st.st_ino)
    return _declared.get(key) or _read_inputs().get(key)


def _refuse_input(text: str, real: Path) -> None:
    name = _input_at(real)
    if name is not None:
        if name == "standard input":
            what = "the file standard input reads"
        elif os.path.normpath(name) == os.path.normpath(text):
            what = "an input of this command"
        else:
            what = f"an input of this command (the same file as {name!r})"
        raise OutputError(f"{text!r} is {what}; an input is never overwritten, "
                          "write the output elsewhere")


def check_output_file(path: str | os.PathLike) -> Path:
    """Check that ``path`` can receive a file; return where the bytes will go.

    Symbolic links are resolved (the link stays, its target is written).

    Raises
    ------
    OutputError
        The path ends in a separator, names a folder, is the same file as an
        input of the running command, or its folder is missing or not writable.
    """
    text = os.fspath(path)
    if text == "-":
        return Path(text)
    if text.endswith(("/", os.sep)):
        raise OutputError(f"{text!r} names a folder; give a file name")
    real = Path(os.path.realpath(text))
    if real.is_dir():
        raise OutputError(f"{text!r} is a folder; give a file name")
    _refuse_input(text, real)
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
    tmp = _temp_name(folder, _CHECK_PREFIX)
    try:
        os.close(_create(tmp))
        os.unlink(tmp)  # on the success path too, inside the try an interrupt unwinds
    except OSError:
        _discard(tmp)
        return False
    except BaseException:
        _discard(tmp)
        raise
    return True


def _temp_name(folder: Path, prefix: str) -> Path:
    """A fresh hidden name in ``folder`` for a temporary entry (nothing is created).

    The name is chosen *before* the entry exists, and every caller binds it
    before entering the ``try`` that removes it: with ``tempfile.mkstemp`` an
    interrupt landing between the file's creation and the assignment of its
    name (a few bytecodes, but a sweep writes its table many times a
    second) left the file behind with nobody knowing its name. 96 random
    bits make a clash with another writer's name impossible in practice.
    """
    return folder / f"{prefix}{secrets.token_hex(12)}.tmp"


def _create(path: Path) -> int:
    """Create ``path`` as a new file only this process can read yet; return its descriptor."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)


def _discard(path: Path) -> None:
    """Remove a temporary file of ours if it exists (it may not have been created yet)."""
    try:
        os.unlink(path)
    except OSError:  # not created yet, or a read-only folder where nothing was
        pass


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
    tmp = _temp_name(real.parent, f".{real.name}.")  # named before it exists: see _temp_name
    try:
        fd = _create(tmp)
        if temp_path:
            os.close(fd)
            yield tmp
        else:
            with os.fdopen(fd, "wb" if binary else "w",
                           **({} if binary else {"encoding": "utf-8"})) as f:
                yield f
        os.chmod(tmp, mode)
        _refuse_input(os.fspath(path), real)  # also an input read while the block ran
        os.replace(tmp, real)
    except BaseException:
        _discard(tmp)
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


#: What a marker may name as its command (anything else is an unreadable marker).
_COMMAND = re.compile(r"[a-z][a-z0-9-]{0,39}")
#: A marker is a few kilobytes at most; a huge one is not read.
_MARKER_MAX = 1 << 20


def _clean(entries) -> list[str]:
    return [e for e in entries if isinstance(e, str) and e and "/" not in e
            and e not in (".", "..")]


def _read_marker(folder: Path):
    """``None`` if unmarked, else ``(command or None, entries)``.

    A marker of an older version (a plain list) gives command ``None``; an
    unreadable or malformed one gives command ``"?"`` and no entries.
    """
    marker = folder / MARKER
    if not marker.is_file():
        return None
    try:
        if marker.stat().st_size > _MARKER_MAX:
            return "?", []
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return "?", []
    if isinstance(data, list):
        return None, _clean(data)
    if isinstance(data, dict) and isinstance(data.get("command"), str) \
            and _COMMAND.fullmatch(data["command"]) and isinstance(data.get("entries"), list):
        return data["command"], _clean(data["entries"])
    return "?", []


def marked_command(folder: str | os.PathLike) -> str | None:
    """The command the marker of ``folder`` names; None if unmarked or an old list marker."""
    marked = _read_marker(Path(folder))
    return None if marked is None or marked[0] == "?" else marked[0]


def _marked_entries(folder: Path) -> list[str] | None:
    """Entries a previous run listed in the folder's marker, or None if unmarked."""
    marked = _read_marker(folder)
    return None if marked is None else marked[1]


def _refusal(text: str, folder: Path, kind: OutputKind) -> str | None:
    """Why ``kind.command`` may not write into the non-empty ``folder``, or None."""
    marked = _read_marker(folder)
    if kind.recognise is not None and (marked is None or marked[0] in (None, kind.command)) \
            and kind.recognise(folder):
        return None
    if marked is None:
        return (f"output folder {text!r} is not empty and was not written by pipegossip "
                f"(no {MARKER} file); choose a new or empty folder")
    command, entries = marked
    if command == kind.command:
        return None
    if command is None:
        if kind.owns_listed(entries):
            return None
        return (f"output folder {text!r} holds the output of an older pipegossip that did not "
                f"record its command ({MARKER}), not recognisably `pipegossip {kind.command}`'s; "
                "choose a new or empty folder")
    if command == "?":
        return (f"output folder {text!r} has an unreadable {MARKER} file; "
                "choose a new or empty folder")
    return (f"output folder {text!r} holds the output of `pipegossip {command}`, not of "
            f"`pipegossip {kind.command}`; choose a new or empty folder")


def check_output_dir(path: str | os.PathLike, kind: OutputKind) -> Path:
    """Check that ``kind.command`` may write folder ``path``; return the real folder.

    Raises
    ------
    OutputError
        The path is a file, or a folder holding anything but an earlier
        output of the same command, or its parent cannot be written.
    """
    text = os.fspath(path)
    real = Path(os.path.realpath(text))
    if real.exists() and not real.is_dir():
        raise OutputError(f"output {text!r} exists and is not a folder")
    if real.is_dir():
        # (a concurrent twin's writability check may flash by: not foreign)
        if any(not e.name.startswith(_CHECK_PREFIX) for e in real.iterdir()):
            why = _refusal(text, real, kind)
            if why is not None:
                raise OutputError(why)
        if not _can_create_in(real):
            raise OutputError(f"cannot write into {text!r}: not writable")
        return real
    parent = real.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not _can_create_in(parent):
        raise OutputError(f"cannot create {text!r}: {str(parent)!r} is not writable")
    return real


def _marker_text(kind: OutputKind, entries) -> str:
    return json.dumps({"command": kind.command, "entries": sorted(set(entries) - {MARKER})}) + "\n"


def mark_output_dir(path: str | os.PathLike, names, kind: OutputKind) -> None:
    """Record ``names``, entries ``kind.command`` wrote into folder ``path``, in its marker.

    For outputs written into a folder file by file (sweep tables, build
    folders reused by the next run): the entries listed by earlier runs are
    kept, so :func:`check_output_dir` accepts the folder next time and
    :func:`atomic_directory` would replace only what is listed. The folder
    must have passed :func:`check_output_dir` for the same kind.
    """
    real = Path(os.path.realpath(os.fspath(path)))
    entries = set(_marked_entries(real) or []) | {str(n) for n in names}
    atomic_write(real / MARKER, _marker_text(kind, entries))


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    elif entry.exists() or entry.is_symlink():
        entry.unlink()


@contextmanager
def atomic_directory(path: str | os.PathLike, kind: OutputKind):
    """Fill a temporary folder, then put its contents at ``path`` only on success.

    A new ``path`` appears whole (one rename). An existing empty or marked
    folder keeps its identity (it may be the current folder): the entries the
    previous run listed in its marker are removed, the new ones renamed in,
    and anything else in it is left alone. On any failure or interrupt the
    temporary folder is removed and ``path`` is untouched. Yields the
    temporary folder. Only ``kind.command`` may replace it later
    (:func:`check_output_dir`).
    """
    real = check_output_dir(path, kind)
    real.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(real.parent, f".{real.name}.")  # named before it exists: see _temp_name
    try:
        os.mkdir(tmp, 0o700)
        os.chmod(tmp, 0o777 & ~_umask())
        yield tmp
        written = sorted(e.name for e in tmp.iterdir() if e.name != MARKER)
        (tmp / MARKER).write_text(_marker_text(kind, written), encoding="utf-8")
        if not real.exists():
            try:
                os.replace(tmp, real)
                return
            except OSError:
                if not real.is_dir():  # not a concurrent twin's finished folder
                    raise
        check_output_dir(path, kind)  # nothing foreign appeared while we worked
        listed = set(_marked_entries(real) or [])
        for name in sorted(listed | set(written)):  # an input of ours in the folder
            _refuse_input(str(Path(os.fspath(path)) / name), real / name)
        # A file of the same name that the marker does not list is the user's,
        # unless the folder's own files say it is this command's output.
        foreign = sorted(n for n in written if n not in listed
                         and ((real / n).exists() or (real / n).is_symlink()))
        if foreign and not (kind.recognise is not None and kind.recognise(real)):
            raise OutputError(f"{str(Path(os.fspath(path)) / foreign[0])!r} exists and was not "
                              f"written by `pipegossip {kind.command}`; choose a new or empty "
                              "folder")
        for name in listed - set(written):
            _remove(real / name)
        for name in written + [MARKER]:
            if (real / name).is_dir() and not (real / name).is_symlink():
                shutil.rmtree(real / name)
            os.replace(tmp / name, real / name)
        shutil.rmtree(tmp, ignore_errors=True)  # empty now; inside the try, see below
    except BaseException:
        # Also when an interrupt lands during the removal above: a `finally`
        # alone would be unwound by it before it removed anything.
        shutil.rmtree(tmp, ignore_errors=True)
        raise
