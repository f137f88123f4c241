#!/usr/bin/env python3
"""Hostile-but-realistic probes of every ``pipegossip`` command (issue 19).

A catalogue of probes, generated systematically: for each command, each class
of bad input that applies to it (bad numbers, huge sizes, unreadable, binary,
non-UTF-8, deeply nested, FIFO, folder or device inputs; outputs onto
folders, links, devices, read-only places, missing parents, trailing slashes;
closed stdout, ``/dev/full``; SIGINT / SIGTERM mid-run; unknown options),
plus a few successes and verdicts. Issue 25 added one command's output
folder under another command, gzip bombs and floods (files, ``-``,
``/dev/zero``), signals and time limits to the SAT searches and tampered
sweep-store entries (FIFO, link to ``/dev/zero``). Each probe names what it must give:

``refused``  exit 2 and exactly one line on stderr, starting ``pipegossip``
``verdict``  exit 1 (mismatch, different, stale, invalid schedule)
``success``  exit 0
``output``   exit 4 (the output could not be written), at most one line
``sigint``   exit 130 after a SIGINT mid-run; ``sigterm``: exit 143

and never a traceback. The runner runs each probe in a fresh scratch folder
(with its own ``TMPDIR`` and waveform folder; builds go to a build cache
shared by the run) under a timeout, then checks that the user's files are
intact (a file beside the output, the target of a symbolic link, an earlier
good output, a foreign folder, the inputs) and that no temporary was left
(hidden names other than pipegossip's markers, ``*.tmp``, the scratch
folders ``.NAME.pidPID.xxxxxxxx`` of ``sim/scratch.py``, ``pipegossip-*``
folders in ``TMPDIR``).

    python3 tools/hostile_probes.py            # the full catalogue (= --all)
    python3 tools/hostile_probes.py --quick    # one cheap probe per class
    python3 tools/hostile_probes.py --list     # print the catalogue
    python3 tools/hostile_probes.py --only fpga --jobs 1

Exit status 0 only if every probe behaved as expected.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import dataclasses
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT))
from pipegossip.cli import spellings  # noqa: E402  (its COMMANDS is not the catalogue's)
from pipegossip.cli.spellings import GROUPS, notice, respell  # noqa: E402


def _python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


PG = [_python(), "-m", "pipegossip"]

#: Classes a probe may expect.
EXPECTS = ("refused", "verdict", "success", "tool", "output", "sigint", "sigterm")
_EXIT = {"refused": 2, "verdict": 1, "success": 0, "tool": 3, "output": 4, "sigint": 130,
         "sigterm": 143}

#: Hidden names pipegossip leaves on purpose (markers, the build cache's locks).
ALLOWED_HIDDEN = {".pipegossip-output", ".pipegossip-store", ".locks"}
#: A scratch folder of sim/scratch.py: ``.NAME.pidPID.xxxxxxxx``.
_SCRATCH = re.compile(r"^\..+?\.pid(?P<pid>\d+)\.[a-z0-9_]{8}$")

DEFAULT_TIMEOUT = 60.0


@dataclasses.dataclass
class Probe:
    """One command line and what it must give."""

    id: str
    command: str
    argv: list[str]
    expect: str
    stdout: str = "pipe"  # pipe | closed | full
    stdin: bytes | None = None
    signal: tuple[int, float] | None = None  # (signal, seconds after start)
    timeout: float = DEFAULT_TIMEOUT
    writes: tuple[str, ...] = ()  # sentinels the probe may change (link target on success)
    creates: tuple[str, ...] = ()  # paths that must exist afterwards (success)
    heavy: bool = False  # needs a Verilator, Yosys or FPGA build
    quick: bool = False  # in the quick subset
    setup: str | None = None  # extra scratch set-up (see _EXTRA_SETUP)
    #: A probe of an old flat spelling itself: run as written, and stderr must
    #: start with its one note. Every other probe runs in the new spelling
    #: (the catalogue is written in the old one: respelled here).
    old_spelling: str | None = None
    #: (issue 39, rel-b) extra environment for the command, and paths it must
    #: not have created (a refusal touches nothing).
    env: dict | None = None
    absent: tuple[str, ...] = ()

    def __post_init__(self):
        assert self.expect in EXPECTS, self.expect
        if self.old_spelling is None:
            self.argv, _ = respell(self.argv)
        if self.command != "pipegossip":
            self.command = command_key(self.argv)


def command_key(argv: list[str]) -> str:
    """The command a probe runs, in the new spelling: ``hw verilog``, ``schedule``
    (every generator), ``demo``."""
    argv, _ = respell(argv)
    if argv and argv[0] in GROUPS and argv[0] != "schedule" and len(argv) > 1:
        return f"{argv[0]} {argv[1]}"
    if argv and argv[0] == "schedule" and len(argv) > 1 and \
            f"schedule {argv[1]}" in {v for v, _ in spellings.COMMANDS.values()}:
        return f"schedule {argv[1]}"
    return argv[0] if argv else "pipegossip"


# --------------------------------------------------------------------------
# Fixtures: made once per run, copied into each probe's scratch folder.
# --------------------------------------------------------------------------

HUGE_BYTES = 300 * 2**20  # above the readers' 256 MiB limit (sparse, costs nothing)


def make_fixtures(base: Path) -> Path:
    """Valid inputs every probe may use, made with pipegossip itself."""
    fx = base / "fixtures"
    fx.mkdir(parents=True)
    env = _env(base / "fixtures-tmp", base)
    (base / "fixtures-tmp").mkdir()

    def pg(*args):
        r = subprocess.run([*PG, *args], cwd=fx, capture_output=True, text=True, timeout=120,
                           env=env)
        if r.returncode != 0:
            raise RuntimeError(f"fixture {' '.join(args)} failed: {r.stderr}")

    pg("schedule", "one-factor", "--n", "4", "-o", "sched.json")
    pg("schedule", "one-factor", "--n", "4", "-o", "sched.json.gz")
    pg("run", "--n", "4", "--order", "identity", "-o", "table.txt")
    pg("run", "--n", "5", "--order", "identity", "-o", "table5.txt")
    pg("conjecture21", "--workers", "0", "--max-n", "4", "--store", "store", "--format", "json")
    shutil.copy(EXAMPLES / "orders-n5.json", fx / "orders5.json")
    shutil.copy(EXAMPLES / "orders-bad.json", fx / "orders-bad.json")
    shutil.copy(EXAMPLES / "n5-identity.vcd", fx / "dump.vcd")
    # A schedule in the right format that breaks a rule: node 0 sends an item
    # it does not hold yet (item 3) in the first round.
    s = json.loads((fx / "sched.json").read_text())
    s["rounds"][0][0]["items"] = [3]
    (fx / "bad-rule.json").write_text(json.dumps(s))
    # A decompression bomb: 300 MiB of spaces in a small gzip file.
    with gzip.open(fx / "bomb.json.gz", "wb", compresslevel=9) as f:
        chunk = b" " * 2**20
        for _ in range(300):
            f.write(chunk)
    # A VCD whose values differ from dump.vcd (a run-table that differs).
    return fx


def make_scratch(folder: Path, fx: Path) -> None:
    """The user's world for one probe: inputs, sentinels, hostile files."""
    for name in ("sched.json", "sched.json.gz", "table.txt", "table5.txt", "orders5.json",
                 "orders-bad.json", "dump.vcd", "bad-rule.json", "bomb.json.gz"):
        shutil.copy(fx / name, folder / name)
    shutil.copytree(fx / "store", folder / "store")
    (folder / "tmp").mkdir()
    (folder / "waves").mkdir()
    # Sentinels: a file beside the output, a link target, an earlier good
    # output (file and folder), a foreign folder, a plain file.
    (folder / "keep.txt").write_text("the user's notes\n")
    (folder / "target.txt").write_text("the user's target\n")
    (folder / "link.txt").symlink_to("target.txt")
    (folder / "target.png").write_bytes(b"the user's picture")
    (folder / "link.png").symlink_to("target.png")
    (folder / "good.out").write_text("an earlier good output\n")
    (folder / "foreign").mkdir()
    (folder / "foreign" / "thesis.tex").write_text("\\documentclass{article}\n")
    (folder / "afile").write_text("a plain file\n")
    (folder / "folder").mkdir()
    (folder / "folder.json").mkdir()
    # Hostile inputs.
    os.mkfifo(folder / "fifo.json")
    rnd = hashlib.sha256(b"pipegossip").digest() * 64
    (folder / "binary.json").write_bytes(b"\x00\x01\x02\xff" + rnd)
    (folder / "latin1.json").write_bytes('{"format": "caf\xe9"}\n'.encode("latin-1"))
    (folder / "latin1.txt").write_bytes("# pipegossip run-table caf\xe9\n".encode("latin-1"))
    (folder / "empty.json").write_text("")
    (folder / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "truncated.json").write_text((fx / "sched.json").read_text()[:200])
    (folder / "list.json").write_text("[1, 2, 3]\n")
    (folder / "string.json").write_text('"x"\n')
    (folder / "nan.json").write_text('{"format": NaN}\n')
    (folder / "notgzip.json.gz").write_text('{"format": "pipegossip-schedule/1"}\n')
    with open(folder / "huge.json", "wb") as f:
        f.truncate(HUGE_BYTES)
    (folder / "dangling.json").symlink_to("nowhere.json")
    (folder / "loop.json").symlink_to("loop.json")
    (folder / "garbage.vcd").write_text("$date today $end\n$enddefinitions $end\n#0\nzzz\n")
    (folder / "text.txt").write_text("hello\nworld\n")


def _env(tmp: Path, base: Path) -> dict:
    env = dict(os.environ)
    env["TMPDIR"] = str(tmp)
    env["PIPEGOSSIP_BUILD_DIR"] = str(base / "build")
    env["PIPEGOSSIP_WAVES_DIR"] = str(tmp.parent / "waves")
    env.pop("PIPEGOSSIP_DEBUG", None)
    env.pop("PIPEGOSSIP_OLD_SPELLINGS", None)  # old-spelling probes expect their note
    env["PYTHONUNBUFFERED"] = "1"
    return env


# --------------------------------------------------------------------------
# The catalogue.
# --------------------------------------------------------------------------

#: Bad values of an option, by its kind. ``９`` is a full-width digit.
BAD_VALUES = {
    "positive": ["0", "-1", "abc", "\uff19", "99999999999999999999999999"],
    "nonneg": ["-1", "abc", "2.5", "99999999999999999999999999"],
    "float": ["nan", "inf", "-1", "abc"],
    "list": ["", "4,,x", "0", "-4", "4;8", "99999999999999999999999999"],
    "choice": ["nonsense"],
}

#: Fewer values for the second and later options of a command.
SHORT_BAD = {"positive": ["0", "abc", "99999999999999999999999999"],
             "nonneg": ["-1", "2.5"], "list": ["", "4,,x", "0"]}

#: Per command: a cheap valid argv, its numeric options (kind), its inputs
#: and outputs, whether its valid run is cheap enough to probe, and how big a
#: size must be refused before any work.
#:
#: ``inputs``: list of (how, slot): how is "opt:--order" (an option taking a
#: path) or "pos:0" (the positional argument at that index of the base argv).
#: ``out``: ("file"|"dir", option) or None; ``stdout``: prints its result.
COMMANDS: dict[str, dict] = {}


def cmd(name, base, numbers=(), inputs=(), out=None, stdout=False, cheap=True, huge=(),
        choices=(), heavy=False, long=None, timeout=DEFAULT_TIMEOUT, signal_at=4.0):
    COMMANDS[name] = dict(base=list(base), numbers=list(numbers), inputs=list(inputs), out=out,
                          stdout=stdout, cheap=cheap, huge=list(huge), choices=list(choices),
                          heavy=heavy, long=long, timeout=timeout, signal_at=signal_at)


CFG = ["--n", "4", "--order", "identity"]
CFG_NUMBERS = [("--n", "positive"), ("--seed", "nonneg"), ("--sessions", "positive"),
               ("--channels", "positive")]

cmd("run", CFG, CFG_NUMBERS, inputs=[("opt:--order", "orders")], out=("file", "-o"),
    stdout=True, huge=[["--n", "1000000"], ["--n", "4", "--sessions", "100000000"],
                       ["--n", "3000", "--order", "pipelined"]],
    choices=["--receive", "--format"],
    long=["--n", "3000", "--order", "identity", "--no-table"])
