"""Writing outputs so that a refused or failed command leaves nothing behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_write", "atomic_directory"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path``, then rename it.

    The parent folder must exist; a reader never sees a half-written file.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(2, "output folder does not exist", str(path.parent))
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
            f.write(data)
        # mkstemp makes the file private (0600); give it the usual permissions.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


@contextmanager
def atomic_directory(path: str | os.PathLike):
    """Fill a temporary folder, then move it to ``path`` only on success.

    An existing ``path`` is replaced as a whole. Yields the temporary folder.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_umask())
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)
