"""The one sweep runner: jobs on Dask, results in a content-addressed store.

A sweep is a list of :class:`Job`: a function of a JSON configuration that
returns a JSON object, named by its importable ``module.qualname`` (Dask
worker processes import it by that name, so it cannot live in ``__main__``).
:func:`run_sweep` looks every job up in the :class:`~.sweep_store.ResultStore`,
submits the missing ones to a ``dask.distributed.Client`` (an embedded
``LocalCluster`` of one-thread worker processes, or ``--scheduler ADDRESS``),
stores each result as it arrives, streams the sweep's table, and draws a
progress line. A job that raises or times out is reported and retried on the
next run; it never stops the sweep.

Every sweep command takes the same flags, added by :func:`add_sweep_arguments`
and read by :meth:`SweepOptions.from_args`. ``--workers 0`` runs the jobs
in this process, one after the other (the serial path).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from ..infra.files import atomic_write
from ..model.errors import ConfigError
from ..cli.options import checked_number
from .child import (REGISTRY_ENV, JobError, JobTimeout, in_child, resolve as _resolve,
                    stop_registered)
from .store import (DEFAULT_STORE, ResultStore, canonical_json, code_digest, job_key,
                          tool_versions)

__all__ = ["Job", "Outcome", "SweepOptions", "SweepRun", "JobTimeout", "JobError",
           "add_sweep_arguments", "execute_job", "run_sweep"]

# host:port with an optional Dask protocol, e.g. tcp://10.0.0.5:8786 or node7:8786.
_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ws|wss|ucx|inproc)://)?"
                      r"(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+):\d{1,5}$")
_TABLE_EVERY_S = 1.0  # rewrite the streamed table at most this often (it is rewritten whole)
_POLL_S = 0.25  # how often the client looks for finished jobs


_workers = checked_number(int, "an integer", lambda v: v >= 0,
                          "must be 0 (in-process) or more, got {value}")
#: The longest --timeout: a week (the timers it reaches count milliseconds in a
#: C int, about 24 days; inf and nan are refused with the rest).
MAX_TIMEOUT_S = 7 * 24 * 3600
_seconds = checked_number(float, "seconds", lambda v: 0 < v <= MAX_TIMEOUT_S,
                          f"must be more than 0 and at most {MAX_TIMEOUT_S:,} seconds, "
                          "got {text}")


def _address(text: str) -> str:
    if not _ADDRESS.match(text):
        raise argparse.ArgumentTypeError(
            f"expected a Dask scheduler address like tcp://HOST:PORT, got {text!r}")
    return text


def add_sweep_arguments(parser: argparse.ArgumentParser,
                        formats: Sequence[str] | None = ("text", "json"),
                        timeout: float | None = None) -> None:
    """Add the flags every sweep command shares to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    formats : sequence of str, optional
        Choices of ``--format``; the first is the default. None: the command
        adds its own ``--format``.
    timeout : float, optional
        Default of ``--timeout`` in seconds (None: no limit), for sweeps
        whose jobs can run for hours.
    """
    g = parser.add_argument_group("sweep")
    g.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help="local Dask worker processes (1 thread each); default: one per core; "
                   "0 runs the jobs in this process, one after the other")
    g.add_argument("--scheduler", type=_address, default=None, metavar="ADDRESS",
                   help="use the Dask cluster at ADDRESS (tcp://HOST:PORT) instead of a local one")
    g.add_argument("--store", default=DEFAULT_STORE, metavar="DIR",
                   help=f"result store (cache, tables, figures); default {DEFAULT_STORE} "
                   "in the current folder")
    g.add_argument("--no-cache", action="store_true",
                   help="recompute every job (results are still stored); without it a "
                   "stored row is reused only when the job's configuration, tool versions "
                   "and code (the sources of the pipegossip modules it imports) are unchanged")
    g.add_argument("--timeout", type=_seconds, default=timeout, metavar="S",
                   help="stop a job after S seconds and record it as failed; default "
                   + ("none" if timeout is None else f"{timeout:g}"))
    if formats is not None:
        parser.add_argument("--format", choices=tuple(formats), default=formats[0])


@dataclass(frozen=True)
class SweepOptions:
    """How to run a sweep, as the shared flags give it."""

    store: Path
    workers: int | None = None  #: local workers; None: one per core; 0: in-process
    scheduler: str | None = None
    cache: bool = True
    timeout: float | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SweepOptions:
        """Options from :func:`add_sweep_arguments`'s flags.

        Raises
        ------
        ConfigError
            ``--workers`` together with ``--scheduler``.
        """
        if args.scheduler is not None and args.workers is not None:
            raise ConfigError("--workers sizes the local cluster; it cannot be combined "
                              "with --scheduler")
        return cls(store=Path(args.store), workers=args.workers, scheduler=args.scheduler,
                   cache=not args.no_cache, timeout=args.timeout)


@dataclass(frozen=True)
class Job:
    """One pure job: ``func(config) -> dict``, both JSON.

    Parameters
    ----------
    func : str
        ``module.qualname`` of an importable function.
    config : dict
        Its only input; JSON-able.
    tools : tuple of str
        Distributions whose versions the result depends on (``pipegossip``
        always counts), part of the store key.
    label : str
        Short name for tables and error lines, e.g. ``N=1024``.
    """

    func: str
    config: dict
    tools: tuple[str, ...] = ()
    label: str = ""
    #: The job starts tools (a Verilator build): it runs in a process group of its own.
    isolated: bool = False

    @classmethod
    def of(cls, func: Callable[[dict], dict], config: dict, tools: Sequence[str] = (),
           label: str = "", isolated: bool = False) -> Job:
        """A job of a module-level function (named by its module and qualified name)."""
        return cls(f"{func.__module__}.{func.__qualname__}", config, tuple(tools), label,
                   isolated)


@dataclass
class Outcome:
    """What became of one job in one run."""

    job: Job
    key: str
    status: str  #: ``cached``, ``done`` or ``failed``
    result: dict | None = None
    error: str | None = None
    seconds: float | None = None  #: the job's own compute time (of the run that made it)

    def row(self) -> dict:
        """The job's line in the sweep's table."""
        row = {"key": self.key, "job": self.job.func, "label": self.job.label,
               "config": self.job.config, "status": self.status, "seconds": self.seconds}
        row.update({"result": self.result} if self.error is None else {"error": self.error})
        return row


@dataclass
class SweepRun:
    """The outcomes of one sweep run, in the order the jobs were given."""

    sweep: str
    outcomes: list[Outcome]
    wall_seconds: float
    store: ResultStore
    counts: dict[str, int] = field(init=False)

    def __post_init__(self):
        self.counts = {s: sum(o.status == s for o in self.outcomes)
                       for s in ("done", "cached", "failed")}

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "failed"]


def execute_job(func: str, config: dict, timeout: float | None = None,
                isolated: bool = False) -> str:
    """Run one job where it lands (a Dask worker, or this process); return its JSON.

    The result travels as JSON text so that what is stored is exactly what a
    job returned. With a ``timeout``, or ``isolated`` (a job that starts
    tools), the job runs in a child process group of its own
    (:mod:`.child`), the only thing that can be stopped with its tools
    and temporaries (and a crash there cannot take the worker down).

    Raises
    ------
    JobTimeout
        The job ran longer than ``timeout`` seconds.
    """
    start = time.monotonic()
    if timeout is None and not isolated:
        result = _resolve(func)(config)
        text = canonical_json(result)
    else:
        text = in_child(func, config, timeout)
        result = json.loads(text)
    if not isinstance(result, dict):
        raise TypeError(f"job {func} returned {type(result).__name__}, not a JSON object")
    return canonical_json({"result": result, "seconds": round(time.monotonic() - start, 3)})


class _Progress:
    """One line of counts and ETA: redrawn in place on a TTY, else a line every few seconds."""

    def __init__(self, sweep: str, total: int, stream: TextIO | None, every_s: float = 5.0):
        self.sweep, self.total, self.stream, self.every_s = sweep, total, stream, every_s
        self.tty = stream is not None and stream.isatty()
        self.start = time.monotonic()
        self.last = -every_s
        self.counts = {"done": 0, "failed": 0, "cached": 0}
        self.shown: dict[str, int] = {}

    def add(self, status: str) -> None:
        self.counts[status] += 1
        self.draw()

    def line(self) -> str:
        c = self.counts
        remaining = self.total - sum(c.values())
        ran = c["done"] + c["failed"]
        elapsed = time.monotonic() - self.start
        eta = "ETA " + (_duration(elapsed / ran * remaining) if ran else "?")
        return (f"{self.sweep}: {c['done']} completed, {c['failed']} failed, {c['cached']} cached, "
                f"{remaining} remaining, {_duration(elapsed)} elapsed, "
                + ("done" if remaining == 0 else eta))

    def draw(self, final: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K" + ("\n" if final else ""))
        elif (now - self.last >= self.every_s
              or final and self.shown != self.counts):  # no repeat of the last line
            self.stream.write(self.line() + "\n")
            self.last, self.shown = now, dict(self.counts)
        self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


class _Table:
    """The sweep's ``table.jsonl``, rewritten whole (atomically) as results arrive."""

    def __init__(self, path: Path):
        self.path, self.rows, self.last = path, [], 0.0

    def add(self, outcome: Outcome) -> None:
        self.rows.append(json.dumps(outcome.row(), sort_keys=True))
        if time.monotonic() - self.last >= _TABLE_EVERY_S:
            self.flush()

    def flush(self) -> None:
        atomic_write(self.path, "".join(line + "\n" for line in self.rows))
        self.last = time.monotonic()


