"""The paper's reference cases (tests/fixtures/paper_tables.json) as configurations."""

from __future__ import annotations

import json
from pathlib import Path

from pipegossip.model import RunConfig

FIXTURES = Path(__file__).parent / "fixtures"
DATA = json.loads((FIXTURES / "paper_tables.json").read_text())
CASES = DATA["cases"]


def case_config(case: dict) -> RunConfig:
    return RunConfig.family(case["N"], case["order"], receive=case["receive"],
                            substitute=case["substitute"], sessions=case["sessions"])


def utilization(case: dict) -> list[int]:
    return [int(x) for x in case["utilization"].split()]
