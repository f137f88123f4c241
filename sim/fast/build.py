"""Builds of arbitrary Verilog texts for the fast mode, in the same build cache.

:func:`pipegossip.sim.fsm.runner.build` compiles the fabric of a configuration;
the fast mode (:mod:`.mode`) also compiles its wrapper top
(:class:`~.checker.FastTop` around the fabric's text) and, in tests,
fault-injecting stand-ins of the fabric (:mod:`.faults`). This module
does that with the same pieces as the runner: the content-addressed cache
(:mod:`~pipegossip.sim.tools.build_cache`, key = text + options), per-entry locks, scratch
folders published by rename, the cached Verilator run-time library, cocotb's
public runner API (:mod:`~pipegossip.sim.tools.simulators`).

The fabric's Verilog is generated once per configuration (:func:`fabric_text`,
kept on disk by :func:`~pipegossip.sim.fsm.runner.fabric_verilog`): generation is a large part
of a build's wall time (Amaranth's elaboration, mostly, and the Yosys it
ships), and both modes and every fault of a test use the same text.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from ...infra.files import atomic_write
from ...hw.ports import ports
from ...model.config import RunConfig
from ..tools import build_cache
from ..tools import verilator_runtime
from ..paths import build_root
from ..fsm.runner import (TOP, Build, CosimError, Progress, _cached_build, _check_build_options,
                             _tail, _use_verilator, fabric_verilog)
from ..scratch import run_folder
from ..tools.simulators import (DEFAULT_RECIPE, Recipe, build_icarus, build_verilator, table_vlt,
                                run_simulator)

__all__ = ["fabric_text", "build_text", "simulate_text"]


@lru_cache(maxsize=16)
def fabric_text(config: RunConfig, width: int) -> str:
    """The fabric's Verilog (:func:`~.runner.fabric_verilog`), once per process."""
    return fabric_verilog(config, width)


def build_text(name: str, verilog: str, top: str, config: RunConfig, width: int, *,
               vlt: str, simulator: str = "verilator",
               recipe: Recipe = DEFAULT_RECIPE, root: Path | None = None,
               progress: Progress | None = None, force: bool = False) -> Build:
    """Compile ``verilog`` with top module ``top`` (or reuse an identical build).

    Parameters
    ----------
    name : str
        Readable part of the cache folder's name (the key follows it).
    vlt : str
        The Verilator control file naming the ports of ``top`` cocotb sees
        (:func:`~pipegossip.sim.tools.simulators.ports_vlt`); nothing else is visible.
    force : bool
        Rebuild even when a finished build exists (the benchmark).
    """
    _check_build_options(simulator, None)
    say = progress or (lambda msg: None)
    root = build_root() if root is None else Path(root)
    trace = "icarus" if simulator == "icarus" else None
    key = build_cache.build_key(verilog, dict(
        simulator=simulator, top=top, vlt=vlt,
        recipe=asdict(recipe) if simulator == "verilator" else None))
    directory = root / f"{name}-{key}"
    vfile = directory / f"{top}.v"

    def compile_into(tmp: Path) -> dict:
        source = atomic_write(tmp / f"{top}.v", verilog)
        log = tmp / "build.log"
        say(f"building {name} with {simulator} in {directory} ...")
        try:
            if simulator == "verilator":
                _use_verilator()
                runtime = verilator_runtime.cached(None)
                control = atomic_write(tmp / "ports.vlt", vlt)
                build_verilator(top=top, sources=[control, source], build_dir=tmp, log=log,
                                trace=None, recipe=recipe, runtime=runtime)
                if runtime is None:
                    verilator_runtime.store(tmp, None)
            else:
                build_icarus(top=top, sources=[source], build_dir=tmp, log=log)
        except (RuntimeError, SystemExit, OSError) as e:
            raise CosimError(f"{simulator} build of {name} failed ({e}); last lines of "
                             f"the log:\n{_tail(log)}") from None
        return dict(config=config.to_json(), width=width, top=top, simulator=simulator)

    reused = Build(config, width, simulator, trace, directory, vfile, True, 0.0)
    return _cached_build(reused, key, root, force, say, compile_into)


def simulate_text(b: Build, top: str, test_module: str, job: dict,
                  files: Mapping[str, str], env_name: str) -> list:
    """Run cocotb test module ``test_module`` on build ``b``; returns its JSON result.

    ``job`` (JSON) is written to ``job.json`` and named by the environment
    variable ``env_name``; ``files`` (name -> text) are written into the
    run's working folder first (the expected trace the ROM loads).

    Raises
    ------
    CosimError
        The simulator failed or the testbench left no result.
    """
    with run_folder(b.directory, files) as work:
        runs_dir = work.parent
        result = work / "result.json"
        (work / "job.json").write_text(json.dumps(dict(job, result_path=str(result))),
                                       encoding="utf-8")
        if b.simulator == "verilator":
            _use_verilator()
        try:
            run_simulator(b.simulator, top=top, test_module=test_module,
                          build_dir=b.directory, work=work,
                          env={env_name: str(work / "job.json")}, log=work / "sim.log")
            if not result.is_file():
                raise CosimError("the testbench left no result")
        except (CosimError, RuntimeError, SystemExit, OSError) as e:
            kept = runs_dir / f"failed-{time.strftime('%Y%m%d-%H%M%S')}{work.suffix}"
            work.replace(kept)
            raise CosimError(f"simulation of {b.config.slug} failed ({e}); see "
                             f"{kept / 'sim.log'}; last lines:\n{_tail(kept / 'sim.log')}") \
                from None
        return json.loads(result.read_text(encoding="utf-8"))


def fabric_build(config: RunConfig, width: int, verilog: str, name: str, *,
                 simulator: str = "verilator", root: Path | None = None,
                 progress: Progress | None = None) -> Build:
    """A per-cycle (trace mode) build of a stand-in fabric text with the fabric's ports."""
    return build_text(name, verilog, TOP, config, width,
                      vlt=table_vlt(TOP, ports(config.n, config.sessions, width)),
                      simulator=simulator, root=root, progress=progress)
