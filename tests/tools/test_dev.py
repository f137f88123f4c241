"""dev.py states what the machine lacks before it installs or builds anything."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_missing_compiler_make_perl_named_in_one_line(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "dev.py"), "demo"], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PATH": str(tmp_path)})
    assert r.returncode == 2
    assert r.stderr == ("dev.py: co-simulation needs g++, make, perl, not found on this "
                        "machine; install with: sudo apt-get install g++ make perl\n")


def test_usage_line_for_an_unknown_command():
    r = subprocess.run([sys.executable, str(ROOT / "dev.py"), "nope"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("usage: python3 dev.py demo")


def test_mutate_refuses_bad_arguments_before_installing_anything():
    for argv, start in ((["mutate"], "usage: python3 dev.py mutate"),
                        (["mutate", "sim/nope.py"], "dev.py mutate: unknown module sim/nope.py"),
                        (["mutate", "--max-seconds", "soon", "sim/judge/fsm.py"],
                         "usage: python3 dev.py mutate"),
                        (["mutate", "--frobnicate", "sim/judge/fsm.py"],
                         "usage: python3 dev.py mutate")):
        r = subprocess.run([sys.executable, str(ROOT / "dev.py"), *argv], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and r.stderr.startswith(start), argv
        assert r.stdout == "" and len(r.stderr.splitlines()) == 1



def test_mutant_tests_wrapper_refuses_bad_arguments_in_one_line(tmp_path):
    # the wrapper cosmic-ray calls per mutant: SECONDS WORK COMMAND..., WORK a folder
    for argv in ([], ["5"], ["soon", str(tmp_path), "true"], ["5", str(tmp_path)],
                 ["5", str(tmp_path / "absent"), "true"]):
        r = subprocess.run([sys.executable, str(ROOT / "dev.py"), "_mutant-tests", *argv],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, argv
        assert r.stderr.startswith("usage: python3 dev.py _mutant-tests"), argv
        assert r.stdout == "" and len(r.stderr.splitlines()) == 1, argv
    r = subprocess.run([sys.executable, str(ROOT / "dev.py"), "_mutant-tests", "30",
                        str(tmp_path), sys.executable, "-c", "raise SystemExit(3)"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3 and r.stderr == ""

def test_every_mapped_module_and_test_file_exists():
    import tomllib

    mapping = tomllib.loads((ROOT / "tests" / "mutation_map.toml").read_text())
    for module, entry in mapping.items():
        assert (ROOT / module).is_file(), module
        for test in entry["tests"]:
            assert (ROOT / test.split("::")[0]).is_file(), test


def test_the_suite_names_its_slowest_tests(monkeypatch):
    """``dev.py test`` passes --durations=25 (so every CI log shows the slowest
    tests), unless the caller gives a --durations of its own."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("dev_under_test", ROOT / "dev.py")
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    ran = []
    monkeypatch.setattr(dev, "missing_prerequisites", lambda: [])
    monkeypatch.setattr(dev, "ensure_env", lambda: Path("py"))
    monkeypatch.setattr(dev.subprocess, "run",
                        lambda cmd, **kw: ran.append(cmd) or subprocess.CompletedProcess(cmd, 0))
    assert dev.main(["test", "-k", "x"]) == 0
    assert ran[-1] == ["py", "-m", "pytest", "-n", "auto", "--durations=25", "-k", "x"]
    assert dev.main(["test", "-n", "0", "--durations=3"]) == 0
    assert ran[-1] == ["py", "-m", "pytest", "-n", "0", "--durations=3"]
