"""Which proofs to run for a configuration, and the sweep behind the README table.

A *job* is one SymbiYosys run: the fabric harness of one configuration
(bounded to L+3 steps, or k-induction), the resolver miter of one
configuration (depth 1, it is combinational), or the schedule-fabric harness
of one compiled schedule (the load, the run and two read-back cycles).
:func:`run_jobs` runs a list of them in one work folder and returns their
results in order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ...model.config import RunConfig
from .catalog import MUTANTS, OPTION_SETS, ORDER_FAMILIES
from .harness import FabricHarness, mutated, run_length
from .resolver_miter import ResolverMiter
from .runner import ProofResult, run_sby
from .schedule_harness import ScheduleHarness, proof_depth
from .schedule_suite import MAP_MEMORIES

__all__ = ["Job", "fabric_job", "resolver_job", "schedule_job", "network_job", "run_jobs",
           "sweep_configs",
           "OPTION_SETS", "ORDER_FAMILIES", "markdown_table", "summary_table", "MUTANTS"]

#: Word width of the fabric proofs: the words are any-constant, so the
#: width only has to tell words apart; 4 bits keep the solver's work small.
PROOF_WIDTH = 4


@dataclass
class Job:
    """One proof to run: a name, the design factory, mode and depth.

    ``config`` is a :class:`RunConfig`, or for ``kind == "schedule"`` the
    compiled :class:`~pipegossip.model.schedules.program.Program`; ``words``
    is the schedule harness's word choice (``free`` or ``tagged``).
    """

    name: str
    kind: str
    config: RunConfig
    mode: str
    depth: int
    mutant: str | None = None
    length: int | None = None
    words: str = "free"
    #: The network fabric's item store (``network`` jobs only).
    store: str = "banks"
    #: The network fabric's node design (``network`` jobs only).
    node: str = "wire"

    def design(self):
        if self.kind == "fabric":
            return FabricHarness(self.config, PROOF_WIDTH, self.length, self.mutant)
        if self.kind == "schedule":
            return ScheduleHarness(self.config, PROOF_WIDTH, self.words, self.mutant)
        if self.kind == "network":
            from .network_harness import NetworkHarness
            return NetworkHarness(self.config, PROOF_WIDTH, self.mutant, self.store,
                                  self.node)
        return ResolverMiter(self.config, self.mutant)

    def context(self):
        """What elaboration needs in effect (the fabric's mutants)."""
        if self.kind == "fabric":
            return mutated(self.mutant)
        return contextlib.nullcontext()

    @property
    def after_prep(self) -> str:
        """Yosys commands of the job after ``prep``: schedule proofs map memories."""
        return MAP_MEMORIES if self.kind in ("schedule", "network") else ""


def _label(config: RunConfig) -> str:
    parts = [f"N={config.n}", config.order_name if config.seed is None
             else f"{config.order_name}(seed {config.seed})", config.receive]
    if config.substitute:
        parts.append("substitute")
    if config.sessions > 1:
        parts.append(f"sessions={config.sessions}")
    if config.channels is not None:
        parts.append(f"channels={config.channels}")
    return " ".join(parts)


def fabric_job(config: RunConfig, mode: str = "bmc", depth: int | None = None,
               mutant: str | None = None) -> Job:
    """The fabric harness of ``config``: BMC to L+3 steps (cycles 0..L+2) unless ``depth``."""
    length = run_length(config)
    return Job(f"fabric {_label(config)}", "fabric", config, mode,
               depth if depth is not None else length + 3, mutant, length)


def resolver_job(config: RunConfig, mutant: str | None = None) -> Job:
    """The resolver miter of ``config`` (any+substitute): one step covers all inputs."""
    return Job(f"resolver {_label(config)}", "resolver", config, "equiv", 1, mutant)


def schedule_job(program, label: str, mode: str = "bmc", depth: int | None = None,
                 mutant: str | None = None, words: str = "free") -> Job:
    """The schedule-fabric harness loaded with ``program`` (compiled at :data:`PROOF_WIDTH`).

    ``label`` names the schedule (a generator or a file); BMC covers the
    load writes, the start, the run and two read-back cycles unless ``depth``.
    """
    name = f"schedule {'_'.join(label.split())} N={program.n} L={program.cycles}"
    if words != "free":
        name += f" words={words}"
    return Job(name, "schedule", program, mode,
               depth if depth is not None else proof_depth(program), mutant, program.cycles,
               words)


def network_job(program, label: str, mutant: str | None = None,
                depth: int | None = None, store: str = "banks", node: str = "wire") -> Job:
    """The network-fabric harness loaded with ``program`` (compiled at :data:`PROOF_WIDTH`).

    BMC covers the load writes, the start, the run and two read-back cycles
    unless ``depth``; ``store`` is the fabric's item store, ``node`` its node design.
    """
    from .network_harness import network_proof_depth
    name = (f"network {'_'.join(label.split())} {program.topology.name} N={program.n} "
            f"L={program.cycles}")
    if store != "banks":
        name += f" store={store}"
    if node != "wire":
        name += f" node={node}"
    return Job(name, "network", program, "bmc",
               network_proof_depth(program) if depth is None else depth, mutant,
               program.cycles, store=store, node=node)


def run_jobs(jobs: Iterable[Job], folder: Path, timeout: float | None = None,
             progress: Callable[[ProofResult], None] | None = None) -> list[ProofResult]:
    """Run ``jobs`` one after another, each in its own sub-folder of ``folder``."""
    results = []
    for k, job in enumerate(jobs):
        with job.context():
            design = job.design()
            result = run_sby(design, Path(folder) / f"{k:03d}-{job.kind}", job.name,
                             "prove" if job.mode == "prove" else "bmc", job.depth, timeout,
                             job.after_prep)
        result.mode = job.mode
        results.append(result)
        if progress is not None:
            progress(result)
    return results


def sweep_configs(sizes: Iterable[int], orders: Iterable[str] = ORDER_FAMILIES,
                  options: Iterable[str] = tuple(OPTION_SETS)) -> list[RunConfig]:
    """Every configuration of the sweep (``channels=1`` needs N >= 2)."""
    configs = []
    for n in sizes:
        for order in orders:
            for name in options:
                configs.append(RunConfig.family(n, order, 0 if order == "random" else None,
                                                **OPTION_SETS[name]))
    return configs


def markdown_table(results: list[ProofResult]) -> str:
    """The results as a Markdown table (one row per proof)."""
    lines = ["| proof | mode | result | depth | seconds |", "|---|---|---|---:|---:|"]
    for r in results:
        lines.append(f"| {r.name} | {r.mode} | {r.result} | {r.depth} | {r.seconds:.1f} |")
    return "\n".join(lines) + "\n"


def _n_of(result: ProofResult) -> int:
    return int(result.name.split("N=")[1].split()[0])


def _kind_of(result: ProofResult) -> str:
    """``fabric``, ``resolver``, or ``schedule GENERATOR`` (one row per schedule and N)."""
    words = result.name.split()
    return " ".join(words[:2]) if words[0] == "schedule" else words[0]


def summary_table(results: list[ProofResult]) -> str:
    """One Markdown row per proof kind, mode and N: counts, depths and times."""
    groups: dict[tuple, list[ProofResult]] = {}
    for r in results:
        groups.setdefault((_kind_of(r), r.mode, _n_of(r)), []).append(r)
    lines = ["| proof | mode | N | proofs | result | depth | seconds (max) | seconds (total) |",
             "|---|---|---:|---:|---|---|---:|---:|"]
    for (kind, mode, n), rows in groups.items():
        failed = [f"{r.result} {r.name.split(' ', kind.count(' ') + 1)[-1]}" for r in rows
                  if r.result != "PASS"]
        verdict = "PASS" if not failed else (f"{len(rows) - len(failed)}/{len(rows)} PASS; "
                                             + ", ".join(failed))
        depths = sorted({r.depth for r in rows})
        depth = str(depths[0]) if len(depths) == 1 else f"{depths[0]}..{depths[-1]}"
        lines.append(f"| {kind} | {mode} | {n} | {len(rows)} | {verdict} | {depth} "
                     f"| {max(r.seconds for r in rows):.1f} "
                     f"| {sum(r.seconds for r in rows):.1f} |")
    return "\n".join(lines) + "\n"
