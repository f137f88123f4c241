"""Reliability of the co-simulation runner: temporaries, the build cache, dumps, parallel runs.

* an interrupted build leaves no temporary folder, even when Ctrl-C reaches
  Python alone and the compilers make started keep running; what a killed
  process left behind is swept by the next command;
* a cache entry is reused only when its stamp carries its key, so folders
  swapped by hand are rebuilt;
* an interrupted waveform dump never replaces a good one, nor leaves its
  companions stale;
* two identical commands at once share the build and the dump folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipegossip.model import RunConfig
from pipegossip.sim.tools import build_cache
from pipegossip.sim.judge.fsm import judge
from pipegossip.sim.paths import build_root
from pipegossip.sim.fsm.runner import build, default_runs, generate_verilog, run_build
from pipegossip.sim.scratch import deferred_signals, owner_pid, scratch, sweep
from pipegossip.sim.waves import staged_dump


def _leftovers(folder: Path) -> list[str]:
    """Scratch folders (``.<name>.pid<N>.<random>``) anywhere under ``folder``."""
    return sorted(str(p) for p in Path(folder).rglob(".*") if owner_pid(p) is not None)


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _cli(*args: str, env: dict, **kwargs) -> subprocess.Popen:
    """``pipegossip ARGS`` in a child whose Ctrl-C raises KeyboardInterrupt as in a terminal."""
    return subprocess.Popen([sys.executable, "-m", "pipegossip", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            **kwargs)


def _wait_for(predicate, timeout: float, what: str, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the command ended before {what}: {proc.communicate()}")
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- temporaries ------------------------------------------------------------------------

def test_scratch_folder_goes_on_interrupt(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with scratch(tmp_path, "entry") as folder:
            assert owner_pid(folder) == os.getpid()
            (folder / "half.o").write_text("x")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_removal_stops_a_process_still_writing_in_the_folder(tmp_path):
    # What a compiler looks like after Ctrl-C killed only the make that started it.
    with pytest.raises(KeyboardInterrupt):
        with scratch(tmp_path, "entry") as folder:
            writer = subprocess.Popen(["sh", "-c", "while :; do touch f$$-$RANDOM; done"],
                                      cwd=folder)
            _wait_for(lambda: any(folder.iterdir()), 10, "the writer's first file")
            raise KeyboardInterrupt
    assert writer.wait(timeout=10) == -signal.SIGKILL
    time.sleep(0.2)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="Python delivers signals to the main thread only")
def test_a_signal_waits_for_the_end_of_a_clean_up():
    done = []
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with deferred_signals():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.1)
                done.append(True)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert done == [True]


def test_sweep_removes_what_dead_or_silent_owners_left(tmp_path):
    dead = tmp_path / f".n5-pipelined-ordered-w8-0123456789ab.pid{_dead_pid()}.abcd1234"
    legacy = tmp_path / ".n5-identity-ordered-w8-0123456789ab.k3j_x9z0"  # before PIDs
    silent = tmp_path / f".n6-identity-ordered-w8-0123456789ab.pid{os.getpid()}.zzzz0000"
    live = tmp_path / f".n7-identity-ordered-w8-0123456789ab.pid{os.getpid()}.yyyy0000"
    keep = [tmp_path / ".locks", tmp_path / "n5-pipelined-ordered-w8-0123456789ab", live]
    for folder in [dead, legacy, silent] + keep:
        folder.mkdir()
        (folder / "x.o").write_text("x")
    hours_ago = time.time() - 2 * 3600
    for folder in (legacy, silent):
        os.utime(folder / "x.o", (hours_ago, hours_ago))
        os.utime(folder, (hours_ago, hours_ago))
    assert sorted(sweep(tmp_path)) == sorted([dead, silent])
    assert legacy.exists(), "without a process id, only a folder the tool owns is swept"
    assert sweep(tmp_path, legacy=True) == [legacy]
    assert sorted(tmp_path.iterdir()) == sorted(keep)


def _verilator_ready():
    from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(f"Verilator is not usable here: {e}")


def test_ctrl_c_to_python_alone_during_a_build_leaves_no_temporary(tmp_path):
    _verilator_ready()
    root = tmp_path / "build"
    root.mkdir()
    stale = root / f".n3-identity-ordered-w8-0123456789ab.pid{_dead_pid()}.abcd1234"
    stale.mkdir()
    env = dict(os.environ, PIPEGOSSIP_BUILD_DIR=str(root))
    # A fresh build root: make also compiles Verilator's run-time library, so
    # the interrupt lands while several compilers run.
    proc = _cli("cosim", "--n", "3", "--order", "pipelined", "--quiet", env=env)
    makefile = _wait_for(lambda: next(root.glob(f".n3-*.pid{proc.pid}.*/Vtop.mk"), None),
                         120, "make to start", proc)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert not makefile.parent.exists()
    assert not stale.exists(), "the stale temporary of a dead process is swept at start"
    time.sleep(1.0)  # a surviving compiler would write its object by now
    assert _leftovers(root) == []
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == [".locks"]


# -- the build cache ---------------------------------------------------------------------

def test_is_valid_needs_a_stamp_with_the_key(tmp_path):
    assert not build_cache.is_valid(tmp_path / "missing", "abc")
    assert not build_cache.is_valid(tmp_path, "abc")  # no stamp
    build_cache.stamp(tmp_path, "abc", dict(width=8))
    assert build_cache.is_valid(tmp_path, "abc")
    assert not build_cache.is_valid(tmp_path, "abd")
    (tmp_path / build_cache.STAMP).write_text("{half")
    assert not build_cache.is_valid(tmp_path, "abc")


def test_cache_folders_swapped_by_hand_are_rebuilt(tmp_path):
    _verilator_ready()
    a, b = RunConfig.family(3, "pipelined"), RunConfig.family(3, "identity")
    built_a, built_b = build(a, 8, root=tmp_path), build(b, 8, root=tmp_path)
    assert build(a, 8, root=tmp_path).reused
    # Swap the two entries' folders.
    aside = tmp_path / "aside"
    built_a.directory.rename(aside)
    built_b.directory.rename(built_a.directory)
    aside.rename(built_b.directory)

    again = build(a, 8, root=tmp_path)
    assert not again.reused and again.directory == built_a.directory
    assert again.verilog.read_text() == generate_verilog(a, 8) != generate_verilog(b, 8)
    (run,) = run_build(again, default_runs(a))
    assert judge(a, 8, run).match
    assert _leftovers(tmp_path) == []


# -- waveform dumps -----------------------------------------------------------------------

def _good_dump(folder: Path) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {"x.vcd": "good dump", "x.gtkw": f'[dumpfile] "{folder}/x.vcd"\n',
             "x.ports.vcd": "good ports", "x.action.txt": "0 -\n", "x.slot.txt": "0 -\n"}
    for name, text in files.items():
        (folder / name).write_text(text)
    return files


def test_an_interrupted_dump_keeps_the_good_one_and_its_companions(tmp_path):
    folder = tmp_path / "dumps"
    files = _good_dump(folder)
    with pytest.raises(KeyboardInterrupt):
        with staged_dump(folder / "x.vcd") as staged:
            staged.write_text("trunc")
            staged.with_suffix(".gtkw").write_text("new save file")
            raise KeyboardInterrupt
    assert {p.name: p.read_text() for p in folder.iterdir()} == files


def test_a_finished_dump_replaces_the_old_one_and_its_stale_companions(tmp_path):
    folder = tmp_path / "dumps"
    _good_dump(folder)
    with staged_dump(folder / "x.vcd") as staged:
        assert staged.parent.parent == folder.resolve() and staged.name == "x.vcd"
        staged.write_text("new dump")
        staged.with_suffix(".gtkw").write_text(f'[dumpfile] "{staged}"\n')
        (staged.parent / "x.action.txt").write_text("new filter")
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        "x.vcd": "new dump", "x.gtkw": f'[dumpfile] "{folder.resolve()}/x.vcd"\n',
        "x.action.txt": "new filter"}  # the old .ports.vcd and .slot.txt described the old dump


def test_ctrl_c_during_a_long_dump_keeps_the_earlier_dump(tmp_path):
    _verilator_ready()
    env = dict(os.environ, PIPEGOSSIP_WAVES_DIR=str(tmp_path))
    env.pop("PIPEGOSSIP_WAVES", None)
    args = ("cosim", "--n", "8", "--order", "pipelined", "--waves", "--quiet")
    first = _cli(*args, env=env)
    _, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    folder = tmp_path / "n8-pipelined-ordered"
    before = {p.name: _digest(p) for p in folder.iterdir()}
    assert {"n8-pipelined-ordered-w8.vcd", "n8-pipelined-ordered-w8.gtkw"} <= set(before)

    # Ctrl-C in a terminal reaches the whole process group, simulator included.
    second = _cli(*args, "--runs", "20000", env=env, start_new_session=True)
    _wait_for(lambda: any(p.stat().st_size > 0 for p in folder.glob(".*.pid*/**/*.vcd")),
              300, "the new dump to grow", second)
    time.sleep(1.0)
    os.killpg(second.pid, signal.SIGINT)
    _, err = second.communicate(timeout=120)
    assert second.returncode == 130, err
    assert {p.name: _digest(p) for p in folder.iterdir()} == before


# -- two identical commands at once ----------------------------------------------------

def test_concurrent_identical_commands_share_build_and_dump(tmp_path):
    _verilator_ready()
    root = tmp_path / "build"
    shared = build_root() / "_runtime"
    if shared.is_dir():  # spare this test compiling Verilator's run-time library
        shutil.copytree(shared, root / "_runtime")
    env = dict(os.environ, PIPEGOSSIP_BUILD_DIR=str(root),
               PIPEGOSSIP_WAVES_DIR=str(tmp_path / "dumps"))
    args = ("cosim", "--n", "3", "--order", "identity", "--waves", "--format", "json",
            "--quiet")
    procs = [_cli(*args, env=env) for _ in range(2)]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        outs.append(json.loads(out))
    assert all(o["match"] for o in outs)
    assert sorted(o["build_reused"] for o in outs) == [False, True], "built once, then shared"
    assert outs[0]["build_dir"] == outs[1]["build_dir"]
    assert outs[0]["waveform"] == outs[1]["waveform"]
    dump = Path(outs[0]["waveform"])
    assert dump.read_text().count("$enddefinitions") == 1
    assert _leftovers(tmp_path) == []
    assert list((Path(outs[0]["build_dir"]) / "runs").iterdir()) == []
