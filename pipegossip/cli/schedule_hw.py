"""The schedule fabric's work behind ``hw verilog --fabric schedule`` and
``sim cosim --schedule``: :func:`write_verilog` and :func:`cosim_files`.

(The old spellings ``verilog-schedule`` and ``cosim-schedule`` are respelled
to those two before parsing: :mod:`pipegossip.cli.spellings`.)
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..infra.files import atomic_write
from ..infra.budgets import check_budget, schedule_bytes, verilator_bytes
from ..model.errors import ConfigError
from .options import positive_int

__all__ = ["SIZE_OPTIONS", "add_size_arguments", "check_fabric_size",
           "write_verilog", "cosim_files", "cosim_text", "cosim_report_json"]


#: The schedule fabric's size options of commands that build either fabric
#: (``verilog --fabric``, ``fpga --fabric``), as :func:`~.options.refuse_given` takes them.
SIZE_OPTIONS = (("--depth", "depth", None), ("--slots", "slots", None))


def add_size_arguments(p: argparse.ArgumentParser) -> None:
    """``--depth`` and ``--slots`` of ``--fabric schedule`` (None when not given)."""
    p.add_argument("--depth", type=positive_int, default=None, metavar="D",
                   help="--fabric schedule: program entries per node; default 64")
    p.add_argument("--slots", type=positive_int, default=None, metavar="S",
                   help="--fabric schedule: store words per node; default N")


def check_fabric_size(n: int, width: int, depth: int, slots: int, what: str) -> None:
    """Refuse, before any work, a schedule fabric over the ``fabric-bits`` budget.

    Counted: the crossbar's muxes (N x N x width), every node's program
    memory (depth entries) and item store (slots words).
    """
    if n < 2:
        raise ConfigError(f"--n must be at least 2, got {n}")
    if slots < 1:  # --slots itself takes no value below 1
        return
    check_budget("fabric-bits", fabric_bits(n, width, depth, slots), what)


def fabric_bits(n: int, width: int, depth: int, slots: int) -> int:
    """Bits of the schedule fabric's crossbar, program memories and item stores."""
    from ..model.schedules.program import EntryLayout
    return n * n * width + n * depth * EntryLayout(n, slots).width + n * slots * width


def write_verilog(output: str, n: int, width: int = 8, depth: int = 64,
                  slots: int | None = None, name: str | None = None,
                  trace: bool = True, control: str | None = None) -> None:
    """Write the schedule fabric's Verilog to ``output`` (``-``: stdout); ``name`` is the
    top module's (every module's prefix), default :data:`~.hw.schedule.export.TOP`.

    ``control`` (``"axil"``, ``"wishbone"``): the fabric behind its control block.
    """
    from ..hw.schedule.export import TOP, schedule_verilog_text
    check_fabric_size(n, width, depth, slots or n,
                      f"the schedule fabric for N={n:,}, width {width}, depth {depth:,}")
    if control:
        from ..hw.schedule.fabric import ScheduleFabric
        from .ip import write_controlled
        try:
            fabric = ScheduleFabric(n, width, depth, slots)
        except (TypeError, ValueError) as e:
            raise ConfigError(str(e)) from None
        z = fabric.size
        write_controlled(output, fabric, control, name or TOP,
                         f"// n={z.n} width={z.width} depth={z.depth} slots={z.slots}\n")
        return
    try:
        text = schedule_verilog_text(n, width, depth, slots, name=name or TOP, trace=trace)
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from None
    atomic_write(output, text)


