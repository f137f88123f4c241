"""The grouped command line (issue 30): ``pipegossip demo`` and six groups, one
spelling per action, the old flat spellings kept for a release with one note,
one error prefix, per-generator options of ``schedule``, and the docs in the
new spellings (``python3 dev.py respell``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipegossip import cli
from pipegossip.cli import spellings
from pipegossip.cli.schedule import ALGORITHM_OPTIONS, ALGORITHMS
from pipegossip.cli.spellings import COMMANDS, GROUPS, new_spelling, respell, respell_text

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
OLD = [old for old, (new, _) in COMMANDS.items() if new != old]


def _pg(*args, env=None, **kw):
    env = {**os.environ, "COLUMNS": "80", **(env or {})}
    env.pop(cli.QUIET_NOTES, None)
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True, env=env, timeout=300, **kw)


@pytest.fixture
def notes(monkeypatch):
    """Old spellings print their note (the suite silences it elsewhere)."""
    monkeypatch.delenv(cli.QUIET_NOTES, raising=False)


def _main(capsys, argv):
    try:
        status = cli.main(argv)
    except SystemExit as e:  # --help
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


# ---------------------------------------------------------------- the help
def test_top_help_fits_one_screen_and_starts_with_the_main_job():
    r = _pg("--help")
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert len(lines) <= 40, len(lines)
    assert max(map(len, lines)) <= 80
    start = next(k for k, x in enumerate(lines) if x.startswith("Start here:"))
    assert "pipegossip demo" in lines[start]
    rows = [k for k, x in enumerate(lines) if re.match(r"^  (\w+) ", x)
            and x.split()[0] in GROUPS]
    assert [lines[k].split()[0] for k in rows] == list(GROUPS)
    assert start < rows[0]
    # every command is named under its group
    text = " ".join(lines[rows[0]:rows[-1] + 4])
    for new, _ in COMMANDS.values():
        if len(new.split()) >= 2:
            assert re.search(rf"[ ,]{re.escape(new.split()[1])}(,|$| )", text), new


def test_top_help_imports_no_heavy_module():
    code = ("import sys\nfrom pipegossip.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "heavy = [m for m in ('numpy', 'amaranth', 'matplotlib', 'cocotb', 'networkx') "
            "if m in sys.modules]\nprint(heavy, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stderr.strip() == "[]", r.stderr


@pytest.mark.parametrize("group", list(GROUPS))
def test_group_help_lists_its_commands(capsys, group):
    status, out, err = _main(capsys, [group, "--help"])
    assert status == 0 and err == ""
    assert out.startswith(f"usage: pipegossip {group} ")
    listed = re.findall(r"^    (\S+)", out, re.M)
    want = [c for c in spellings.group_commands(group) if c != "ALGORITHM"]
    if group == "schedule":
        want = [*ALGORITHMS, *want]
    assert listed == want


def test_every_command_is_in_exactly_one_place():
    parser = cli.build_parser()
    top = next(a for a in parser._actions if a.dest == "command")
    assert set(top.choices) == {"demo", *GROUPS}
    placed = {"demo"}
    for group in GROUPS:
        inner = next(a for a in top.choices[group]._actions if a.dest == f"{group}_command")
        placed |= {f"{group} {c}" for c in inner.choices}
    expected = {new for new, _ in COMMANDS.values() if len(new.split()) <= 2}
    expected |= {f"schedule {a}" for a in ALGORITHMS} | {"demo"}
    expected.discard("schedule")
    assert placed == expected
    assert tuple(spellings.SCHEDULE_ALGORITHMS) == tuple(ALGORITHMS)


def test_build_parser_for_one_command_loads_only_its_module():
    assert cli._modules_for(["hw", "verilog", "--n", "4"]) == ["pipegossip.cli.hw"]
    assert cli._modules_for(["schedule", "matching"]) == ["pipegossip.cli.schedule"]
    assert cli._modules_for(["--help"]) == []
    assert set(cli._modules_for(["paper"])) == {
        "pipegossip.cli.model", "pipegossip.cli.sweep", "pipegossip.cli.literature",
        "pipegossip.cli.heuristics", "pipegossip.cli.waveforms", "pipegossip.paper.fpga_references"}


# ------------------------------------------------------- the old spellings
def test_the_docs_table_is_the_mapping():
    """docs/cli.md states the mapping a second time: a wrong entry in either fails."""
    text = (ROOT / "docs" / "cli.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", text, re.M)
    assert dict(rows) == {old: new for old, (new, _) in COMMANDS.items() if new != old}


@pytest.mark.parametrize("old", OLD)
def test_old_spelling_shows_the_new_ones_help_after_one_note(capsys, notes, old):
    first = [old, "dump.vcd"] if old in GROUPS else [old]
    status, out, err = _main(capsys, [*first, "--help"])
    new = new_spelling(old)
    assert status == 0
    assert err.splitlines() == [spellings.notice(old, [])], err
    assert "note" not in out
    target = new.split()[:2]
    assert out.startswith(f"usage: pipegossip {' '.join(target)} ")
    # the same help as the new spelling's own
    assert _main(capsys, [*target, "--help"])[1] == out


@pytest.mark.parametrize("old", ["verilog", "waves", "cosim-schedule", "plot-schedule"])
def test_old_spelling_refusal_is_the_note_and_one_line(capsys, notes, old):
    status, out, err = _main(capsys, [old, "--bogus-option"])
    lines = err.splitlines()
    assert status == 2 and out == ""
    assert lines[0] == spellings.notice(old, []) and len(lines) == 2, err
    assert lines[1].startswith(f"pipegossip {old}: error: ")


def test_quiet_notes(capsys, monkeypatch):
    monkeypatch.setenv(cli.QUIET_NOTES, "quiet")
    status, out, err = _main(capsys, ["schedule-table", "--sizes", "4"])
    assert status == 0 and err == "" and "| 4 |" in out


def test_note_never_reaches_stdout(notes, tmp_path):
    r = _pg("check", str(ROOT / "examples" / "gossip-n4.json"), "--format", "json")
    assert r.returncode == 0
    import json
    assert json.loads(r.stdout)["valid"] is True
    assert r.stderr == "pipegossip: note: 'pipegossip check' is now 'pipegossip schedule check'\n"


@pytest.mark.parametrize("argv, new", [
    (["verilog-schedule", "--n", "4", "-o", "x.v"],
     ["hw", "verilog", "--fabric", "schedule", "--n", "4", "-o", "x.v"]),
    (["cosim-schedule", "a.json", "--seed", "3", "b.json", "-q", "--stream", "2"],
     ["sim", "cosim", "--word-seed", "3", "--quiet", "--stream", "2", "--schedule", "a.json",
      "b.json"]),
    (["cosim-schedule", "--seed=3", "a.json", "--simulator", "amaranth"],
     ["sim", "cosim", "--word-seed=3", "--simulator", "amaranth", "--schedule", "a.json"]),
    (["cosim-schedule", "--help"], ["sim", "cosim", "--help"]),
    (["waves", "d.vcd", "--run", "2"], ["waves", "read", "d.vcd", "--run", "2"]),
    (["waves", "--top", "x", "d.vcd"], ["waves", "read", "--top", "x", "d.vcd"]),
    (["waves", "read", "d.vcd"], ["waves", "read", "d.vcd"]),
    (["waves", "--help"], ["waves", "--help"]),
    (["--debug", "plot-schedule", "s.json"], ["--debug", "schedule", "plot", "s.json"]),
    (["schedule", "one-factor", "--n", "4"], ["schedule", "one-factor", "--n", "4"]),
    (["cosim-bench", "--n", "8"], ["sim", "bench", "--n", "8"]),
    (["demo"], ["demo"]),
])
def test_respell(argv, new):
    assert respell(argv)[0] == new
    assert respell(new)[0] == new  # the new spelling is left alone


def test_respell_text_rewrites_commands_in_documents():
    text = ("Run `pipegossip cosim-schedule s.json --seed 2` or\n"
            "$ .venv/bin/pipegossip plot-schedule s.json -o out/p.png | head\n"
            "python -m pipegossip waves examples/n5-identity.vcd > out/t.txt\n"
            "pipegossip.model and pipegossip/cli/__init__.py and pipegossip demo stay.\n")
    want = ("Run `pipegossip sim cosim --word-seed 2 --schedule s.json` or\n"
            "$ .venv/bin/pipegossip schedule plot s.json -o out/p.png | head\n"
            "python -m pipegossip waves read examples/n5-identity.vcd > out/t.txt\n"
            "pipegossip.model and pipegossip/cli/__init__.py and pipegossip demo stay.\n")
    assert respell_text(text) == want
    assert respell_text(want) == want
    assert [k for k, _ in spellings.old_spellings_in(text)] == [1, 2, 3]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_use_the_new_spellings(path):
    """A doc that spells a command the old way fails; fix: python3 dev.py respell FILE."""
    old = spellings.old_spellings_in(path.read_text())
    assert not old, (f"{path.relative_to(ROOT)}: old spellings (python3 dev.py respell "
                     f"{path.relative_to(ROOT)}): " + "; ".join(f"{k}: {x.strip()}"
                                                               for k, x in old[:5]))


def test_dev_respell_rewrites_and_checks(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("```sh\npipegossip verilog-schedule --n 4 -o out/x.v\n```\n")
    r = subprocess.run([sys.executable, str(ROOT / "dev.py"), "respell", "--check", str(doc)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and f"{doc}:2:" in r.stdout
    r = subprocess.run([sys.executable, str(ROOT / "dev.py"), "respell", str(doc)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert doc.read_text() == ("```sh\npipegossip hw verilog --fabric schedule --n 4 "
                               "-o out/x.v\n```\n")
    r = subprocess.run([sys.executable, str(ROOT / "dev.py"), "respell", "--check", str(doc)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == ""


# ------------------------------------------------------------- one prefix
def _every_command_path() -> list[list[str]]:
    paths = [["demo"]]
    for new, _ in COMMANDS.values():
        words = new.split()
        if len(words) == 2:
            paths.append(words)
    paths += [["schedule", a] for a in ALGORITHMS]
    paths += [["model", "plot", k] for k in ("utilization", "table", "scaling")]
    paths += [[old] for old in OLD]
    return paths


@pytest.mark.parametrize("path", _every_command_path(), ids=" ".join)
def test_one_error_prefix(capsys, path, monkeypatch):
    monkeypatch.setenv(cli.QUIET_NOTES, "quiet")
    status, out, err = _main(capsys, [*path, "--bogus-option"])
    typed = " ".join(path[:2]) if path[0] in GROUPS else path[0]
    assert status == 2 and out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"pipegossip {typed}: error: "), err
    rest = err.removeprefix(f"pipegossip {typed}: error: ")
    assert "pipegossip" not in rest.split(":")[0] and ": error:" not in rest, err


@pytest.mark.parametrize("argv, line", [
    (["hw"], "pipegossip hw: error: the following arguments are required: COMMAND"),
    (["hw", "nonsense"], "pipegossip hw: error: argument COMMAND: invalid choice: 'nonsense'"),
    (["frobnicate"], "pipegossip frobnicate: error: unknown command 'frobnicate' (expected demo"),
    ([], "pipegossip: error: the following arguments are required: COMMAND"),
])
def test_group_and_top_level_errors(capsys, argv, line):
    status, out, err = _main(capsys, argv)
    assert status == 2 and err.startswith(line) and err.count("\n") == 1, err


# ------------------------------------------------- per-generator options
def _foreign_options():
    from pipegossip.cli.schedule import _options
    flags = {k: names[0] for k, (names, _) in _options().items()}
    flags.update({k: f"--{k}" for k in ("order", "receive", "sessions", "channels")})
    cases = []
    for name in ALGORITHMS:
        own = ALGORITHM_OPTIONS[name]
        for key, flag in flags.items():
            taken = key in own or ("config" in own and key in
                                   ("n", "order", "seed", "receive", "sessions", "channels"))
            if not taken:
                cases.append(pytest.param(name, flag, id=f"{name} {flag}"))
    return cases


@pytest.mark.parametrize("name, flag", _foreign_options())
def test_an_option_of_another_generator_is_refused_naming_it(capsys, name, flag):
    status, out, err = _main(capsys, ["schedule", name, flag, "1"])
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"pipegossip schedule {name}: error: {flag} does not apply to "
                          f"'schedule {name}' (an option of "), err


def test_no_abbreviation_reaches_another_option(capsys):
    # --p is matching's --primitive by prefix if abbreviations were allowed
    status, _, err = _main(capsys, ["schedule", "matching", "--topology", "cycle", "--n", "4",
                                    "--p", "2"])
    assert status == 2 and "--p does not apply to 'schedule matching'" in err


@pytest.mark.parametrize("argv, check", [
    (["schedule", "matching", "--topology", "cycle", "--n", "6", "--tau", "1", "--tries", "2"],
     '"algorithm": "matching"'),
    (["schedule", "reduce", "--topology", "cycle", "--n", "5", "--root", "2", "--p", "1"],
     '"primitive": "reduce"'),
    (["schedule", "short-messages", "--n", "6", "--p", "2"], '"algorithm": "short-messages"'),
    (["schedule", "polling-complete", "--k", "3", "--root", "0"], '"primitive": "polling"'),
    (["schedule", "recursive-doubling", "--topology", "hypercube", "--k", "3"],
     '"name": "hypercube"'),
    (["schedule", "run", "--n", "4", "--order", "identity", "--receive", "any"],
     '"algorithm": "run"'),
])
def test_each_generator_takes_its_own_options(capsys, argv, check):
    status, out, err = _main(capsys, argv)
    assert status == 0, err
    assert check in out


# ---------------------------------------------- each group, new spelling
@pytest.mark.parametrize("argv, expect", [
    (["model", "run", "--n", "4", "--order", "identity", "--no-table"], "L="),
    (["hw", "verilog", "--fabric", "schedule", "--n", "3", "--depth", "4"], "module"),
    (["waves", "read", "{examples}/n5-identity.vcd"], "# pipegossip run-table v1"),
    (["waves", "diff", "{examples}/n5-identity.vcd", "n=5,order=identity"], "equal"),
    (["schedule", "check", "{examples}/gossip-n4.json"], "valid gossip schedule"),
    (["schedule", "table", "--sizes", "4"], "| 4 |"),
    (["paper", "polling-search", "--k", "3", "--graph", "complete"], "messages"),
    (["paper", "literature-table", "path-cycle", "--max-n", "6"], "|"),
])
def test_new_spellings_run(capsys, argv, expect):
    argv = [a.format(examples=ROOT / "examples") for a in argv]
    status, out, err = _main(capsys, argv)
    assert status == 0, err
    assert expect in out, out[:500]


def test_sim_group_runs_hwsim(capsys):
    status, out, err = _main(capsys, ["sim", "hwsim", "--n", "3", "--order", "identity",
                                      "--quiet"])
    assert status == 0, err
    assert "MATCH" in out.upper()


@pytest.mark.parametrize("argv, text", [
    (["sim", "cosim", "--n", "4", "--order", "identity", "--stream", "2"],
     "--stream applies only to --schedule on the schedule fabric"),
    (["sim", "cosim", "--n", "4", "--order", "identity", "--simulator", "amaranth"],
     "--simulator amaranth runs only --schedule"),
    (["sim", "cosim", "--schedule", "s.json", "--banks", "2"], "--banks applies only with"),
])
def test_cosim_schedule_options_are_refused_elsewhere(capsys, tmp_path, monkeypatch, argv, text):
    monkeypatch.chdir(tmp_path)
    cli.main(["schedule", "one-factor", "--n", "4", "-o", "s.json"])
    capsys.readouterr()
    status, out, err = _main(capsys, argv)
    assert status == 2 and text in err and err.count("\n") == 1, err


# ------------------------------------------------ every documented command
def _documented_commands():
    import shlex
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "project"))
    from test_docs_commands import BLOCKS
    out = []
    for block in BLOCKS:
        if block.expected_exit - {0, 1}:  # blocks that show a refusal
            continue
        for lineno, cmd in block.commands:
            for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", cmd):
                m = re.match(r"^(?:\$ )?(?:\.venv/bin/)?pipegossip (.*)$", part.strip())
                if not m:
                    continue
                try:
                    words = shlex.split(m.group(1), comments=True)
                except ValueError:
                    continue
                cut = [k for k, w in enumerate(words) if re.match(r"^\d?>|^<", w)]
                words = words[:cut[0]] if cut else words
                out.append(pytest.param(words, id=f"{block.path.name}:{lineno}"))
    return out


@pytest.mark.parametrize("words", _documented_commands())
def test_documented_commands_parse_in_the_new_spelling(words, monkeypatch, tmp_path):
    """Each documented pipegossip command line parses as written (run by
    tests/project/test_docs_commands.py; this is the quick check of its spelling)."""
    assert respell(words)[1] is None, words
    monkeypatch.chdir(tmp_path)
    try:
        cli.build_parser(words).parse_args(words)
    except SystemExit as e:  # --help
        assert e.code == 0
    except cli.UsageError as e:
        pytest.fail(f"pipegossip {' '.join(words)}: {e}")
