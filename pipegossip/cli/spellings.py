"""Where every command lives: the groups of ``pipegossip`` and the old flat spellings.

The command line is ``pipegossip demo`` (the main job) and six groups,
``pipegossip GROUP COMMAND``. :data:`COMMANDS` is the one table of it: each
command as the module that defines it registers it (the old flat name),
its grouped spelling, and that module. The parser
(:func:`pipegossip.cli.build_parser`) places each command by this table,
and :func:`respell` turns an old command line into the new one, both for
``main`` (which runs it after one notice on stderr) and for the docs
(``python3 dev.py respell FILE...`` rewrites the commands of Markdown files).

Only the standard library is used here: ``dev.py`` loads this file before
anything is installed, and ``pipegossip --help`` is answered from it alone.
"""

from __future__ import annotations

import re

__all__ = ["GROUPS", "COMMANDS", "START_HERE", "new_spelling", "group_commands", "respell",
           "respell_text", "module_of", "command_path", "SCHEDULE_ALGORITHMS"]

#: The groups in the order ``pipegossip --help`` lists them, each with its line there.
GROUPS = {
    "model": "the golden model: simulate a run, draw it, time it",
    "hw": "hardware: Verilog, synthesis cost, FPGA builds, programs, proofs",
    "sim": "co-simulation of the hardware against the model",
    "waves": "waveforms: read a dump back, compare run-tables, HTML report",
    "schedule": "schedules: make one (pipegossip schedule ALGORITHM), check it",
    "paper": "the papers' tables and exact searches, reproduced",
}

#: The main job, first in ``pipegossip --help``.
START_HERE = "demo"

#: Every command: old flat spelling -> (new spelling, module that registers it).
#: Within a group, the order is the order its modules register the commands in
#: (``pipegossip GROUP --help`` lists them so).
#: A new spelling of two words is a command of its own in a group; one with
#: more words (``verilog-schedule``) is another command with options, and the
#: module is that command's.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "cli.sim"),
    # model
    "run": ("model run", "cli.model"),
    "plot": ("model plot", "cli.model"),
    "bench": ("model bench", "cli.model"),
    # hw
    "verilog": ("hw verilog", "cli.hw"),
    "verilog-schedule": ("hw verilog --fabric schedule", "cli.hw"),
    "hw regmap": ("hw regmap", "cli.hw"),  # new with the groups: no flat spelling
    "cost": ("hw cost", "cli.hw"),
    "fpga": ("hw fpga", "cli.fpga"),
    "fpga-sweep": ("hw fpga-sweep", "cli.fpga"),
    "fpga-compare": ("hw fpga-compare", "cli.fpga"),
    "program": ("hw program", "cli.program"),
    "prove": ("hw prove", "cli.prove"),
    "prove-sweep": ("hw prove-sweep", "cli.prove"),
    # sim
    "cosim": ("sim cosim", "cli.sim"),
    "cosim-schedule": ("sim cosim --schedule", "cli.sim"),
    "throughput": ("sim throughput", "cli.sim"),
    "cosim-bench": ("sim bench", "cli.sim"),
    "hwsim": ("sim hwsim", "cli.hw"),
    "cosim-sweep": ("sim sweep", "cli.sweep"),
    "sweep-report": ("sim sweep-report", "cli.sweep"),
    # waves
    "waves": ("waves read", "cli.waveforms"),
    "diff": ("waves diff", "cli.waveforms"),
    "report": ("waves report", "cli.waveforms"),
    # schedule (``schedule ALGORITHM`` is spelled as before)
    "schedule": ("schedule", "cli.schedule"),
    "check": ("schedule check", "cli.schedule"),
    "plot-schedule": ("schedule plot", "cli.schedule"),
    "schedule-table": ("schedule table", "cli.schedule"),
    "schedule-bench": ("schedule bench", "cli.schedule"),
    "optimum": ("schedule optimum", "cli.optimum"),
    # paper
    "table8": ("paper table8", "cli.model"),
    "conjecture21": ("paper conjecture21", "cli.sweep"),
    "literature-table": ("paper literature-table", "cli.literature"),
    "polling-search": ("paper polling-search", "cli.literature"),
    "short-messages-search": ("paper short-messages-search", "cli.literature"),
    "network-table": ("paper network-table", "cli.heuristics"),
    "network-bench": ("paper network-bench", "cli.heuristics"),
    "references": ("paper references", "cli.waveforms"),
    "fpga-references": ("paper fpga-references", "paper.fpga_references"),
}

#: The old spelling's options that the new one spells differently.
OPTION_RENAMES = {"cosim-schedule": {"--seed": "--word-seed", "-q": "--quiet"}}

#: Options of ``cosim-schedule`` that take a value (its other words are files).
_COSIM_SCHEDULE_VALUES = ("--width", "--depth", "--seed", "--simulator", "--stream",
                          "--banks", "--via", "--format")

#: ``pipegossip schedule ALGORITHM``: one sub-command per generator (schedule_cli).
SCHEDULE_ALGORITHMS = ("run", "one-factor", "cyclic-shift", "recursive-doubling", "min-calls",
                       "path-gossip", "cycle-gossip", "polling-complete", "polling-hypercube",
                       "polling-general", "short-messages", "matching", "coloring", "best",
                       "reduce", "allreduce", "all-port")


