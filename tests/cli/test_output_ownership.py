"""Each command replaces only its own output folder (issue 25, data loss).

The marker of ``pipegossip/infra/files.py`` records which command wrote a folder;
another command's folder, an unmarked one or an old marker that is not
recognisably the command's own is refused, exit 2, nothing deleted.
"""

from __future__ import annotations

import json

import pytest

from pipegossip import cli
from pipegossip.infra.files import MARKER, OutputError, OutputKind, atomic_directory, mark_output_dir
from pipegossip.hw.fpga.outputs import FPGA_OUTPUT, check_output_dir as fpga_check_output_dir
from pipegossip.cli.sim import DEMO_OUTPUT
from pipegossip.sweeps.store import ResultStore
from pipegossip.waveforms.reference import REFERENCE_DIR

DEMO_FILES = ("n8-pipelined-w8.v", "n8-pipelined-w8.vcd", "n8-pipelined-w8.gtkw",
              "model.runtable.txt", "hardware.runtable.txt", "utilization.png")


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _demo_folder(path, legacy=False):
    """A demo output as `pipegossip demo` leaves it (legacy: an old list marker)."""
    with atomic_directory(path, DEMO_OUTPUT) as tmp:
        for name in DEMO_FILES:
            (tmp / name).write_text(f"demo {name}\n")
    if legacy:
        (path / MARKER).write_text(json.dumps(sorted(DEMO_FILES)) + "\n")
    (path / "note.txt").write_text("the user's note\n")
    return _snapshot(path)


def _fpga_folder(path, legacy=False):
    with atomic_directory(path, FPGA_OUTPUT) as tmp:
        (tmp / "report.json").write_text(json.dumps({"tool": "pipegossip fpga"}))
        (tmp / "top.asc").write_text("bitstream\n")
    if legacy:
        (path / MARKER).write_text(json.dumps(["report.json", "top.asc"]) + "\n")
    return _snapshot(path)


def _one_line(err, *words):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("legacy", [False, True], ids=["marker", "old-list-marker"])
def test_report_onto_a_demo_folder_is_refused_and_nothing_deleted(tmp_path, capsys, legacy):
    d1 = tmp_path / "d1"
    before = _demo_folder(d1, legacy)
    code = cli.main(["report", "table1", "--no-table8", "--quiet", "-o", str(d1)])
    assert code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    _one_line(err, str(d1), "choose a new or empty folder")
    if not legacy:
        assert "`pipegossip demo`" in err
    assert _snapshot(d1) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d1"]  # no temporary left


