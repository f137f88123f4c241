"""``pipegossip report``: one self-contained page with what it promises."""

from __future__ import annotations

import base64
import re

import pytest

from pipegossip.cli import main
from pipegossip.model import ConfigError, RunConfig, RunResult, RunTable, simulate
from pipegossip.waveforms.golden import write_golden_dump
from pipegossip.waveforms.report import build_items, split_item_spec
from pipegossip.waveforms.sources import parse_config_spec


@pytest.fixture
def dumps(tmp_path):
    """A correct dump of n5 pipelined k=2 and a broken one of n5 identity."""
    good_cfg = RunConfig.family(5, "pipelined", sessions=2)
    good = write_golden_dump(simulate(good_cfg, table=True), tmp_path / "good.vcd")
    cfg = RunConfig.family(5, "identity")
    r = simulate(cfg, table=True)
    actions = r.table.actions.copy()
    assert actions[3, 9] == 2  # p3 receives (R2) in step 10 of Table 1 ...
    actions[3, 9] = 1          # ... and the broken fabric shows WR instead
    broken = RunResult(cfg, r.deliveries, r.utilization, RunTable(actions, r.table.peers))
    bad = write_golden_dump(broken, tmp_path / "bad.vcd")
    return good, bad


def _page(out):
    return (out / "report.html").read_text(encoding="utf-8")


def test_report_page_holds_every_section(tmp_path, dumps, capsys):
    good, bad = dumps
    out = tmp_path / "rep"
    status = main(["report", "table1", f"n=5,order=pipelined,sessions=2@{good}",
                   f"n=5,order=identity@{bad}", "n=8,order=identity,receive=any,substitute",
                   "-o", str(out), "--table8-max", "16"])
    assert status == 1  # one hardware verdict fails
    assert "1 hardware verdict(s) FAIL" in capsys.readouterr().out
    page = _page(out)
    assert sorted(p.name for p in out.iterdir()) == [".pipegossip-output", "report.html"]
    # Four sections, each with a run-table picture and a utilisation profile,
    # and the failing one also with the dump's run-table, differences marked.
    assert [int(k) for k in re.findall(r'<section id="item(\d+)">', page)] == [1, 2, 3, 4]
    sections = page.split("<section ")[1:]
    assert [x.count("<img ") for x in sections] == [2, 2, 3, 2, 0]
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 9
    assert all(base64.b64decode(img)[:8] == b"\x89PNG\r\n\x1a\n" for img in images)
    # Self-contained: no reference to anything outside the page.
    stripped = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    assert sorted(re.findall(r"(?:src|href)=\"([^\"]*)\"", stripped)) == [""] * 9 + [
        "#item1", "#item2", "#item3", "#item4", "#table8"]
    assert "http" not in stripped and "@import" not in stripped
    # Metrics and the paper reference.
    assert "Paper reference table1: run-table equal to waveforms/reference/table1.txt" in page
    assert "<th class=\"l\">L (steps)</th><td>18</td>" in page
    assert "closed form L = 10k + 2 (Table 6)</th><td>22</td>" in page
    # Verdicts: the good dump passes, the broken one fails at its slot.
    assert ("PASS: the dump shows the model&#x27;s run-table slot for slot and every delivery"
            in page)
    assert "FAIL: 2 slot(s) differ, first at step 10" in page
    assert "<tr><td>10</td><td>p3</td><td>R2</td><td>WR(2)</td></tr>" in page
    assert "<tr><td>10</td><td>used</td><td>2</td><td>1</td></tr>" in page
    assert "delivery__3__valid is high in cycle 10 but the processor shows WR" in page
    # Table 8 beside the paper's, N = 2 .. 16.
    t8 = page.split('<section id="table8">')[1]
    assert [int(n) for n in re.findall(r"<tr><td>(\d+)</td><td>", t8)] == [2, 4, 8, 16]
    assert "<td>18</td><td>77.78</td><td>73.68</td><td>+4.10</td>" in t8
    assert "stays at or above 2/3 for every N up to 16" in t8


def test_report_of_a_matching_dump_exits_zero(tmp_path, dumps):
    good, _ = dumps
    out = tmp_path / "ok"
    assert main(["report", f"n=5,order=pipelined,sessions=2@{good}", "-o", str(out),
                 "--no-table8"]) == 0
    page = _page(out)
    assert "Table 8" not in page and "hardware verdicts: 1 of 1 pass" in page


def test_a_dump_without_configuration_is_shown_without_verdict(tmp_path, dumps):
    good, _ = dumps
    (item,) = build_items([str(good)])
    assert item.verdict is None and item.source.kind == "dump"
    assert item.notes and "CONFIG@" in item.notes[0]


@pytest.mark.parametrize("spec, message", [
    ("n=5,order=identity,receive=sideways", "receive must be one of ordered, any"),
    ("n=5", "names no order"),
    ("order=identity", "names no n"),
    ("n=5,n=6,order=identity", "given twice"),
    ("n=5,order=identity@missing.vcd", "dump 'missing.vcd' does not exist"),
    ("n=5,order=identity,channels=3", "channels must be at most floor(N/2) = 2"),
    ("table77", "is not a file, a dump"),
])
def test_bad_sources_are_refused_and_nothing_is_written(tmp_path, capsys, spec, message):
    out = tmp_path / "never"
    assert main(["report", "table1", spec, "-o", str(out), "--no-table8"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "report item 2" in err and message in err
    assert not out.exists()


def test_config_spec_and_dump_suffix():
    cfg = parse_config_spec("n=6,order=random,seed=4,receive=any,substitute,sessions=2,channels=3")
    assert cfg == RunConfig.family(6, "random", 4, receive="any", substitute=True, sessions=2,
                                   channels=3)
    assert parse_config_spec("N=5,order=identity,substitute=off").substitute is False
    assert split_item_spec("n=5,order=identity@x/y.fst") == ("n=5,order=identity", "x/y.fst")
    assert split_item_spec("a@b.txt") == ("a@b.txt", None)
    with pytest.raises(ConfigError, match="substitute must be on or off"):
        parse_config_spec("n=5,order=identity,substitute=perhaps")


def test_report_never_writes_into_a_folder_of_the_users(tmp_path, capsys):
    """Hostile probe report/outdir-foreign-folder: report.html used to land
    beside the user's files (and replace their own report.html)."""
    out = tmp_path / "site"
    out.mkdir()
    (out / "report.html").write_text("the user's page")
    assert main(["report", "n=4,order=identity", "-o", str(out), "--no-table8"]) == 2
    assert "not written by pipegossip" in capsys.readouterr().err
    assert (out / "report.html").read_text() == "the user's page"
    # A folder pipegossip wrote is reused, and what else is in it stays.
    mine = tmp_path / "mine"
    assert main(["report", "n=4,order=identity", "-o", str(mine), "--no-table8"]) == 0
    (mine / "notes.txt").write_text("kept")
    assert main(["report", "n=4,order=pipelined", "-o", str(mine), "--no-table8"]) == 0
    assert (mine / "notes.txt").read_text() == "kept"
    assert "pipelined" in (mine / "report.html").read_text()
