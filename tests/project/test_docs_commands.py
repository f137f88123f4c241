"""Every shell command in README.md, docs/*.md and examples/README.md runs as written.

What counts as a command
    In a fenced block tagged ``sh``, ``bash``, ``shell`` or ``console``: every
    line starting (after an optional ``$ ``) with ``pipegossip ``,
    ``python3 dev.py`` or ``.venv/bin/``. In any other fenced block (sample
    output): only such lines written as a prompt, ``$ pipegossip ...``.
    A line ending in ``\\`` continues on the next one; ``# ...`` comments are
    left to the shell.

How it runs
    Each fenced block gets a fresh temporary folder holding a copy of
    ``examples/`` and a ``.venv`` link to the repository's virtualenv; the
    block's commands run there in document order (so a block may write a file
    and read it back), through ``bash -c`` with the virtualenv's ``bin`` first
    on PATH. A command fails the test when it exits with another status than
    the doc promises (0 unless marked) or prints ``unrecognized arguments`` /
    ``invalid choice``.

Markers (an HTML comment on the lines right before the block's fence; only
blank lines may separate them from it; several may be stacked)
    ``<!-- docs-test: skip: REASON -->``  not run; the reason is in the test id
    ``<!-- docs-test: slow: REASON -->``  run only with ``--runslow``
    ``<!-- docs-test: exit 1 -->``         the block's commands exit 1
    ``<!-- docs-test: exit 0,1 -->``       either status is fine
    ``<!-- docs-test: timeout 300 -->``    seconds per command (default 90, or
                                           ``$PIPEGOSSIP_DOCS_TIMEOUT``)

What a command may leave behind
    Only files under ``out/`` (git-ignored) or ignored by the repository's
    ``.gitignore``: the folder is a git work tree with that ``.gitignore``,
    and a command after which ``git status`` shows a new untracked file
    elsewhere fails, so no documented command litters a clone.

``python3 dev.py demo`` and ``python3 dev.py test`` are the README's set-up
commands: they are skipped here (``tests/tools/test_dev.py`` covers ``dev.py``).
A marker that no block follows fails ``test_markers_are_attached``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]

SHELL_TAGS = {"sh", "bash", "shell", "console"}
PREFIXES = ("pipegossip ", "python3 dev.py", ".venv/bin/")
DEFAULT_TIMEOUT = int(os.environ.get("PIPEGOSSIP_DOCS_TIMEOUT", "90"))
BAD_USAGE = ("unrecognized arguments", "invalid choice")
SETUP_COMMANDS = re.compile(r"^python3 dev\.py (demo|test)\b")

_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
_FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")


@dataclass
class Block:
    path: Path
    line: int                 # 1-based line of the opening fence
    tag: str
    markers: list[str] = field(default_factory=list)
    commands: list[tuple[int, str]] = field(default_factory=list)   # (line, text)

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def marker(self, name: str) -> str | None:
        for m in self.markers:
            key, _, rest = m.partition(" ") if not m.startswith(("skip:", "slow:")) \
                else m.partition(":")
            if key.strip() == name:
                return rest.strip()
        return None

    @property
    def expected_exit(self) -> set[int]:
        spec = self.marker("exit")
        if not spec:
            return {0}
        return {int(x) for x in re.split(r"[,\s]+", spec) if x}

    @property
    def timeout(self) -> int:
        spec = self.marker("timeout")
        return int(spec) if spec else DEFAULT_TIMEOUT


def _command_of(line: str, shell_block: bool) -> str | None:
    text = line.strip()
    if text.startswith("$ "):
        text = text[2:].lstrip()
    elif not shell_block:
        return None
    return text if text.startswith(PREFIXES) else None


def parse(path: Path) -> tuple[list[Block], list[tuple[int, str]]]:
    """The fenced blocks of one file with their commands, and stray markers."""
    blocks: list[Block] = []
    stray: list[tuple[int, str]] = []
    pending: list[tuple[int, str]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _MARKER.match(line)
        f = _FENCE.match(line)
        if m:
            pending.append((i + 1, m.group(1)))
        elif f:
            fence, tag = f.group(2), f.group(3).lower()
            block = Block(path, i + 1, tag, [t for _, t in pending])
            pending = []
            body: list[tuple[int, str]] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence[:3]):
                body.append((i + 1, lines[i]))
                i += 1
            shell = tag in SHELL_TAGS
            k = 0
            while k < len(body):
                lineno, text = body[k]
                cmd = _command_of(text, shell)
                if cmd is not None:
                    while cmd.endswith("\\") and k + 1 < len(body):
                        k += 1
                        cmd = cmd[:-1].rstrip() + " " + body[k][1].strip()
                    block.commands.append((lineno, cmd))
                k += 1
            if block.commands or block.markers:
                blocks.append(block)
        elif line.strip():
            stray.extend(pending)
            pending = []
        i += 1
    stray.extend(pending)
    return blocks, stray


def _collect():
    blocks, stray = [], []
    for path in DOCS:
        b, s = parse(path)
        blocks.extend(b)
        stray.extend((f"{path.relative_to(ROOT)}:{n}", t) for n, t in s)
    return blocks, stray


BLOCKS, STRAY = _collect()


def _params():
    params = []
    for block in BLOCKS:
        for index, (lineno, cmd) in enumerate(block.commands):
            where = f"{block.path.relative_to(ROOT)}:{lineno}"
            short = cmd if len(cmd) <= 60 else cmd[:57] + "..."
            marks = []
            skip, slow = block.marker("skip"), block.marker("slow")
            if SETUP_COMMANDS.match(cmd):
                skip = skip or "README set-up command, covered by tests/tools/test_dev.py"
            if skip:
                marks.append(pytest.mark.skip(reason=f"{where}: {skip}"))
                short = f"{short} [skip: {skip}]"
            elif slow is not None:
                marks.append(pytest.mark.slow)
                short = f"{short} [slow: {slow}]"
            params.append(pytest.param(block, index, id=f"{where} {short}", marks=marks))
    return params


_FOLDERS: dict[tuple[str, int], tuple[Path, int]] = {}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV)
    env.pop("PYTHONPATH", None)
    env["COLUMNS"] = "100"
    return env


def _run(block: Block, cmd: str, cwd: Path) -> subprocess.CompletedProcess | None:
    """Run one command; None when it ran past the block's timeout."""
    try:
        return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=_env(), text=True,
                              capture_output=True, timeout=block.timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None


