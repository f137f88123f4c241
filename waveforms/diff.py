"""Compare two run-tables and say where they part.

Equality is docs/reference.md "Run-table text format"'s (same N, rows and ``used`` row token for
token). With ``exact=True`` the peers of ``WS`` and ``WR`` are compared too
(docs/reference.md "Trace codes" gives them: the current target, the awaited sender), which
only a dump or the model carries, not a text table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.runtable import IDLE, R, S, WR, WS, RunTable, token

__all__ = ["Difference", "TableDiff", "diff_tables", "format_diff", "utilization_lines"]


@dataclass(frozen=True)
class Difference:
    """One differing slot: 1-based ``step``, ``row`` (``p3`` or ``used``), both tokens."""

    step: int
    row: str
    expected: str
    got: str


@dataclass
class TableDiff:
    """The outcome of :func:`diff_tables`.

    Attributes
    ----------
    equal : bool
    notes : list of str
        Shape differences (N, L), said once instead of cell by cell.
    differences : list of Difference
        The first ``limit`` differing slots, by step then row.
    total : int
        How many slots differ in all (over the steps both tables have).
    """

    expected: RunTable
    got: RunTable
    equal: bool
    notes: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    total: int = 0

    @property
    def first_step(self) -> int | None:
        return self.differences[0].step if self.differences else None


def _token(action: int, peer: int, exact: bool) -> str:
    if exact and action in (WS, WR):
        return f"{'WS' if action == WS else 'WR'}({peer})"
    return token(action, peer)


def diff_tables(expected: RunTable, got: RunTable, limit: int = 20,
                exact: bool = False) -> TableDiff:
    """Compare ``got`` with ``expected``.

    Steps present in only one table count as differences against ``-``
    (the other side has ended), so a run that is one step longer is listed
    at that step.
    """
    out = TableDiff(expected, got, equal=False)
    if expected.n != got.n:
        out.notes.append(f"N differs: expected {expected.n}, got {got.n}")
        return out
    if expected.length != got.length:
        out.notes.append(f"L differs: expected {expected.length}, got {got.length}")
    n = expected.n
    length = max(expected.length, got.length)

    def padded(t: RunTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = np.full((n, length), IDLE, dtype=np.uint8)
        p = np.zeros((n, length), dtype=np.int32)
        u = np.full(length, -1, dtype=np.int64)
        a[:, :t.length] = t.actions
        busy = (t.actions == S) | (t.actions == R)
        p[:, :t.length] = t.peers if exact else np.where(busy, t.peers, 0)
        u[:t.length] = t.used
        return a, p, u

    ea, ep, eu = padded(expected)
    ga, gp, gu = padded(got)
    cell = (ea != ga) | (ep != gp)
    used = eu != gu
    out.total = int(cell.sum() + used.sum())
    out.equal = out.total == 0 and not out.notes
    for t in np.flatnonzero(cell.any(axis=0) | used):
        for p in np.flatnonzero(cell[:, t]):
            out.differences.append(Difference(int(t) + 1, f"p{p}",
                                              _token(int(ea[p, t]), int(ep[p, t]), exact),
                                              _token(int(ga[p, t]), int(gp[p, t]), exact)))
        if used[t]:
            out.differences.append(Difference(int(t) + 1, "used",
                                              str(eu[t]) if eu[t] >= 0 else "(none)",
                                              str(gu[t]) if gu[t] >= 0 else "(none)"))
        if len(out.differences) >= limit:
            break
    del out.differences[limit:]
    return out


def utilization_lines(expected: np.ndarray, got: np.ndarray, per_line: int = 30,
                      names: tuple[str, str] = ("expected", "got")) -> list[str]:
    """The two utilisation strings one above the other, ``^`` under differences.

    Wrapped every ``per_line`` steps; a step one side lacks shows ``.``.
    """
    length = max(len(expected), len(got))
    cells_e = [str(int(u)) for u in expected] + ["."] * (length - len(expected))
    cells_g = [str(int(u)) for u in got] + ["."] * (length - len(got))
    width = max([len(str(length))] + [len(c) for c in cells_e + cells_g])
    label = max(len(x) for x in names + ("step",))

    def row(name: str, cells: list[str]) -> str:
        return (name.ljust(label) + " " + " ".join(c.rjust(width) for c in cells)).rstrip()

    lines = []
    for lo in range(0, length, per_line):
        hi = min(length, lo + per_line)
        marks = ["^" if cells_e[t] != cells_g[t] else "" for t in range(lo, hi)]
        lines.append(row("step", [str(t + 1) for t in range(lo, hi)]))
        lines.append(row(names[0], cells_e[lo:hi]))
        lines.append(row(names[1], cells_g[lo:hi]))
        if any(marks):
            lines.append(row("", marks))
    return lines


def format_diff(d: TableDiff, expected_label: str, got_label: str) -> str:
    """The human-readable report: verdict, first differences, utilisation."""
    lines = [f"expected: {expected_label} (N={d.expected.n} L={d.expected.length})",
             f"got:      {got_label} (N={d.got.n} L={d.got.length})"]
    if d.equal:
        lines.append("equal: the run-tables match token for token")
        return "\n".join(lines) + "\n"
    lines += d.notes
    if d.differences:
        shown = len(d.differences)
        lines.append(f"{d.total} slot(s) differ; first at step {d.first_step}"
                     + (f" (first {shown} shown)" if shown < d.total else "") + ":")
        rows = [("step", "row", "expected", "got")] + [
            (str(x.step), x.row, x.expected, x.got) for x in d.differences]
        widths = [max(len(r[k]) for r in rows) for k in range(4)]
        for r in rows:
            lines.append("  " + "  ".join(
                (c.rjust(widths[k]) if k == 0 else c.ljust(widths[k])) for k, c in enumerate(r)
            ).rstrip())
    if d.expected.n == d.got.n:
        lines.append("utilisation:")
        lines += ["  " + x for x in utilization_lines(d.expected.used, d.got.used)]
    return "\n".join(lines) + "\n"
