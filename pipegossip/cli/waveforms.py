"""Sub-commands ``waves``, ``diff``, ``report`` and ``references``."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from . import UsageError, typed_command
from ..infra.files import OutputKind, atomic_directory, atomic_write, check_output_dir, check_output_file
from ..infra.budgets import check_model_memory
from .options import positive_int, power_of_two
from ..waveforms.diff import diff_tables, format_diff
from ..waveforms.gtkw import check_gtkw_files, gtkw_files, write_gtkw
from ..waveforms.readback import read_dump
from ..model.paper import paper_cases
from ..waveforms.reference import (REFERENCE_DIR, REFERENCES_OUTPUT, check_references,
                                   write_references)
from ..waveforms.report import MAX_TABLE8_N, build_items
from ..waveforms.report_html import render_report
from ..waveforms.sources import load_source

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "waves", help="read a fabric's run-table back from a VCD/FST dump",
        description="Reconstruct the run-table (format in docs/reference.md) from the fabric's trace ports "
        "in a waveform dump (Verilator via cocotb, or Amaranth's simulator), sampling each "
        "signal just before every rising clock edge from the edge that took `start`. "
        "Exit status 0: read, 1: read but the dump breaks the interface contract "
        "(listed), 2: unreadable.")
    p.add_argument("dump", metavar="DUMP", help=".vcd or .fst file")
    p.add_argument("--top", metavar="SCOPE",
                   help="scope of the fabric when the dump holds several (full dotted path "
                   "or its last components)")
    p.add_argument("--run", type=positive_int, default=None, metavar="K",
                   help="which run of the dump (counting accepted starts); default 1 (a "
                   "schedule or network fabric's dump: every run)")
    p.add_argument("--clock", default="clk", metavar="NAME", help="clock port; default clk")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-o", "--output", metavar="PATH", help="write to PATH instead of stdout")
    p.add_argument("--gtkw", action="store_true",
                   help="also write DUMP's GTKWave save file and translate filters beside it")
    p.set_defaults(func=cmd_waves)

    p = sub.add_parser(
        "diff", help="compare two run-tables (text, dump or configuration)",
        description="Compare two run-tables token for token (format in docs/reference.md) and print the "
        "first differences and both utilisation strings. A side is a run-table text file, a "
        ".vcd/.fst dump, a configuration such as n=5,order=identity (run through the model), "
        "or a paper reference name (table1 ...). Exit status 0: equal, 1: different, "
        "2: unreadable input.")
    p.add_argument("expected", metavar="A")
    p.add_argument("got", metavar="B")
    p.add_argument("--top", metavar="SCOPE", help="fabric scope in a dump (as for waves)")
    p.add_argument("--run", type=positive_int, default=1, metavar="K",
                   help="which run of a dump; default 1")
    p.add_argument("--limit", type=positive_int, default=20, metavar="K",
                   help="list at most K differing slots; default 20")
    p.add_argument("--exact", action="store_true",
                   help="also compare the peers of WS and WR (both sides must be dumps or "
                   "configurations: a text table does not carry them)")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser(
        "report", help="one self-contained HTML page for some configurations",
        description="Write one HTML page (no network needed: inline CSS, embedded PNG) with, "
        "per SOURCE, the run-table picture, the utilisation profile, L/mu/E, the paper "
        "reference and, for SOURCE@DUMP, the hardware-versus-model verdict; then Table 8 "
        "beside the paper's. SOURCE: n=8,order=pipelined[,receive=any][,substitute]"
        "[,sessions=K][,channels=K][,seed=S], a run-table text file, a dump, or a paper "
        "reference name (table1 ...).")
    p.add_argument("sources", nargs="+", metavar="SOURCE[@DUMP]")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="folder for report.html (created if missing)")
    p.add_argument("--top", metavar="SCOPE", help="fabric scope in the dumps")
    p.add_argument("--table8-max", type=power_of_two, default=MAX_TABLE8_N, metavar="N",
                   help=f"Table 8 for N = 2, 4, ... up to N (a power of two); default "
                   f"{MAX_TABLE8_N}")
    p.add_argument("--no-table8", action="store_true", help="leave Table 8 out")
    p.add_argument("--title", default="pipegossip report")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "references", help="regenerate or check the paper's reference run-tables",
        description="Write waveforms/reference/<name>.txt for every paper table the model "
        "reproduces (pipegossip.model.paper), or with --check only compare (exit 1 when stale).")
    p.add_argument("--check", action="store_true", help="compare only; write nothing")
    p.add_argument("-o", "--output", default=str(REFERENCE_DIR), metavar="DIR",
                   help="reference folder (default waveforms/reference)")
    p.set_defaults(func=cmd_references)


def _emit(text: str, output: str | None) -> None:
    if output:
        atomic_write(output, text)
    else:
        sys.stdout.write(text)


def cmd_waves(args: argparse.Namespace) -> int:
    # Every output location is checked before anything is written.
    if args.output:
        check_output_file(args.output)
    if args.gtkw:  # beside the dump: never over a file of the user's (docs/reference.md)
        check_gtkw_files(args.dump, ports=False)
        if args.output and any(os.path.realpath(args.output) == os.path.realpath(p)
                               for p in gtkw_files(args.dump)):
            raise UsageError(f"-o {args.output!r} is one of the files --gtkw writes beside "
                             "the dump; give another name")
    from ..waveforms.program_dump import has_program_run
    if has_program_run(args.dump):
        return _program_waves(args)
    rb = read_dump(args.dump, top=args.top, run=args.run or 1, clock=args.clock)
    if args.format == "json":
        text = json.dumps(rb.to_json()) + "\n"
    else:
        lines = [rb.table.render().rstrip("\n")]
        if rb.length:
            lines.append("# " + rb.table.metrics.summary())
        if rb.missing:
            lines.append("# not in the dump (checks skipped): " + ", ".join(rb.missing))
        lines += [f"# problem: {p}" for p in rb.problems]
        text = "\n".join(lines) + "\n"
    _emit(text, args.output)
    if args.gtkw:
        print(f"{typed_command()}: wrote {write_gtkw(args.dump, rb.n, top=args.top)}",
              file=sys.stderr)
    for p in rb.problems:
        print(f"{typed_command()}: {p}", file=sys.stderr)
    return 1 if rb.problems else 0


def _program_waves(args: argparse.Namespace) -> int:
    """``waves read`` of a schedule or network fabric's dump: every run read back into the
    record the judge reads and judged again; exit 1 when one does not match."""
    from . import UsageError
    from ..waveforms.program_dump import read_program_dump
    if args.gtkw or args.top:
        raise UsageError("--gtkw and --top apply to the FSM fabric's dumps (a schedule or "
                         "network fabric's dump has its save file beside it)")
    runs = read_program_dump(args.dump, run=args.run)
    if args.format == "json":
        from ..sim.judge.network import network_verdict_json
        from ..sim.judge.schedule import schedule_verdict_json
        rows = [dict(name=r.name, record=r.record.to_json(),
                     verdict=(network_verdict_json(r.verdict) if hasattr(r.record, "ports")
                              else schedule_verdict_json(r.verdict))) for r in runs]
        text = json.dumps(dict(dump=str(args.dump), match=all(r.verdict.match for r in runs),
                               runs=rows)) + "\n"
    else:
        lines = []
        for r in runs:
            v = r.verdict
            lines.append(f"{r.name}: {'MATCH' if v.match else 'MISMATCH'} (read back from "
                         f"{Path(args.dump).name}: {len(r.record.samples['busy'])} cycles "
                         f"sampled, {r.record.load_cycles} load writes)")
            if not v.match:
                lines += ["  " + x for x in v.report().splitlines()[1:]]
        text = "\n".join(lines) + "\n"
    _emit(text, args.output)
    return 0 if all(r.verdict.match for r in runs) else 1


def cmd_diff(args: argparse.Namespace) -> int:
    a = load_source(args.expected, top=args.top, run=args.run)
    b = load_source(args.got, top=args.top, run=args.run)
    if args.exact and not (a.exact and b.exact):
        text_side = args.expected if not a.exact else args.got
        raise UsageError(f"--exact needs WS/WR peers on both sides, and {text_side!r} is a "
                         "text run-table (use a dump or a configuration)")
    d = diff_tables(a.table, b.table, limit=args.limit, exact=args.exact)
    sys.stdout.write(format_diff(d, a.label, b.label))
    for side in (a, b):
        if side.readback is not None:
            for p in side.readback.problems:
                print(f"note: {side.spec}: {p}")
    return 0 if d.equal else 1


REPORT_OUTPUT = OutputKind("report", signature=("report.html",))


def cmd_report(args: argparse.Namespace) -> int:
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o {args.output!r} is a file; give a folder")
    # Like demo's and fpga's folders: new, empty, or an earlier report's
    # (marker); another command's or the user's folder is never written into.
    check_output_dir(out, REPORT_OUTPUT)
    ns = [] if args.no_table8 else [2 ** k for k in range(1, 64) if 2 ** k <= args.table8_max]
    if ns:
        check_model_memory(ns[-1], what=f"Table 8 up to N={ns[-1]:,}")
    items = build_items(args.sources, top=args.top)
    command = "pipegossip " + " ".join(shlex.quote(a) for a in sys.argv[2:]) \
        if len(sys.argv) > 1 and sys.argv[1] == "report" else None
    def progress(n: int) -> None:
        print(f"report: Table 8, N={n} ...", file=sys.stderr, flush=True)

    text = render_report(items, ns, title=args.title, command=command,
                         progress=None if args.quiet else progress)
    with atomic_directory(out, REPORT_OUTPUT) as tmp:
        (tmp / "report.html").write_text(text, encoding="utf-8")
    path = out / "report.html"
    failed = [i for i in items if i.verdict is not None and not i.verdict.ok]
    print(f"wrote {path} ({len(items)} configuration(s)"
          + (f", Table 8 up to N={ns[-1]}" if ns else "")
          + (f"; {len(failed)} hardware verdict(s) FAIL" if failed else "") + ")")
    return 1 if failed else 0


def cmd_references(args: argparse.Namespace) -> int:
    cases = paper_cases()
    if args.check:
        # Compared against, not written: a path that is no folder is bad input,
        # not a folder of stale references.
        if not Path(args.output).is_dir():
            raise UsageError(f"-o {args.output!r} is not a folder of reference run-tables")
        stale = check_references(cases, args.output)
        for name in stale:
            print(f"stale or missing: {Path(args.output) / (name + '.txt')}")
        print(f"{len(cases) - len(stale)} of {len(cases)} reference run-tables up to date")
        return 1 if stale else 0
    # One folder written as a whole, like every other command's: a folder of
    # the user's (their own table1.txt) or of another command is refused.
    with atomic_directory(args.output, REFERENCES_OUTPUT) as tmp:
        names = [p.name for p in write_references(cases, tmp)]
    for name in names:
        print(f"wrote {Path(args.output) / name}")
    return 0