cmd("plot", ["utilization", *CFG, "-o", "u.png"], [("--n", "positive")],
    inputs=[("opt:--order", "orders")], out=("file", "-o"), huge=[["--n", "1000000"]])
cmd("table8", ["--max-n", "8"], [("--max-n", "positive")], stdout=True,
    huge=[["--max-n", "100000000"]], long=["--max-n", "2048"],
    signal_at=1.0)  # the whole table takes about 3 s on an idle machine
cmd("bench", ["--case", "nonexistent-case"], [], cheap=False, choices=["--case"])
cmd("conjecture21", ["--max-n", "8", "--workers", "0"],
    [("--max-n", "positive"), ("--workers", "nonneg"), ("--timeout", "float")],
    out=("dir", "--store"), stdout=True, huge=[["--max-n", "99999999999"]],
    choices=["--format"], long=["--max-n", "4096", "--workers", "0", "--no-cache"])
cmd("cosim-sweep", ["--n", "4", "--orders", "identity", "--workers", "0"],
    [("--n", "list"), ("--sessions", "list"), ("--word-seeds", "list"), ("--width", "positive"),
     ("--workers", "nonneg"), ("--timeout", "float")],
    out=("dir", "--store"), cheap=False, heavy=True,
    huge=[["--n", "100000", "--workers", "0"], ["--width", "100000", "--workers", "0"]],
    choices=["--orders", "--receive", "--simulator"])
cmd("sweep-report", ["store", "-o", "rep"], [], inputs=[("pos:0", "store")],
    out=("dir", "-o"))
cmd("verilog", [*CFG, "-o", "v.v"], [*CFG_NUMBERS, ("--width", "positive"),
                                      ("--depth", "positive"), ("--slots", "positive")],
    inputs=[("opt:--order", "orders")], out=("file", "-o"), stdout=True,
    huge=[["--n", "100000"], ["--width", "1000000"], ["--n", "4", "--width", "4097"],
          ["--fabric", "schedule", "--depth", "100000000"]],
    choices=["--fabric"])
cmd("hwsim", CFG, [("--n", "positive"), ("--width", "positive")],
    inputs=[("opt:--order", "orders")], out=("file", "--vcd"), cheap=False, heavy=True,
    huge=[["--n", "100000"]])
cmd("cost", ["--sizes", "4", "--widths", "8", "--feature-sizes", "8", "--jobs", "1"],
    [("--sizes", "list"), ("--widths", "list"), ("--jobs", "positive")],
    out=("file", "-o"), cheap=False, heavy=True, huge=[["--sizes", "100000"]])
cmd("cosim", CFG, [*CFG_NUMBERS, ("--width", "positive"), ("--runs", "positive"),
                   ("--word-seed", "nonneg"), ("--depth", "positive")],
    inputs=[("opt:--order", "orders"), ("opt:--schedule", "schedule")], cheap=False, heavy=True,
    huge=[["--n", "100000"], ["--n", "4", "--width", "100000"],
          ["--n", "4", "--runs", "99999999999"]],
    choices=["--simulator", "--mode", "--waves"], long=["--n", "12", "--order", "pipelined"],
    timeout=300)
cmd("demo", [*CFG, "-o", "d"], [("--n", "positive"), ("--width", "positive")],
    inputs=[("opt:--order", "orders")], out=("dir", "-o"), cheap=False, heavy=True,
    huge=[["--n", "100000"]])
cmd("throughput", ["--n", "4"], [("--n", "positive"), ("--sessions", "positive"),
                                 ("--width", "positive")],
    cheap=False, heavy=True, huge=[["--n", "100000"], ["--sessions", "1000000000"]])
cmd("cosim-bench", ["--n", "4"], [("--n", "positive"), ("--runs", "positive"),
                                  ("--width", "positive"), ("--fast-cycles", "positive"),
                                  ("--fast-runs", "positive")],
    cheap=False, heavy=True, huge=[["--n", "100000"], ["--runs", "1000000000000"],
                                   ["--fast-cycles", "100000000000"]],
    choices=["--modes", "--recipes"])
cmd("waves", ["dump.vcd"], [("--run", "positive")], inputs=[("pos:0", "dump")],
    out=("file", "-o"), stdout=True, huge=[["--run", "100000000"]])
cmd("diff", ["table.txt", "table.txt"], [("--run", "positive"), ("--limit", "positive")],
    inputs=[("pos:0", "table"), ("pos:1", "table")], stdout=True)
cmd("report", ["table.txt", "-o", "rep"], [("--table8-max", "positive")],
    inputs=[("pos:0", "table")], out=("dir", "-o"), huge=[["--table8-max", "100000000"]])
cmd("references", ["--check", "-o", "refs"], [], out=("dir", "-o"), cheap=False)
cmd("fpga", [*CFG, "-o", "f", "--timeout", "1"],
    [("--n", "positive"), ("--width", "positive"), ("--clock", "float"),
     ("--pnr-seed", "nonneg"), ("--timeout", "float")],
    inputs=[("opt:--order", "orders")], out=("dir", "-o"), cheap=False, heavy=True,
    huge=[["--n", "100000"], ["--width", "100000"]], choices=["--device", "--board"],
    long=["--n", "8", "--order", "pipelined", "--timeout", "5", "-o", "f"], timeout=300)
cmd("fpga-sweep", ["--n", "4", "--widths", "8", "--devices", "ice40-up5k", "--features",
                   "base", "--workers", "0"],
    [("--n", "list"), ("--widths", "list"), ("--workers", "nonneg"), ("--timeout", "float")],
    out=("dir", "-o"), cheap=False, heavy=True, huge=[["--n", "100000", "--workers", "0"]],
    choices=["--devices", "--features"])
cmd("fpga-compare", ["--targets", "ice40-up5k:4", "-o", "fc", "--timeout", "1"],
    [("--width", "positive"), ("--clock", "float"), ("--timeout", "float"),
     ("--pnr-seeds", "list")],
    out=("dir", "-o"), cheap=False, heavy=True,
    huge=[["--targets", "ice40-up5k:100000"], ["--width", "100000"]],
    choices=["--targets", "--format"])
cmd("schedule", ["one-factor", "--n", "4"], [("--n", "positive"), ("--p", "positive"),
                                              ("--k", "positive"), ("--root", "nonneg")],
    out=("file", "-o"), stdout=True,
    huge=[["--n", "1000000"], ["--n", "100000"]], choices=["--topology", "--matcher"])
cmd("schedule-run", ["run", *CFG], CFG_NUMBERS, inputs=[("opt:--order", "orders")],
    out=("file", "-o"), stdout=True, huge=[["--n", "1000000"]])
cmd("schedule-rd", ["recursive-doubling", "--topology", "hypercube", "--k", "2"],
    [("--k", "positive")], out=("file", "-o"), stdout=True, huge=[["--k", "40"]])
cmd("schedule-network", ["matching", "--topology", "hypercube", "--k", "2"],
    [("--k", "positive"), ("--lookahead", "nonneg"),
     ("--tau", "float"), ("--dist-exp", "float")], stdout=True,
    huge=[["--k", "40"], ["--topology", "mesh", "--a", "100000", "--b", "100000"]],
    choices=["--topology", "--primitive", "--weights", "--matcher"])
cmd("schedule-allreduce", ["allreduce", "--topology", "hypercube", "--k", "2"],
    [("--k", "positive")], out=("file", "-o"), stdout=True,
    huge=[["--k", "40"], ["--topology", "mesh", "--a", "100000", "--b", "100000"],
          ["--k", "14"]], choices=["--topology"])
cmd("schedule-reduce", ["reduce", "--topology", "cycle", "--n", "5", "--root", "0"],
    [("--n", "positive"), ("--root", "nonneg")], out=("file", "-o"), stdout=True,
    huge=[["--n", "100000000"], ["--root", "100000000"]])
cmd("schedule-all-port", ["all-port", "--topology", "torus", "--a", "3", "--b", "3"],
    [("--a", "positive"), ("--b", "positive")], out=("file", "-o"), stdout=True,
    huge=[["--a", "100000"], ["--a", "40", "--b", "40"]])
cmd("schedule-coloring", ["coloring", "--topology", "hypercube", "--k", "2", "--colors", "01"],
    [("--k", "positive")], stdout=True, huge=[["--k", "40"]])
cmd("schedule-literature", ["path-gossip", "--n", "5"], [("--n", "positive"),
                                                          ("--p", "positive")],
    stdout=True, huge=[["--n", "100000000"]])
cmd("check", ["sched.json"], [], inputs=[("pos:0", "schedule")], stdout=True,
    choices=["--format"])
cmd("plot-schedule", ["sched.json", "-o", "p.png"], [], inputs=[("pos:0", "schedule")],
    out=("file", "-o"))
cmd("program", ["sched.json", "-o", "p.hex"],
    [("--width", "positive"), ("--depth", "positive"), ("--slots", "positive"),
     ("--seed", "nonneg")], inputs=[("pos:0", "schedule")], out=("file", "-o"),
    huge=[["--depth", "100000000"], ["--width", "100000"]], choices=["--format", "--fabric"])
cmd("fpga-references", ["--quotes"], [], inputs=[("opt:--results", "store")])
cmd("schedule-table", ["--sizes", "4,8"], [("--min-n", "positive"), ("--max-n", "positive"),
                                            ("--sizes", "list")], stdout=True,
    huge=[["--sizes", "100000"]], choices=["--format"],
    long=["--sizes", "1024,1023,1022,1021,1020,1019"])
cmd("schedule-bench", ["--sizes", "4"], [("--sizes", "list"), ("--limit-gib", "float")],
    stdout=True, long=["--sizes", "4096"])
cmd("verilog-schedule", ["--n", "4", "-o", "vs.v"], [("--n", "positive"), ("--width", "positive"),
                                                     ("--depth", "positive"),
                                                     ("--slots", "positive")],
    out=("file", "-o"), stdout=True,
    huge=[["--n", "100000"], ["--n", "4", "--depth", "1000000000"],
          ["--n", "4", "--width", "100000"]])
cmd("cosim-schedule", ["sched.json", "-q"], [("--width", "positive"), ("--depth", "positive"),
                                             ("--seed", "nonneg")],
    inputs=[("pos:0", "schedule")], cheap=False, heavy=True,
    huge=[["--width", "100000"], ["--depth", "1000000000"]], choices=["--simulator"],
    timeout=300)
cmd("prove", ["--n", "3", "--depth", "2", "--timeout", "30", "--quiet"],
    [("--n", "positive"), ("--depth", "positive"), ("--timeout", "positive"),
     ("--sessions", "positive")],
    inputs=[("opt:--order", "orders")], out=("dir", "-o"), cheap=False, heavy=True,
    huge=[["--n", "100000"], ["--depth", "100000000"]], choices=["--mode", "--mutate"],
    long=["--schedule-family", "one-factor", "--n", "6", "--quiet"])
cmd("prove-sweep", ["--sizes", "3", "--orders", "identity", "--no-resolver", "--depth", "2"],
    [("--sizes", "list"), ("--resolver-sizes", "list"), ("--depth", "positive"),
     ("--timeout", "positive")],
    out=("dir", "-o"), cheap=False, heavy=True, huge=[["--sizes", "100000"]],
    choices=["--orders", "--options"])
cmd("literature-table", ["path-cycle", "--max-n", "8"],
    [("--max-n", "positive"), ("--max-k", "positive"), ("--max-p", "positive")],
    out=("file", "--plot"), stdout=True, huge=[["--max-n", "100000000"]],
    choices=["--format"])
cmd("polling-search", ["--k", "3", "--graph", "complete"], [("--k", "positive")], stdout=True,
    huge=[["--k", "100000"]], choices=["--graph"])
cmd("short-messages-search", ["--n", "4", "--p", "1", "--time-limit", "10"],
    [("--n", "positive"), ("--p", "positive"), ("--time-limit", "float")], stdout=True,
    huge=[["--n", "100000"], ["--n", "100000", "--p", "100000"]])
