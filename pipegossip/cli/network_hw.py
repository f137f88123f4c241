"""``verilog --fabric network`` and ``cosim --fabric network --schedule``: the network fabric.

The work is done by :func:`write_network_verilog` and :func:`cosim_network_files`;
:mod:`pipegossip.cli.hw` and :mod:`pipegossip.cli.sim` call them when ``--fabric network`` is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..infra.files import atomic_write
from .options import positive_int

__all__ = ["add_network_arguments", "add_node_argument", "NETWORK_OPTIONS", "write_network_verilog",
           "network_topology", "cosim_network_files", "network_cosim_text",
           "network_report_json", "check_network_size"]

#: Options only ``--fabric network`` takes, as :func:`~.options.refuse_given` takes them.
NETWORK_OPTIONS = (("--topology", "topology", None), ("--k", "k", None), ("--a", "a", None),
                   ("--b", "b", None), ("--op", "op", None), ("--bank-depth", "bank_depth", None),
                   ("--store", "store", None), ("--node", "node", None))


def add_network_arguments(p: argparse.ArgumentParser) -> None:
    """``--topology``, ``--k``, ``--a``, ``--b``, ``--op``, ``--bank-depth``, ``--store``,
    ``--node``.

    Each is None when not given.
    """
    from ..model.schedules.network_program import OPS
    g = p.add_argument_group("--fabric network")
    g.add_argument("--topology", default=None, metavar="NAME",
                   help="--fabric network: the topology (path, cycle, hypercube, mesh, torus, "
                   "star, complete, ...) with its --n, --k or --a/--b")
    g.add_argument("--k", type=positive_int, default=None, help="--fabric network: topology k")
    g.add_argument("--a", type=positive_int, default=None, help="--fabric network: topology a")
    g.add_argument("--b", type=positive_int, default=None, help="--fabric network: topology b")
    g.add_argument("--op", choices=OPS, default=None,
                   help="--fabric network: the accumulators' operation; default sum")
    g.add_argument("--bank-depth", type=positive_int, default=None, metavar="B",
                   help="--fabric network: words per store bank (every node keeps what "
                   "arrives on each link in that link's bank, its loaded items in its own); "
                   "default --slots. `check` prints the bank depth a schedule needs")
    g.add_argument("--store", choices=("banks", "single"), default=None,
                   help="--fabric network: the nodes' item store: banks (one per link, RAM "
                   "with unclocked reads) or single (one flip-flop store per node); the "
                   "same ports, cycles and results. Default banks; `hw fpga`: single on "
                   "iCE40, banks on ECP5")
    add_node_argument(g)


def add_node_argument(g) -> None:
    """``--node wire|reg`` (None when not given)."""
    g.add_argument("--node", choices=("wire", "reg"), default=None,
                   help="--fabric network: the nodes' design: wire (default; a link is a "
                   "wire from an unclocked bank read into the neighbour's adder) or reg "
                   "(registered link ends, carry-chain accumulators); the same ports, "
                   "cycles and results")


def network_topology(args: argparse.Namespace):
    """The topology ``--topology`` and ``--n/--k/--a/--b`` describe (UsageError if not)."""
    from . import UsageError
    from .heuristics import build_topology
    if args.topology is None:
        raise UsageError("--fabric network needs --topology (and its --n, --k or --a/--b)")
    return build_topology(args.topology, {"n": args.n, "k": args.k, "a": args.a, "b": args.b})


#: What the network fabric's ``fabric-bits`` estimate counts (it has no crossbar).
NETWORK_BITS = "bits of links, program memory and store banks"


def check_network_size(topology, width: int, depth: int, slots: int, what: str,
                       bank_depth: int | None = None, store: str | None = None) -> None:
    """Refuse, before any work, a network fabric over the ``fabric-bits`` budget.

    Counted: every node's program memory (depth entries of its layout), its
    store banks (degree + 1 banks of ``bank_depth`` words, default
    ``slots``; the single store: ``slots`` words), and the links (two words
    per edge). UsageError for ``--bank-depth`` with ``--store single``.
    """
    if store == "single" and bank_depth is not None:
        from . import UsageError
        raise UsageError("--bank-depth applies to --store banks only (the single store "
                         "holds --slots words)")
    from ..infra.budgets import check_budget
    from ..model.schedules.network_program import NetworkLayout
    degrees = [len(topology.neighbours(v)) for v in range(topology.n)]
    entry = sum(NetworkLayout(d, slots, bank_depth).width for d in degrees)
    banks = (topology.n * slots if store == "single"
             else sum(d + 1 for d in degrees) * (bank_depth or slots))
    check_budget("fabric-bits", depth * entry + banks * width + 2 * topology.m * width, what,
                 unit=NETWORK_BITS)


def write_network_verilog(output: str, topology, width: int = 8, depth: int = 64,
                          slots: int | None = None, op: str = "sum",
                          bank_depth: int | None = None, store: str = "banks",
                          node: str = "wire", trace: bool = True,
                          control: str | None = None, name: str | None = None) -> None:
    """Write the network fabric's Verilog to ``output`` (``-``: stdout); ``name`` is the
    top module's (every module's prefix), default :data:`~.hw.network.export.TOP`.

    ``control`` (``"axil"``, ``"wishbone"``): the fabric behind its control block.
    """
    from ..hw.network.export import TOP, network_verilog_text
    from ..model.errors import ConfigError
    if topology.edges is None and topology.n > 64:
        raise ConfigError(f"the network fabric of complete({topology.n}) has too many links: "
                          f"at most complete(64)")
    check_network_size(topology, width, depth, slots or topology.n,
                       f"the network fabric of {topology.name} (N={topology.n:,}), width "
                       f"{width}, depth {depth:,}", bank_depth, store)
    if control:
        from ..hw.network.export import network_header
        from ..hw.network.fabric import NetworkFabric
        from .ip import write_controlled
        try:
            fabric = NetworkFabric(topology, width, depth, slots, op, bank_depth, store, node,
                                   trace)
        except (TypeError, ValueError) as e:
            raise ConfigError(str(e)) from None
        write_controlled(output, fabric, control, name or TOP, network_header(fabric, op))
        return
    try:
        text = network_verilog_text(topology, width, depth, slots, op, name=name or TOP,
                                    bank_depth=bank_depth, store=store, node=node,
                                    trace=trace)
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from None
    atomic_write(output, text)


def cosim_network_files(files: Sequence[str], *, width: int = 8, depth: int | None = None,
                        seed: int = 0, op: str = "sum", simulator: str = "verilator",
                         progress=None, fault: str | None = None, mode: str = "trace",
                         bank_depth: int | None = None, store: str = "banks",
                         node: str = "wire", images: Sequence[str] | None = None,
                         waves: str | None = None, dump=None):
    """Load, check and co-simulate schedule files on the network fabric of each topology.

    ``images``: one image file per schedule (``--image``), loaded instead of
    the compiled program's writes once the build is known to run it.

    Raises
    ------
    FormatError
        A file cannot be read or breaks a schedule rule (a non-edge among them).
    ProgramError
        A schedule the network fabric cannot run (depth, a part of an accumulator).
    """
    from ..model.schedules.read_rounds import load
    from ..model.schedules.validate import check
    from .schedule_hw import _companions, read_image_files
    from ..sim.network.cosim import cosim_network
    read = read_image_files(files, images)
    if read and fault is not None:
        from . import UsageError
        raise UsageError("--fault alters the compiled program's writes; --image loads the "
                         "image's own")
    if store == "single" and bank_depth is not None:
        from . import UsageError
        raise UsageError("--bank-depth applies to --store banks only (the single store "
                         "holds --slots words)")
    schedules = []
    for f in files:
        s = load(f)
        check(s)
        if depth is not None:
            check_network_size(s.topology, width, depth, s.n,
                               f"the network fabric for {f} with depth {depth:,}", bank_depth,
                               store)
        schedules.append((str(f), s))
    return cosim_network(schedules, width=width, depth=depth, seed=seed, op=op,
                         simulator=simulator, progress=progress, fault=fault, mode=mode,
                         bank_depth=bank_depth, store=store, node=node, images=read,
                         waves=waves, dump=dump, companions=_companions(waves))


def network_cosim_text(report) -> str:
    """One line per schedule (match, R, S, cycles, latency side by side) and a summary."""
    from ..sim.judge.network import mismatch_place
    from ..sim.network.fast import fast_place
    fast = dict(report.fast)
    lines = []
    for r in report.results:
        p, v = r.program, r.verdict
        lines.append(f"{r.name}: {'MATCH' if v.match else 'MISMATCH'} "
                     f"{p.topology.name} n={p.n} {p.schedule.primitive} R={p.rounds} S={p.S} "
                     f"cycles={p.cycles} latency={r.record.latency} "
                     f"load={r.record.load_cycles} cycles")
        if not v.match:
            lines += ["  " + x for x in v.report().splitlines()[1:]]
            if r.name in fast:  # the in-hardware checker's own first mismatch, beside it
                place = fast_place(fast[r.name].run.summary)
                same = place == mismatch_place(v.first_mismatch)
                lines.append(f"  fast checker's first mismatch (check, cycle, node, port or "
                             f"slot): {place}{', the same' if same else ', DIFFERENT'}")
    if report.mode == "fast":
        lines.append(f"fast mode: {len(report.fast)} run(s) loaded, checked and read back in "
                     "the hardware" + (f"; {', '.join(report.reruns)} differed and were "
                                       "repeated in trace mode for the report above"
                                       if report.reruns else ""))
    lines.append(f"{len(report.results)} schedule(s), "
                 f"{sum(r.verdict.match for r in report.results)} match; "
                 f"{len(report.builds)} build(s) used, {report.builds_made} compiled now")
    return "\n".join(lines) + "\n"


def network_report_json(report) -> dict:
    """``--format json``: overall match, builds, one verdict per schedule."""
    from ..sim.judge.network import network_verdict_json
    from ..sim.network.fast import fast_place
    fast = {name: v for name, v in report.fast}
    results = []
    for r in report.results:
        row = network_verdict_json(r.verdict)
        if r.name in fast:  # the fast checker's own first mismatch, beside the report's
            first = fast[r.name].run.summary
            row["fast_first_mismatch"] = fast_place(first)
        results.append(row)
    return dict(match=report.match, fabric="network", mode=report.mode,
                builds=len(report.builds), builds_compiled=report.builds_made,
                reruns=report.reruns, results=results)


def print_report(report, fmt: str) -> int:
    """Print ``report`` as text or JSON; exit 0 when every schedule matched, else 1."""
    import json
    if fmt == "json":
        sys.stdout.write(json.dumps(network_report_json(report)) + "\n")
    else:
        sys.stdout.write(network_cosim_text(report))
    return 0 if report.match else 1


__all__ += ["print_report"]


def plot_target(args: argparse.Namespace) -> str | None:
    """``--plot FILE``, checked before any work (one schedule, .png or .svg, writable)."""
    from . import UsageError
    from ..infra.files import check_output_file
    from ..plots.network import MAX_CYCLES, MAX_LINKS
    if args.plot is None:
        return None
    if not args.plot.endswith((".png", ".svg")):
        raise UsageError(f"--plot {args.plot}: give a .png or .svg file name")
    if len(args.schedule) != 1:
        raise UsageError(f"--plot draws one schedule's run; {len(args.schedule)} "
                         "schedules were given")
    from ..model.schedules.read_rounds import load
    s = load(args.schedule[0])
    ports = 2 * s.topology.m
    if ports > MAX_LINKS or s.rounds_total > MAX_CYCLES:
        raise UsageError(f"--plot: {args.schedule[0]} has {ports} directed links and "
                         f"{s.rounds_total} rounds; the picture is limited to {MAX_LINKS} "
                         f"links and {MAX_CYCLES} rounds")
    check_output_file(args.plot)
    return args.plot


def write_plot(report, path: str) -> None:
    """Draw the one schedule's run of ``report`` into ``path`` (:mod:`pipegossip.plots.network`)."""
    from ..plots.network import plot_network_run
    (r,) = report.results
    line = network_cosim_text(report).splitlines()[0]
    atomic_write(path, plot_network_run(r.program.schedule, r.program, r.record, line,
                                        path.rsplit(".", 1)[1]))


__all__ += ["plot_target", "write_plot"]

