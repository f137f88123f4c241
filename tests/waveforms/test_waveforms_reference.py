"""The paper's reference run-tables in waveforms/reference/ stay what the model says."""

from __future__ import annotations

import pytest

from pipegossip.cli import main
from pipegossip.model import RunConfig, RunTable
from pipegossip.model.paper import paper_cases
from pipegossip.waveforms.reference import (REFERENCE_DIR, check_references, reference_filename,
                                            reference_for, render_reference, write_references)

CASES = paper_cases()


def test_every_case_has_a_file_and_regenerates_unchanged():
    assert {c.name for c in CASES} == {"table1", "table2", "table4", "table5", "table6", "table9"}
    assert check_references(CASES) == []
    for c in CASES:
        assert (REFERENCE_DIR / reference_filename(c)).read_text(encoding="utf-8") == render_reference(c)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_reference_header_and_published_utilisation(case):
    table = RunTable.read(REFERENCE_DIR / reference_filename(case))
    fields = table.header_fields()
    assert table.comments[0] == case.config.header()
    assert fields["reference"] == case.name
    assert fields["paper"] == case.paper.replace(" ", "-")
    assert "utilisation as published" in table.comments[2]
    assert tuple(int(u) for u in table.used) == case.utilization
    assert table.used.sum() == 2 * case.config.n * (case.config.n - 1) * case.config.sessions


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_reference_for_finds_each_configuration(case):
    assert reference_for(case.config) == REFERENCE_DIR / reference_filename(case)
    # Rebuilt from scratch, not the same object: equality is by value.
    again = RunConfig.from_json(case.config.to_json())
    assert reference_for(again) == REFERENCE_DIR / reference_filename(case)


def test_reference_for_other_configurations_is_none():
    assert reference_for(RunConfig.family(5, "pipelined")) is None
    assert reference_for(RunConfig.family(5, "identity", channels=1)) is None


def test_a_stale_file_is_detected(tmp_path):
    write_references(CASES, tmp_path)
    assert check_references(CASES, tmp_path) == []
    path = tmp_path / "table5.txt"
    path.write_text(path.read_text().replace("S1", "S2", 1))
    (tmp_path / "table9.txt").unlink()
    assert check_references(CASES, tmp_path) == ["table5", "table9"]


def test_cli_check_and_write(tmp_path, capsys):
    assert main(["references", "--check"]) == 0
    assert "6 of 6 reference run-tables up to date" in capsys.readouterr().out
    out = tmp_path / "refs"
    assert main(["references", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) \
        == sorted([".pipegossip-output"] + [reference_filename(c) for c in CASES])
    (out / "table1.txt").write_text("# pipegossip run-table v1\np0 S1\np1 R0\n")
    assert main(["references", "--check", "-o", str(out)]) == 1
    assert "stale or missing" in capsys.readouterr().out

