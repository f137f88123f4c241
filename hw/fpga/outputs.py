"""The flow's output folders: which may be replaced, checked before any tool runs.

Every folder the flow writes is of kind :data:`FPGA_OUTPUT` (command
``fpga``; ``fpga-compare`` builds into such folders too) and holds its report
(:data:`REPORT_NAME`, tagged ``"tool": "pipegossip fpga"``). A folder may be
(re)filled only when it does not exist, is empty, carries the files module's
marker for ``fpga``, or (an output older than that marker) holds the tagged
report; the writing itself is :func:`pipegossip.infra.files.atomic_directory`'s,
which only replaces entries listed in its marker (:data:`pipegossip.infra.files.MARKER`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...infra.files import MARKER, OutputError, OutputKind, mark_output_dir, marked_command
from ...infra.files import check_output_dir as _check_writable_output

__all__ = ["REPORT_NAME", "FPGA_OUTPUT", "check_output_dir", "check_writable_folder"]

#: The flow's own report, written into every output folder.
REPORT_NAME = "report.json"
_TOOL_TAG = "pipegossip fpga"
#: A flow report is a few kilobytes; anything far larger is not one.
_REPORT_MAX = 16 << 20


def _is_flow_output(path: Path) -> bool:
    return _load_report(path) is not None


#: A flow output folder: recognised by its tagged report even without a marker.
FPGA_OUTPUT = OutputKind("fpga", recognise=_is_flow_output)


def _folder_path(path: str | os.PathLike) -> Path:
    """``path`` as a :class:`~pathlib.Path`; ValueError if it exists and is not a folder."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"output {str(path)!r} exists and is not a folder")
    return path


def check_output_dir(path: str | os.PathLike) -> Path:
    """Refuse an output folder the flow must not replace, or cannot write.

    The flow replaces its output folder's contents, so it only accepts a
    folder that does not exist, is empty, or holds an earlier flow output
    (:func:`pipegossip.infra.files.check_output_dir` for :data:`FPGA_OUTPUT`); and
    (so that a long build never ends in a refused write) the folder, or the
    nearest existing folder above a new one, must be writable.

    Raises
    ------
    ValueError
        Naming the path and the reason.
    """
    path = _folder_path(path)
    try:
        _check_writable_output(path, FPGA_OUTPUT)
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


def _load_report(path: Path) -> dict | None:
    """The flow report in folder ``path``, or None if there is none of ours."""
    report_path = path / REPORT_NAME
    try:
        # Only a regular file of report size is read (never a FIFO or a device).
        if not report_path.is_file() or report_path.stat().st_size > _REPORT_MAX:
            return None
        report = json.loads(report_path.read_text())
    except (OSError, ValueError, RecursionError):
        return None
    return report if isinstance(report, dict) and report.get("tool") == _TOOL_TAG else None


def _adopt_earlier_output(path: Path) -> None:
    """Let :func:`~pipegossip.infra.files.atomic_directory` replace an earlier flow output.

    A flow output written before the files module kept a marker has the
    flow's report but no :data:`~pipegossip.infra.files.MARKER`; every entry in it
    is the flow's own (the flow always replaced the folder as a whole), so
    the marker that lists them is written now. One with an older marker (a
    list, no command) gets the same list under the command ``fpga``.
    """
    if not path.is_dir() or not _is_flow_output(path):
        return
    if not (path / MARKER).exists():
        mark_output_dir(path, {e.name for e in path.iterdir()}, FPGA_OUTPUT)
    elif marked_command(path) is None:
        mark_output_dir(path, (), FPGA_OUTPUT)