cmd("optimum", ["--topology", "cycle", "--n", "4", "--model", "F1", "--time-limit", "60"],
    [("--n", "positive"), ("--p", "positive"), ("--time-limit", "float")],
    out=("file", "-o"), stdout=True,
    huge=[["--n", "100000"], ["--topology", "complete", "--n", "100000"]],
    choices=["--topology", "--model", "--primitive", "--format"])
cmd("network-table", ["table6", "--max-k", "3"], [("--max-k", "positive")], stdout=True,
    huge=[["--max-k", "100000"]], choices=["--format"])
cmd("network-bench", ["--cases", "nonexistent"], [], cheap=False,
    long=["--cases", "knodel8192"])

#: The real sub-command of each catalogue entry (entries that are variants).
COMMAND_OF = {"schedule-run": "schedule", "schedule-rd": "schedule",
              "schedule-network": "schedule", "schedule-coloring": "schedule",
              "schedule-literature": "schedule", "schedule-allreduce": "schedule",
              "schedule-reduce": "schedule", "schedule-all-port": "schedule"}

#: Options whose bad values are in fact accepted (documented meaning).
_OK_VALUES = {("--seed", "0"), ("--workers", "0"), ("--word-seed", "0"), ("--pnr-seed", "0"),
              ("--root", "0"), ("--word-seeds", "0"), ("--pnr-seeds", "0"),
    # schedule-bench skips (and says so) sizes over its --limit-gib
    ("schedule-bench", "--sizes", "99999999999999999999999999")}


_FLAGS = ("-q", "--quiet", "--check", "--no-resolver", "--no-table8")


def _real(name: str) -> str:
    return COMMAND_OF.get(name, name)


def _replace(argv: list[str], option: str, value: str) -> list[str]:
    """``argv`` with ``option`` set to ``value`` (added when absent)."""
    out = list(argv)
    if option in out:
        i = out.index(option)
        out[i + 1] = value
        return out
    return [*out, option, value]


def _with_output(argv: list[str], option: str, value: str) -> list[str]:
    return _replace(argv, option, value)


#: Hostile values for an input slot, and what each must give.
def _input_cases(slot: str) -> list[tuple[str, str, str]]:
    """(case name, path, expected class) for an input of kind ``slot``."""
    cases = [
        ("missing", "missing.json", "refused"),
        ("folder", "folder.json", "refused"),
        ("fifo", "fifo.json", "refused"),
        ("device-zero", "/dev/zero", "refused"),
        ("binary", "binary.json", "refused"),
        ("non-utf8", "latin1.json", "refused"),
        ("empty", "empty.json", "refused"),
        ("nested", "nested.json", "refused"),
        ("huge-sparse", "huge.json", "refused"),
        ("truncated", "truncated.json", "refused"),
        ("wrong-type", "list.json", "refused"),
        ("nan", "nan.json", "refused"),
        ("dangling-link", "dangling.json", "refused"),
        ("link-loop", "loop.json", "refused"),
    ]
    if slot == "schedule":
        cases += [("not-gzip", "notgzip.json.gz", "refused"),
                  ("gzip-bomb", "bomb.json.gz", "refused"),
                  ("run-table", "table.txt", "refused")]
    if slot == "orders":
        cases += [("schedule-file", "sched.json", "refused"),
                  ("bad-orders", "orders-bad.json", "refused"),
                  ("wrong-n", "orders5.json", "refused")]  # base is N=4
    if slot == "table":
        cases = [(c, p.replace(".json", ".txt") if p.endswith("latin1.json") else p, e)
                 for c, p, e in cases if c not in ("nan", "wrong-type")]
        cases += [("garbage-vcd", "garbage.vcd", "refused"), ("text", "text.txt", "refused")]
    if slot == "dump":
        cases = [(c, p, e) for c, p, e in cases]
        cases += [("garbage-vcd", "garbage.vcd", "refused"), ("run-table", "table.txt",
                                                             "refused")]
    if slot == "store":
        cases = [("missing", "missing-store", "refused"), ("file", "afile", "refused"),
                 ("foreign-folder", "foreign", "refused"), ("fifo", "fifo.json", "refused"),
                 ("device", "/dev/null", "refused"), ("empty-folder", "folder", "refused")]
    return cases


def _file_output_cases() -> list[tuple[str, str, str, tuple, tuple]]:
    """(case, path, expected, writes, creates) for an output file."""
    return [
        ("onto-folder", "folder", "refused", (), ()),
        ("trailing-slash", "new/", "refused", (), ()),
        ("under-a-file", "afile/out.x", "refused", (), ()),
        ("read-only-proc", "/proc/pipegossip-probe.out", "refused", (), ()),
        ("dev-full", "/dev/full", "output", (), ()),
    ]


def _file_output_success_cases(suffix: str) -> list[tuple[str, str, str, tuple, tuple]]:
    return [
        ("through-link", "link.txt", "success", ("target.txt",), ("link.txt",)),
        ("missing-parents", f"a/b/c/out{suffix}", "success", (), (f"a/b/c/out{suffix}",)),
        ("dev-null", "/dev/null", "success", (), ()),
        ("over-good-output", "good.out", "success", ("good.out",), ("good.out",)),
    ]


def _dir_output_cases() -> list[tuple[str, str, str]]:
    return [
        ("onto-a-file", "afile", "refused"),
        ("foreign-folder", "foreign", "refused"),
        ("under-a-file", "afile/sub", "refused"),
        ("read-only-proc", "/proc/pipegossip-probe-dir", "refused"),
        ("device", "/dev/null", "refused"),
    ]


_SUFFIX = {"plot": ".png", "plot-schedule": ".png", "literature-table": ".png",
           "hwsim": ".vcd", "waves": ".txt", "schedule": ".json", "schedule-run": ".json",
           "schedule-rd": ".json", "schedule-allreduce": ".json", "schedule-reduce": ".json",
           "schedule-all-port": ".json"}


def catalogue() -> list[Probe]:
    """Every probe, generated from :data:`COMMANDS`."""
    probes: list[Probe] = []

    def add(name, case, argv, expect, **kw):
        spec = COMMANDS[name]
        kw.setdefault("heavy", spec["heavy"] and expect in ("success", "verdict", "sigint",
                                                             "sigterm"))
        kw.setdefault("timeout", spec["timeout"] if kw["heavy"] else DEFAULT_TIMEOUT)
        probes.append(Probe(id=f"{name}/{case}", command=_real(name), argv=list(argv),
                            expect=expect, **kw))

    for name, spec in COMMANDS.items():
        real = _real(name)
        argv0 = [real, *spec["base"]]

        def A(argv):  # noqa: E306 - kept for symmetry
            return argv

        # 1. usage: unknown option, missing value, help.
        add(name, "unknown-option", A([*argv0, "--bogus-option"]), "refused")
        add(name, "option-typo", A([*argv0, "--outptu", "x"]), "refused")
        if spec["numbers"]:
            opt = spec["numbers"][0][0]
            add(name, "missing-value", A([*argv0, opt]), "refused")
        # 2. bad numbers.
        for k, (opt, kind) in enumerate(spec["numbers"]):
            values = BAD_VALUES[kind] if k == 0 or kind == "float" else SHORT_BAD[kind]
            for value in values:
                if (opt, value) in _OK_VALUES or (name, opt, value) in _OK_VALUES:
                    continue
                if kind == "positive" and opt in ("--timeout",) and name == "fpga":
                    pass
                add(name, f"{opt.lstrip('-')}={value!r}", A(_replace(argv0, opt, value)),
                    "refused")
        for opt in spec["choices"]:
            for value in BAD_VALUES["choice"]:
                add(name, f"{opt.lstrip('-')}-choice={value!r}", A(_replace(argv0, opt, value)),
                    "refused")
        # 3. huge sizes: refused before any work, well inside the timeout.
        for i, extra in enumerate(spec["huge"]):
            argv = argv0
            for j in range(0, len(extra), 2):
                argv = _replace(argv, extra[j], extra[j + 1])
            add(name, f"huge-{i}:{' '.join(extra)}", A(argv), "refused", timeout=30)
        # 4. hostile inputs.
        for how, slot in spec["inputs"]:
            for case, path, expect in _input_cases(slot):
                if how.startswith("opt:"):
                    argv = _replace(argv0, how[4:], path)
                else:
                    argv = list(argv0)
                    k = int(how[4:])
                    # the positional after the command name (and schedule's algorithm)
                    pos = [i for i, a in enumerate(argv) if i > 0 and not a.startswith("-")
                           and (not argv[i - 1].startswith("-")
                                or argv[i - 1] in _FLAGS)]
                    argv[pos[k]] = path
                add(name, f"input{how[3:]}-{case}", A(argv), expect)
        # 5. outputs.
        out = spec["out"]
        suffix = _SUFFIX.get(name, ".out")
        if out and out[0] == "file":
            for case, path, expect, writes, creates in _file_output_cases():
                if suffix == ".png" and case == "dev-full":
                    expect = "refused"  # a figure's name must end in .png or .svg
                if name == "hwsim" and case == "dev-full":
                    expect = "refused"  # a dump is written by name: a regular file only
                if name == "cost" and case == "dev-full":
                    continue  # a full disk shows only after minutes of synthesis
                add(name, f"out-{case}", A(_with_output(argv0, out[1], path)), expect,
                    writes=writes)
            if spec["cheap"]:
                for case, path, expect, writes, creates in _file_output_success_cases(suffix):
                    if case == "over-good-output" or (case == "dev-null" and suffix == ".png"):
                        continue
                    if case == "through-link" and suffix == ".png":
                        path, writes, creates = "link.png", ("target.png",), ("link.png",)
                    add(name, f"out-{case}", A(_with_output(argv0, out[1], path)), expect,
                        writes=writes, creates=creates)
            # a refused run must leave the earlier good output alone
            if spec["numbers"]:
                opt, kind = spec["numbers"][0]
                bad = _replace(_with_output(argv0, out[1], "good.out"), opt, BAD_VALUES[kind][2])
                add(name, "out-good-output-kept-on-refusal", A(bad), "refused")
        if out and out[0] == "dir":
            for case, path, expect in _dir_output_cases():
                if name == "references" and case == "foreign-folder":
                    expect = "verdict"  # --check: a folder without the references is stale
                add(name, f"outdir-{case}", A(_with_output(argv0, out[1], path)), expect)
            if spec["numbers"]:
                opt, kind = spec["numbers"][0]
                add(name, "outdir-trailing-bad-number",
                    A(_replace(_with_output(argv0, out[1], "new/"), opt, BAD_VALUES[kind][2])),
                    "refused")
        # 6. stdout closed / full.
        if spec["stdout"] and spec["cheap"]:
            argv = [a for a in argv0]
            if out and out[0] == "file" and out[1] in argv:
                i = argv.index(out[1])
                del argv[i:i + 2]
            add(name, "stdout-closed", A(argv), "output", stdout="closed")
            add(name, "stdout-dev-full", A(argv), "output", stdout="full")
        # 7. a valid run.
        if spec["cheap"]:
            add(name, "success", A(argv0), "success")
        # 8. signals mid-run.
        if spec["long"]:
            argv = [real, *spec["long"]]
            for sig, exp in ((signal.SIGINT, "sigint"), (signal.SIGTERM, "sigterm")):
                probes.append(Probe(id=f"{name}/{exp}-mid-run", command=real,
                                    argv=argv,
                                    expect=exp, signal=(sig, spec["signal_at"]),
                                    heavy=spec["heavy"],
                                    timeout=spec["timeout"]))
    probes += _special()
    probes += _issue25_data_and_bounds()
    probes += _rellimits_probes()
    probes += _old_spelling_probes()
    probes += _rela_probes()  # rel-a, issue 39
    probes += _rel_b_probes()  # rel-b, issue 39
    probes += _regmap_probes()  # issue 41: hw regmap
    _mark_quick(probes)
    _check_unique(probes)
    return probes


