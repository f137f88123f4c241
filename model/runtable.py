"""Run-tables: the per-processor, per-step trace (docs/reference.md).

A :class:`RunTable` holds two ``(N, L)`` arrays, the action codes and the
peers, plus the ``used`` row. It renders to and parses from the text format of
docs/reference.md, which is the exchange format between the model, the
hardware trace and waveform read-back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .errors import FormatError
from .inputs import read_input_text
from .metrics import Metrics

__all__ = [
    "IDLE", "WR", "R", "WS", "S", "ACTION_NAMES",
    "RunTable", "token", "parse_token",
]

#: Trace codes (docs/reference.md "Trace codes"), shared by model and hardware.
IDLE, WR, R, WS, S = 0, 1, 2, 3, 4
ACTION_NAMES = {IDLE: "-", WR: "WR", R: "R", WS: "WS", S: "S"}

MAGIC = "# pipegossip run-table v1"
_TOKEN = re.compile(r"^(?:(S|R)([0-9]+)|WS|WR|-)$")


def token(action: int, peer: int) -> str:
    """The text token of one slot; ``WS``/``WR`` drop their peer."""
    if action == S:
        return f"S{peer}"
    if action == R:
        return f"R{peer}"
    if action in (WS, WR, IDLE):
        return ACTION_NAMES[action]
    raise ValueError(f"unknown action code {action!r}")


def parse_token(text: str) -> tuple[int, int]:
    """``"S3"`` -> ``(S, 3)``; raises :class:`FormatError` on anything else."""
    m = _TOKEN.match(text)
    if not m:
        raise FormatError(f"bad run-table token {text!r} (expected S<j>, R<j>, WS, WR or -)")
    if m.group(1):
        return (S if m.group(1) == "S" else R), int(m.group(2))
    return {"WS": WS, "WR": WR, "-": IDLE}[text], 0


def _header_n(comments: list[str]) -> int | None:
    """The ``N=`` a header comment declares, if any."""
    for c in comments:
        m = re.search(r"(?:^|\s)N=(\d+)\b", c)
        if m:
            return int(m.group(1))
    return None


@dataclass
class RunTable:
    """A run-table.

    Attributes
    ----------
    actions : numpy.ndarray
        ``(N, L)`` uint8 action codes, step 1 in column 0.
    peers : numpy.ndarray
        ``(N, L)`` int32 peers (docs/reference.md "Trace codes").
    used : numpy.ndarray
        ``(L,)`` used slots per step. Derived from ``actions`` unless given
        (a parsed file carries its own ``used`` row, which equality checks).
    comments : list of str
        Header lines without the leading ``#``.
    """

    actions: np.ndarray
    peers: np.ndarray
    used: np.ndarray | None = None
    comments: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.actions = np.asarray(self.actions, dtype=np.uint8)
        self.peers = np.asarray(self.peers, dtype=np.int32)
        if self.actions.ndim != 2 or self.actions.shape != self.peers.shape:
            raise ValueError("actions and peers must be two arrays of the same (N, L) shape")
        if self.used is None:
            self.used = self.derived_used()
        self.used = np.asarray(self.used, dtype=np.int64)
        if self.used.shape != (self.length,):
            raise ValueError(f"used row has {self.used.shape[0]} entries for {self.length} steps")

    @property
    def n(self) -> int:
        return self.actions.shape[0]

    @property
    def length(self) -> int:
        return self.actions.shape[1]

    @property
    def metrics(self) -> Metrics:
        """L, mu and E from the table's ``used`` row."""
        return Metrics.of(self.n, self.used)

    def derived_used(self) -> np.ndarray:
        """Used slots per step counted from the actions (S and R)."""
        return ((self.actions == S) | (self.actions == R)).sum(axis=0).astype(np.int64)

    def token_at(self, p: int, step: int) -> str:
        """Token of processor ``p`` at 1-based ``step``."""
        return token(int(self.actions[p, step - 1]), int(self.peers[p, step - 1]))

    def rows(self) -> list[list[str]]:
        """N lists of tokens, step 1 first."""
        names = np.array(["-", "WR", "R", "WS", "S"])
        out = []
        for p in range(self.n):
            a = self.actions[p]
            toks = names[a].astype(object)
            busy = (a == S) | (a == R)
            toks[busy] = toks[busy] + self.peers[p][busy].astype(str).astype(object)
            out.append(toks.tolist())
        return out

    def token_key(self) -> tuple[np.ndarray, np.ndarray]:
        """Arrays that are equal exactly when the token rows are equal."""
        busy = (self.actions == S) | (self.actions == R)
        return self.actions, np.where(busy, self.peers, 0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunTable):
            return NotImplemented
        if self.actions.shape != other.actions.shape:
            return False
        a1, p1 = self.token_key()
        a2, p2 = other.token_key()
        return bool(np.array_equal(a1, a2) and np.array_equal(p1, p2)
                    and np.array_equal(self.used, other.used))

    __hash__ = None  # mutable arrays

    def render(self, comments: list[str] | None = None) -> str:
        """The run-table text (docs/reference.md); one line per processor."""
        rows = self.rows()
        steps = [str(t) for t in range(1, self.length + 1)]
        used = [str(int(u)) for u in self.used]
        width = max([len(x) for x in steps] + [len(x) for r in rows for x in r] + [2])
        label = max(4, len(f"p{self.n - 1}"))

        def line(name: str, cells: list[str]) -> str:
            return (name.ljust(label) + " " + " ".join(c.rjust(width) for c in cells)).rstrip()

        head = [MAGIC] + [f"# {c}" for c in (self.comments if comments is None else comments)]
        body = [line("step", steps)] + [line(f"p{p}", r) for p, r in enumerate(rows)]
        body.append(line("used", used))
        return "\n".join(head + body) + "\n"

    @classmethod
    def parse(cls, text: str, source: str = "run-table") -> RunTable:
        """Read the run-table text (docs/reference.md).

        Raises
        ------
        FormatError
            With the line number and what is wrong.
        """
        comments: list[str] = []
        steps: list[int] | None = None
        rows: dict[int, list[str]] = {}
        row_lines: dict[int, int] = {}
        used: list[int] | None = None
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                body = line[1:].strip()
                if body and line != MAGIC:
                    comments.append(body)
                continue
            name, *cells = line.split()
            where = f"{source}:{lineno}"
            if name == "step":
                try:
                    steps = [int(c) for c in cells]
                except ValueError:
                    raise FormatError(f"{where}: step row holds a non-integer") from None
                if steps != list(range(1, len(steps) + 1)):
                    raise FormatError(f"{where}: step row must count 1, 2, 3, ...")
            elif name == "used":
                try:
                    used = [int(c) for c in cells]
                except ValueError:
                    raise FormatError(f"{where}: used row holds a non-integer") from None
            elif re.fullmatch(r"p[0-9]+", name):
                p = int(name[1:])
                if p in rows:
                    raise FormatError(f"{where}: row {name} appears twice")
                rows[p] = cells
                row_lines[p] = lineno
            else:
                raise FormatError(f"{where}: unknown row label {name!r}")
        if not rows:
            raise FormatError(f"{source}: no processor rows (p0, p1, ...)")
        n = max(rows) + 1
        if sorted(rows) != list(range(n)):
            missing = sorted(set(range(n)) - set(rows))
            raise FormatError(f"{source}: processor row p{missing[0]} is missing")
        length = len(rows[0])
        for p, cells in rows.items():
            if len(cells) != length:
                raise FormatError(f"{source}: row p{p} has {len(cells)} steps, p0 has {length}")
        if steps is not None and len(steps) != length:
            raise FormatError(f"{source}: step row has {len(steps)} columns, rows have {length}")
        if used is not None and len(used) != length:
            raise FormatError(f"{source}: used row has {len(used)} columns, rows have {length}")
        actions = np.zeros((n, length), dtype=np.uint8)
        peers = np.zeros((n, length), dtype=np.int32)
        for p in range(n):
            for t, cell in enumerate(rows[p]):
                where = f"{source}:{row_lines[p]}: p{p} step {t + 1}"
                try:
                    action, peer = parse_token(cell)
                except FormatError as e:
                    raise FormatError(f"{where}: {e}") from None
                # A transfer names another processor of this table; anything
                # else cannot come from a run and would mislead a comparison.
                if action in (S, R) and not 0 <= peer < n:
                    raise FormatError(f"{where}: peer out of range ({cell!r} with N={n})")
                if action in (S, R) and peer == p:
                    raise FormatError(f"{where}: {cell!r} is a transfer to itself")
                actions[p, t], peers[p, t] = action, peer
        declared = _header_n(comments)
        if declared is not None and declared != n:
            raise FormatError(f"{source}: the header says N={declared} but the table has "
                              f"{n} processor rows")
        return cls(actions, peers, None if used is None else np.array(used), comments)

    @classmethod
    def read(cls, path) -> RunTable:
        """Read a run-table file through the one input reader (:mod:`.inputs`)."""
        return cls.parse(read_input_text(path, "run-table"), source=str(path))

    def header_fields(self) -> dict[str, str]:
        """``key=value`` pairs from the header comments (e.g. ``N``, ``order``)."""
        out: dict[str, str] = {}
        for c in self.comments:
            for m in re.finditer(r"(\w+)=(\S+)", c):
                out.setdefault(m.group(1), m.group(2))
        return out
