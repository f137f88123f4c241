"""The one verdict type: how a trace record differs from the golden model.

:func:`pipegossip.sim.judge.fsm.judge` fills a :class:`Verdict` with every
:class:`Mismatch`; the verdict renders the report people read (first
differing cycle and processor, the model's and the hardware's rows around it
one above the other) and the JSON the commands write.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ...model.config import RunConfig
from ...model.engine import simulate
from ...model.result import RunResult
from ...model.runtable import IDLE, WR, WS, RunTable, token
from ..record import HwRun

__all__ = ["KINDS", "Mismatch", "Verdict", "show"]

#: Order in which mismatches of the same cycle are listed: the trace first.
KINDS = ("trace", "used", "busy", "done", "cycle", "stall", "delivery", "handshake",
         "idle", "timeout", "watchdog", "record")


def show(action: int, peer: int) -> str:
    """A slot as text; waits show their peer (``WS:3``) since the trace codes pin it too."""
    if action in (WS, WR):
        return f"{token(action, peer)}:{peer}"
    try:
        return token(action, peer)
    except ValueError:
        return f"?{action}:{peer}"


@dataclass(frozen=True)
class Mismatch:
    """One way the hardware differs from the model.

    ``cycle`` is the clock cycle (= model step for 1..L, 0 = the start cycle,
    negative = idle cycles before it); ``processor`` is None for fabric-wide
    outputs.
    """

    kind: str
    cycle: int | None
    processor: int | None
    expected: str
    got: str
    note: str = ""

    def sort_key(self) -> tuple:
        return (self.cycle if self.cycle is not None else 1 << 60, KINDS.index(self.kind),
                -1 if self.processor is None else self.processor)

    def __str__(self) -> str:
        where = [] if self.cycle is None else [f"cycle {self.cycle}"]
        if self.processor is not None:
            where.append(f"processor p{self.processor}")
        head = ", ".join(where) + ": " if where else ""
        note = f" ({self.note})" if self.note else ""
        return f"{head}{self.kind}: expected {self.expected}, got {self.got}{note}"

    def to_json(self) -> dict:
        return dict(kind=self.kind, cycle=self.cycle, processor=self.processor,
                    expected=self.expected, got=self.got, note=self.note)


@dataclass
class Verdict:
    """The outcome of judging one record: the one verdict type.

    Attributes
    ----------
    config : RunConfig
        The configuration the model judged by.
    run : HwRun
        The hardware's record.
    model : RunResult or None
        The model's run (None for a watchdog check).
    mismatches : list of Mismatch
        Sorted: first cycle first, the trace before other kinds.
    unchecked : list of str
        Checks not made because the record lacks their ports, each with the
        missing fields (``"delivery (no dvalid, dsource, dsession)"``).
    """

    config: RunConfig
    run: HwRun
    model: RunResult | None
    mismatches: list[Mismatch] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)

    @property
    def match(self) -> bool:
        return not self.mismatches

    @property
    def ok(self) -> bool:
        """Same as :attr:`match` (the name the waveform report uses)."""
        return self.match

    @property
    def missing(self) -> list[str]:
        """Same as :attr:`unchecked` (the report shows them as skipped checks)."""
        return self.unchecked

    @property
    def problems(self) -> list[str]:
        """Every mismatch except trace slots (those are in :attr:`diff`), as text."""
        return [str(m) for m in self.mismatches if m.kind != "trace"][:20]

    @cached_property
    def diff(self):
        """The slot-by-slot :class:`~pipegossip.waveforms.diff.TableDiff` of the run-tables.

        Imported here only to render it: the slots compared are the judge's
        (the ``trace`` and ``used`` mismatches say the same thing).
        """
        from ...waveforms.diff import diff_tables
        model = self.model.table if self.model is not None else simulate(self.config, table=True).table
        return diff_tables(model, self.hw_table, exact=True)

    def summary(self) -> str:
        """One line: PASS or FAIL and why (the waveform report's verdict line)."""
        if self.match:
            extra = "" if any(u.startswith("delivery") for u in self.unchecked) else \
                " and every delivery"
            return f"PASS: the {self._what()} shows the model's run-table slot for slot{extra}"
        parts = []
        d = self.diff
        if not d.equal:
            parts += d.notes
            if d.total:
                parts.append(f"{d.total} slot(s) differ, first at step {d.first_step}")
        counts = {k: v for k, v in self.counts().items() if k not in ("trace", "used")}
        if counts:
            parts.append(", ".join(f"{v} {k} mismatch(es)" for k, v in counts.items()))
        return "FAIL: " + "; ".join(parts or [str(self.first_mismatch)])

    def _what(self) -> str:
        return "dump" if self.run.origin.startswith("dump") else "hardware"

    @property
    def first_mismatch(self) -> Mismatch | None:
        return self.mismatches[0] if self.mismatches else None

    @property
    def hw_length(self) -> int:
        """The hardware's L: cycles with ``busy`` high."""
        return self.run.busy_cycles

    @property
    def hw_table(self) -> RunTable:
        """The hardware run-table (with the model's header comments)."""
        table = self.run.table()
        table.comments = [self.config.header(),
                          f"source=hardware ({self.run.origin or 'cocotb co-simulation'})"]
        return table

    @property
    def hw_utilization(self) -> np.ndarray:
        return self.hw_table.used.astype(np.int64)

    def counts(self) -> dict[str, int]:
        return dict(Counter(m.kind for m in self.mismatches))

    def report(self, context: int = 3, limit: int = 12) -> str:
        """Text for a person: verdict, first mismatch with aligned rows, a few more."""
        lines = []
        model_l = self.model.length if self.model is not None else None
        seed = self.run.spec.word_seed
        lines.append(f"{self.config.slug}: "
                     + (f"words seed {seed}: " if seed is not None else "words as taken: ")
                     + ("MATCH" if self.match else "MISMATCH")
                     + f" (hardware L={self.hw_length}"
                     + (f", model L={model_l}" if model_l is not None else "") + ")")
        if self.unchecked:
            lines.append("not checked (the record lacks their ports): "
                         + "; ".join(self.unchecked))
        if self.match:
            return "\n".join(lines)
        first = self.first_mismatch
        lines.append(f"first mismatch: {first}")
        lines.extend(self._window(first, context))
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.counts().items(),
                                                          key=lambda kv: KINDS.index(kv[0])))
        lines.append(f"{len(self.mismatches)} mismatches ({counts}); the first {limit}:")
        lines.extend(f"  {m}" for m in self.mismatches[:limit])
        return "\n".join(lines)

    def _window(self, m: Mismatch, context: int) -> list[str]:
        if m.cycle is None or self.model is None:
            return []
        last = max(self.model.length, self.run.last_cycle)
        lo, hi = max(1, m.cycle - context), min(last, m.cycle + context)
        if lo > hi:
            return []
        cycles = list(range(lo, hi + 1))
        rows: list[tuple[str, list[str]]] = []
        if m.processor is not None:
            exp = [self._model_slot(m.processor, t) for t in cycles]
            got = [self._hw_slot(m.processor, t) for t in cycles]
            rows += [(f"model p{m.processor}", exp), (f"hw    p{m.processor}", got)]
        else:
            rows += [("model used", [str(self._model_used(t)) for t in cycles]),
                     ("hw    used", [self._hw_scalar("used", t) for t in cycles])]
            if "used" not in self.run.samples:
                rows.pop()
        cells = [str(t) for t in cycles] + [c for _, r in rows for c in r]
        width = max(len(c) for c in cells) + 3  # room for the [ ] marking the cycle
        label = max(len(name) for name, _ in rows)

        def fmt(name: str, values: list[str]) -> str:
            out = []
            for t, v in zip(cycles, values):
                out.append((f"[{v}]" if t == m.cycle else v).rjust(width))
            return "  " + name.ljust(label) + " " + "".join(out)

        return [fmt("cycle", [str(t) for t in cycles])] + [fmt(name, r) for name, r in rows]

    def _model_slot(self, p: int, t: int) -> str:
        table = self.model.table
        if 1 <= t <= table.length:
            return show(int(table.actions[p, t - 1]), int(table.peers[p, t - 1]))
        return show(IDLE, 0)

    def _model_used(self, t: int) -> int:
        u = self.model.utilization
        return int(u[t - 1]) if 1 <= t <= len(u) else 0

    def _hw_slot(self, p: int, t: int) -> str:
        if not self._sampled(t):
            return "."
        return show(int(self.run.at("action", t)[p]), int(self.run.at("peer", t)[p]))

    def _hw_scalar(self, name: str, t: int) -> str:
        return str(int(self.run.at(name, t))) if self._sampled(t) else "."

    def _sampled(self, t: int) -> bool:
        return self.run.first_cycle <= t <= self.run.last_cycle

    def to_json(self) -> dict:
        first = self.first_mismatch
        return dict(match=self.match, word_seed=self.run.spec.word_seed,
                    L=None if self.model is None else self.model.length,
                    cycles=self.hw_length, utilization=self.hw_utilization.tolist(),
                    first_mismatch=None if first is None else first.to_json(),
                    mismatch_counts=self.counts(), unchecked=list(self.unchecked),
                    mismatches=[m.to_json() for m in self.mismatches[:100]])
