"""Linear-cost tuning: the improvement pass, Dist_Exp lowered per round, the portfolio's
lower bound and the mesh construction."""

import time

import numpy as np
import pytest

from pipegossip.model.algorithms import matching as matching_module
from pipegossip.model.algorithms.coloring import color_schedule
from pipegossip.model.algorithms.constructions import line_phases
from pipegossip.model.algorithms.improve import improve_schedule
from pipegossip.model.algorithms.matching import OutOfTime, matching_schedule
from pipegossip.model.algorithms.portfolio import best_schedule, lower_bound
from pipegossip.model.schedules.ir import Schedule
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate


@pytest.mark.parametrize("fam,k,colors,S", [("ccc", 5, "2020120120210", 203),
                                            ("butterfly", 5, "02103231023", 187)])
def test_improvement_cuts_S_of_colour_schedules(fam, k, colors, S):
    s = color_schedule(topology(fam, k=k), colors)
    before, after = validate(s), validate(improve_schedule(s))
    assert after.valid, after.error
    assert after.R == before.R and after.S == S < before.S


def test_improvement_keeps_matching_schedules_valid_and_never_worse():
    for topo, tau in ((topology("debruijn", k=6), None), (topology("mesh", a=5, b=5), 0.5),
                      (topology("shuffle_exchange", k=5), 2.0)):
        s = matching_schedule(topo, tau=tau)
        before, after = validate(s), validate(improve_schedule(s))
        assert after.valid, after.error
        assert after.R <= before.R and after.S <= before.S
    # de Bruijn_6 unit cost: deliveries move into earlier rounds' spare room
    assert validate(improve_schedule(matching_schedule(topology("debruijn", k=6)))).S == 123


def test_improvement_drops_emptied_rounds_and_leaves_other_schedules_alone():
    def swap(a, b):
        return [{"src": a, "dst": [b], "items": [a]}, {"src": b, "dst": [a], "items": [b]}]
    s = Schedule.from_rounds([swap(0, 1) + swap(2, 3), [],
                              [{"src": 0, "dst": [2], "items": [0, 1]},
                               {"src": 2, "dst": [0], "items": [2, 3]},
                               {"src": 1, "dst": [3], "items": [0, 1]},
                               {"src": 3, "dst": [1], "items": [2, 3]}]],
                             topology=topology("hypercube", k=2), model="F1", p=None)
    assert validate(s).valid and s.rounds_total == 3
    better = improve_schedule(s)
    assert better.rounds_total == 2 and validate(better).R == 2
    b = matching_schedule(topology("hypercube", k=3), primitive="broadcast", root=0)
    assert validate(improve_schedule(b)).valid


def test_dist_exp_is_lowered_round_by_round(monkeypatch):
    seen = []
    real = matching_module._State.weights_of

    def spy(self, partner=None):
        if partner is None:
            seen.append(self.dist_exp)
        return real(self, partner)
    monkeypatch.setattr(matching_module._State, "weights_of", spy)
    s = matching_schedule(topology("mesh", a=4, b=4), dist_exp=4.0, dist_exp_end=1.0,
                          dist_decay=0.5)
    R = validate(s).R
    assert R == len(seen)
    assert seen == pytest.approx([1.0 + 3.0 * 0.5 ** t for t in range(R)])
    assert "lowered towards 1 by 0.5 per round" in s.origin["source"]
    with pytest.raises(ValueError):
        matching_schedule(topology("mesh", a=4, b=4), dist_exp_end=1.0, dist_decay=0.0)


def test_a_deadline_in_the_past_stops_the_run():
    with pytest.raises(OutOfTime):
        matching_schedule(topology("mesh", a=4, b=4), deadline=time.process_time() - 1)


def test_lower_bound_counts_the_eccentricity():
    assert lower_bound(topology("mesh", a=4, b=4)) == 6  # the diameter; log2 16 is 4
    assert lower_bound(topology("path", n=5)) == 4  # ceil(log2 5) + 1
    assert lower_bound(topology("knodel", n=16)) == 4
    assert lower_bound(topology("path", n=8), "broadcast", 3) == 4  # eccentricity of 3


@pytest.mark.parametrize("a,b,R", [(8, 8, 14), (20, 20, 38), (3, 5, 8)])
def test_line_phases_on_meshes(a, b, R):
    v = validate(line_phases(topology("mesh", a=a, b=b)))
    assert v.valid and v.R == R


def test_the_portfolio_stops_at_the_bound_and_improves_linear_cost():
    s, tried = best_schedule(topology("mesh", a=8, b=8), budget=60)
    assert validate(s).R == 14 and [t[0] for t in tried] == ["line phases"]
    s, tried = best_schedule(topology("ccc", k=5), tau=0.1, budget=0.01)
    names = [t[0] for t in tried]
    assert "coloring 2020120120210 (the paper's Table 6) improved" in names
    v = validate(s)
    assert v.valid and v.R + 0.1 * v.S == min(r + 0.1 * S for _, r, S in tried)
    assert np.isclose(v.R + 0.1 * v.S, 13 + 20.3)