def _special() -> list[Probe]:
    """Probes that do not follow the per-command pattern."""
    P = []

    def p(id_, argv, expect, **kw):
        P.append(Probe(id=id_, command="pipegossip" if id_.startswith("top/") else argv[0],
                       argv=argv, expect=expect, **kw))

    # The top level.
    p("top/no-command", [], "refused")
    p("top/unknown-command", ["frobnicate"], "refused")
    p("top/typo-command", ["cosmi", "--n", "4"], "refused")
    p("top/help", ["--help"], "success")
    p("top/version", ["--version"], "success")
    p("top/help-closed-stdout", ["--help"], "output", stdout="closed")
    # Verdicts.
    p("check/verdict-rule-broken", ["check", "bad-rule.json"], "verdict")
    p("check/verdict-rule-broken-json", ["check", "bad-rule.json", "--format", "json"], "verdict")
    p("check/stdin", ["check", "-"], "success", stdin=None, setup="stdin-sched")
    p("check/stdin-binary", ["check", "-"], "refused", stdin=b"\x00\xff" * 1000)
    p("check/stdin-empty", ["check", "-"], "refused", stdin=b"")
    p("check/gzip", ["check", "sched.json.gz"], "success")
    p("plot-schedule/verdict-rule-broken", ["plot-schedule", "bad-rule.json", "-o", "p.png"],
      "verdict")
    p("plot-schedule/not-png", ["plot-schedule", "sched.json", "-o", "p.txt"], "refused")
    p("plot/not-png", ["plot", "utilization", *CFG, "-o", "u.txt"], "refused")
    p("plot/unknown-kind", ["plot", "utilisation", *CFG, "-o", "u.png"], "refused")
    p("plot/table-success", ["plot", "table", *CFG, "-o", "t.svg"], "success", creates=("t.svg",))
    p("plot/scaling-huge", ["plot", "scaling", "--max-n", "100000000", "-o", "s.png"], "refused",
      timeout=30)
    p("plot/scaling-families", ["plot", "scaling", "--families", "nonsense", "-o", "s.png"],
      "refused")
    p("diff/verdict-different", ["diff", "table.txt", "table5.txt"], "verdict")
    p("diff/vcd-vs-table", ["diff", "dump.vcd", "table5.txt"], "success")
    p("diff/config", ["diff", "table.txt", "n=4,order=identity"], "success")
    p("waves/gtkw", ["waves", "dump.vcd", "--gtkw", "-o", "w.txt"], "success",
      creates=("w.txt",))
    p("waves/bad-top", ["waves", "dump.vcd", "--top", "nope"], "refused")
    p("references/check-default", ["references", "--check"], "success")
    p("references/write-new-folder", ["references", "-o", "refs"], "success",
      creates=("refs/table1.txt",))
    p("references/check-missing", ["references", "--check", "-o", "missing"], "refused")
    p("report/vcd-source", ["report", "table5.txt@dump.vcd", "--no-table8", "-o", "rep"],
      "success", creates=("rep/report.html",))
    p("report/bad-source-syntax", ["report", "n=abc", "-o", "rep"], "refused")
    # Its own earlier report is replaced (the page carries the minute it was
    # made); the user's notes beside it are not.
    p("report/over-earlier-report", ["report", "table.txt", "--no-table8", "-o", "rep"],
      "success", setup="earlier-report", writes=("rep/report.html",),
      creates=("rep/report.html", "rep/notes.txt"))
    p("report/current-folder", ["report", "table.txt", "--no-table8", "-o", "."], "refused")
    p("demo/current-folder", ["demo", *CFG, "-o", "."], "refused")
    p("sweep-report/default-out", ["sweep-report", "store"], "success")
    p("sweep-report/onto-its-store", ["sweep-report", "store", "-o", "store"], "refused")
    p("conjecture21/store-is-foreign", ["conjecture21", "--max-n", "8", "--workers", "0",
                                        "--store", "foreign"], "refused")
    p("conjecture21/store-is-file", ["conjecture21", "--max-n", "8", "--workers", "0",
                                     "--store", "afile"], "refused")
    p("conjecture21/scheduler-bad", ["conjecture21", "--max-n", "8", "--scheduler",
                                     "not an address"], "refused")
    p("conjecture21/scheduler-closed-port", ["conjecture21", "--max-n", "8", "--scheduler",
                                             "tcp://127.0.0.1:9", "--no-cache"], "refused")
    p("cosim-sweep/scheduler-closed-port", ["cosim-sweep", "--n", "4", "--scheduler",
                                            "tcp://127.0.0.1:9", "--no-cache"], "refused")
    p("cosim-sweep/workers-0-store-foreign", ["cosim-sweep", "--n", "4", "--workers", "0",
                                              "--store", "foreign"], "refused")
    p("fpga-sweep/workers-0-store-file", ["fpga-sweep", "--n", "4", "--workers", "0",
                                          "--store", "afile"], "refused")
    p("fpga/timeout-negative", ["fpga", *CFG, "-o", "f", "--timeout", "-5"], "refused")
    p("fpga/board-and-device", ["fpga", *CFG, "-o", "f", "--board", "icebreaker", "--device",
                                "ecp5-85k"], "refused")
    p("fpga/clock-huge", ["fpga", *CFG, "-o", "f", "--clock", "1e9"], "refused")
    p("fpga/current-folder-foreign", ["fpga", *CFG, "-o", "."], "refused")
    p("cosim/schedule-and-order", ["cosim", *CFG, "--schedule", "sched.json"], "refused")
    # An invalid schedule is the validator's verdict from every command (issue 39 item 21).
    p("cosim/schedule-verdict-file", ["cosim", "--schedule", "bad-rule.json"], "verdict")
    # Refused when Icarus is missing (CI installs it: then the run succeeds).
    p("cosim/icarus-waves", ["cosim", *CFG, "--simulator", "icarus", "--waves", "fst"],
      "refused" if shutil.which("iverilog") is None else "success")
    p("cosim-schedule/rule-broken", ["cosim-schedule", "bad-rule.json", "-q"], "verdict")
    p("cosim-schedule/one-good-one-missing", ["cosim-schedule", "sched.json", "missing.json",
                                              "-q"], "refused")
    p("cosim-schedule/depth-too-small", ["cosim-schedule", "sched.json", "--depth", "1", "-q"],
      "refused")
    p("verilog/schedule-fabric-no-order", ["verilog", "--n", "4", "--fabric", "schedule",
                                           "-o", "v.v"], "success", creates=("v.v",))
    p("verilog/name-bad", ["verilog", *CFG, "--name", "1 bad name;", "-o", "v.v"], "refused")
    p("verilog/name-keyword", ["verilog", *CFG, "--name", "module", "-o", "v.v"], "refused")
    p("schedule/unknown-algorithm", ["schedule", "quantum", "--n", "4"], "refused")
    p("schedule/run-on-hypercube", ["schedule", "run", "--n", "4", "--topology", "hypercube"],
      "refused")
    p("schedule/k-contradicts-n", ["schedule", "recursive-doubling", "--topology",
                                   "hypercube", "--k", "3", "--n", "4"], "refused")
    p("schedule/p-broken", ["schedule", "recursive-doubling", "--n", "8", "--p", "1"],
      "refused")
    p("schedule/gz-output", ["schedule", "one-factor", "--n", "4", "-o", "s.json.gz"],
      "success", creates=("s.json.gz",))
    p("schedule/root-on-gossip", ["schedule", "one-factor", "--n", "4", "--root", "0"],
      "refused")
    p("schedule/colors-bad", ["schedule", "coloring", "--topology", "hypercube", "--k", "2",
                              "--colors", "xyz"], "refused")
    # the look-ahead is bounded (0..8 rounds): a huge one used to run without end
    p("schedule/lookahead-huge", ["schedule", "matching", "--topology", "hypercube", "--k", "2",
                                  "--lookahead", "1000000"], "refused", timeout=30)
    p("schedule/topology-unknown", ["schedule", "matching", "--topology", "moebius", "--k", "2"],
      "refused")
    p("schedule/mesh-missing-b", ["schedule", "matching", "--topology", "mesh", "--a", "3"],
      "refused")
    p("schedule-table/huge-max-n", ["schedule-table", "--max-n", "100000000"], "refused",
      timeout=30)
    p("schedule-table/sizes-empty", ["schedule-table", "--sizes", ""], "refused")
    p("schedule-bench/huge-skipped", ["schedule-bench", "--sizes", "100000000", "--limit-gib",
                                      "1000000"], "success", timeout=30)
    p("schedule-table/min-above-max", ["schedule-table", "--min-n", "64", "--max-n", "4"],
      "refused")
    p("schedule-bench/limit-gib-zero", ["schedule-bench", "--sizes", "4", "--limit-gib", "0"],
      "refused")
    p("literature-table/plot-not-png", ["literature-table", "path-cycle", "--max-n", "8",
                                        "--plot", "x.txt"], "refused")
    p("literature-table/unknown-table", ["literature-table", "nonsense"], "refused")
    p("literature-table/polling-huge-k", ["literature-table", "polling", "--max-k", "100000"],
      "refused", timeout=30)
    p("literature-table/short-huge-p", ["literature-table", "short-messages", "--max-p",
                                        "100000"], "refused", timeout=30)
    p("short-messages-search/time-limit-zero", ["short-messages-search", "--n", "4", "--p", "1",
                                                "--time-limit", "0"], "refused")
    p("network-table/unknown-table", ["network-table", "table9"], "refused")
    p("network-table/max-k-zero", ["network-table", "table6", "--max-k", "0"], "refused")
    p("network-table/max-k-negative", ["network-table", "table6", "--max-k", "-2"], "refused")
    p("network-table/max-k-huge-search", ["network-table", "table6", "--max-k", "60",
                                          "--search"], "refused", timeout=30)
    p("network-bench/cases-empty", ["network-bench", "--cases", ""], "refused")
    p("network-bench/cases-dup-bad", ["network-bench", "--cases", "mesh80,,x"], "refused")
    p("prove/mutate-unknown", ["prove", "--mutate", "nope"], "refused")
    p("prove/only-bad", ["prove", "--only", "both"], "refused")
    p("prove/out-foreign", ["prove", "--n", "3", "-o", "foreign"], "refused")
    p("prove/network-nothing-to-load", ["prove", "--fabric", "network"], "refused")
    p("prove/network-too-large", ["prove", "--fabric", "network", "--topology", "hypercube",
                                  "--k", "9", "--primitive", "gossip"], "refused")
    p("prove/network-unknown-topology", ["prove", "--fabric", "network", "--topology", "nope",
                                         "--n", "4", "--primitive", "gossip"], "refused")
    p("prove/network-k-huge", ["prove", "--fabric", "network", "--topology", "hypercube",
                               "--k", "100000", "--primitive", "gossip"], "refused", timeout=30)
    p("prove/network-out-foreign", ["prove", "--fabric", "network", "--topology", "path", "--n",
                                    "4", "--primitive", "gossip", "-o", "foreign"], "refused")
    p("prove/network-schedule-missing", ["prove", "--fabric", "network", "--schedule",
                                         "missing.json"], "refused")
    p("prove-sweep/orders-bad", ["prove-sweep", "--orders", "nope"], "refused")
    p("prove-sweep/options-bad", ["prove-sweep", "--options", "nope"], "refused")
    p("bench/unknown-case", ["bench", "--case", "nope"], "refused")
    p("bench/unknown-flag", ["bench", "--fast"], "refused")
    p("hwsim/vcd-onto-folder", ["hwsim", *CFG, "--vcd", "folder"], "refused")
    p("hwsim/vcd-trailing-slash", ["hwsim", *CFG, "--vcd", "new/"], "refused")
    p("cost/o-onto-folder", ["cost", "--sizes", "4", "-o", "folder"], "refused")
    p("cost/jobs-zero", ["cost", "--jobs", "0"], "refused")
    # Cheap successes of the expensive commands (one build each, N=4).
    p("cosim/success-n4", ["cosim", *CFG, "--quiet"], "success", heavy=True, timeout=300)
    p("cosim-schedule/success-n4", ["cosim-schedule", "sched.json", "-q"], "success",
      heavy=True, timeout=300)
    p("cosim/schedule-success-n4", ["cosim", "--schedule", "sched.json", "--quiet"], "success",
      heavy=True, timeout=300)
    # fpga --help: "3 when a tool fails" (a stopped tool is a failed build, not a verdict)
    p("fpga/timeout-tiny", ["fpga", *CFG, "-o", "f", "--timeout", "0.01", "--quiet"], "tool",
      heavy=True, timeout=120)
    p("schedule/a-negative", ["schedule", "matching", "--topology", "mesh", "--a", "-3", "--b",
                              "3"], "refused")
    p("prove/success-n3", ["prove", "--n", "3", "--depth", "2", "--timeout", "60", "--quiet"],
      "success", heavy=True, timeout=180)
    p("cosim-sweep/workers-0-success", ["cosim-sweep", "--n", "4", "--orders", "identity",
                                        "--workers", "0", "--store", "st"], "success",
      heavy=True, timeout=300)
    return P


