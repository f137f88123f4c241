import dis
import os
import sys
import stat

import pytest

from pipegossip.infra import files
from pipegossip.infra.files import MARKER, OutputError, OutputKind, atomic_directory, atomic_write

KIND = OutputKind("demo")


def test_atomic_write_gives_normal_permissions_and_leaves_no_temp(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic_write(tmp_path / "a.txt", "hello")
        assert path.read_text() == "hello"
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    finally:
        os.umask(old)
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_atomic_write_creates_missing_folders(tmp_path):
    atomic_write(tmp_path / "out" / "sub" / "a.txt", b"x")
    assert (tmp_path / "out" / "sub" / "a.txt").read_bytes() == b"x"


def test_atomic_write_under_a_file_refuses(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is not a folder"):
        atomic_write(tmp_path / "f" / "a.txt", b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_atomic_directory_replaces_only_on_success(tmp_path):
    target = tmp_path / "out"
    with atomic_directory(target, KIND) as d:
        (d / "f").write_text("1")
    assert (target / "f").read_text() == "1"
    with pytest.raises(RuntimeError):
        with atomic_directory(target, KIND) as d:
            (d / "f").write_text("2")
            raise RuntimeError("boom")
    assert (target / "f").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]

    assert sorted(p.name for p in target.iterdir()) == [MARKER, "f"]


def test_atomic_directory_never_deletes_foreign_files(tmp_path):
    """A folder holding a file the tool did not write is refused, untouched."""
    target = tmp_path / "k"
    target.mkdir()
    (target / "thesis.tex").write_text("x")
    with pytest.raises(OutputError, match="not empty and was not written by pipegossip"):
        with atomic_directory(target, KIND) as d:
            (d / "f").write_text("1")
    assert sorted(p.name for p in target.iterdir()) == ["thesis.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]


def test_atomic_directory_into_current_folder_keeps_other_entries(tmp_path, monkeypatch):
    """`-o .` in an empty folder works, and a second run replaces only its own files."""
    monkeypatch.chdir(tmp_path)
    with atomic_directory(".", KIND) as d:
        (d / "a").write_text("1")
        (d / "b").write_text("1")
    # The user adds a file afterwards; it survives the next run.
    (tmp_path / "mine.txt").write_text("keep")
    with atomic_directory(".", KIND) as d:
        (d / "a").write_text("2")
    assert sorted(p.name for p in tmp_path.iterdir()) == [MARKER, "a", "mine.txt"]
    assert (tmp_path / "a").read_text() == "2"
    assert (tmp_path / "mine.txt").read_text() == "keep"


def test_atomic_write_follows_symlinks(tmp_path):
    (tmp_path / "t.v").write_text("old")
    (tmp_path / "a.v").symlink_to("t.v")
    atomic_write(tmp_path / "a.v", "new")
    assert (tmp_path / "a.v").is_symlink()
    assert (tmp_path / "t.v").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.v", "t.v"]


def test_atomic_write_keeps_devices_and_pipes(tmp_path):
    atomic_write(os.devnull, "x")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "f.v"
    os.mkfifo(fifo)
    got = []
    import threading
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic_write(fifo, "through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_atomic_write_to_stdout(capsys):
    atomic_write("-", "to stdout\n")
    assert capsys.readouterr().out == "to stdout\n"


@pytest.mark.parametrize("name", ["out/", "existing"])
def test_atomic_write_refuses_folders_with_the_users_path(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing").mkdir()
    with pytest.raises(OutputError) as e:
        atomic_write(name, "x")
    assert repr(name) in str(e.value)
    assert ".tmp" not in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]


def test_failed_write_leaves_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("previous")

    with pytest.raises(TypeError):
        atomic_write(path, 12345)  # not text or bytes: fails mid-write
    assert path.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


_NOP = dis.opmap["NOP"]


def _interrupt_at(k: int, call):
    """Run ``call`` with a KeyboardInterrupt raised at its k-th bytecode in files.py.

    What a Ctrl-C does: Python runs the signal handler between two bytecodes
    of whatever frame is executing, and the handler raises. Tracing opcodes
    puts the raise at every such point in turn, so no window is left to luck
    (a sweep that writes its table many times a second once left a
    temporary file behind, on one CI run in three). Returns whether the
    interrupt fired.
    """
    target = files.__file__
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != target:
            return None
        frame.f_trace_opcodes = True
        # A NOP marks where a `try` starts; CPython never runs a signal
        # handler there (only at calls, function entries and backward
        # jumps), and a raise from tracing at it escapes the enclosing try.
        if event == "opcode" and frame.f_code.co_code[frame.f_lasti] != _NOP:
            count += 1
            if count == k:
                raise KeyboardInterrupt
        return trace

    sys.settrace(trace)
    try:
        call()
    except KeyboardInterrupt:
        return True
    finally:
        sys.settrace(None)
    return False


@pytest.mark.parametrize("what", ["file", "file over an old one", "folder", "folder check"])
def test_an_interrupt_at_any_bytecode_leaves_no_temporary(tmp_path, what):
    kind = files.OutputKind("demo")
    work = tmp_path / "work"
    work.mkdir()
    target = work / "table.jsonl"
    if what == "file over an old one":
        target.write_text("old\n")

    def call():
        if what.startswith("file"):
            files.atomic_write(target, "new\n")
        elif what == "folder":
            with files.atomic_directory(work / "out", kind) as d:
                (d / "a.txt").write_text("a")
        else:
            files.check_output_file(work / "sub" / "x.txt")

    fired = 0
    for k in range(1, 5000):
        if not _interrupt_at(k, call):
            break
        fired += 1
        left = sorted(p.name for p in work.rglob("*") if p.name.endswith(".tmp"))
        assert left == [], f"interrupt at bytecode {k} left {left}"
        if what.startswith("file") and target.exists():
            assert target.read_text() in ({"new\n", "old\n"} if "old" in what else {"new\n"})
    else:
        pytest.fail("the write never finished without an interrupt")
    assert fired > 20  # the interrupts really landed inside the writer
