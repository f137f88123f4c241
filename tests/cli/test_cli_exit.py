"""Exit statuses that mean one thing, and outputs that never destroy user files.

Regression tests for the reliability report: each case names its row there.
"""

import os
import stat
import subprocess
import sys

import pytest

from pipegossip import cli
from pipegossip.infra.files import MARKER

PG = [sys.executable, "-m", "pipegossip"]


def pg(*args, cwd=None, **kw):
    return subprocess.run([*PG, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          **kw)


def test_demo_refuses_a_folder_with_foreign_files(tmp_path):
    """Row 1: `demo -o k` used to delete k/thesis.tex."""
    k = tmp_path / "k"
    k.mkdir()
    (k / "thesis.tex").write_text("x")
    r = pg("demo", "--n", "4", "--order", "identity", "-o", str(k))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "not written by pipegossip" in r.stderr
    assert sorted(p.name for p in k.iterdir()) == ["thesis.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]


def test_demo_refuses_the_current_folder_with_foreign_files(tmp_path):
    """Row 2: `demo -o .` used to delete everything in the current folder."""
    (tmp_path / "keep.txt").write_text("x")
    r = pg("demo", "--n", "4", "--order", "identity", "-o", ".", cwd=tmp_path)
    assert r.returncode == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_run_writes_through_a_symlink(tmp_path):
    """Row 3: the link used to be replaced by a regular file."""
    (tmp_path / "t.txt").write_text("old")
    (tmp_path / "a.txt").symlink_to("t.txt")
    r = pg("run", "--n", "4", "--order", "identity", "-o", "a.txt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a.txt").is_symlink()
    assert (tmp_path / "t.txt").read_text().startswith("# pipegossip run-table")


def test_run_into_a_device_keeps_the_device():
    """Row 3: /dev/null used to be replaced by a regular file (as root)."""
    r = pg("run", "--n", "4", "--order", "identity", "-o", os.devnull)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_run_to_stdout_dash():
    r = pg("run", "--n", "4", "--order", "identity", "-o", "-")
    assert r.returncode == 0 and r.stdout.startswith("# pipegossip run-table")


def test_trailing_slash_means_a_folder(tmp_path):
    """Row 19: `-o out/` used to write a regular file named out."""
    r = pg("run", "--n", "4", "--order", "identity", "-o", "out/", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr == "pipegossip run: error: 'out/' names a folder; give a file name\n"
    assert list(tmp_path.iterdir()) == []


def test_existing_folder_named_by_the_users_path(tmp_path):
    """Row 20: the message used to name the temporary file."""
    (tmp_path / "d").mkdir()
    r = pg("run", "--n", "4", "--order", "identity", "-o", "d", cwd=tmp_path)
    assert r.returncode == 2
    assert "'d' is a folder" in r.stderr and ".tmp" not in r.stderr


def test_closed_stdout_is_a_quiet_output_failure():
    """Row 16: a closed stdout used to end in an AttributeError traceback."""
    r = subprocess.run([*PG, "run", "--n", "4", "--order", "identity"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=60,
                       preexec_fn=lambda: os.close(1))
    assert r.returncode == cli.EXIT_OUTPUT
    assert "Traceback" not in r.stderr


def test_full_disk_is_one_line_and_not_the_usage_status():
    """Row 16: `> /dev/full` used to exit 2, the bad-input status."""
    with open("/dev/full", "w") as full:
        r = subprocess.run([*PG, "run", "--n", "4", "--order", "identity"], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == cli.EXIT_OUTPUT
    assert r.stderr.count("\n") == 1 and "No space left" in r.stderr


def test_internal_error_is_not_a_verdict(monkeypatch, capsys):
    """Exit 1 means a verdict; a crash gets its own status and one line."""
    import pipegossip.cli.model as model_cli

    def broken(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(model_cli, "simulate", broken)
    assert cli.main(["run", "--n", "4", "--order", "identity"]) == cli.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err == ("pipegossip run: internal error: RuntimeError: boom "
                   "(please report it; --debug shows the traceback)\n")
    assert cli.main(["--debug", "run", "--n", "4", "--order", "identity"]) == cli.EXIT_INTERNAL
    assert "Traceback" in capsys.readouterr().err


def test_usage_errors_share_one_style(capsys):
    assert cli.main(["run", "--n", "x", "--order", "identity"]) == cli.EXIT_USAGE
    assert capsys.readouterr().err.startswith("pipegossip run: error: ")
    assert cli.main(["run", "--n", "1", "--order", "identity"]) == cli.EXIT_USAGE
    assert capsys.readouterr().err.startswith("pipegossip run: error: ")


def test_marker_lists_what_the_tool_wrote(tmp_path):
    from pipegossip.infra.files import OutputKind, atomic_directory

    with atomic_directory(tmp_path / "o", OutputKind("demo")) as d:
        (d / "x.txt").write_text("1")
    assert (tmp_path / "o" / MARKER).read_text().strip() \
        == '{"command": "demo", "entries": ["x.txt"]}'


@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_interrupted_write_leaves_the_previous_file(tmp_path, sig):
    """Rows 4 and 6 in miniature: a signal mid-write keeps the old file, no temporaries."""
    target = tmp_path / "out.txt"
    target.write_text("previous")
    code = (
        "import os, signal, sys\n"
        "from pipegossip import cli\n"
        "import pipegossip.infra.files as f\n"
        "real = os.replace\n"
        "def slow(a, b):\n"
        f"    os.kill(os.getpid(), signal.SIG{sig})\n"
        "    real(a, b)\n"
        "f.os.replace = slow\n"
        f"sys.exit(cli.main(['run', '--n', '4', '--order', 'identity', '-o', {str(target)!r}]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == (cli.EXIT_INTERRUPTED if sig == "INT" else cli.EXIT_TERMINATED), r.stderr
    assert target.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_unusable_home_falls_back_to_a_private_tool_cache(tmp_path):
    """Row 17: HOME=/nonexistent used to end in a traceback from Yosys' cache."""
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "YOWASP_CACHE_DIR")}
    env["HOME"] = "/dev/null/home"  # under a file: nothing can be created there, even by root
    r = subprocess.run([*PG, "verilog", "--n", "4", "--order", "identity", "-o",
                        str(tmp_path / "f.v")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "module pipegossip_fabric" in (tmp_path / "f.v").read_text()


def _golden_dump(path):
    from pipegossip.model import RunConfig, simulate
    from pipegossip.waveforms.golden import write_golden_dump

    return write_golden_dump(simulate(RunConfig.family(4, "identity"), table=True), path)


def test_waves_checks_every_output_before_writing(tmp_path):
    """Row 5: out.txt used to be written before the .gtkw beside the dump was refused."""
    _golden_dump(tmp_path / "x.vcd")
    (tmp_path / "x.gtkw").mkdir()  # the save file's place is taken by a folder
    r = pg("waves", "x.vcd", "--gtkw", "-o", "out.txt", cwd=tmp_path)
    assert r.returncode == 2 and "'x.gtkw' is a folder" in r.stderr
    assert not (tmp_path / "out.txt").exists()


@pytest.mark.parametrize("make", ["folder", "fifo"])
def test_waves_names_what_is_wrong_with_the_dump(tmp_path, make):
    """Row 20: a folder or FIFO used to read as 'no such dump file' (or hang)."""
    target = tmp_path / "d.vcd"
    target.mkdir() if make == "folder" else os.mkfifo(target)
    r = pg("waves", "d.vcd", cwd=tmp_path)
    assert r.returncode == 2
    assert ("is a folder" if make == "folder" else "not a regular file") in r.stderr


def test_report_refuses_a_huge_table8_at_once(tmp_path):
    """Row 13: --table8-max 100000000 used to run without limit (now a power of two:
    a size between two is refused, tests/test_refused_inputs.py)."""
    r = pg("report", "n=4,order=identity", "-o", "rep", "--table8-max", str(1 << 27),
           cwd=tmp_path)
    assert r.returncode == 2 and "PIPEGOSSIP_MAX_MEMORY" in r.stderr
    assert list(tmp_path.iterdir()) == []


# -- issue 19: the re-run of the hostile probes (tools/hostile_probes.py) ----------------

@pytest.mark.parametrize("argv, message", [
    # run-table cells known before the metrics run (it used to take ~10 s first)
    (["run", "--n", "3000", "--order", "pipelined"], "L at least 8997"),
    (["run", "--n", "2000", "--order", "identity"], "run-table"),
    # an N x N order of N=100,000 used to be built before any budget (a hang)
    (["cosim-sweep", "--n", "100000", "--workers", "0"], "needs about"),
    # nan / inf / negative used to crash (exit 3) or skip every size (exit 0)
    (["schedule-bench", "--sizes", "4", "--limit-gib", "nan"], "--limit-gib"),
    (["schedule-bench", "--sizes", "4", "--limit-gib", "-1"], "--limit-gib"),
    (["schedule-table", "--sizes", ""], "--sizes"),
    (["short-messages-search", "--n", "4", "--p", "1", "--time-limit", "inf"], "--time-limit"),
    (["short-messages-search", "--n", "4", "--p", "1", "--time-limit", "0"], "--time-limit"),
    # /proc accepts os.access(W_OK) from root but no new file
    (["run", "--n", "4", "--order", "identity", "-o", "/proc/pipegossip-x.txt"],
     "not writable"),
    (["report", "n=4,order=identity", "--no-table8", "-o", "/proc/pipegossip-x"],
     "not writable"),
    (["verilog", "--n", "4", "--order", "identity", "--name", "module"], "keyword"),
])
def test_hostile_probe_regressions(tmp_path, capsys, monkeypatch, argv, message):
    import time
    monkeypatch.chdir(tmp_path)
    t0 = time.monotonic()
    assert cli.main(argv) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err, err
    assert time.monotonic() - t0 < 10, "refused before the work, not after"
    assert list(tmp_path.iterdir()) == []


def test_references_check_needs_a_folder(tmp_path, capsys):
    """--check -o FILE used to say 'stale' (exit 1) about a path that is no folder."""
    (tmp_path / "afile").write_text("x")
    for where in (tmp_path / "afile", tmp_path / "missing", "/dev/null"):
        assert cli.main(["references", "--check", "-o", str(where)]) == cli.EXIT_USAGE
        assert "is not a folder" in capsys.readouterr().err


def test_sigterm_while_a_tool_fails_first_still_exits_143(monkeypatch, capsys):
    """Hostile probe: SIGTERM to the group killed the C++ compiler, the build
    failure was reported first and the command exited 3 (a tool failure)."""
    def killed_build(args):
        try:
            cli._terminate(None, None)  # the handler, as the signal would run it
        except SystemExit:
            pass  # swallowed by a tool runner, as cocotb's does on a failed command
        return 3
    monkeypatch.setattr("pipegossip.cli.hw.cmd_verilog", killed_build)
    monkeypatch.setattr(cli, "_terminated", cli.threading.Event())
    assert cli.main(["verilog", "--n", "4", "--order", "identity"]) == 143
    assert capsys.readouterr().err.strip().endswith("terminated")