def run_sweep(sweep: str, jobs: Sequence[Job], options: SweepOptions,
              progress: TextIO | bool = True) -> SweepRun:
    """Run ``jobs`` (cached ones from the store, the rest on Dask); return every outcome.

    Parameters
    ----------
    sweep : str
        Name of the sweep: its table and figures go to ``STORE/sweep/``.
    jobs : sequence of Job
        Submitted in this order (give the longest first for the shortest sweep).
    options : SweepOptions
    progress : text stream or bool
        Where the progress line goes: a stream, True for standard error (as
        it is when the sweep runs), False for silence.

    Raises
    ------
    ConfigError
        Unusable store, or no scheduler at ``options.scheduler``.
    KeyboardInterrupt
        After the cluster is closed and everything received is stored.
    """
    start = time.monotonic()
    # A cluster named by --scheduler is reached before the store is touched:
    # a wrong address creates nothing (issue 39).
    remote = _connect(options.scheduler) if options.scheduler is not None else None
    try:
        return _sweep(sweep, jobs, options, progress, remote, start)
    finally:
        if remote is not None:
            remote.close()


def _connect(address: str):
    """A Dask client of the scheduler at ``address``; ConfigError if none answers."""
    from dask.distributed import Client

    try:
        return Client(address, timeout=10)
    except (OSError, TimeoutError) as e:
        raise ConfigError(f"no Dask scheduler at {address}: {_one_line(e)}") from None