# --------------------------------------------------------------------------
# Issue 25, part A: cross-command output folders, compressed bombs, stdin
# floods, signals to solver-backed commands, tampered sweep-store entries.
# --------------------------------------------------------------------------

def _write_marked(folder: Path, command, files: dict[str, str], note: bool = True) -> None:
    """An output folder as ``pipegossip COMMAND`` leaves it (command None: an old list marker)."""
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    entries = sorted(files)
    marker = entries if command is None else {"command": command, "entries": entries}
    (folder / ".pipegossip-output").write_text(json.dumps(marker) + "\n")
    if note:
        (folder / "note.txt").write_text("the user's note\n")


_DEMO_FILES = {"n4-identity-w8.v": "module x;\nendmodule\n", "n4-identity-w8.vcd": "$end\n",
               "model.runtable.txt": "# run-table\n", "hardware.runtable.txt": "# run-table\n",
               "utilization.png": "png"}


def _gz_members(block: bytes, times: int, head: bytes = b"", tail: bytes = b"") -> bytes:
    """``head + block * times + tail`` as gzip (one member repeated: cheap to make)."""
    member = gzip.compress(block, 9, mtime=0)
    return gzip.compress(head, mtime=0) + member * times + gzip.compress(tail, mtime=0)


def _zeros_bomb() -> bytes:  # about 4 MB of gzip, 4 GiB of zeros
    return _gz_members(b"\0" * (64 << 20), 64)


def _json_flood() -> bytes:  # a gzip of 300 MB of one valid JSON list
    return _gz_members(b"12345678," * (1 << 20), 32, head=b"[", tail=b"0]")


def _setup_demo_folder(folder: Path, base: Path):
    _write_marked(folder / "d1", "demo", _DEMO_FILES)


def _setup_old_demo_folder(folder: Path, base: Path):
    _write_marked(folder / "d1", None, _DEMO_FILES)


def _setup_fpga_folder(folder: Path, base: Path):
    _write_marked(folder / "d2", "fpga", {"report.json": '{"tool": "pipegossip fpga"}\n',
                                          "top.asc": "bitstream\n"}, note=False)


def _setup_user_tables(folder: Path, base: Path):
    (folder / "userdir").mkdir()
    (folder / "userdir" / "table1.txt").write_text("my own table 1\n")


def _run_setup(folder: Path, base: Path, *argv: str) -> None:
    r = subprocess.run([*PG, *argv], cwd=folder, capture_output=True, timeout=120,
                       env=_env(folder / "tmp", base))
    if r.returncode != 0:
        raise RuntimeError(r.stderr.decode()[-300:])


def _setup_references(folder: Path, base: Path):
    _run_setup(folder, base, "references", "-o", "refs")


def _setup_sweep_report(folder: Path, base: Path):
    _run_setup(folder, base, "sweep-report", "store", "-o", "sr")


def _setup_zeros_bomb(folder: Path, base: Path):
    (folder / "bomb0.json.gz").write_bytes(_zeros_bomb())


def _setup_json_flood(folder: Path, base: Path):
    (folder / "flood.json.gz").write_bytes(_json_flood())


def _tamper_store(folder: Path, how: str) -> None:
    records = sorted((folder / "store").glob("objects/*/*.json"))
    tables = sorted((folder / "store").glob("*/table.jsonl"))
    for path in (records[0], tables[0]):
        path.unlink()
        if how == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")


#: Extra scratch set-ups by name: each may return standard input for the
#: probe (bytes, or a Path read directly, such as /dev/zero).
_EXTRA_SETUP = {
    "demo-folder": _setup_demo_folder,
    "old-demo-folder": _setup_old_demo_folder,
    "fpga-folder": _setup_fpga_folder,
    "user-tables": _setup_user_tables,
    "references-folder": _setup_references,
    "sweep-report-folder": _setup_sweep_report,
    "zeros-bomb": _setup_zeros_bomb,
    "json-flood": _setup_json_flood,
    "stdin-zeros-bomb": lambda folder, base: _zeros_bomb(),
    "stdin-json-flood": lambda folder, base: _json_flood(),
    "stdin-dev-zero": lambda folder, base: Path("/dev/zero"),
    "store-fifo": lambda folder, base: _tamper_store(folder, "fifo"),
    "store-dev-zero": lambda folder, base: _tamper_store(folder, "dev-zero"),
}


def _issue25_data_and_bounds() -> list[Probe]:
    P = []

    def p(id_, argv, expect, **kw):
        P.append(Probe(id=id_, command=argv[0], argv=argv, expect=expect, **kw))

    # Cross-command output folders: refused, nothing deleted (the runner's
    # snapshot holds every file); each command onto its own folder still works.
    p("report/onto-demo-folder", ["report", "table.txt", "--no-table8", "-o", "d1"], "refused",
      setup="demo-folder")
    p("report/onto-old-demo-folder", ["report", "table.txt", "--no-table8", "-o", "d1"],
      "refused", setup="old-demo-folder")
    p("references/onto-demo-folder", ["references", "-o", "d1"], "refused", setup="demo-folder")
    p("sweep-report/onto-fpga-folder", ["sweep-report", "store", "-o", "d2"], "refused",
      setup="fpga-folder")
    p("sweep-report/onto-report-folder", ["sweep-report", "store", "-o", "rep"], "refused",
      setup="earlier-report")
    p("references/onto-users-table", ["references", "-o", "userdir"], "refused",
      setup="user-tables")
    p("references/onto-report-folder", ["references", "-o", "rep"], "refused",
      setup="earlier-report")
    p("report/onto-references-folder", ["report", "table.txt", "--no-table8", "-o", "refs"],
      "refused", setup="references-folder")
    p("demo/onto-report-folder", ["demo", *CFG, "-o", "rep"], "refused", setup="earlier-report")
    p("fpga/onto-sweep-report-folder", ["fpga", *CFG, "-o", "sr"], "refused",
      setup="sweep-report-folder")
    p("fpga-sweep/onto-demo-folder", ["fpga-sweep", "--n", "4", "--workers", "0", "-o", "d1"],
      "refused", setup="demo-folder")
    p("fpga-compare/onto-fpga-folder", ["fpga-compare", "--targets", "ice40-up5k:4", "-o", "d2"],
      "refused", setup="fpga-folder")
    p("prove/onto-report-folder", ["prove", "--n", "3", "-o", "rep"], "refused",
      setup="earlier-report")
    p("references/over-own-folder", ["references", "-o", "refs"], "success",
      setup="references-folder", writes=("refs",), creates=("refs/table1.txt",))
    p("sweep-report/over-own-folder", ["sweep-report", "store", "-o", "sr"], "success",
      setup="sweep-report-folder", writes=("sr",), creates=("sr/results.csv",))
    # Compressed bombs and streamed floods: refused while reading.
    p("check/zeros-bomb-4mb", ["check", "bomb0.json.gz"], "refused", setup="zeros-bomb",
      timeout=30)
    p("check/gzip-of-300mb-json", ["check", "flood.json.gz"], "refused", setup="json-flood",
      timeout=30)
    p("check/stdin-zeros-bomb", ["check", "-"], "refused", setup="stdin-zeros-bomb", timeout=30)
    p("check/stdin-gzip-of-300mb-json", ["check", "-"], "refused", setup="stdin-json-flood",
      timeout=30)
    p("check/stdin-dev-zero", ["check", "-"], "refused", setup="stdin-dev-zero", timeout=30)
    p("plot-schedule/stdin-dev-zero", ["plot-schedule", "-", "-o", "p.png"], "refused",
      setup="stdin-dev-zero", timeout=30)
    p("cosim-schedule/zeros-bomb-4mb", ["cosim-schedule", "bomb0.json.gz", "-q"], "refused",
      setup="zeros-bomb", timeout=30)
    p("cosim-schedule/gzip-of-300mb-json", ["cosim-schedule", "sched.json", "flood.json.gz",
                                            "-q"], "refused", setup="json-flood", timeout=30)
    # Signals and time limits to the SAT searches (the solver runs in a child).
    for sig, exp in ((signal.SIGINT, "sigint"), (signal.SIGTERM, "sigterm")):
        p(f"polling-search/{exp}-in-solver", ["polling-search", "--k", "5", "--graph",
                                               "complete"], exp, signal=(sig, 5.0), timeout=30)
        p(f"short-messages-search/{exp}-in-solver", ["short-messages-search", "--n", "10",
                                                      "--p", "3"], exp, signal=(sig, 5.0),
          timeout=30)
    p("short-messages-search/time-limit-reached", ["short-messages-search", "--n", "10", "--p",
                                                   "3", "--time-limit", "6"], "verdict",
      timeout=30)
    p("polling-search/time-limit-reached", ["polling-search", "--k", "5", "--graph",
                                            "hypercube", "--time-limit", "6"], "verdict",
      timeout=30)
    # Tampered sweep-store entries: no hang, no growth; sweep-report refuses a store
    # whose object it cannot verify (issue 39), table8 computes that job again.
    for how in ("fifo", "dev-zero"):
        p(f"sweep-report/store-entry-{how}", ["sweep-report", "store", "-o", "rep2"], "refused",
          setup=f"store-{how}", timeout=60)
        p(f"table8/store-entry-{how}", ["table8", "--max-n", "4", "--workers", "0", "--store",
                                        "store"], "success", setup=f"store-{how}", timeout=60,
          writes=("store",))
    return P


# Which probes are in the quick subset: the first cheap probe of each kind
# of case, so every class is represented.
_QUICK_KINDS = [
    "run/unknown-option", "run/n='0'", "run/n='\uff19'", "run/huge-0:--n 1000000",
    "run/input:--order-fifo", "run/input:--order-device-zero", "run/input:--order-binary",
    "run/input:--order-non-utf8", "run/input:--order-nested", "run/input:--order-huge-sparse",
    "run/input:--order-folder", "run/out-onto-folder", "run/out-trailing-slash",
    "run/out-under-a-file", "run/out-dev-full", "run/out-through-link",
    "run/out-good-output-kept-on-refusal", "run/stdout-closed", "run/success",
    "check/input:0-gzip-bomb", "check/input:0-fifo", "check/verdict-rule-broken",
    "check/stdin-binary", "diff/verdict-different", "schedule/n='-1'",
    "schedule-table/huge-0:--sizes 100000", "verilog-schedule/huge-1:--n 4 --depth 1000000000",
    "sweep-report/outdir-foreign-folder", "sweep-report/input:0-foreign-folder",
    "conjecture21/workers='-1'", "fpga/timeout-negative", "fpga/outdir-foreign-folder",
    "network-table/max-k-zero", "literature-table/max-n='0'", "plot-schedule/out-onto-folder",
    "cosim-schedule/input:0-nested", "prove/n='0'", "top/unknown-command",
    "run/sigterm-mid-run", "table8/sigint-mid-run",
    # issue 25, part A
    "report/onto-demo-folder", "references/onto-users-table", "check/stdin-zeros-bomb",
    "check/stdin-dev-zero", "polling-search/sigterm-in-solver",
    "sweep-report/store-entry-fifo",
]


# --------------------------------------------------------------------------
# Issue 25 (rellimits): empty list items, options that do not apply, sizes
# inside the documented limits that outgrow the budgets, unclear messages.
# Each must be refused at once (the budgets estimate before any work).
# --------------------------------------------------------------------------

_BIG_NUMBER = ('{"format": "pipegossip-schedule/1", "p": ' + "1" * 5000 + "}").encode()


