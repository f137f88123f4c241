"""The flow's output folders: which may be replaced, checked before any tool runs.

Every folder the flow writes holds its report (:data:`REPORT_NAME`, tagged
``"tool": "pipegossip fpga"``): that tag is the flow's marker. A folder may be
(re)filled only when it does not exist, is empty, or carries the marker; the
writing itself is :func:`pipegossip.files.atomic_directory`'s, which only
replaces entries listed in its own marker file (:data:`pipegossip.files.MARKER`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...files import MARKER, OutputError, atomic_write
from ...files import check_output_dir as _check_writable_output

__all__ = ["REPORT_NAME", "check_output_dir", "check_writable_folder"]

#: The flow's own report, written into every output folder.
REPORT_NAME = "report.json"
_TOOL_TAG = "pipegossip fpga"


def _folder_path(path: str | os.PathLike) -> Path:
    """``path`` as a :class:`~pathlib.Path`; ValueError if it exists and is not a folder."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"output {str(path)!r} exists and is not a folder")
    return path


def check_output_dir(path: str | os.PathLike) -> Path:
    """Refuse an output folder the flow must not replace, or cannot write.

    The flow replaces its output folder's contents, so it only accepts a
    folder that does not exist, is empty, or holds an earlier flow report;
    and (so that a long build never ends in a refused write) the folder, or
    the nearest existing folder above a new one, must be writable.

    Raises
    ------
    ValueError
        Naming the path and the reason.
    """
    path = _folder_path(path)
    earlier = _is_flow_output(path)
    if path.is_dir() and any(path.iterdir()) and not earlier:
        raise ValueError(f"refusing to replace {str(path)!r}: not empty and not an earlier "
                         f"'pipegossip fpga' output (no {REPORT_NAME})")
    if earlier:
        if not os.access(path, os.W_OK | os.X_OK):
            raise ValueError(f"cannot write into {str(path)!r}: not writable")
    else:
        try:
            _check_writable_output(path)
        except OutputError as e:
            raise ValueError(str(e)) from None
    return path


def check_writable_folder(path: str | os.PathLike) -> Path:
    """Check that files can be written into folder ``path`` (created if missing).

    For outputs written file by file (the sweep's table and plot): ``path``
    must be a writable folder, or not exist below a writable folder.

    Raises
    ------
    ValueError
        Naming the path and the reason.
    """
    path = _folder_path(path)
    nearest = path.absolute()
    while not nearest.exists():
        nearest = nearest.parent
    if not nearest.is_dir() or not os.access(nearest, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write into {str(path)!r}: {str(nearest)!r} is not a "
                         f"writable folder")
    return path


def _is_flow_output(path: Path) -> bool:
    try:
        return json.loads((path / REPORT_NAME).read_text()).get("tool") == _TOOL_TAG
    except (OSError, ValueError, AttributeError):
        return False


def _load_report(path: Path) -> dict | None:
    """The flow report in folder ``path``, or None if there is none of ours."""
    try:
        report = json.loads((path / REPORT_NAME).read_text())
    except (OSError, ValueError):
        return None
    return report if report.get("tool") == _TOOL_TAG else None


def _adopt_earlier_output(path: Path) -> None:
    """Let :func:`~pipegossip.files.atomic_directory` replace an earlier flow output.

    A flow output written before the files module kept a marker has the
    flow's report but no :data:`~pipegossip.files.MARKER`; every entry in it
    is the flow's own (the flow always replaced the folder as a whole), so
    the marker that lists them is written now.
    """
    if path.is_dir() and not (path / MARKER).exists() and _is_flow_output(path):
        entries = sorted(e.name for e in path.iterdir())
        atomic_write(path / MARKER, json.dumps(entries) + "\n")
