"""The paper's reference cases (pipegossip.model.paper) in the shape tests use."""

from __future__ import annotations

from pipegossip.model.paper import paper_cases

CASES = paper_cases()
IDS = [c.name for c in CASES]