def _rellimits_probes() -> list[Probe]:
    refusals = {
        # empty list items
        "schedule-table/empty-list-item": ["schedule-table", "--sizes", "8,,16"],
        "network-bench/empty-list-item": ["network-bench", "--cases", "hypercube13,,"],
        "prove-sweep/empty-list-item": ["prove-sweep", "--sizes", "3,,"],
        "network-table/empty-families": ["network-table", "table5", "--families", ""],
        "cosim-sweep/empty-list-item": ["cosim-sweep", "--n", "4,,8", "--workers", "0"],
        # options that do not apply
        "literature-table/inapplicable-max-n": ["literature-table", "polling", "--max-n", "8"],
        "network-table/inapplicable-exact": ["network-table", "table6", "--exact"],
        "network-table/inapplicable-row-timeout": ["network-table", "table6",
                                                   "--row-timeout", "5"],
        "network-table/inapplicable-search": ["network-table", "table5", "--search"],
        "schedule/inapplicable-a": ["schedule", "one-factor", "--n", "4", "--a", "3"],
        "schedule/inapplicable-tau": ["schedule", "cyclic-shift", "--n", "4", "--tau", "1"],
        "prove-sweep/only-and-skip": ["prove-sweep", "--only", "schedule", "--no-schedule"],
        "prove-sweep/rows-without-table": ["prove-sweep", "--rows"],
        # sizes inside the documented limits, over the memory or time budget
        "schedule/budget-one-factor-16384": ["schedule", "one-factor", "--n", "16384"],
        "schedule/budget-cyclic-shift-16384": ["schedule", "cyclic-shift", "--n", "16384"],
        "schedule/budget-min-calls-16384": ["schedule", "min-calls", "--n", "16384"],
        "schedule/budget-path-gossip-8192": ["schedule", "path-gossip", "--n", "8192"],
        "schedule/budget-run-8192": ["schedule", "run", "--n", "8192"],
        "schedule/budget-matching-hypercube-14": ["schedule", "matching", "--topology",
                                                  "hypercube", "--k", "14"],
        "schedule/budget-matching-torus-256x64": ["schedule", "matching", "--topology", "torus",
                                                  "--a", "256", "--b", "64"],
        "literature-table/budget-path-cycle-1024": ["literature-table", "path-cycle",
                                                    "--max-n", "1024"],
        "cosim-schedule/budget-stream": ["cosim-schedule", "sched.json", "--depth", "16",
                                         "--stream", "1000000000"],
        # messages that named internals or echoed too much
        "schedule/message-k-40": ["schedule", "recursive-doubling", "--topology", "hypercube",
                                  "--k", "40"],
        "schedule/message-polling-root": ["schedule", "polling-complete", "--k", "3",
                                          "--root", "5"],
        "schedule/message-long-colours": ["schedule", "coloring", "--topology", "hypercube",
                                          "--k", "3", "--colors", "x" * 100_000],
        "verilog-schedule/message-n-1": ["verilog-schedule", "--n", "1"],
        "run/message-empty-output": ["run", "--n", "4", "--order", "identity", "-o", ""],
        "references/message-empty-output": ["references", "-o", ""],
    }
    probes = [Probe(id=k, command=v[0], argv=v, expect="refused", timeout=30)
              for k, v in refusals.items()]
    for name, data in (("5000-digit-number", _BIG_NUMBER),
                       ("negative-item", b'{"format": "pipegossip-schedule/1", "primitive": '
                        b'"gossip", "root": null, "model": "H1", "p": 1, "topology": {"name": '
                        b'"complete", "n": 2}, "origin": {"algorithm": "", "source": ""}, '
                        b'"rounds": [[{"src": 0, "dst": [1], "items": [-1]}]]}')):
        probes.append(Probe(id=f"check/stdin-{name}", command="check", argv=["check", "-"],
                            expect="refused", stdin=data, timeout=30))
    return probes


# --------------------------------------------------------------------------
# rel-a (issue 39 items 1, 2, 4-7, 14-18, 20, 21): an input is never an output,
# and inputs that used to be accepted silently. Kept in one block (rel-b adds
# other classes of issue 39 beside it).
# --------------------------------------------------------------------------

#: Every command that reads an input file and writes a file, as it succeeds
#: (the catalogue's old spellings); OUT is the output. The probes replace OUT
#: by the input itself, a symbolic link to it and a hard link of it.
_RELA_INPUT_OUTPUT = {
    "run": (["run", "--order", "orders5.json", "-o", "OUT"], "orders5.json"),
    "verilog": (["verilog", "--order", "orders5.json", "-o", "OUT"], "orders5.json"),
    "schedule-run": (["schedule", "run", "--order", "orders5.json", "-o", "OUT"],
                     "orders5.json"),
    "waves": (["waves", "dump.vcd", "-o", "OUT"], "dump.vcd"),
    "waves-json": (["waves", "dump.vcd", "--format", "json", "-o", "OUT"], "dump.vcd"),
    "program": (["program", "sched.json", "-o", "OUT"], "sched.json"),
    "program-hex": (["program", "sched.json", "--format", "hex", "-o", "OUT"], "sched.json"),
    "program-network": (["program", "sched.json", "--fabric", "network", "-o", "OUT"],
                        "sched.json"),
}


def _rela_links(folder: Path, base: Path):
    """A symbolic link to and a hard link of every input, and a dangling link."""
    for name in ("orders5.json", "dump.vcd", "sched.json"):
        os.symlink(name, folder / f"link-{name}")
        os.link(folder / name, folder / f"hard-{name}")
    os.symlink("new-output.txt", folder / "link-new.txt")


def _rela_stdin_sched(folder: Path, base: Path):
    return folder / "sched.json"  # the child's stdin is the file itself (`< sched.json`)


def _rela_user_gtkw(folder: Path, base: Path):
    (folder / "dump.gtkw").write_text("[*] the user's own save file\n")


def _rela_schedule(change) -> bytes:
    s = json.loads((EXAMPLES / "one-factor-n8.json").read_text())
    change(s)
    return json.dumps(s).encode()


def _rela_surrogate(folder: Path, base: Path):
    (folder / "surrogate.json").write_bytes(
        _rela_schedule(lambda s: s["origin"].update(source="\ud800")))


def _rela_poll3(folder: Path, base: Path):
    _run_setup(folder, base, "schedule", "polling-hypercube", "--k", "3", "-o", "poll3.json")


_EXTRA_SETUP.update({"rela-links": _rela_links, "rela-stdin-sched": _rela_stdin_sched,
                     "rela-user-gtkw": _rela_user_gtkw, "rela-surrogate": _rela_surrogate,
                     "rela-poll3": _rela_poll3})


def _rela_probes() -> list[Probe]:
    P = []
    for name, (argv, given) in _RELA_INPUT_OUTPUT.items():
        for how, out in (("same-name", given), ("symlink", f"link-{given}"),
                         ("hard-link", f"hard-{given}")):
            P.append(Probe(id=f"rela/{name}/input-is-output-{how}", command=argv[0],
                           argv=[out if a == "OUT" else a for a in argv], expect="refused",
                           setup="rela-links", timeout=60))
        # Through a link to another file: written on purpose (docs/reference.md).
        P.append(Probe(id=f"rela/{name}/through-link-to-another-file", command=argv[0],
                       argv=["link-new.txt" if a == "OUT" else a for a in argv],
                       expect="success", setup="rela-links", creates=("new-output.txt",),
                       writes=("new-output.txt",), timeout=120))
    P.append(Probe(id="rela/program/stdin-is-output", command="program",
                   argv=["program", "-", "-o", "sched.json"], expect="refused",
                   setup="rela-stdin-sched", timeout=60))
    P.append(Probe(id="rela/waves/gtkw-over-users-file", command="waves",
                   argv=["waves", "dump.vcd", "--gtkw", "-o", "t.txt"], expect="refused",
                   setup="rela-user-gtkw", timeout=60))
    P.append(Probe(id="rela/waves/gtkw-onto-output", command="waves",
                   argv=["waves", "dump.vcd", "--gtkw", "-o", "dump.gtkw"], expect="refused",
                   timeout=60))
    # Silently accepted before: now refused (2) or judged (1).
    schedules = {
        "key-twice": (_rela_schedule(lambda s: None).replace(b'"model":', b'"model": "F1", '
                                                              b'"model":', 1), "refused"),
        "lone-surrogate": (_rela_schedule(lambda s: s["origin"].update(source="\ud800")),
                           "refused"),
        # (a round of its own: without the rule the schedule is valid, exit 0)
        "no-items": (_rela_schedule(lambda s: s["rounds"].append(
            [{"src": 0, "dst": [1], "items": []}])), "verdict"),
        "explicit-edge-300000-times": (_rela_schedule(lambda s: s.update(topology={
            "name": "explicit", "n": 8, "edges": [[0, 1]] * 300_000})), "refused"),
        "explicit-edge-twice": (_rela_schedule(lambda s: s.update(topology={
            "name": "explicit", "n": 8, "edges": [[0, 1], [1, 2], [0, 1]]})), "refused"),
    }
    for name, (data, expect) in schedules.items():
        P.append(Probe(id=f"rela/check/stdin-{name}", command="check", argv=["check", "-"],
                       expect=expect, stdin=data, timeout=60))
    refused = {
        "program/lone-surrogate": ["program", "surrogate.json", "-o", "i.hex"],
        "table8/max-n-3": ["table8", "--max-n", "3"],
        "table8/max-n-huge": ["table8", "--max-n", "1000000000000"],
        "report/table8-max-3": ["report", "table.txt", "-o", "rep", "--table8-max", "3"],
        "report/table8-max-huge": ["report", "table.txt", "-o", "rep", "--table8-max",
                                   "1000000000000"],
        "schedule-table/max-n-huge": ["schedule-table", "--max-n", "1000000000000"],
        "cosim/network-fault-does-not-apply": ["cosim", "--fabric", "network", "--schedule",
                                               "poll3.json", "--fault", "drop"],
    }
    setups = {"program/lone-surrogate": "rela-surrogate",
              "cosim/network-fault-does-not-apply": "rela-poll3"}
    for name, argv in refused.items():
        P.append(Probe(id=f"rela/{name}", command=argv[0], argv=argv, expect="refused",
                       setup=setups.get(name), timeout=60))
    # An invalid schedule is one verdict (1) from every command given it (item 21).
    for name, argv in {"program": ["program", "bad-rule.json", "-o", "p.hex"],
                       "plot-schedule": ["plot-schedule", "bad-rule.json", "-o", "p.png"],
                       "prove-network": ["prove", "--fabric", "network", "--schedule",
                                         "bad-rule.json"]}.items():
        P.append(Probe(id=f"rela/{name}/invalid-schedule-verdict", command=argv[0], argv=argv,
                       expect="verdict", timeout=60))
    return P


#: One probe of each rel-a class in the quick subset.
_RELA_QUICK = ["rela/program/input-is-output-same-name", "rela/waves/input-is-output-symlink",
               "rela/run/input-is-output-hard-link", "rela/program/stdin-is-output",
               "rela/waves/gtkw-over-users-file", "rela/program/through-link-to-another-file",
               "rela/check/stdin-key-twice", "rela/table8/max-n-3",
               "rela/program/invalid-schedule-verdict"]

# -------------------------------------------------------------- end of rel-a


def _old_spelling_probes() -> list[Probe]:
    """Every old flat spelling still runs (``--help``) and is still refused in one line
    (an unknown option), each after exactly one note naming the new spelling."""
    probes = []
    for old, (new, _) in spellings.COMMANDS.items():
        if new == old:
            continue
        # (``waves --help`` is the group's help: the old ``waves`` takes a DUMP first)
        first = [old, "dump.vcd"] if old in GROUPS else [old]
        for case, argv, expect in (("help", [*first, "--help"], "success"),
                                   ("unknown-option", [old, "--bogus-option"], "refused")):
            probes.append(Probe(id=f"old-spelling/{old}-{case}", command=new, argv=argv,
                                expect=expect, old_spelling=old, timeout=30))
    return probes


#: One probe of the old spellings in the quick subset.
_SPELLING_QUICK = ["old-spelling/verilog-schedule-unknown-option", "old-spelling/waves-help"]


#: One probe of each of the classes above in the quick subset.
_RELLIMITS_QUICK = ["schedule-table/empty-list-item", "network-table/inapplicable-exact",
                    "schedule/budget-one-factor-16384", "schedule/message-k-40",
                    "check/stdin-5000-digit-number"]


# ==========================================================================
# Issue 39, rel-b block (kept apart to ease the merge with rel-a's classes):
# stores tampered, children on SIGTERM, limits before loading, timing
# windows. Every process a probe starts carries the environment tag _TAG,
# so a tool orphaned in a group of its own is still found (_tagged_alive).
# ==========================================================================