def _sweep(sweep: str, jobs: Sequence[Job], options: SweepOptions, progress: TextIO | bool,
           remote, start: float) -> SweepRun:
    store = ResultStore(options.store)
    table = _Table(store.sweep_dir(sweep) / "table.jsonl")
    stream = sys.stderr if progress is True else progress or None
    bar = _Progress(sweep, len(jobs), stream)
    versions = {tools: tool_versions(tools) for tools in {j.tools for j in jobs}}
    # The job's code is in its key: a row cached before an edit is computed again.
    codes = {j.func: code_digest(j.func.rpartition(".")[0]) for j in jobs}
    outcomes: list[Outcome] = []
    pending: list[Outcome] = []
    keys: set[str] = set()
    unverified = 0
    for job in jobs:
        key = job_key(job.func, job.config, versions[job.tools], codes[job.func])
        if key in keys:
            raise ValueError(f"sweep {sweep!r} lists job {job.func} {job.config} twice")
        keys.add(key)
        record = None
        if options.cache:
            found = store.lookup(key)
            record = found.record
            if found.state == "damaged":
                _warn(f"sweep store object {str(found.path)!r} is damaged ({found.why}): "
                      f"computing {job.label or job.func} again")
            unverified += found.state == "unverified"
        if record is not None:
            outcome = Outcome(job, key, "cached", record["result"], seconds=record.get("seconds"))
            table.add(outcome)
            bar.counts["cached"] += 1
        else:
            outcome = Outcome(job, key, "pending")
            pending.append(outcome)
        outcomes.append(outcome)

    if unverified:
        _warn(f"{unverified} record(s) of store {str(options.store)!r} were written by an older "
              "pipegossip without a checksum: computing them again")

    def finish(outcome: Outcome, text: str | None, error: BaseException | None) -> None:
        if error is None:
            reply = json.loads(text)
            stored = store.put(outcome.key, {
                "key": outcome.key, "job": outcome.job.func, "config": outcome.job.config,
                "versions": versions[outcome.job.tools], "code": codes[outcome.job.func],
                "result": reply["result"],
                "seconds": reply["seconds"],
                "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")})
            outcome.status, outcome.result = "done", stored["result"]
            outcome.seconds = reply["seconds"]
        else:
            outcome.status, outcome.error = "failed", _one_line(error)
        table.add(outcome)
        bar.add(outcome.status)

    refused = False  # a scheduler that cannot be reached: one error line, no progress
    try:
        if options.workers == 0:
            if pending:  # all cached: the final line alone says so
                bar.draw()
            for outcome in pending:
                try:
                    text = execute_job(outcome.job.func, outcome.job.config, options.timeout,
                                       outcome.job.isolated)
                except Exception as e:  # noqa: BLE001 - a failed job is recorded, not fatal
                    finish(outcome, None, e)
                else:
                    finish(outcome, text, None)
        elif pending:
            _run_dask(pending, options, finish, bar.draw, remote)
    except ConfigError:
        refused = True
        raise
    finally:
        table.flush()
        if not refused:
            bar.draw(final=True)
    return SweepRun(sweep, outcomes, time.monotonic() - start, store)


