"""Co-simulation regression: the generated fabric on Verilator against the model.

Each case is one Verilator build (cached in build/cosim/ across sessions)
running two gossip runs back to back with different word seeds, the second
with a spurious ``start`` pulse while busy. The test id names the
configuration, including the seed of every random order (``seedS``) and the
word seeds (``words0+1``).

Build cost dominates; docs/sim.md has the budget. Larger sweeps are marked
``slow``.
"""

from __future__ import annotations

import itertools

import pytest

from pipegossip.model import RunConfig
from pipegossip.model.paper import paper_cases
from pipegossip.sim.fsm.cosim import cosimulate
from pipegossip.sim.waves import waves_requested

WORD_SEEDS = (0, 1)


def run_case(config: RunConfig, width: int = 8, word_seeds=WORD_SEEDS):
    """Co-simulate ``config`` and fail with the scoreboard's report on a mismatch."""
    result = cosimulate(config, width, word_seeds=word_seeds, spurious_start=len(word_seeds) > 1,
                        waves=waves_requested())
    for verdict in result.verdicts:
        assert verdict.match, "\n" + verdict.report()
    # With --waves (or PIPEGOSSIP_WAVES=1) a paper table's dump is read back
    # and must equal its reference run-table in waveforms/reference/.
    assert result.reference_match is not False, f"dump differs from {result.reference}"
    assert [v.run.spec.word_seed for v in result.verdicts] == list(word_seeds)
    return result


def _id(config: RunConfig, width: int = 8) -> str:
    return f"{config.slug}-w{width}-words" + "+".join(map(str, WORD_SEEDS))


# --- the paper's tables (docs/reference.md "Closed forms") -------------------------------------

PAPER = paper_cases()


@pytest.mark.parametrize("case", PAPER, ids=[c.name for c in PAPER])
def test_paper_table(case):
    result = run_case(case.config)
    hw = result.verdicts[0]
    assert hw.hw_length == case.length
    assert tuple(hw.hw_utilization.tolist()) == case.utilization


# --- N x order families ---------------------------------------------------------

def _explicit(n: int) -> RunConfig:
    # Every processor sends to the others from the highest id down: not a
    # family member, and the reverse of identity's sending order.
    return RunConfig.explicit([[j for j in reversed(range(n)) if j != i] for i in range(n)])


ORDERS = [
    RunConfig.family(2, "identity"),
    RunConfig.family(3, "pipelined"),
    RunConfig.family(3, "random", seed=5),
    RunConfig.family(4, "random", seed=11),
    _explicit(4),
    RunConfig.family(5, "random", seed=2),
    RunConfig.explicit([[3, 1, 4, 2], [0, 4, 3, 2], [4, 0, 1, 3], [2, 4, 1, 0], [1, 3, 0, 2]]),
    RunConfig.family(8, "pipelined"),
    RunConfig.family(8, "random", seed=3),
    RunConfig.family(9, "random", seed=8),
    RunConfig.family(10, "identity"),
    RunConfig.family(16, "random", seed=1),
]


@pytest.mark.parametrize("config", ORDERS, ids=_id)
def test_orders(config):
    run_case(config)


# --- every feature combination with seeded random orders ------------------------

def _features(n: int, seed0: int) -> list[RunConfig]:
    out = []
    combos = itertools.product(("ordered", "any"), (False, True), (1, 2), (None, 2))
    for k, (receive, substitute, sessions, channels) in enumerate(combos):
        out.append(RunConfig.family(n, "random", seed=seed0 + k, receive=receive,
                                    substitute=substitute, sessions=sessions,
                                    channels=channels))
    return out


FEATURES = _features(6, seed0=100)


@pytest.mark.parametrize("config", FEATURES, ids=_id)
def test_features(config):
    run_case(config)


SWEEP = _features(5, seed0=200) + _features(7, seed0=300) + _features(9, seed0=400) + [
    RunConfig.family(16, "pipelined", receive="any", substitute=True, sessions=3),
    RunConfig.family(16, "identity", receive="any", substitute=True, channels=4),
    RunConfig.family(16, "random", seed=77, sessions=2, channels=8),
]


@pytest.mark.slow
@pytest.mark.parametrize("config", SWEEP, ids=_id)
def test_feature_sweep(config):
    run_case(config)


@pytest.mark.slow
@pytest.mark.parametrize("width", [1, 3, 32, 70])
def test_word_widths(width):
    run_case(RunConfig.family(5, "random", seed=9, sessions=2), width=width)
