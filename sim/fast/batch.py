"""Batches of fast-mode runs driven by the hardware: Python wakes once per batch.

Test infrastructure only (part of the fast mode's wrapper top,
:class:`~.checker.FastTop`, never of :mod:`pipegossip.hw`).

A fast run on its own (:mod:`.testbench`) costs a few Python wake-ups:
start, one sleep, a read of the summary ports, the next run's idle cycles.
For a short run (N=32 pipelined: 93 cycles) those dominate. Here the
hardware does it instead:

* :class:`BatchDriver` runs ``count`` runs back to back once ``go`` is
  pulsed: ``idle`` cycles at rest, ``start`` for one cycle, then it waits
  for the checker's ``finished`` (or a cycle limit, when the fabric never
  took ``start`` or the checker never finished), logs the checker's summary
  of the run and goes on with the next word seed (``seed``, ``seed + 1``,
  ...);
* the log (:func:`log_verilog`) is a Verilog module writing one line per run
  (``$fwrite`` of decimal fields, flushed) into :data:`LOG_FILE` in the
  simulator's working folder; :func:`parse_log` reads it back into the same
  summary dictionaries the per-run path reads off the ports, so both become
  the one trace record (:func:`~.mode.fast_record`) and meet the one
  judge.

Timing of a batched run: ``idle + 1`` cycles at rest, the start cycle, the
checked span (``L + tail + 1`` cycles, the last of them seeing ``finished``)
and the logging cycle.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...hw.words import SEED_BITS
from .ports import LOG_FIELDS, LOG_FILE, batch_cycles, parse_log

__all__ = ["BatchDriver", "LOG_FILE", "LOG_MODULE", "LOG_FIELDS", "log_verilog", "parse_log",
           "batch_cycles"]

#: Module name of the log.
LOG_MODULE = "pg_summary_log"


class BatchDriver(wiring.Component):
    """Runs ``count`` fast-mode runs back to back and logs each run's summary.

    Parameters
    ----------
    span : int
        Cycles the checker checks per run (``L + tail + 1``); a run that has
        not finished ``2 * span + 16`` cycles after its start is logged as
        unfinished.

    Attributes
    ----------
    go : In(1)
        Begin a batch (ignored while one runs).
    count : In(32)
        Runs in the batch (at least 1).
    idle : In(8)
        Cycles at rest before each run's start, less one.
    seed0 : In(SEED_BITS)
        Word seed of the batch's first run; run k has ``seed0 + k``.
    began, finished : In(1)
        From the checker: the fabric took ``start`` this cycle; the run's
        last cycle was checked.
    start : Out(1)
        To the fabric (or-ed with the testbench's own ``start``).
    seed : Out(SEED_BITS)
        The current run's word seed.
    running : Out(1)
        A batch is under way (the top then uses :attr:`seed`).
    runs_done : Out(32)
        Runs logged since the last ``go``.
    log_en : Out(1)
        Log the current summary this cycle.
    run, waited, ok : Out
        The logged run's index in the batch, its cycles from the start cycle,
        and whether it was started and finished (``finished`` of the log).
    """

    def __init__(self, span: int):
        self.span = span
        self.limit = 2 * span + 16
        super().__init__({
            "go": In(1), "count": In(32), "idle": In(8), "seed0": In(SEED_BITS),
            "began": In(1), "finished": In(1),
            "start": Out(1), "seed": Out(SEED_BITS), "running": Out(1), "runs_done": Out(32),
            "log_en": Out(1), "run": Out(32), "waited": Out(32), "ok": Out(1),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        wait = Signal(8)
        began = Signal()
        m.d.comb += self.run.eq(self.runs_done)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.go):
                    m.d.sync += [self.seed.eq(self.seed0), self.runs_done.eq(0),
                                 wait.eq(self.idle), self.running.eq(1)]
                    m.next = "WAIT"
            with m.State("WAIT"):
                m.d.sync += wait.eq(wait - 1)
                with m.If(wait == 0):
                    m.next = "START"
            with m.State("START"):
                m.d.comb += self.start.eq(1)
                m.d.sync += [began.eq(self.began), self.waited.eq(1)]
                m.next = "RUN"
            with m.State("RUN"):
                m.d.sync += self.waited.eq(self.waited + 1)
                with m.If((began & self.finished) | (self.waited >= self.limit)):
                    m.next = "LOG"
            with m.State("LOG"):
                m.d.comb += [self.log_en.eq(1), self.ok.eq(began & self.finished)]
                m.d.sync += [self.runs_done.eq(self.runs_done + 1), self.seed.eq(self.seed + 1),
                             wait.eq(self.idle)]
                with m.If(self.runs_done + 1 >= self.count):
                    m.d.sync += self.running.eq(0)
                    m.next = "IDLE"
                with m.Else():
                    m.next = "WAIT"
        return m


def log_verilog() -> str:
    """The log module: one line of decimal :data:`LOG_FIELDS` per ``en`` cycle, flushed."""
    ports = ", ".join(f"input wire [{w - 1}:0] {name}" for name, w in LOG_FIELDS)
    names = ", ".join(name for name, _ in LOG_FIELDS)
    fmt = " ".join("%0d" for _ in LOG_FIELDS)
    return (f"module {LOG_MODULE}(input wire clk, input wire en, {ports});\n"
            f"  integer fd;\n"
            f"  initial fd = $fopen(\"{LOG_FILE}\", \"w\");\n"
            f"  always @(posedge clk) if (en) begin\n"
            f"    $fwrite(fd, \"{fmt}\\n\", {names});\n"
            f"    $fflush(fd);\n"
            f"  end\n"
            f"endmodule\n")