_TAG = "PIPEGOSSIP_PROBE_TAG"


def _tagged_alive(tag: str) -> list[str]:
    """Live processes whose environment holds ``_TAG=tag``: 'PID command'."""
    needle = f"{_TAG}={tag}".encode()
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            if stat[stat.rindex(")") + 2:].split()[0] == "Z":
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        alive.append(f"{entry} {cmd[:80]}")
    return alive


def _store_object(folder: Path, n: int = 4) -> Path:
    for path in sorted((folder / "store").glob("objects/*/*.json")):
        try:
            if json.loads(path.read_text())["record"]["config"]["n"] == n:
                return path
        except (ValueError, KeyError, TypeError):
            continue
    raise RuntimeError(f"no store object of N={n} in the fixture")


def _damage_store(folder: Path, how: str) -> None:
    root = folder / "store"
    if how == "marker-99":
        (root / ".pipegossip-store").write_text('{"format": 99}\n')
        return
    if how == "marker-garbage":
        (root / ".pipegossip-store").write_bytes(os.urandom(40))
        return
    if how == "format-1":
        (root / ".pipegossip-store").write_text('{"format":1}\n')
        for path in root.glob("objects/*/*.json"):
            path.write_text(json.dumps(json.loads(path.read_text())["record"]) + "\n")
        return
    victim = _store_object(folder)
    if how == "folder":
        victim.unlink()
        victim.mkdir()
        (victim / "keep.txt").write_text("the user's\n")
    elif how == "edited":
        obj = json.loads(victim.read_text())
        obj["record"]["result"]["L"] = 999999
        victim.write_text(json.dumps(obj))
    elif how == "truncated":
        victim.write_bytes(victim.read_bytes()[:60])
    elif how == "random":
        victim.write_bytes(os.urandom(500))
    elif how == "moved":  # a whole object under another key's name
        other = _store_object(folder, 2)
        shutil.copyfile(other, victim)


def _orders_file(folder: Path, n: int) -> None:
    with open(folder / f"orders{n}.json", "w") as f:
        f.write("[" + ",".join(json.dumps([j for j in range(n) if j != i]) for i in range(n))
                + "]")


def _rounds_file(folder: Path, rounds: int) -> None:
    s = json.loads((EXAMPLES / "one-factor-n8.json").read_text())
    s["rounds"] = [s["rounds"][0][:1]] * rounds
    (folder / f"rounds{rounds}.json").write_text(json.dumps(s))


for _how in ("folder", "edited", "truncated", "random", "moved", "marker-99", "marker-garbage",
             "format-1"):
    _EXTRA_SETUP[f"rel-b-store-{_how}"] = (lambda how: lambda folder, base:
                                           _damage_store(folder, how))(_how)
_EXTRA_SETUP["rel-b-orders-1200"] = lambda folder, base: _orders_file(folder, 1200)
_EXTRA_SETUP["rel-b-rounds-200002"] = lambda folder, base: _rounds_file(folder, 200_002)


def _rel_b_probes() -> list[Probe]:
    P: list[Probe] = []

    def p(id_, argv, expect, **kw):
        kw.setdefault("timeout", 120)
        P.append(Probe(id=id_, command=argv[0], argv=argv, expect=expect, **kw))

    t8 = ["table8", "--max-n", "4", "--workers", "0", "--store", "store"]
    c21 = ["conjecture21", "--max-n", "4", "--workers", "0", "--store", "store"]
    rep = ["sweep-report", "store", "-o", "rep3"]
    # -- stores tampered: a sweep recomputes a damaged object (one warning), a
    # folder in its place or an unknown marker is refused; sweep-report refuses.
    for how in ("edited", "truncated", "random", "moved"):
        p(f"table8/rel-b-store-{how}", t8, "success", setup=f"rel-b-store-{how}",
          writes=("store",))
        p(f"sweep-report/rel-b-store-{how}", rep, "refused", setup=f"rel-b-store-{how}",
          absent=("rep3",))
    p("conjecture21/rel-b-store-edited", c21, "success", setup="rel-b-store-edited",
      writes=("store",))
    for cmd, argv in (("table8", t8), ("conjecture21", c21), ("sweep-report", rep)):
        p(f"{cmd}/rel-b-store-folder", argv, "refused", setup="rel-b-store-folder",
          absent=("rep3",))
        for how in ("marker-99", "marker-garbage"):
            p(f"{cmd}/rel-b-store-{how}", argv, "refused", setup=f"rel-b-store-{how}",
              absent=("rep3",))
    p("cosim-sweep/rel-b-store-marker-99", ["cosim-sweep", "--n", "4", "--workers", "0",
                                            "--store", "store"], "refused",
      setup="rel-b-store-marker-99")
    p("table8/rel-b-store-format-1", t8, "success", setup="rel-b-store-format-1",
      writes=("store",))
    p("sweep-report/rel-b-store-format-1", rep, "success", setup="rel-b-store-format-1",
      creates=("rep3/results.csv",))
    # A dead scheduler: refused before the store is touched.
    for cmd, argv in (("table8", ["table8", "--max-n", "4"]),
                      ("cosim-sweep", ["cosim-sweep", "--n", "4"]),
                      ("conjecture21", ["conjecture21", "--max-n", "4"])):
        p(f"{cmd}/rel-b-dead-scheduler-new-store",
          [*argv, "--scheduler", "tcp://127.0.0.1:1", "--store", "newstore"], "refused",
          absent=("newstore",))
    # -- limits before loading (and before the work).
    p("verilog/rel-b-export-n362", ["verilog", "--n", "362", "--order", "pipelined"],
      "refused")
    p("cosim/rel-b-export-n300", ["cosim", "--n", "300", "--order", "identity"], "refused")
    for cmd in ("verilog", "cosim", "run"):
        p(f"{cmd}/rel-b-orders-n1200", [cmd, "--order", "orders1200.json"], "refused",
          setup="rel-b-orders-1200",
          env={"PIPEGOSSIP_MAX_MEMORY": "128M"} if cmd != "verilog" else None)
    p("program/rel-b-rounds-200002", ["program", "rounds200002.json", "-o", "r.hex"],
      "refused", setup="rel-b-rounds-200002", absent=("r.hex",))
    # -- children on SIGTERM: the main process alone (`kill PID`); no tool may
    # outlive it in any group (the tag), no build temporary stay behind.
    p("cosim-sweep/rel-b-sigterm-workers-2", ["cosim-sweep", "--n", "21,25", "--orders",
                                              "identity", "--workers", "2", "--store", "st"],
      "sigterm", signal=(signal.SIGTERM, 30.0), heavy=True, timeout=300)
    p("cosim-sweep/rel-b-sigterm-serial", ["cosim-sweep", "--n", "12", "--orders",
                                           "identity", "--workers", "0", "--store", "st"],
      "sigterm", signal=(signal.SIGTERM, 15.0), heavy=True, timeout=300)
    # -- timing windows: a signal at a known point of the start (the command
    # waits there for it: PIPEGOSSIP_TEST_HOLD), never after a guessed delay.
    for point in ("imported", "parsed"):
        for sig, exp in ((signal.SIGINT, "sigint"), (signal.SIGTERM, "sigterm")):
            p(f"table8/rel-b-{exp}-held-at-{point}", ["table8", "--max-n", "2048", "--workers",
                                                      "0", "--store", "st"], exp,
              signal=(sig, 0.0), env={"PIPEGOSSIP_TEST_HOLD": f"{point}:{{folder}}/held"},
              absent=("st",))
    return P


#: The quick subset's share of this block: one cheap probe per class.
_REL_B_QUICK = [
    "table8/rel-b-store-edited", "sweep-report/rel-b-store-random",
    "table8/rel-b-store-folder", "sweep-report/rel-b-store-marker-99",
    "table8/rel-b-dead-scheduler-new-store", "verilog/rel-b-export-n362",
    "program/rel-b-rounds-200002", "table8/rel-b-sigterm-held-at-parsed",
]


def _regmap_probes() -> list[Probe]:
    """``hw regmap`` (issue 41): bad choices and outputs refused, both formats written."""
    base = ["hw", "regmap"]
    cases = [
        ("unknown-option", [*base, "--bogus-option"], "refused", {}),
        ("bad-format", [*base, "--format", "verilog"], "refused", {}),
        ("bad-prefix", [*base, "--format", "c", "--prefix", "not an identifier"], "refused", {}),
        ("onto-a-folder", [*base, "-o", "foreign"], "refused", {}),
        ("under-a-file", [*base, "-o", "afile/sub"], "refused", {}),
        ("markdown", [*base, "-o", "regs.md"], "success", {"creates": ("regs.md",)}),
        ("c-header", [*base, "--format", "c", "-o", "regs.h"], "success",
         {"creates": ("regs.h",)}),
    ]
    return [Probe(id=f"regmap/{case}", command="hw regmap", argv=argv, expect=expect,
                  timeout=60, **kw) for case, argv, expect, kw in cases]


def _mark_quick(probes: list[Probe]) -> None:
    by_id = {p.id: p for p in probes}
    for k in _QUICK_KINDS + _RELLIMITS_QUICK + _SPELLING_QUICK + _RELA_QUICK + _REL_B_QUICK:
        if k in by_id:
            by_id[k].quick = True


def _check_unique(probes: list[Probe]) -> None:
    seen = collections.Counter(p.id for p in probes)
    dup = [k for k, v in seen.items() if v > 1]
    if dup:
        raise AssertionError(f"duplicate probe ids: {dup}")


def quick_ids() -> list[str]:
    return (list(_QUICK_KINDS) + list(_RELLIMITS_QUICK) + list(_SPELLING_QUICK)
            + list(_RELA_QUICK) + list(_REL_B_QUICK))


# --------------------------------------------------------------------------
# Running.
# --------------------------------------------------------------------------

@dataclasses.dataclass
class Result:
    probe: Probe
    outcome: str  # refused | verdict | success | output | sigint | sigterm (as expected) or fail
    problems: list[str]
    returncode: int | None
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.problems


def _snapshot(folder: Path) -> dict[str, tuple]:
    """What the user had: type and content hash of each entry (not following links)."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        rel = os.path.relpath(dirpath, folder)
        if rel.split(os.sep)[0] in ("tmp", "waves"):
            continue
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            key = os.path.normpath(os.path.join(rel, name))
            st = os.lstat(p)
            if os.path.islink(p):
                snap[key] = ("link", os.readlink(p))
            elif p.is_dir():
                snap[key] = ("dir",)
            elif p.is_file():
                if st.st_size > 2**20:
                    snap[key] = ("file", st.st_size, st.st_mtime_ns)
                else:
                    snap[key] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
            else:
                snap[key] = ("special", st.st_mode)
    return snap


def _temporaries(folder: Path, before: dict, pid: int | None) -> list[str]:
    """Temporaries left in the scratch folder (and its TMPDIR)."""
    left = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            rel = os.path.normpath(os.path.relpath(os.path.join(dirpath, name), folder))
            if rel in before:
                continue
            if rel.split(os.sep)[0] == "waves" and not name.startswith("."):
                continue
            if (name.startswith(".") and name not in ALLOWED_HIDDEN) or name.endswith(".tmp") \
                    or (rel.split(os.sep)[0] == "tmp" and rel != "tmp"):
                left.append(rel)
    # only the top entry of a left temporary folder
    left.sort()
    top = []
    for r in left:
        if not any(r.startswith(t + os.sep) for t in top):
            top.append(r)
    return top


def _build_temporaries(build: Path, pid: int) -> list[str]:
    if not build.is_dir():
        return []
    out = []
    for entry in build.rglob(f"*.pid{pid}.*"):
        if _SCRATCH.match(entry.name):
            out.append(str(entry.relative_to(build)))
    return out


def _group_alive(pgid: int) -> list[str]:
    """Processes of group ``pgid`` that still run (not zombies): 'PID command'."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) != pgid or fields[0] == "Z":
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        alive.append(f"{entry} {cmd[:80]}")
    return alive


