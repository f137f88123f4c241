"""Whole tables of figures stored as results: ``pipegossip hw cost`` and ``hw fpga-sweep``.

A table result (``"kind": "table"`` in ``docs/results/NAME.json``) keeps
the Markdown a command printed (``text``), the command (``argv`` after
``pipegossip``, written to ``-o``; ``output`` names the file inside that
folder when ``-o`` is a folder), the tool versions and the date. Each of its
``quotes`` names a doc that must show every table of ``text`` (every run of
lines starting with ``|``; ``tables`` picks some by index) whole: the same
lines, in order, with no table line right before or after, so that a number
changed, a row added or a row dropped in the doc is found.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["tables", "table_quotes", "run_table"]


def tables(text: str) -> list[list[str]]:
    """The Markdown tables of ``text``: each a list of its lines."""
    out: list[list[str]] = []
    previous = False
    for line in text.splitlines():
        row = line.startswith("|")
        if row and not previous:
            out.append([])
        if row:
            out[-1].append(line.rstrip())
        previous = row
    return out


def _shown(table: list[str], doc: list[str]) -> bool:
    """Whether ``doc`` (its lines) holds ``table`` whole and alone."""
    k = len(table)
    for i in range(len(doc) - k + 1):
        if doc[i:i + k] == table:
            before = i > 0 and doc[i - 1].startswith("|")
            after = i + k < len(doc) and doc[i + k].startswith("|")
            if not before and not after:
                return True
    return False


def table_quotes(result: dict, root: Path) -> list[str]:
    """Tables of a table result that a quoting doc does not show whole (lines to print)."""
    if not result.get("text"):
        return [f"{result['name']}: no table yet (pipegossip paper fpga-references "
                f"--update {result['name']} runs it)"]
    found = tables(result["text"])
    missing = []
    for q in result.get("quotes", []):
        doc = [line.rstrip() for line in (root / q["file"]).read_text().splitlines()]
        for k in q.get("tables", range(len(found))):
            if not _shown(found[k], doc):
                missing.append(f"{result['name']}: {q['file']} does not show table {k + 1} "
                               f"of {len(found)} whole ({found[k][0][:60]}...; "
                               f"{len(found[k]) - 2} rows)")
    return missing


def run_table(result: dict, root: Path) -> str:
    """Run ``pipegossip ARGV -o TMP`` in ``root`` (stdout quiet); the Markdown it wrote.

    Raises
    ------
    FlowError
        The command failed (its exit status and the end of its stderr).
    """
    from ..hw.fpga.tools import FlowError
    with tempfile.TemporaryDirectory(prefix="pipegossip-table-") as tmp:
        target = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "pipegossip", *result["argv"], "-o", str(target)]
        child = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        try:
            _, err = child.communicate()
        finally:  # a signal here stops the command too, before its folder goes
            if child.poll() is None:
                child.terminate()
                child.wait()
        if child.returncode != 0:
            raise FlowError(f"{result['name']}: `pipegossip {' '.join(result['argv'])}` exited "
                            f"{child.returncode}", err[-2000:])
        path = target / result["output"] if result.get("output") else target
        return path.read_text()
