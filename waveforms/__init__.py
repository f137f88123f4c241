"""Waveforms and run-tables: read-back, comparison, references, viewing, reports.

* :func:`read_dump` turns a fabric's VCD/FST dump (Verilator via cocotb, or
  Amaranth's simulator) back into a docs/reference.md "Run-table text format" :class:`RunTable`;
* :func:`diff_tables` / :func:`format_diff` say where two run-tables part;
* :func:`reference_for` finds the paper's reference run-table of a
  configuration in ``waveforms/reference/`` (:func:`write_references`,
  :func:`check_references` keep them in step with the model);
* :func:`write_gtkw` writes a GTKWave save file and translate filters beside
  a dump (:func:`write_port_dump`, a ports-only copy, when GTKWave cannot
  parse the dump), :func:`write_golden_dump` the model's run as a dump;
* :mod:`.report` builds ``pipegossip report``'s HTML page.

Command line: ``pipegossip waves``, ``diff``, ``report``, ``references``
(:mod:`.cli`). Details and measurements: ``docs/waveforms.md``.
"""

from .diff import Difference, TableDiff, diff_tables, format_diff
from .dump import Dump, open_dump
from .golden import write_golden_dump
from .gtkw import write_gtkw
from .portdump import write_port_dump
from .readback import Readback, find_fabric, read_dump
from .reference import check_references, reference_for, write_references

__all__ = [
    "read_dump", "Readback", "find_fabric", "open_dump", "Dump",
    "diff_tables", "format_diff", "TableDiff", "Difference",
    "reference_for", "write_references", "check_references",
    "write_gtkw", "write_golden_dump", "write_port_dump",
]