def run_probe(probe: Probe, base: Path, fx: Path) -> Result:
    folder = Path(tempfile.mkdtemp(prefix=f"probe-{re.sub(r'[^A-Za-z0-9]+', '_', probe.id)[:60]}-",
                                   dir=base / "scratch"))
    make_scratch(folder, fx)
    stdin_data = probe.stdin
    if probe.setup == "stdin-sched":
        stdin_data = (folder / "sched.json").read_bytes()
    elif probe.setup == "earlier-report":
        r = subprocess.run([*PG, "report", "table.txt", "--no-table8", "-o", "rep"], cwd=folder,
                           capture_output=True, env=_env(folder / "tmp", base), timeout=120)
        if r.returncode != 0:
            return Result(probe, "fail", ["set-up failed: " + r.stderr.decode()[-300:]], None,
                          "", 0.0)
        (folder / "rep" / "notes.txt").write_text("the user's notes in a pipegossip folder\n")
    elif probe.setup in _EXTRA_SETUP:
        try:
            made = _EXTRA_SETUP[probe.setup](folder, base)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            return Result(probe, "fail", [f"set-up failed: {e}"[-300:]], None, "", 0.0)
        if made is not None:
            stdin_data = made
    before = _snapshot(folder)
    env = _env(folder / "tmp", base)
    env.update(probe.env or {})
    env = {k: v.replace("{folder}", str(folder)) for k, v in env.items()}
    tag = env[_TAG] = f"{os.getpid()}-{id(probe)}-{time.monotonic_ns()}"
    t0 = time.monotonic()
    problems: list[str] = []
    out_target = {"pipe": subprocess.PIPE, "closed": subprocess.DEVNULL,
                  "full": None}[probe.stdout]
    full = open("/dev/full", "w") if probe.stdout == "full" else None
    close_stdout = probe.stdout == "closed"

    def preexec():
        # As from a terminal: whatever started this runner (nohup, `&` in a
        # script) may have left SIGINT ignored, which the child would inherit.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        if close_stdout:
            os.close(1)
    stdin_file = open(stdin_data, "rb") if isinstance(stdin_data, Path) else None
    if stdin_file:  # an endless source (/dev/zero): the child reads it directly
        stdin_data = None
    proc = subprocess.Popen([*PG, *probe.argv], cwd=folder, env=env,
                            stdin=stdin_file or (subprocess.PIPE if stdin_data is not None
                                                 else subprocess.DEVNULL),
                            stdout=full if full else out_target, stderr=subprocess.PIPE,
                            preexec_fn=preexec, start_new_session=True)
    hung = False
    early = False  # finished before its signal was due (a fast machine): judged as a success
    try:
        if probe.signal:
            sig, delay = probe.signal
            held = env.get("PIPEGOSSIP_TEST_HOLD", "").partition(":")[2]
            while held and not os.path.exists(held) and proc.poll() is None and \
                    time.monotonic() - t0 < probe.timeout:  # the event, not a delay
                time.sleep(0.01)
            try:
                stdout, stderr = proc.communicate(stdin_data, timeout=delay)
                early = True
            except subprocess.TimeoutExpired:
                if sig == signal.SIGINT:
                    os.killpg(proc.pid, sig)  # Ctrl-C reaches the whole foreground group
                else:
                    proc.send_signal(sig)  # `kill PID`: the tool must stop its children
                stdin_data = None
        try:
            if not early:
                stdout, stderr = proc.communicate(stdin_data, timeout=probe.timeout)
        except subprocess.TimeoutExpired:
            hung = True
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
    finally:
        if full:
            full.close()
        if stdin_file:
            stdin_file.close()
        # Nothing of the probe may outlive it (zombies waiting for init to
        # reap them are dead already); a few seconds' grace for workers that
        # notice their parent's end.
        deadline = time.monotonic() + 5
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _group_alive(proc.pid)
        # (issue 39, rel-b) and in any other group or session: a tool started
        # in a process group of its own, orphaned when its parent went.
        left += [x for x in _tagged_alive(tag) if x not in left]
        if left:
            if not hung:
                problems.append(f"left {len(left)} process(es) running after it ended: "
                                + "; ".join(left[:2]))
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            for entry in _tagged_alive(tag):
                try:
                    os.kill(int(entry.split()[0]), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
    seconds = time.monotonic() - t0
    err = stderr.decode("utf-8", "replace") if stderr else ""
    rc = proc.returncode
    if hung:
        problems.insert(0, f"hang: no exit within {probe.timeout:g} s")
        outcome = "hang"
    else:
        # A signal probe whose command ended before the signal (a machine faster
        # than the delay assumed) must have succeeded; any other exit fails it.
        want = 0 if early else _EXIT[probe.expect]
        outcome = probe.expect if rc == want else "fail"
        if "Traceback" in err:
            problems.append("traceback on stderr")
            outcome = "traceback"
        if rc != want:
            problems.append(f"exit {rc}, expected {want} ({probe.expect})")
        lines = err.splitlines()
        if probe.old_spelling is not None:
            want_note = notice(probe.old_spelling, probe.argv)
            if not lines or lines[0] != want_note:
                problems.append(f"stderr does not start with the note {want_note!r}")
            lines = lines[1:]
            if any(x.startswith("pipegossip: note:") for x in lines):
                problems.append("more than one note on stderr")
        if probe.expect == "refused":
            if len(lines) != 1:
                problems.append(f"{len(lines)} lines on stderr, expected exactly one")
            elif not lines[0].startswith("pipegossip"):
                problems.append("stderr does not start with 'pipegossip'")
        if probe.expect == "output":  # progress lines may come first; one error line
            errors = [x for x in lines if x.startswith("pipegossip") and "error" in x]
            if len(errors) > 1:
                problems.append(f"{len(errors)} error lines on stderr, expected at most one")
    # The user's data.
    after = _snapshot(folder)
    touched = []
    for key, was in before.items():
        if key in probe.writes or any(key.startswith(w.rstrip("/") + os.sep) for w in probe.writes):
            continue
        now = after.get(key)
        if now != was:
            touched.append(f"{key} ({'removed' if now is None else 'changed'})")
    if touched:
        problems.append("data touched: " + ", ".join(touched))
        if outcome in EXPECTS:
            outcome = "data touched"
    for c in probe.creates:
        if not (folder / c).exists():
            problems.append(f"{c} was not written")
    for a in probe.absent:
        if os.path.lexists(folder / a):
            problems.append(f"{a} was created")
    for link in ("link.txt", "link.png"):
        if probe.expect == "success" and link in probe.creates and \
                not (folder / link).is_symlink():
            problems.append("the symbolic link was replaced")
    temps = _temporaries(folder, before, proc.pid)
    temps += [f"build/{t}" for t in _build_temporaries(base / "build", proc.pid)]
    if temps:
        problems.append("temporaries left: " + ", ".join(temps[:5]))
        if outcome in EXPECTS:
            outcome = "temp left"
    if not problems:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        (folder / "PROBE.txt").write_text(
            f"{probe.id}\n{' '.join(probe.argv)}\nexit {rc}\n{err}\n" + "\n".join(problems))
    return Result(probe, outcome, problems, rc, err, seconds)


def select(probes: list[Probe], quick: bool = False, only: str | None = None,
           light: bool = False) -> list[Probe]:
    out = probes
    if quick:
        out = [p for p in out if p.quick]
    if only:
        out = [p for p in out if re.search(only, p.id)]
    if light:
        out = [p for p in out if not p.heavy]
    return out


def run_all(probes: list[Probe], jobs: int = 2, base: Path | None = None,
            progress=None) -> list[Result]:
    """Run ``probes`` (heavy ones one at a time) and return their results."""
    own = base is None
    base = Path(tempfile.mkdtemp(prefix="pipegossip-probes-")) if own else base
    (base / "scratch").mkdir(parents=True, exist_ok=True)
    fx = base / "fixtures"
    if not fx.exists():
        make_fixtures(base)
    fx_before = _snapshot(fx)
    results: list[Result] = []
    light = [p for p in probes if not p.heavy]
    heavy = [p for p in probes if p.heavy]
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(run_probe, p, base, fx) for p in light]
            for f in concurrent.futures.as_completed(futures):
                r = f.result()
                results.append(r)
                if progress:
                    progress(r, len(results), len(probes))
        for p in heavy:  # builds one at a time: 2 cores are shared
            r = run_probe(p, base, fx)
            results.append(r)
            if progress:
                progress(r, len(results), len(probes))
        # The shared fixtures are only copied from: they must be as made.
        if _snapshot(fx) != fx_before:
            probe = Probe("fixtures/unchanged", "pipegossip", [], "success")
            results.append(Result(probe, "data touched", ["the shared fixtures changed"],
                                  None, "", 0.0))
            probes = [*probes, probe]
    finally:
        if own and all(r.ok for r in results):
            shutil.rmtree(base, ignore_errors=True)
    order = {p.id: i for i, p in enumerate(probes)}
    results.sort(key=lambda r: order[r.probe.id])
    return results


COUNT_CLASSES = ("refused", "verdict", "success", "tool", "output", "sigint", "sigterm",
                 "traceback",
                 "hang", "data touched", "temp left", "fail")
_LABEL = {"refused": "refused cleanly", "output": "output failure (exit 4)",
          "tool": "tool failed (exit 3)",
          "sigint": "interrupted (130)", "sigterm": "terminated (143)",
          "fail": "wrong exit / message"}


def summary(results: list[Result]) -> str:
    counts = collections.Counter(r.outcome if r.ok else
                                 (r.outcome if r.outcome not in EXPECTS else "fail")
                                 for r in results)
    lines = [f"{len(results)} probes over {len({r.probe.command for r in results})} commands"]
    for c in COUNT_CLASSES:
        lines.append(f"  {_LABEL.get(c, c):<26} {counts.get(c, 0)}")
    failed = [r for r in results if not r.ok]
    lines.append(f"  {'failures':<26} {len(failed)}")
    for r in failed:
        lines.append(f"FAIL {r.probe.id}: {'; '.join(r.problems)}")
        lines.append(f"     pipegossip {' '.join(r.probe.argv)}")
        tail = r.stderr.strip().splitlines()[-2:]
        for t in tail:
            lines.append(f"     | {t[:200]}")
    return "\n".join(lines)


def all_commands() -> set[str]:
    """Every command the CLI has, in the new spelling (``schedule``: every generator)."""
    from pipegossip import cli
    parser = cli.build_parser()
    top = next(a for a in parser._actions if a.dest == "command")
    out = set()
    algorithms = set(cli.SCHEDULE_ALGORITHMS)
    for name, sub in top.choices.items():
        if name not in GROUPS:
            out.add(name)
            continue
        inner = next(a for a in sub._actions if a.dest == f"{name}_command")
        out.update(name if name == "schedule" and c in algorithms else f"{name} {c}"
                   for c in inner.choices)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--all", action="store_true", help="the full catalogue (default)")
    g.add_argument("--quick", action="store_true", help="one cheap probe per class")
    ap.add_argument("--jobs", type=int, default=2, help="parallel probes (default 2)")
    ap.add_argument("--only", metavar="REGEX", help="probes whose id matches")
    ap.add_argument("--no-heavy", action="store_true", help="skip probes that build")
    ap.add_argument("--list", action="store_true", help="print the catalogue and exit")
    ap.add_argument("--keep", metavar="DIR", help="run in DIR and keep failing scratch folders")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per probe")
    args = ap.parse_args(argv)
    probes = catalogue()
    missing = all_commands() - {p.command for p in probes}
    if missing:
        print(f"hostile_probes: no probe for {sorted(missing)}", file=sys.stderr)
        return 1
    chosen = select(probes, quick=args.quick, only=args.only, light=args.no_heavy)
    if args.list:
        for p in chosen:
            print(f"{p.id:<60} {p.expect:<8} {'heavy ' if p.heavy else ''}"
                  f"pipegossip {' '.join(p.argv)}")
        print(f"{len(chosen)} probes")
        return 0

    def progress(r: Result, i: int, n: int):
        if args.verbose or not r.ok:
            mark = "ok  " if r.ok else "FAIL"
            print(f"[{i}/{n}] {mark} {r.probe.id} ({r.seconds:.1f}s)"
                  + ("" if r.ok else ": " + "; ".join(r.problems)), flush=True)

    base = Path(args.keep).resolve() if args.keep else None
    if base:
        base.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    results = run_all(chosen, jobs=args.jobs, base=base, progress=progress)
    print(summary(results))
    print(f"({time.monotonic() - t0:.0f} s, --jobs {args.jobs})")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
