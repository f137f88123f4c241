"""Mutation testing of the checking code: ``python3 dev.py mutate MODULE...``.

dev.py's ``mutate`` command and its internal ``_mutant-tests`` wrapper (the
command cosmic-ray runs per mutant), kept apart from dev.py so that dev.py
stays a short set-up script; dev.py loads this file only for those two
commands. Standard library only, like dev.py: cosmic-ray runs as a
subprocess from the project's virtual environment (installed on first use,
the ``mutate`` extra).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The command cosmic-ray runs per mutant is ``python DEV _mutant-tests ...``.
DEV = ROOT / "dev.py"

# Why cosmic-ray and not mutmut: mutmut 3 runs the tests against a copy of the
# sources in ./mutants, but this project's modules are imported through
# setuptools' package-dir mapping (model/ is pipegossip.model, ...) by an
# editable install whose finder always points at the checkout, so mutmut's
# copies are never imported. cosmic-ray mutates a file in place and runs any
# test command in a fresh process, which the mapping does not disturb.
#
# It runs in a mirror, never in the checkout: an interrupted cosmic-ray run
# leaves its mutant on disk, and a mutant in the checkout would break every
# other command. The mirror lays the packages out as installed
# (build/mutate/tree/pipegossip/{model,hw,sim,waveforms}), and PYTHONPATH puts
# it ahead of the editable finder, also for the simulator's embedded Python.

MUTATE = ROOT / "build" / "mutate"
DEFERRED = "deferred by --rerun-survivors"
MUTATION_MAP = ROOT / "tests" / "mutation_map.toml"
MUTATION_SURVIVORS = ROOT / "tests" / "mutation_survivors.toml"

#: cosmic-ray operators kept: the classic relational, boundary, logical and
#: arithmetic-inverse set. Left out: the other 120 binary-operator swaps
#: (Add->Pow, ...), mostly killed by any test and ~5x the run time, and the
#: variable inserter/replacer and decorator removal.
MUTATION_OPERATORS = frozenset("core/" + name for name in (
    *(f"ReplaceComparisonOperator_{a}_{b}" for a, b in (
        ("Eq", "NotEq"), ("NotEq", "Eq"), ("Lt", "LtE"), ("LtE", "Lt"), ("Gt", "GtE"),
        ("GtE", "Gt"), ("Lt", "GtE"), ("GtE", "Lt"), ("Gt", "LtE"), ("LtE", "Gt"),
        ("Is", "IsNot"), ("IsNot", "Is"), ("In", "NotIn"), ("NotIn", "In"))),
    *(f"ReplaceBinaryOperator_{a}_{b}" for a, b in (
        ("Add", "Sub"), ("Sub", "Add"), ("Mul", "Add"), ("Div", "Mul"), ("FloorDiv", "Mul"),
        ("Mod", "FloorDiv"), ("Pow", "Mul"), ("BitAnd", "BitOr"), ("BitOr", "BitAnd"),
        ("BitXor", "BitOr"), ("LShift", "RShift"), ("RShift", "LShift"))),
    "ReplaceUnaryOperator_Delete_Not", "ReplaceUnaryOperator_Delete_USub",
    "ReplaceUnaryOperator_Delete_Invert", "AddNot", "ReplaceTrueWithFalse",
    "ReplaceFalseWithTrue", "ReplaceAndWithOr", "ReplaceOrWithAnd",
    "ReplaceBreakWithContinue", "ReplaceContinueWithBreak", "ExceptionReplacer",
    "NumberReplacer", "ZeroIterationForLoop"))

#: Seconds a mutant's test run gets between SIGTERM and SIGKILL.
KILL_GRACE = 5.0
#: What the test wrapper prints when it ends a mutant's tests for time (counted as killed).
TIMED_OUT = "dev.py mutate: timeout"

MUTATE_USAGE = ("usage: python3 dev.py mutate [--at COMMIT] [--rerun-survivors | --report] "
                "[--timeout S] "
                "[--max-seconds S] MODULE [MODULE...]  (MODULE as in tests/mutation_map.toml, "
                "e.g. sim/judge/fsm.py)")


def _mirror(tree: Path, at: str | None) -> None:
    """Lay the checkout (or commit ``at``) out in ``tree`` as installed.

    The folders of the package-dir mapping become ``pipegossip/<name>``; the
    tree's own ``build`` (its simulator cache) is kept.
    """
    tree.mkdir(parents=True, exist_ok=True)
    for entry in tree.iterdir():
        if entry.name != "build":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    if at is not None:
        archive = subprocess.run(["git", "archive", "--format=tar", at], cwd=ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    else:
        skip = shutil.ignore_patterns(".git", ".venv", "build", "out", "__pycache__",
                                      "*.egg-info", ".pytest_cache", ".hypothesis")
        for entry in ROOT.iterdir():
            if skip(str(ROOT), [entry.name]):
                continue
            if entry.is_dir():
                shutil.copytree(entry, tree / entry.name, ignore=skip)
            else:
                shutil.copy2(entry, tree / entry.name)
    mapping = tomllib.loads((tree / "pyproject.toml").read_text())
    for package, folder in mapping["tool"]["setuptools"]["package-dir"].items():
        if package != "pipegossip":
            shutil.copytree(tree / folder, tree / package.replace(".", "/"))


def _toml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def _mutant_key(mutation: dict) -> str:
    """``operator@line:column#occurrence``: one number gives two mutants at one place."""
    line, col = mutation["start_pos"]
    return f"{mutation['operator_name']}@{line}:{col}#{mutation['occurrence']}"