@pytest.mark.parametrize("legacy", [False, True], ids=["marker", "old-list-marker"])
def test_sweep_report_onto_an_fpga_folder_is_refused(tmp_path, capsys, legacy):
    ResultStore(tmp_path / "store")
    d2 = tmp_path / "d2"
    before = _fpga_folder(d2, legacy)
    assert cli.main(["sweep-report", str(tmp_path / "store"), "-o", str(d2)]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    _one_line(err, str(d2))
    if not legacy:
        assert "`pipegossip fpga`" in err
    assert _snapshot(d2) == before


def test_fpga_refuses_a_report_folder_and_a_sweep_report_folder(tmp_path):
    ResultStore(tmp_path / "store")
    assert cli.main(["sweep-report", str(tmp_path / "store"), "-o", str(tmp_path / "s")]) == 0
    assert cli.main(["report", "table1", "--no-table8", "--quiet", "-o",
                     str(tmp_path / "r")]) == 0
    for folder, owner in ((tmp_path / "s", "sweep-report"), (tmp_path / "r", "report")):
        with pytest.raises(ValueError, match=f"`pipegossip {owner}`"):
            fpga_check_output_dir(folder)


def test_references_never_overwrite_a_users_file(tmp_path, capsys):
    userdir = tmp_path / "userdir"
    userdir.mkdir()
    (userdir / "table1.txt").write_text("my own table 1\n")
    assert cli.main(["references", "-o", str(userdir)]) == cli.EXIT_USAGE
    _one_line(capsys.readouterr().err, str(userdir))
    assert _snapshot(userdir) == {"table1.txt": b"my own table 1\n"}


def test_references_refuse_another_commands_folder(tmp_path, capsys):
    before = _demo_folder(tmp_path / "d", legacy=False)
    assert cli.main(["references", "-o", str(tmp_path / "d")]) == cli.EXIT_USAGE
    assert "`pipegossip demo`" in capsys.readouterr().err
    assert _snapshot(tmp_path / "d") == before


def test_references_rerun_and_recognise_an_unmarked_copy(tmp_path, capsys):
    refs = tmp_path / "refs"
    assert cli.main(["references", "-o", str(refs)]) == 0
    assert json.loads((refs / MARKER).read_text())["command"] == "references"
    assert cli.main(["references", "-o", str(refs)]) == 0
    # A copy of the shipped folder (no marker): its files carry their generator line.
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in REFERENCE_DIR.glob("*.txt"):
        (copy / path.name).write_bytes(path.read_bytes())
    assert cli.main(["references", "-o", str(copy)]) == 0
    # ... but one file of the user's among them makes it the user's folder.
    (copy / MARKER).unlink()
    (copy / "mine.txt").write_text("x\n")
    assert cli.main(["references", "-o", str(copy)]) == cli.EXIT_USAGE
    assert (copy / "mine.txt").read_text() == "x\n"


def test_each_command_rerun_onto_its_own_folder_works(tmp_path, capsys):
    rep = tmp_path / "rep"
    for _ in range(2):
        assert cli.main(["report", "table1", "--no-table8", "--quiet", "-o", str(rep)]) == 0
    (rep / "note.txt").write_text("kept\n")
    assert cli.main(["report", "table1", "--no-table8", "--quiet", "-o", str(rep)]) == 0
    assert (rep / "note.txt").read_text() == "kept\n"
    ResultStore(tmp_path / "store")
    for _ in range(2):
        assert cli.main(["sweep-report", str(tmp_path / "store"), "-o", str(tmp_path / "s")]) == 0
    assert cli.main(["sweep-report", str(tmp_path / "store")]) == 0  # STORE/report
    assert cli.main(["sweep-report", str(tmp_path / "store")]) == 0
    assert json.loads((tmp_path / "s" / MARKER).read_text())["command"] == "sweep-report"


def test_an_old_marker_of_the_same_command_is_taken_over(tmp_path, capsys):
    """Folders of earlier versions (list markers) stay usable by the command that wrote them."""
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "report.html").write_text("old")
    (rep / MARKER).write_text('["report.html"]\n')
    assert cli.main(["report", "table1", "--no-table8", "--quiet", "-o", str(rep)]) == 0
    assert "old" != (rep / "report.html").read_text()
    assert json.loads((rep / MARKER).read_text()) == {"command": "report",
                                                       "entries": ["report.html"]}
    _demo_folder(tmp_path / "d", legacy=True)
    with atomic_directory(tmp_path / "d", DEMO_OUTPUT) as tmp:
        (tmp / "model.runtable.txt").write_text("new")
    assert (tmp_path / "d" / "note.txt").exists()
    # An fpga output of an older version (report tagged, list marker) too.
    _fpga_folder(tmp_path / "f", legacy=True)
    assert fpga_check_output_dir(tmp_path / "f") == tmp_path / "f"


@pytest.mark.parametrize("marker", ['{"command": "../../x", "entries": []}', "{not json",
                                    '{"command": 5}', '"demo"'])
def test_a_tampered_marker_is_refused(tmp_path, marker):
    folder = tmp_path / "o"
    folder.mkdir()
    (folder / "model.runtable.txt").write_text("x")
    (folder / MARKER).write_text(marker)
    with pytest.raises(OutputError, match="unreadable"):
        with atomic_directory(folder, DEMO_OUTPUT):
            pass
    assert (folder / "model.runtable.txt").read_text() == "x"


def test_a_listed_name_is_replaced_but_an_unlisted_file_of_the_same_name_is_not(tmp_path):
    kind = OutputKind("report")
    with atomic_directory(tmp_path / "o", kind) as tmp:
        (tmp / "a.txt").write_text("1")
    (tmp_path / "o" / "b.txt").write_text("the user's")
    with pytest.raises(OutputError, match="b.txt' exists and was not written by"):
        with atomic_directory(tmp_path / "o", kind) as tmp:
            (tmp / "a.txt").write_text("2")
            (tmp / "b.txt").write_text("2")
    assert (tmp_path / "o" / "a.txt").read_text() == "1"
    assert (tmp_path / "o" / "b.txt").read_text() == "the user's"


def test_mark_output_dir_records_the_command(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "sweep.csv").write_text("x")
    mark_output_dir(tmp_path / "o", ["sweep.csv"], OutputKind("fpga-sweep"))
    with pytest.raises(OutputError, match="`pipegossip fpga-sweep`, not of `pipegossip demo`"):
        with atomic_directory(tmp_path / "o", DEMO_OUTPUT):
            pass