def cosim_files(files: Sequence[str], *, width: int = 8, depth: int | None = None,
                seed: int = 0, simulator: str = "verilator", progress=None,
                stream: int | None = None, banks: int = 2, via: str = "item",
                images: Sequence[str] | None = None, waves: str | None = None, dump=None):
    """Load, check and co-simulate schedule files; returns the :class:`CosimReport`.

    ``stream``, ``banks`` and ``via``: see
    :func:`pipegossip.sim.schedule.cosim.cosim_schedules`.

    Raises
    ------
    FormatError
        A file cannot be read or breaks a schedule rule (bad input).
    ProgramError
        A schedule does not fit the depth asked for (or cannot stream).
    BudgetError
        A stream whose fabric would exceed the ``fabric-bits`` budget.
    """
    from ..model.errors import FormatError
    from ..model.schedules.read_rounds import load
    from ..model.schedules.program import cycles_for
    from ..model.schedules.validate import check
    from ..sim.schedule.cosim import cosim_schedules
    schedules = []
    for f in files:
        s = load(f)
        try:
            check(s)
        except FormatError as e:  # several files: say which one breaks a rule
            e.args = (f"{f}: {e}",)  # (an invalid schedule stays a verdict: cli)
            raise
        # Refused before repeating the schedule G times or generating the fabric.
        if stream is not None:
            cycles = stream * cycles_for(s)
            # The G copies exist as one schedule, then as per-node program
            # columns (send, receive, slot: a few int64 arrays of cycles x n).
            check_budget("memory", schedule_bytes(stream * len(s.src), stream * len(s.items))
                         + 64 * s.n * cycles, f"{f} streamed {stream:,} times")
            check_fabric_size(s.n, width, depth or cycles, min(banks, stream) * s.n,
                              f"{f} streamed {stream:,} times ({cycles:,} cycles)")
        elif depth is not None:
            check_fabric_size(s.n, width, depth, s.n,  # at least one slot per node
                              f"the schedule fabric for {f} with depth {depth:,}")
        schedules.append((str(f), s))
    if simulator == "verilator" and stream is None:
        _check_build_memory(schedules, width, depth)
    return cosim_schedules(schedules, width=width, depth=depth, seed=seed,
                           simulator=simulator, progress=progress, stream=stream,
                           banks=banks, via=via, images=read_image_files(files, images),
                           waves=waves, dump=dump, companions=_companions(waves))


def read_image_files(files: Sequence[str], images: Sequence[str] | None) -> dict | None:
    """``--image``: one image per ``--schedule`` file, in order, read before any build."""
    if not images:
        return None
    from . import UsageError
    from ..hw.schedule.image_read import read_image
    if len(images) != len(files):
        raise UsageError(f"--image: one image per --schedule file, in order; got "
                         f"{len(images)} for {len(files)}")
    return {str(f): read_image(i) for f, i in zip(files, images)}


def _check_build_memory(schedules, width: int, depth: int | None) -> None:
    """Refuse a Verilator build whose estimated peak exceeds the ``memory`` budget.

    One build per N, sized as :func:`~pipegossip.sim.schedule.cosim.cosim_schedules`
    sizes it: the longest program rounded up to a power of two, N slots.
    """
    from ..model.schedules.program import cycles_for
    longest: dict[int, int] = {}
    for _, s in schedules:
        longest[s.n] = max(longest.get(s.n, 1), cycles_for(s))
    for n, cycles in longest.items():
        d = depth or 1 << (cycles - 1).bit_length()
        check_budget("memory", verilator_bytes(fabric_bits(n, width, d, n)),
                     f"the Verilator build of the schedule fabric for N={n:,}, depth {d:,}")


def cosim_text(report) -> str:
    """One line per schedule and a summary with the build count."""
    from ..model.schedules.stream import StreamProgram
    from ..sim.judge.schedule import port_figures
    lines = []
    for r in report.results:
        p, v = r.program, r.verdict
        lines.append(f"{r.name}: {'MATCH' if v.match else 'MISMATCH'} n={p.n} R={p.rounds} "
                     f"cycles={p.cycles} (+{r.record.latency} latency) "
                     f"load={r.record.load_cycles} cycles")
        if isinstance(p, StreamProgram):
            f = port_figures(p, r.record)
            lines.append(f"  stream: {p.gossips} gossips, {p.banks} bank(s) "
                         f"({p.program.slots} slots), {len(r.record.loads)} words loaded while "
                         f"running; {f['exchange_cycles']} exchange cycles, port utilisation "
                         f"min {f['min_util']:.3f}; all-to-alls per 1000 cycles: "
                         f"{f['per_1000']} steady (one every {f['period']:.1f} cycles), "
                         f"{f['per_1000_run']} over the {f['busy_cycles']} busy cycles"
                         if f["period"] else
                         f"  stream: 1 gossip, {f['exchange_cycles']} exchange cycles, port "
                         f"utilisation min {f['min_util']:.3f}")
        if not v.match:
            lines += ["  " + x for x in v.report().splitlines()[1:]]
    made = report.builds_made
    lines.append(f"{len(report.results)} schedule(s), "
                 f"{sum(r.verdict.match for r in report.results)} match; "
                 f"{len(report.builds)} build(s) used, {made} compiled now")
    return "\n".join(lines) + "\n"


def cosim_report_json(report) -> dict:
    """The JSON object of ``--format json``: overall match, builds, one verdict per schedule."""
    from ..sim.judge.schedule import schedule_verdict_json
    return dict(match=report.match, builds=len(report.builds),
                builds_compiled=report.builds_made,
                results=[schedule_verdict_json(r.verdict) for r in report.results])


def _companions(waves):
    """The writer of a dump's save file and ``.run.json`` (``--waves``), or None."""
    if not waves:
        return None
    from ..waveforms.program_dump import write_companions
    return write_companions
