"""dev.py mutate ends a mutant's tests whole: the test command and what it started.

The harness is tools/dev_mutate.py (run by dev.py); the wrapper runs as cosmic-ray
runs it, ``python3 dev.py _mutant-tests ...``.

An endless mutant's tests that spawn a sleeping grandchild are stopped at the
per-mutant timeout, when cosmic-ray is stopped (``--max-seconds``), and when
the wrapper's parent goes away; afterwards no process of theirs is left.
(Last session, pytest processes of stopped runs went on for 30-90 minutes.)
"""

import importlib.util
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: A command whose child sleeps in the background, each pid written to PIDS first.
SPAWNER = ("import subprocess, sys, time\n"
           "kid = subprocess.Popen(['sleep', '600'])\n"
           "open(sys.argv[1], 'a').write(f'{kid.pid}\\n')\n"
           "open(sys.argv[1], 'a').write(f'{__import__(\"os\").getpid()}\\n')\n"
           "time.sleep(600)\n")


def _harness():
    spec = importlib.util.spec_from_file_location("dev_mutate_under_test", ROOT / "tools" / "dev_mutate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _running(pid: int) -> bool:
    """Alive and not a zombie (this machine's init may never reap them)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _pids(path: Path, want: int, seconds: float = 60.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and len(path.read_text().split()) >= want:
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"the spawner never wrote {want} pids")


def _command(work: Path, seconds: float, pids: Path, script: str = SPAWNER) -> list[str]:
    spawner = work / "spawn.py"
    spawner.write_text(script)
    return [sys.executable, str(ROOT / "dev.py"), "_mutant-tests", str(seconds), str(work),
            sys.executable, str(spawner), str(pids)]


def _wrapper(work: Path, seconds: float, pids: Path):
    return subprocess.Popen(_command(work, seconds, pids), stdout=subprocess.PIPE, text=True)


pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def test_a_timed_out_command_is_ended_with_its_grandchild(tmp_path):
    pids = tmp_path / "pids"
    t0 = time.monotonic()
    proc = _wrapper(tmp_path, 1.0, pids)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1 and out.strip() == _harness().TIMED_OUT
    assert time.monotonic() - t0 < 30  # SIGTERM ends the sleepers: no 5 s SIGKILL wait
    assert [p for p in _pids(pids, 2) if _running(p)] == []


def test_the_stop_file_ends_the_group_and_runs_nothing_new(tmp_path):
    pids = tmp_path / "pids"
    proc = _wrapper(tmp_path, 600.0, pids)
    started = _pids(pids, 2)
    (tmp_path / "stop").touch()
    proc.communicate(timeout=60)
    assert proc.returncode == 1 and [p for p in started if _running(p)] == []
    again = _wrapper(tmp_path, 600.0, tmp_path / "pids2")  # a wrapper cosmic-ray starts late
    again.communicate(timeout=60)
    assert again.returncode == 1 and not (tmp_path / "pids2").exists()


def test_the_group_ends_when_the_parent_goes_away(tmp_path):
    # the wrapper under a shell that is killed, as cosmic-ray is by --max-seconds
    pids = tmp_path / "pids"
    shell = subprocess.Popen(["sh", "-c", " ".join(_command(tmp_path, 600, pids)) + " & wait"],
                             start_new_session=True)
    started = _pids(pids, 2)
    shell.kill()
    shell.wait()
    end = time.monotonic() + 30
    while any(_running(p) for p in started) and time.monotonic() < end:
        time.sleep(0.1)
    assert [p for p in started if _running(p)] == []


def test_a_command_that_exits_leaves_nothing_behind(tmp_path):
    pids = tmp_path / "pids"
    quick = SPAWNER.replace("time.sleep(600)\n", "")
    proc = subprocess.run(_command(tmp_path, 600, pids, quick), timeout=60)
    assert proc.returncode == 0
    assert [p for p in _pids(pids, 2) if _running(p)] == []


@pytest.mark.slow
@pytest.mark.parametrize("path", ["timeout", "max-seconds"])
def test_mutate_session_leaves_no_test_process(tmp_path, path):
    """The whole of dev.py's session on a toy module whose one mutant hangs and spawns."""
    cr = Path(sys.executable).parent / "cosmic-ray"
    if not cr.exists():
        pytest.skip("cosmic-ray not installed (the mutate extra)")
    dev = _harness()
    tree, work = tmp_path / "tree", tmp_path / "work"
    (tree / "pipegossip").mkdir(parents=True)
    (tree / "tests").mkdir()
    work.mkdir()
    (tree / "pipegossip" / "__init__.py").write_text("")
    (tree / "pipegossip" / "toy.py").write_text("def hang():\n    return False\n")
    pids = tmp_path / "pids"
    (tree / "tests" / "test_toy.py").write_text(textwrap.dedent(f"""\
        import subprocess, sys
        from pipegossip import toy

        def test_toy():
            if toy.hang():  # only the mutant: a grandchild, then forever
                subprocess.run([sys.executable, "-c", {SPAWNER!r}, {str(pids)!r}])
        """))
    env = {**os.environ, "PYTHONPATH": str(tree),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    timeout, max_seconds = (3.0, None) if path == "timeout" else (600.0, 40.0)
    dev._run_session(cr, work, tree, "toy.py", ["tests/test_toy.py"], env, False,
                     timeout, max_seconds)
    assert [p for p in _pids(pids, 2, seconds=1) if _running(p)] == []
    if path == "timeout":
        counts = dev._tally(cr, work, tree, "toy.py", {})["counts"]
        assert counts["timeout"] == 1 and counts["survived"] == 0
