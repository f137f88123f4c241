"""An input is never its own output (issue 39, items 1 and 2).

``pipegossip/infra/files.py`` refuses, for every command, an output that is the
same file as one of the command's inputs: a file named on its command line
or read through the one input reader (``pipegossip.model.inputs``), also
through a symbolic or hard link, or as redirected standard input. Exit 2,
one line, the input untouched. Writing through a link to another file is
allowed. ``waves read --gtkw`` writes beside the dump only over files it
wrote itself.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pipegossip import cli
from pipegossip.infra.files import OutputError, OutputKind, atomic_directory, atomic_write
from pipegossip.model.schedules.ir import load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _one_line(err, *words):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], err
    assert "Traceback" not in err


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A schedule, an order file and a dump in the current folder."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["schedule", "one-factor", "--n", "8", "-o", "s.json"]) == 0
    shutil.copy(EXAMPLES / "orders-n5.json", "o.json")
    shutil.copy(EXAMPLES / "n5-identity.vcd", "d.vcd")
    os.symlink("s.json", "s-link.json")
    os.symlink("d.vcd", "d-link.vcd")
    os.link("o.json", "o-hard.json")
    return {name: Path(name).read_bytes() for name in ("s.json", "o.json", "d.vcd")}


CASES = {
    "program": ["hw", "program", "s.json", "-o", "s.json"],
    "program-hex": ["hw", "program", "s.json", "-o", "s.json", "--format", "hex"],
    "program-through-link": ["hw", "program", "s.json", "-o", "s-link.json"],
    "program-from-link": ["hw", "program", "s-link.json", "-o", "s.json"],
    "run-order": ["model", "run", "--order", "o.json", "-o", "o.json"],
    "run-hard-link": ["model", "run", "--order", "o.json", "-o", "o-hard.json"],
    "verilog-order": ["hw", "verilog", "--order", "o.json", "-o", "o.json"],
    "waves-read": ["waves", "read", "d.vcd", "-o", "d.vcd"],
    "waves-read-link": ["waves", "read", "d.vcd", "-o", "d-link.vcd"],
}


@pytest.mark.parametrize("argv", list(CASES.values()), ids=list(CASES))
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(files, capsys, argv):
    assert cli.main(argv) == 2
    _one_line(capsys.readouterr().err, "is an input of this command", "write the output elsewhere")
    for name, data in files.items():
        assert Path(name).read_bytes() == data, f"{name} was changed"
    assert os.path.islink("s-link.json") and os.path.islink("d-link.vcd")


def test_standard_input_redirected_from_the_output_is_refused(files, capsys, monkeypatch):
    with open("s.json", encoding="utf-8") as f:
        monkeypatch.setattr("sys.stdin", f)
        assert cli.main(["hw", "program", "-", "-o", "s.json"]) == 2
    _one_line(capsys.readouterr().err, "the file standard input reads")
    assert Path("s.json").read_bytes() == files["s.json"]


def test_writing_through_a_link_to_another_file_is_allowed(files, capsys):
    os.symlink("image.hex", "link.hex")
    assert cli.main(["hw", "program", "s.json", "-o", "link.hex"]) == 0
    assert os.path.islink("link.hex") and Path("image.hex").read_text().strip()


def test_an_input_read_by_the_command_is_guarded_without_being_named(tmp_path):
    """The reader's own record: an input no option names (read by a library call)."""
    from pipegossip.infra.files import guarding_inputs
    s = tmp_path / "s.json"
    assert cli.main(["schedule", "one-factor", "--n", "4", "-o", str(s)]) == 0
    before = s.read_bytes()
    with guarding_inputs():
        load(s)
        with pytest.raises(OutputError, match="is an input of this command"):
            atomic_write(s, "x")
        kind = OutputKind("test-kind")
        folder = tmp_path / "out"
        with atomic_directory(folder, kind) as tmp:
            (tmp / "a.txt").write_text("a\n")
        load_target = folder / "a.txt"
        shutil.copy(s, tmp_path / "t.json")
        os.replace(tmp_path / "t.json", load_target)
        load(load_target)
        with pytest.raises(OutputError, match="is an input of this command"):
            with atomic_directory(folder, kind) as tmp:
                (tmp / "a.txt").write_text("b\n")
        assert load_target.read_bytes() == before
    assert s.read_bytes() == before
    # Outside a command a library caller may rewrite what it read.
    load(s)
    atomic_write(s, before)


def _gtkw_run(capsys, *extra):
    status = cli.main(["waves", "read", "d.vcd", "--gtkw", *extra])
    return status, capsys.readouterr()


@pytest.mark.parametrize("name", ["d.gtkw", "d.action.txt", "d.slot.txt"])
def test_gtkw_never_replaces_a_file_of_the_users(files, capsys, name):
    Path(name).write_text("the user's own\n")
    status, out = _gtkw_run(capsys, "-o", "t.txt")
    assert status == 2
    _one_line(out.err, repr(name), "was not written by pipegossip")
    assert Path(name).read_text() == "the user's own\n"
    assert not Path("t.txt").exists(), "nothing is written when one output is refused"


def test_gtkw_replaces_its_own_files(files, capsys):
    assert _gtkw_run(capsys, "-o", "t.txt")[0] == 0
    first = {n: Path(n).read_bytes() for n in ("d.gtkw", "d.action.txt", "d.slot.txt")}
    assert _gtkw_run(capsys, "-o", "t.txt")[0] == 0
    assert {n: Path(n).read_bytes() for n in first} == first


def test_gtkw_and_output_on_one_file_is_refused(files, capsys):
    status, out = _gtkw_run(capsys, "-o", "d.gtkw")
    assert status == 2
    _one_line(out.err, "one of the files --gtkw writes")
    assert not Path("d.gtkw").exists()
