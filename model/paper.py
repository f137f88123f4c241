"""The paper's published facts (docs/reference.md "Closed forms"), as data.

One source for everything that sets our runs beside the paper's: the
sweeps (Table 8), the reference run-tables (``pipegossip.waveforms``), the
report and the tests. The numbers live in ``paper_tables.json`` beside this
module, transcribed from docs/reference.md "Closed forms".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .config import RunConfig

__all__ = ["TITLE", "DATA_FILE", "PaperCase", "paper_cases", "TABLE8_N", "PAPER_TABLE8",
           "TABLE7", "TABLE9_ORDERED"]

TITLE = "The Algorithm of Pipelined Gossiping"
DATA_FILE = Path(__file__).with_name("paper_tables.json")


@dataclass(frozen=True)
class PaperCase:
    """A run-table the paper publishes and the model's semantics reproduce."""

    name: str  #: e.g. ``table1``
    paper: str  #: e.g. ``Table 1``
    config: RunConfig
    length: int  #: L as published
    utilization: tuple[int, ...]  #: as published


@cache
def _data() -> dict:
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


def _config(c: dict) -> RunConfig:
    return RunConfig.family(c["N"], c["order"], receive=c["receive"],
                            substitute=c["substitute"], sessions=c.get("sessions", 1))


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(u) for u in text.split())


@cache
def paper_cases() -> tuple[PaperCase, ...]:
    """Tables 1, 2, 4, 5, 6 and 9, in that order."""
    return tuple(PaperCase(c["name"], c["paper"], _config(c), c["L"], _ints(c["utilization"]))
                 for c in _data()["cases"])


_T8 = _data()["table8_paper"]

#: N of the paper's Table 8: 2, 4, ..., 2048.
TABLE8_N: tuple[int, ...] = tuple(_T8["N"])

#: The paper's Table 8 efficiencies in percent (identity + Algorithm 2, its own simulator).
PAPER_TABLE8: dict[int, float] = dict(zip(_T8["N"], _T8["efficiency_percent"]))

#: The paper's Table 7 (N = 8 of Table 8): its L and utilisation string.
TABLE7 = (_T8["table7_N8"]["L"], _ints(_T8["table7_N8"]["utilization"]))

#: docs/reference.md "Algorithm 2": Table 9's configuration under ``ordered`` instead of ``any``.
TABLE9_ORDERED = (_config(_data()["table9_ordered"]),
                  _ints(_data()["table9_ordered"]["utilization"]))