def _warn(message: str) -> None:
    print(f"pipegossip: warning: {message}", file=sys.stderr, flush=True)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    if isinstance(error, JobError):  # already "ValueError: ..." from the job's process
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _run_dask(pending: list[Outcome], options: SweepOptions,
              finish: Callable[[Outcome, str | None, BaseException | None], None],
              heartbeat: Callable[[], None], remote=None) -> None:
    import dask
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    scratch = registry = None
    try:
        if options.scheduler is None:
            workers = options.workers or len(os.sched_getaffinity(0))
            # The scheduler's and workers' scratch folder is ours and goes with
            # the cluster (Dask's default, TMPDIR/dask-scratch-space, outlives it).
            scratch = tempfile.mkdtemp(prefix="pipegossip-dask-")
            registry = os.path.join(scratch, "jobs")  # the job children (sweeps/child.py)
            os.mkdir(registry)
            # Dashboard on a free port: several sweeps on one machine would fight over 8787.
            with _quiet_cluster_start(), dask.config.set({"temporary-directory": scratch}):
                cluster = LocalCluster(n_workers=min(workers, len(pending)),
                                       threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.CRITICAL,
                                       env={REGISTRY_ENV: registry})
            client = Client(cluster)
        else:
            client = remote  # connected by run_sweep, closed there
        futures = {}
        heartbeat()  # the first progress line, once there is a cluster to run on
        with client:
            try:
                for outcome in pending:
                    # The store key names the task, so identical jobs share one.
                    name = f"{outcome.job.func.rpartition('.')[2]}-{outcome.key}"
                    futures[client.submit(execute_job, outcome.job.func, outcome.job.config,
                                          options.timeout, outcome.job.isolated, key=name,
                                          pure=False)] = outcome
                arrivals = as_completed(futures)
                while futures:
                    batch = arrivals.next_batch(block=False)
                    if not batch:  # long jobs: keep the elapsed time and ETA moving
                        heartbeat()
                        time.sleep(_POLL_S)
                    for future in batch:
                        outcome = futures.pop(future)
                        if future.status == "finished":
                            finish(outcome, future.result(), None)
                        else:
                            finish(outcome, None, future.exception())
            finally:
                if futures:  # interrupted: stop the work nobody will collect
                    client.cancel(list(futures))
    finally:
        # Jobs still running with their tools (stopped: the command is being
        # stopped) clean up while the cluster closes; the command waits for
        # each before it goes, so no tool and no temporary outlives it.
        if registry is not None:
            stop_registered(Path(registry), wait=False)
        if cluster is not None:
            cluster.close()
        if registry is not None:
            stop_registered(Path(registry), wait=True)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def _quiet_cluster_start():
    """Start the local cluster so that an interrupt cannot break it half-made.

    A terminal's Ctrl-C reaches the whole process group, so worker processes
    still importing Dask would each print a ``KeyboardInterrupt`` traceback,
    and an interrupt inside ``LocalCluster()`` leaves a half-made cluster to
    an ``atexit`` hook that fails on it with another traceback. Here the
    workers are started with standard error on the null device (they log
    nothing we show: job errors come back through their futures), and
    SIGINT / SIGTERM to this process are held back until the cluster exists
    (or failed to start), then acted on, so the caller's ``finally`` closes it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    sigs = (signal.SIGINT, signal.SIGTERM)
    old = {sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in sigs}
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    try:
        yield
    except Exception:
        if not held:
            raise
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if held:
        handler = old[held[0]]
        if callable(handler):
            handler(held[0], None)  # KeyboardInterrupt, or the CLI's SystemExit(143)
        if held[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + held[0])