def _folder(block: Block, tmp_path_factory) -> tuple[Path, int]:
    key = (str(block.path), block.line)
    if key not in _FOLDERS:
        folder = tmp_path_factory.mktemp("docs")
        if (ROOT / "examples").is_dir():
            shutil.copytree(ROOT / "examples", folder / "examples")
        (folder / ".venv").symlink_to(VENV)
        shutil.copy(ROOT / ".gitignore", folder / ".gitignore")
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
        _FOLDERS[key] = (folder, 0)
    return _FOLDERS[key]


def untracked(folder: Path) -> set[str]:
    """What ``git status`` calls untracked in ``folder``, file by file."""
    r = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=folder,
                       capture_output=True, text=True, check=True)
    return {line[3:] for line in r.stdout.splitlines() if line.startswith("?? ")}


def littered(before: set[str], after: set[str]) -> list[str]:
    """New untracked files that are not under ``out/``."""
    return sorted(p for p in after - before if not p.startswith("out/"))


@pytest.mark.parametrize("block,index", _params())
def test_command_runs_as_written(block: Block, index: int, tmp_path_factory):
    key = (str(block.path), block.line)
    folder, done = _folder(block, tmp_path_factory)
    # Earlier commands of the same block first (a block may build on itself).
    for k in range(done, index):
        lineno, earlier = block.commands[k]
        r = _run(block, earlier, folder)
        _FOLDERS[key] = (folder, k + 1)
        if r is None or r.returncode not in block.expected_exit:
            pytest.skip(f"the block's earlier command at line {lineno} failed")
    lineno, cmd = block.commands[index]
    before = untracked(folder)
    r = _run(block, cmd, folder)
    _FOLDERS[key] = (folder, index + 1)
    where = f"{block.path.relative_to(ROOT)}:{lineno}"
    if r is None:
        pytest.fail(f"{where}: `{cmd}` ran longer than {block.timeout} s "
                    "(mark its block slow or skip with a reason, or give it a timeout)")
    tail = "\n".join((r.stdout + r.stderr).splitlines()[-15:])
    for bad in BAD_USAGE:
        assert bad not in r.stderr, f"{where}: `{cmd}` -> {bad}\n{tail}"
    assert r.returncode in block.expected_exit, (
        f"{where}: `{cmd}` exited {r.returncode}, the doc promises "
        f"{sorted(block.expected_exit)}\n{tail}")
    stray = littered(before, untracked(folder))
    assert not stray, (f"{where}: `{cmd}` leaves files outside out/ that git would show: "
                       + ", ".join(stray[:8]))


def test_markers_are_attached():
    assert not STRAY, "docs-test markers not followed by a fenced block: " + ", ".join(
        f"{w} ({t})" for w, t in STRAY)


def test_markers_are_known():
    bad = []
    for block in BLOCKS:
        for m in block.markers:
            if re.match(r"^(skip|slow):\s*\S", m):
                continue
            if re.match(r"^exit\s+\d+(\s*,\s*\d+)*$", m) or re.match(r"^timeout\s+\d+$", m):
                continue
            bad.append(f"{block.where}: {m!r}")
        if block.markers and not block.commands:
            bad.append(f"{block.where}: markers on a block without commands")
    assert not bad, "unknown docs-test markers (skip/slow need a reason): " + "; ".join(bad)


def test_litter_outside_out_is_seen(tmp_path):
    # The check above on a made-up block: a plot in the folder's root and a
    # file under a git-ignored folder (sim_build/) beside one under out/.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    before = untracked(tmp_path)
    for name in ("plot.png", "out/plot.png", "sim_build/x.o", "examples/new.json"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x")
    assert littered(before, untracked(tmp_path)) == ["examples/new.json", "plot.png"]


def test_commands_are_found():
    assert sum(len(b.commands) for b in BLOCKS) >= 20
