"""Build examples/integration with Verilator, run its cocotb testbench, judge every collective.

    python examples/integration/run.py --verilog out/integration/pipegossip_network_fabric.v \\
        out/integration/gossip.json out/integration/allreduce.json out/integration/polling.json

The Verilog is the network fabric behind its AXI4-Lite control block
(``pipegossip hw verilog --fabric network ... --control axil``); its size is
read from the header comment that command writes. Every schedule is compiled
for that fabric (``compile_network``), its image (``hw program``'s entries:
the loads, then the checks) goes to the testbench, which loads and runs the
collectives one after another through the control port (tb_integration.py),
and every record it writes is held against its program by the one judge
(``judge_network``). Prints one line per collective; exit 0 when all match,
1 on a mismatch, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = "integration_top"
#: The header line ``hw verilog --fabric network`` writes, with the size in it.
_SIZE = re.compile(r"^// topology=(?P<topology>\S+) n=(?P<n>\d+) ports=(?P<ports>\d+) "
                   r"width=(?P<width>\d+) depth=(?P<depth>\d+) slots=(?P<slots>\d+) "
                   r"bank_depth=(?P<bank_depth>\d+) op=(?P<op>\w+)$", re.M)

__all__ = ["fabric_size", "prepare", "run_example", "main"]


class ExampleError(Exception):
    """Bad input: one line, exit 2."""


def fabric_size(verilog: Path) -> dict:
    """The size the header of ``verilog`` names (``n``, ``ports``, ..., ``op``)."""
    head = verilog.read_text(encoding="utf-8", errors="replace")[:4000]
    m = _SIZE.search(head)
    if m is None or "control block" not in head:
        raise ExampleError(f"{verilog}: not a network fabric behind a control block "
                           "(pipegossip hw verilog --fabric network ... --control axil)")
    out = {k: (v if k in ("topology", "op") else int(v)) for k, v in m.groupdict().items()}
    if out["width"] > 32:
        raise ExampleError(f"{verilog}: width {out['width']}; this example reads words of "
                           "up to 32 bits (READ_PART 0)")
    return out


def prepare(verilog: Path, schedules: list[Path], seed: int = 0, faults: dict | None = None):
    """``(size, programs, runs)``: the programs compiled for the build, the testbench's runs.

    ``faults`` maps a position in ``schedules`` to a fault of ``sim cosim --fault``
    (``drop``, ``word``, ...): that collective is loaded with one altered write, so
    the judge and the block's checks have something to find.
    """
    from pipegossip.hw.network.image import network_image
    from pipegossip.hw.ports import NetworkSize
    from pipegossip.hw.schedule.image import ImageKind
    from pipegossip.model.schedules.ir import load
    from pipegossip.model.schedules.network_program import compile_network
    from pipegossip.hw.network.fabric import DIRECTORY
    from pipegossip.hw.schedule.image import image_load
    from pipegossip.sim.network.run import faulty_writes, network_job

    z = fabric_size(verilog)
    size = NetworkSize(z["n"], z["width"], z["depth"], z["slots"], z["ports"], 1,
                       z["bank_depth"])
    programs, runs = [], []
    for i, path in enumerate(schedules):
        try:
            s = load(path)
            p = compile_network(s, op=z["op"], width=size.width, depth=size.depth,
                                slots=size.slots, bank_depth=size.bank_depth)
        except (OSError, ValueError) as e:
            raise ExampleError(f"{path}: {e}") from None
        if p.ports != size.ports:
            raise ExampleError(f"{path}: {p.topology.name} has {p.ports} link ends, the build "
                               f"{size.ports} ({z['topology']})")
        image = network_image(p, seed)
        first = next(i for i, e in enumerate(image) if ImageKind.EXPECT_WORD <= e[0]
                     <= ImageKind.EXPECT_ACC)
        checks = [e for e in image[first:] if e[0] != ImageKind.END]
        loads = image[:first]
        name = path.stem
        if faults and i in faults:
            loads = [(int(ImageKind.DIRECTORY), *w[1:]) if w[0] == DIRECTORY else image_load(w)
                     for w in faulty_writes(p, faults[i], seed)]
            name += f"-{faults[i]}"
        programs.append(p)
        runs.append({"job": network_job(name, p, seed), "loads": loads, "checks": checks})
    return size, programs, runs


def run_example(verilog: Path, schedules: list[Path], build_dir: Path, *, seed: int = 0,
                pause: float = 0.5, faults: dict | None = None) -> list[dict]:
    """Build, run and judge; one dict per collective: name, verdict, counters, program."""
    from dataclasses import asdict

    from pipegossip.sim.judge.network import judge_network
    from pipegossip.sim.network.run import NetworkRun
    from pipegossip.sim.tools.simulators import Recipe, build_verilator, run_simulator
    from pipegossip.sim.tools.toolchain import use_verilator

    size, programs, runs = prepare(verilog, schedules, seed, faults)
    use_verilator()
    build_dir = Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    # every signal public: the testbench watches u_fabric's outputs for the judge
    build_verilator(top=TOP, sources=[Path(verilog).resolve(), HERE / "integration_top.v"],
                    build_dir=build_dir, log=build_dir / "build.log", trace=None,
                    recipe=Recipe(public="all"), runtime=None)
    result = build_dir / "records.json"
    job = build_dir / "job.json"
    job.write_text(json.dumps({"size": asdict(size), "seed": seed, "pause": pause,
                               "result_path": str(result), "runs": runs}), encoding="utf-8")
    result.unlink(missing_ok=True)
    from tb_integration import JOB_ENV  # noqa: PLC0415 (beside this file)
    run_simulator("verilator", top=TOP, test_module="tb_integration", build_dir=build_dir,
                  work=build_dir, env={JOB_ENV: str(job), "PYTHONPATH": str(HERE)},
                  log=build_dir / "sim.log")
    if not result.exists():
        raise RuntimeError(f"the testbench wrote no records (see {build_dir / 'sim.log'})")
    out = []
    for program, got in zip(programs, json.loads(result.read_text(encoding="utf-8"))):
        record = NetworkRun.from_json(got["record"])
        out.append({"name": got["name"], "verdict": judge_network(program, record),
                    "counters": got["counters"], "program": program})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verilog", type=Path, required=True,
                    help="the fabric behind its AXI4-Lite control block")
    ap.add_argument("schedules", type=Path, nargs="+", help="schedule files (JSON)")
    ap.add_argument("--build-dir", type=Path, default=None,
                    help="Verilator build folder (default: a temporary one)")
    ap.add_argument("--seed", type=int, default=0, help="word and back-pressure seed")
    ap.add_argument("--pause", type=float, default=0.5,
                    help="probability that an AXI channel pauses in a cycle; default 0.5")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    try:
        with tempfile.TemporaryDirectory(prefix="integration.") as tmp:
            results = run_example(args.verilog, args.schedules, args.build_dir or Path(tmp),
                                  seed=args.seed, pause=args.pause)
    except ExampleError as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2
    ok = True
    for r in results:
        v, c, p = r["verdict"], r["counters"], r["program"]
        ok &= v.match and c["MISMATCHES"] == 0
        print(f"{r['name']}: {p.schedule.primitive} on {p.topology.name}, "
              f"{'match' if v.match else 'MISMATCH'} (judge), busy {c['BUSY_CYCLES']} cycles "
              f"(L+1 = {p.cycles + 1}), checks {c['CHECKS']}, mismatches {c['MISMATCHES']}")
        if not v.match:
            print(v.report())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