def new_spelling(old: str) -> str:
    """``'verilog'`` -> ``'hw verilog'`` (a name not in the table is returned as is)."""
    return COMMANDS[old][0] if old in COMMANDS else old


def module_of(old: str) -> str:
    """The module (``pipegossip.cli.hw``) that registers the command ``old``."""
    return "pipegossip." + COMMANDS[old][1]


def group_commands(group: str) -> list[str]:
    """The commands of ``group`` in table order (``['verilog', 'cost', ...]`` for hw)."""
    out = []
    for spelling, _ in COMMANDS.values():
        words = spelling.split()
        if len(words) == 2 and words[0] == group:
            out.append(words[1])
    if group == "schedule":
        out = ["ALGORITHM", *out]
    return out


def _is_old(argv: list[str], k: int) -> bool:
    """Is ``argv[k]``, a command word, an old spelling?"""
    word = argv[k]
    if word not in COMMANDS or COMMANDS[word][0] == word:
        return False
    if word in GROUPS:  # ``waves`` is a group and the old ``waves DUMP``
        nxt = argv[k + 1] if k + 1 < len(argv) else None
        return nxt is not None and nxt not in ("-h", "--help") \
            and nxt not in group_commands(word)
    return True


def _first_word(argv: list[str]) -> int | None:
    for k, word in enumerate(argv):
        if not word.startswith("-"):
            return k
        if word in ("-h", "--help", "--version"):
            return None
    return None


def respell(argv: list[str]) -> tuple[list[str], str | None]:
    """An old command line in the new spelling: ``(argv, old name)``.

    ``argv`` is what follows ``pipegossip`` (top-level options such as
    ``--debug`` may come first). A line already spelled the new way comes
    back unchanged with ``None``.
    """
    k = _first_word(argv)
    if k is None or not _is_old(argv, k):
        return list(argv), None
    old = argv[k]
    new = new_spelling(old).split()
    rest = list(argv[k + 1:])
    if old == "cosim-schedule":
        rest = _cosim_schedule_args(rest, new)
        new = new[:-1]  # ``--schedule FILE...`` goes last (it takes every word up to an option)
    else:
        renames = OPTION_RENAMES.get(old, {})
        rest = [renames.get(w, w) for w in rest]
    return [*argv[:k], *new, *rest], old


def _cosim_schedule_args(rest: list[str], new: list[str]) -> list[str]:
    """``cosim-schedule``'s words as ``cosim`` options, its files after ``--schedule``."""
    renames = OPTION_RENAMES["cosim-schedule"]
    options, files = [], []
    k = 0
    while k < len(rest):
        word = rest[k]
        name, eq, value = word.partition("=")
        if word == "--":
            files.extend(rest[k + 1:])
            break
        if word.startswith("-") and word != "-":
            options.append(renames.get(name, name) + eq + value)
            if name in _COSIM_SCHEDULE_VALUES and not eq and k + 1 < len(rest):
                options.append(rest[k + 1])
                k += 1
        else:
            files.append(word)
        k += 1
    return [*options, *([new[-1], *files] if files else [])]


def command_path(argv: list[str]) -> str:
    """``pipegossip hw verilog`` for error lines: the command the words name.

    The group and its command when both are known, the group alone when the
    command is not (argparse then says which), the old spelling as typed.
    """
    k = _first_word(argv)
    if k is None:
        return "pipegossip"
    word = argv[k]
    if word in GROUPS and not _is_old(argv, k):
        nxt = argv[k + 1] if k + 1 < len(argv) else ""
        known = group_commands(word) + (list(SCHEDULE_ALGORITHMS) if word == "schedule" else [])
        if nxt in known and nxt != "ALGORITHM":
            return f"pipegossip {word} {nxt}"
        return f"pipegossip {word}"
    return f"pipegossip {word}"


def notice(old: str, argv_new: list[str]) -> str:
    """The one line ``main`` prints on stderr for an old spelling."""
    new = new_spelling(old)
    if old == "cosim-schedule":
        new = "sim cosim --schedule FILE... (--seed is --word-seed)"
    return f"pipegossip: note: 'pipegossip {old}' is now 'pipegossip {new}'"


# ---------------------------------------------------------------- documents
#: ``pipegossip`` as a command word in a document (also ``.venv/bin/pipegossip``,
#: ``python -m pipegossip``), followed by its words.
_COMMAND = re.compile(r"(?<![\w.-])(pipegossip)((?:[ \t]+[^\s`|;&<>#()]+)+)")


def respell_text(text: str) -> str:
    """``text`` (Markdown, a shell script) with every old spelling rewritten.

    Rewritten: ``pipegossip OLD ...`` wherever it stands (fenced blocks and
    inline code alike), up to the end of the line, a backtick or a shell
    operator; the words are split at blanks (a quoted file name with a blank
    in a ``cosim-schedule`` line would be split). Applying it twice changes
    nothing more.
    """
    def one(m: re.Match) -> str:
        words_text = m.group(2)
        new, old = respell(words_text.split())
        if old is None:
            return m.group(0)
        lead = words_text[:len(words_text) - len(words_text.lstrip())]
        return m.group(1) + lead + " ".join(new)
    return _COMMAND.sub(one, text)


def old_spellings_in(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every line of ``text`` that still uses an old spelling."""
    return [(k, line) for k, line in enumerate(text.splitlines(), 1)
            if respell_text(line) != line]
