"""Names the fast testbench shares with the fast top, in a module that imports nothing.

The testbench (:mod:`.testbench`) runs inside the simulator, where
every import is paid at each start-up; the hardware side
(:mod:`.checker`, :mod:`.batch`) needs Amaranth, NumPy and the
model. Both take these names from here, so the simulator's Python imports
only cocotb and this file.
"""

from __future__ import annotations

__all__ = ["SUMMARY_PORTS", "BATCH_PORTS", "LOG_FILE", "LOG_FIELDS", "parse_log",
           "batch_cycles"]

#: The top's outputs the testbench reads at the end of a run.
SUMMARY_PORTS = ("finished", "bad", "bad_cycle", "bad_proc", "bad_kinds", "deliveries",
                 "used_sum", "busy_cycles", "done_at", "idle_bad", "busy", "done", "stall")
#: The top's ports of the hardware batch driver (:mod:`.batch`).
BATCH_PORTS = ("go", "count", "idle", "batch_busy", "runs_done")
#: File the batch log writes (in the simulator's working folder).
LOG_FILE = "pg_summary.txt"
#: The fields of a log line, in order: the run's index in the batch, the
#: checker's summary (``finished`` is high only when the run was really
#: started and checked to its end), the fabric's final state, and the cycles
#: from the start cycle to the logging cycle (``waited``, as the per-run path counts them).
LOG_FIELDS = (("run", 32), ("finished", 1), ("bad", 1), ("bad_cycle", 32), ("bad_proc", 16),
              ("bad_kinds", 8), ("deliveries", 32), ("used_sum", 32), ("busy_cycles", 32),
              ("done_at", 32), ("idle_bad", 1), ("busy", 1), ("done", 1), ("stall", 1),
              ("waited", 32))


def batch_cycles(count: int, idle: int, span: int) -> int:
    """Clock cycles a batch of ``count`` fault-free runs takes (:mod:`.batch`)."""
    return count * (idle + 1 + 1 + span + 1)


def parse_log(text: str) -> list[dict]:
    """The log's lines as summary dictionaries (keys of :data:`LOG_FIELDS`)."""
    keys = [name for name, _ in LOG_FIELDS]
    out = []
    for line in text.splitlines():
        values = line.split()
        if len(values) != len(keys):
            raise ValueError(f"bad line in the fast-mode log: {line!r}")
        out.append(dict(zip(keys, map(int, values))))
    return out