def _mutated_line(diff: str | None) -> str:
    """The line the mutant wrote (from cosmic-ray's diff)."""
    added = [x[1:].strip() for x in (diff or "").splitlines()
             if x.startswith("+") and not x.startswith("+++")]
    return added[0] if added else "?"


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs.

    kill() also finds zombies, which nobody may reap (a container's init need
    not), so on Linux a live member is looked for in /proc.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc"):
        return True
    for entry in os.scandir("/proc"):
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # not a process, or gone meanwhile
        if fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def end_group(pgid: int, grace: float = KILL_GRACE) -> None:
    """End process group ``pgid``: SIGTERM, and SIGKILL whatever is left after ``grace`` s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + grace
        while _group_alive(pgid):
            if time.monotonic() > end:
                break
            time.sleep(0.05)
        else:
            return


def mutant_tests(argv: list[str]) -> int:
    """``dev.py _mutant-tests SECONDS WORK COMMAND...``: cosmic-ray's command for one mutant.

    cosmic-ray kills only the group of the command it started, and nothing
    when it is stopped itself (``--max-seconds``, an interrupt), so the tests
    of an endless mutant ran on for an hour. This wrapper runs COMMAND in a
    session of its own and ends that whole group (:func:`end_group`) after
    SECONDS, when ``WORK/stop`` appears or its parent goes away, on SIGTERM,
    and after COMMAND exits (whatever it left running). It holds a lock on
    ``WORK/tests.lock`` meanwhile, which :func:`_stop_session` waits for.
    Exit: COMMAND's, or 1 with :data:`TIMED_OUT` printed when time ran out.
    """
    try:
        seconds, work, command = float(argv[0]), Path(argv[1]), argv[2:]
    except (IndexError, ValueError):
        command = []
    if not command or not work.is_dir():
        print("usage: python3 dev.py _mutant-tests SECONDS WORK COMMAND... "
              "(internal: the command dev.py mutate gives cosmic-ray per mutant)", file=sys.stderr)
        return 2
    parent = os.getppid()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with open(work / "tests.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (work / "stop").exists():
            return 1
        proc = subprocess.Popen(command, start_new_session=True)
        try:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                try:
                    return proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    if os.getppid() != parent or (work / "stop").exists():
                        return 1
            print(TIMED_OUT, flush=True)
            return 1
        finally:
            end_group(proc.pid)
            proc.wait()


def _stop_session(proc: subprocess.Popen, work: Path) -> None:
    """Stop ``cosmic-ray exec`` and wait until the mutant's tests are ended too."""
    (work / "stop").touch()  # before the kill: a wrapper starting now runs nothing
    end_group(proc.pid)
    proc.wait()
    with open(work / "tests.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the wrapper holds it until its group is gone


def _run_session(cr: Path, work: Path, tree: Path, module: str, tests: list[str],
                 env: dict, rerun: bool, timeout: float | None,
                 max_seconds: float | None) -> bool:
    """Create (or, for ``rerun``, reopen) the module's session and execute it."""
    target = "pipegossip/" + module
    command = f"python -m pytest -x -q -n 0 -p no:cacheprovider {' '.join(tests)}"
    source = hashlib.sha256((tree / target).read_bytes()).hexdigest()
    config, db, stamp = work / "cosmic-ray.toml", work / "session.sqlite", work / "module.sha256"
    t0 = time.monotonic()
    base = subprocess.run(command, shell=True, cwd=tree, env=env, capture_output=True, text=True)
    baseline = time.monotonic() - t0
    if base.returncode != 0:
        raise RuntimeError(f"{module}: its tests fail before any mutation:\n{base.stdout[-2000:]}")
    if timeout is None:
        timeout = max(60.0, 4 * baseline)
    # The wrapper enforces the timeout (on the whole group); cosmic-ray's own,
    # later one is only a backstop. This checkout's dev.py, not the mirror's: --at
    # mirrors may predate the wrapper.
    wrapped = " ".join(["python", shlex.quote(str(DEV)), "_mutant-tests",
                        str(timeout), shlex.quote(str(work)), command])
    run = dict(cwd=tree, env=env, check=True)
    every = subprocess.run([str(cr), "operators"], capture_output=True, text=True, check=True)
    excluded = [f"^{re.escape(op)}$" for op in every.stdout.split()
                if op not in MUTATION_OPERATORS]
    config.write_text("\n".join([
        "[cosmic-ray]", f"module-path = {_toml_str(target)}",
        f"timeout = {timeout + 2 * KILL_GRACE + 60}",
        "excluded-modules = []", f"test-command = {_toml_str(wrapped)}", "",
        "[cosmic-ray.distributor]", 'name = "local"', "",
        "[cosmic-ray.filters.operators-filter]",
        "exclude-operators = [" + ", ".join(_toml_str(e) for e in excluded) + "]", ""]))
    if rerun:
        if not db.exists() or not stamp.exists() or stamp.read_text() != source:
            raise RuntimeError(f"{module}: --rerun-survivors needs an earlier session of this "
                               "very module text (the module changed, or none was run)")
        with sqlite3.connect(db) as con:
            # only the survivors: the mutants never run wait (restored below)
            con.execute("INSERT INTO work_results (worker_outcome, output, job_id) "
                        f"SELECT 'SKIPPED', '{DEFERRED}', job_id FROM work_items WHERE job_id "
                        "NOT IN (SELECT job_id FROM work_results)")
            con.execute("DELETE FROM work_results WHERE lower(test_outcome) = 'survived'")
    else:
        db.unlink(missing_ok=True)
        subprocess.run([str(cr), "init", str(config), str(db)], **run)
        subprocess.run([str(cr.parent / "cr-filter-operators"), str(db), str(config)], **run)
        stamp.write_text(source)
    print(f"dev.py mutate: {module}: {command} ({baseline:.0f} s unmutated, "
          f"timeout {timeout:.0f} s per mutant)", file=sys.stderr, flush=True)
    (work / "stop").unlink(missing_ok=True)
    # Its own process group, which _stop_session ends (with the mutant's tests).
    proc = subprocess.Popen([str(cr), "exec", str(config), str(db)], cwd=tree, env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        return proc.wait(timeout=max_seconds) == 0
    except subprocess.TimeoutExpired:
        return False
    finally:  # also on an interrupt: cosmic-ray, in a session of its own, never sees it
        if proc.poll() is None:
            _stop_session(proc, work)
        if rerun:
            with sqlite3.connect(db) as con:
                con.execute(f"DELETE FROM work_results WHERE output = '{DEFERRED}'")


def _tally(cr: Path, work: Path, tree: Path, module: str, classified: dict) -> dict:
    """Counts and survivors of the module's session."""
    dump = subprocess.run([str(cr), "dump", str(work / "session.sqlite")], cwd=tree,
                          check=True, capture_output=True, text=True).stdout
    counts = dict(killed=0, timeout=0, survived=0, equivalent=0, accepted=0,
                  incompetent=0, pending=0)
    survivors = []
    lines = (tree / "pipegossip" / module).read_text().splitlines()
    for row in dump.splitlines():
        item, result = json.loads(row)
        mutation = item["mutations"][0]
        if result is None:
            counts["pending"] += 1
            continue
        if result["worker_outcome"] == "skipped":
            continue
        outcome = result.get("test_outcome")
        if outcome == "killed":
            output = (result.get("output") or "").rstrip()
            timed_out = output == "timeout" or output.endswith(TIMED_OUT)  # cosmic-ray's, ours
            counts["timeout" if timed_out else "killed"] += 1
        elif outcome == "incompetent":
            counts["incompetent"] += 1
        else:
            key = _mutant_key(mutation)
            verdict = classified.get(key, "")
            if verdict.startswith("equivalent"):
                counts["equivalent"] += 1
                continue
            counts["accepted" if verdict.startswith("accepted") else "survived"] += 1
            survivors.append((key, verdict, lines[mutation["start_pos"][0] - 1].strip()
                              + "  ->  " + _mutated_line(result.get("diff"))))
    return dict(counts=counts, survivors=survivors)


def mutate_args(argv: list[str]):
    """``(options, modules, rerun, max_seconds, timeout)``, or the one-line error."""
    opts: dict = {"--at": None, "--max-seconds": None, "--timeout": None}
    rest, rerun = [], False
    k = 0
    while k < len(argv):
        if argv[k] in opts and k + 1 < len(argv):
            opts[argv[k]] = argv[k + 1]
            k += 2
            continue
        if argv[k] == "--rerun-survivors":
            rerun = True
        elif argv[k] == "--report":
            rerun = "report"
        elif argv[k].startswith("-"):
            return MUTATE_USAGE
        else:
            rest.append(argv[k])
        k += 1
    try:
        max_seconds = None if opts["--max-seconds"] is None else float(opts["--max-seconds"])
        timeout = None if opts["--timeout"] is None else float(opts["--timeout"])
    except ValueError:
        return MUTATE_USAGE
    known = tomllib.loads(MUTATION_MAP.read_text())
    unknown = [m for m in rest if m not in known]
    if unknown:
        return f"dev.py mutate: unknown module {', '.join(unknown)}; known: {', '.join(known)}"
    if not rest:
        return MUTATE_USAGE
    return opts, rest, rerun, max_seconds, timeout


def mutate(py: Path, argv: list[str]) -> int:
    """``python3 dev.py mutate MODULE...``: kill rate of each module's mutants.

    Each module's mutants (the operators of :data:`MUTATION_OPERATORS`) are
    tested by the tests ``tests/mutation_map.toml`` names for it, in a
    mirror of the checkout (``build/mutate/<module>/tree``), stopping at the
    first failure. Printed per module: killed (a test failed), timeouts
    (counted as killed), survivors; the score is (killed + timeouts) /
    (all run - equivalent), equivalents and accepted survivors as classified
    in ``tests/mutation_survivors.toml``.

    ``--at COMMIT`` mirrors that commit instead of the work tree (a score
    "before"); map entries that commit lacks are left out.
    ``--rerun-survivors`` runs only the survivors of the module's last
    session again (valid when only the tests changed since: the module's
    text must be the same); mutants that session never ran stay pending.
    ``--report`` prints the last session's counts again (with the
    classifications as they are now) and runs nothing.
    ``--max-seconds S`` stops each module's run after S seconds and reports
    the mutants not run. A mutant's tests run in a process group of their
    own, ended whole (SIGTERM, then SIGKILL) at its timeout, at
    ``--max-seconds``, on an interrupt or SIGTERM (:func:`mutant_tests`).
    Exit 0 when done, 1 when unclassified survivors remain, 2 on bad
    arguments, 3 when a module's tests fail unmutated.
    """
    parsed = mutate_args(argv)
    if isinstance(parsed, str):
        print(parsed, file=sys.stderr)
        return 2
    opts, rest, rerun, max_seconds, timeout = parsed
    # SIGTERM unwinds like an interrupt, through _run_session's stop of the tests
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    known = tomllib.loads(MUTATION_MAP.read_text())
    cr = py.parent / "cosmic-ray"
    if not cr.exists():
        print("dev.py: installing cosmic-ray (pipegossip[mutate])", file=sys.stderr, flush=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", "-e",
                        f"{ROOT}[test,mutate]"], check=True)
    classified = tomllib.loads(MUTATION_SURVIVORS.read_text()) \
        if MUTATION_SURVIVORS.exists() else {}
    open_survivors = 0
    for module in rest:
        work = MUTATE / re.sub(r"[^A-Za-z0-9]+", "-", module).strip("-")
        tree = work / "tree"
        if rerun != "report":  # --report reads the last session, mirror and all
            _mirror(tree, opts["--at"])
        tests = [t for t in known[module]["tests"] if (tree / t.split("::")[0]).exists()]
        # Numba's cache outside the mirror (which each session rebuilds): the kernels
        # compile once, not once per session (minutes), unless their file is mutated.
        # One Numba thread: the tests' graphs are small, where the parallel kernels'
        # threads mostly wait for each other (the portfolio's fast tests: 41 s of CPU
        # with 2 threads, 3 s with one, same results).
        env = {"NUMBA_CACHE_DIR": str(MUTATE / "numba-cache"), "NUMBA_NUM_THREADS": "1",
               **os.environ,
               "PYTHONPATH": str(tree),
               "PATH": f"{py.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               "PIPEGOSSIP_BUILD_DIR": str(tree / "build" / "cosim"),
               **known[module].get("env", {})}
        try:
            finished = rerun == "report" or _run_session(
                cr, work, tree, module, tests, env, rerun,
                known[module].get("timeout", timeout), max_seconds)
            out = _tally(cr, work, tree, module, classified.get(module, {}))
        except (RuntimeError, subprocess.CalledProcessError) as e:
            print(f"dev.py mutate: {e}", file=sys.stderr)
            return 3
        c = out["counts"]
        done = c["killed"] + c["timeout"]
        judged = done + c["survived"] + c["accepted"]
        score = 100.0 * done / judged if judged else 0.0
        cut = f" ({c['pending']} not run{'' if finished else ': stopped'})" \
            if c["pending"] else ""
        print(f"{module}{' at ' + opts['--at'] if opts['--at'] else ''}: "
              f"{judged + c['equivalent']} mutants run{cut}: killed {c['killed']}, "
              f"timeouts {c['timeout']}, survived {c['survived']}, accepted {c['accepted']}, "
              f"equivalent {c['equivalent']}, incompetent {c['incompetent']}; "
              f"score {score:.1f} %", flush=True)
        for key, verdict, source in out["survivors"]:
            print(f"  {'ACCEPTED' if verdict else 'SURVIVED'} {module} {key}: {source}")
            open_survivors += not verdict
    return 1 if open_survivors else 0
