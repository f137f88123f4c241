"""Sub-command ``program``: a schedule file compiled into the memory image a fabric loads.

The image (:mod:`pipegossip.hw.schedule.image`; the network fabric's:
:mod:`pipegossip.hw.network.image`) holds the load-port writes of the
compiled program and the initial items, then the checks of the final state;
it is written as ``$readmemh`` hex, JSON, or the bytes of the board's UART
upload protocol (docs/fpga.md). :func:`compile_image` and
:func:`compile_network_image` are shared with ``fpga --schedule FILE``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from dataclasses import dataclass

from . import UsageError
from ..infra.files import atomic_write, check_output_file
from .options import nonnegative_int, positive_int, word_width
from .schedule_hw import check_fabric_size

__all__ = ["register", "compile_image", "compile_network_image", "CompiledImage", "FORMATS"]

#: Output formats; the default follows the output's extension (``.json``, ``.uart``, else hex).
FORMATS = ("hex", "json", "uart")

#: Options of ``--fabric network`` only: (flag, dest, default) as ``refuse_given`` takes them.
NETWORK_ONLY = (("--op", "op", None), ("--bank-depth", "bank_depth", None))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "program", help="compile a schedule into the memory image its fabric loads "
        "($readmemh hex, JSON, UART upload)",
        description="Compile a schedule file for the schedule fabric (or, with --fabric "
        "network, the network fabric of the schedule's topology) and write its memory "
        "image: the load-port writes (header, initial items, the network fabric's store "
        "directory, initial accumulators, every node's program entries), "
        "then the expected final state (every node's store slots and accumulator) and an end "
        "entry. --format hex: $readmemh text, one entry per line, the bit fields named in "
        "its first lines; json: the same decoded; uart: the bytes that load it into a "
        "board top over its UART and run it. Exit 0, or 2 for bad input (nothing "
        "written).")
    p.add_argument("file", metavar="FILE.json", nargs="?", default=None,
                   help="schedule file (not with --check)")
    p.add_argument("--fabric", choices=("schedule", "network"), default=None,
                   help="the fabric the image is for; default schedule (network: the network "
                   "fabric of the schedule's topology), or the --verilog build's")
    p.add_argument("--verilog", default=None, metavar="FABRIC.v",
                   help="compile for this build (`hw verilog` output): its fabric, width, "
                   "depth, slots, bank depth and op; one that cannot run the schedule is "
                   "refused (exit 2)")
    p.add_argument("--check", default=None, metavar="IMAGE",
                   help="read the image IMAGE (hex or JSON) back instead and print what it "
                   "was compiled for; with --verilog, refuse it (exit 2, one line) when that "
                   "build cannot run it")
    p.add_argument("--width", type=word_width, default=8, help="word width; default 8")
    p.add_argument("--depth", type=positive_int, default=None, metavar="D",
                   help="program entries per node of the fabric; default the program's cycles")
    p.add_argument("--slots", type=positive_int, default=None, metavar="S",
                   help="store words per node of the fabric; default the items it needs")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="word seed; default 0")
    p.add_argument("--op", choices=("sum", "xor"), default=None,
                   help="--fabric network: the accumulators' operation; default sum")
    p.add_argument("--bank-depth", type=positive_int, default=None, metavar="B",
                   help="--fabric network: words per store bank of the fabric; default --slots")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="FILE.hex, FILE.json or FILE.uart ('-': stdout, hex unless --format)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="default from the output's extension, else hex")
    p.set_defaults(func=cmd_program)


@dataclass
class CompiledImage:
    """A schedule compiled for a fabric size, and its image."""

    program: object          # model.schedules.program.Program
    size: object             # hw.ports.ScheduleSize
    entries: list            # image entries (kind, node, addr, data)
    seed: int

    def encoded(self) -> list[int]:
        from ..hw.schedule.image import ImageLayout
        lay = ImageLayout(self.size)
        return [lay.encode(e) for e in self.entries]


def compile_image(path: str, width: int = 8, depth: int | None = None,
                  slots: int | None = None, seed: int = 0) -> CompiledImage:
    """Load, validate and compile the schedule ``path``; its image for the fabric size.

    Raises
    ------
    FormatError, ScheduleError
        The file cannot be read or breaks a schedule rule.
    ProgramError
        It does not fit ``depth`` or ``slots`` (the message names the option).
    BudgetError
        The fabric would exceed the ``fabric-bits`` budget.
    """
    from ..hw.ports import ScheduleSize
    from ..hw.schedule.image import schedule_image
    from ..model.schedules.read_rounds import load
    from ..model.schedules.program import compile_schedule
    from ..model.schedules.validate import check
    rounds = rounds_in_file(path)
    if rounds is not None:  # a lower bound of the depth, before the file is parsed
        check_fabric_size(2, width, max(rounds, depth or 0), 1,
                          f"the schedule fabric for {path} ({rounds:,} rounds: depth at least "
                          f"{rounds:,}, at least 2 nodes)")
    s = load(path)
    check(s)
    program = compile_schedule(s, width=width, depth=depth, slots=slots)
    if program.slots < 1 or s.n < 2:
        raise UsageError(f"{path}: the schedule fabric needs at least 2 nodes and 1 slot")
    check_fabric_size(s.n, width, program.depth, program.slots,
                      f"the schedule fabric for {path} (depth {program.depth:,})")
    size = ScheduleSize(s.n, width, program.depth, program.slots)
    return CompiledImage(program, size, schedule_image(program, seed), seed)


#: A JSON string, or a bracket or brace (the tokens rounds_in_file counts with).
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def rounds_in_file(path: str) -> int | None:
    """Non-empty rounds of a schedule file, counted without parsing it (issue 39).

    The elements of the top-level ``"rounds"`` list that hold a message, found
    by a scan of its strings and brackets: a few seconds for 200,000 rounds,
    where parsing and building the schedule took 37 s and 567 MB. Each such
    round takes at least one program cycle, so the count bounds the depth
    from below. None for anything but a regular, uncompressed file within the
    input limit (the loader then refuses or reads it as before).
    """
    from ..model.inputs import MAX_INPUT_BYTES
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_INPUT_BYTES:
            return None
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:2] == b"\x1f\x8b":
        return None
    depth, count, inside, after_key, last_end = 0, 0, False, False, 0
    fresh = False  # just inside a round: the next token says whether it is empty
    for m in _TOKEN.finditer(data):
        token = m.group()
        if fresh:
            count += token != b"]"
            fresh = False
        if token in (b"[", b"{"):
            if after_key and token == b"[" and depth == 1 and \
                    data[last_end:m.start()].strip() == b":":
                inside = True
            elif inside and depth == 2 and token == b"[":
                fresh = True
            depth += 1
        elif token in (b"]", b"}"):
            depth -= 1
            if inside and depth == 1:
                return count
        after_key = depth == 1 and token == b'"rounds"'
        last_end = m.end()
    return None


def compile_network_image(path: str, width: int = 8, depth: int | None = None,
                          slots: int | None = None, seed: int = 0, op: str = "sum",
                          bank_depth: int | None = None, topology=None) -> CompiledImage:
    """As :func:`compile_image`, for the network fabric of ``topology`` (default the
    schedule's own); ``size`` is a :class:`~pipegossip.hw.ports.NetworkSize`."""
    from ..hw.network.image import network_image, network_image_size
    from ..model.schedules.read_rounds import load
    from ..model.schedules.network_program import compile_network
    from ..model.schedules.validate import check
    from .network_hw import check_network_size
    s = load(path)
    check(s)
    topo = s.topology if topology is None else topology
    program = compile_network(s, topology=topo, op=op, width=width, depth=depth, slots=slots,
                              bank_depth=bank_depth)
    check_network_size(topo, width, program.depth, program.slots,
                       f"the network fabric for {path} (depth {program.depth:,})",
                       program.bank_depth)
    try:
        size = network_image_size(program)
    except (TypeError, ValueError) as e:
        raise UsageError(f"{path}: {e}") from None
    return CompiledImage(program, size, network_image(program, seed), seed)


def image_format(output: str, given: str | None) -> str:
    """The format asked for, or the one the output's extension names."""
    if given is not None:
        return given
    for fmt in ("json", "uart"):
        if str(output).endswith("." + fmt):
            return fmt
    return "hex"


def image_bytes(image: CompiledImage, fmt: str, title: str) -> bytes:
    from ..hw.schedule.image import hex_text, image_json, image_sizes, uart_bytes
    if fmt == "json":
        return (json.dumps(image_json(image.size, image.entries, image.program, image.seed))
                + "\n").encode()
    if fmt == "uart":
        return uart_bytes(image.size, image.entries)
    return hex_text(image.size, image.entries, title,
                    image_sizes(image.size, image.program)).encode()


#: Options ``--verilog`` sets from the build: (flag, dest, default) as ``refuse_given`` takes them.
BUILD_SET = (("--width", "width", 8), ("--depth", "depth", None), ("--slots", "slots", None),
             ("--op", "op", None), ("--bank-depth", "bank_depth", None))


def _check_image(args: argparse.Namespace) -> int:
    """``--check IMAGE [--verilog FABRIC.v]``: the load-image reader."""
    from ..hw.schedule.image_read import check_runs, read_image, verilog_sizes
    from .options import refuse_given
    refuse_given(args, (("FILE.json", "file", None), ("-o", "output", None),
                        ("--format", "format", None), *BUILD_SET, ("--seed", "seed", 0)),
                 "not with --check (it reads an image back)")
    image = read_image(args.check)
    if args.verilog is not None:
        check_runs(image, verilog_sizes(args.verilog), args.verilog)
    z = image.sizes
    where = f"; runs on {args.verilog}" if args.verilog else ""
    print(f"{args.check}: {z['fabric']} fabric image, "
          + " ".join(f"{k}={v}" for k, v in z.items() if k != "fabric")
          + f", {len(image.writes())} load writes, {len(image.entries)} entries{where}")
    return 0


def cmd_program(args: argparse.Namespace) -> int:
    from .options import refuse_given
    if args.check is not None:
        return _check_image(args)
    if args.file is None or args.output is None:
        missing = [x for x, v in (("FILE.json", args.file), ("-o", args.output)) if v is None]
        raise UsageError(f"the following arguments are required: {', '.join(missing)}")
    fmt = image_format(args.output, args.format)
    check_output_file(args.output)
    build = None
    if args.verilog is not None:
        from ..hw.schedule.image_read import verilog_sizes
        refuse_given(args, BUILD_SET, f"not with --verilog ({args.verilog} sets them)")
        build = verilog_sizes(args.verilog)
        from ..model.schedules.ir import load
        n = load(args.file).n
        if n != build["n"]:
            raise UsageError(f"{args.file} has n={n}, the build {args.verilog} n={build['n']}")
        if args.fabric is not None and args.fabric != build["fabric"]:
            raise UsageError(f"--fabric {args.fabric}: {args.verilog} is a {build['fabric']} "
                             "fabric")
        args.fabric, args.width, args.depth, args.slots = (build["fabric"], build["width"],
                                                           build["depth"], build["slots"])
        if build["fabric"] == "network":
            args.op, args.bank_depth = build["op"], build["bank_depth"]
    if args.fabric == "network":
        image = compile_network_image(args.file, args.width, args.depth, args.slots, args.seed,
                                      args.op or "sum", args.bank_depth)
    else:
        refuse_given(args, NETWORK_ONLY, "to --fabric network only")
        image = compile_image(args.file, args.width, args.depth, args.slots, args.seed)
    if build is not None:
        from ..hw.schedule.image import image_sizes
        from ..hw.schedule.image_read import LoadImage, check_runs
        check_runs(LoadImage(args.file, image_sizes(image.size, image.program), image.entries),
                   build, args.verilog)
    p = image.program
    title = (f"pipegossip program {args.file}: {p.header()}; word seed {args.seed}")
    atomic_write(args.output, image_bytes(image, fmt, title))
    return 0
