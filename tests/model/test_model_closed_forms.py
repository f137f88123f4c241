from fractions import Fraction

import numpy as np
import pytest

from pipegossip.model import (RunConfig, identity_four_steps, identity_length, physical_limit,
                              pipelined_efficiency, pipelined_length, pipelined_mu, simulate)


@pytest.mark.parametrize("n", range(2, 65))
def test_identity_closed_forms(n):
    r = simulate(RunConfig.family(n, "identity"))
    assert r.length == identity_length(n)
    assert int((r.utilization == 4).sum()) == identity_four_steps(n)
    assert set(r.utilization.tolist()) <= {2, 4}


@pytest.mark.parametrize("n", range(2, 65))
def test_pipelined_closed_forms(n):
    r = simulate(RunConfig.family(n, "pipelined"))
    assert r.length == pipelined_length(n)
    assert Fraction(r.used_slots, n * r.length) == pipelined_efficiency(n)
    assert Fraction(r.used_slots, r.length) == pipelined_mu(n)
    # The utilisation string of pipelined gossiping is a palindrome (paper, Fig. 12).
    assert r.utilization.tolist() == r.utilization.tolist()[::-1]


@pytest.mark.parametrize("k", range(1, 7))
def test_pipelined_sessions_at_n5(k):
    r = simulate(RunConfig.family(5, "pipelined", sessions=k))
    assert r.length == pipelined_length(5, k) == 10 * k + 2


@pytest.mark.parametrize("n", [5, 8, 16, 9])
def test_streaming_pipelined_steady_state_mu_is_n_minus_1(n):
    # docs/reference.md "Sessions": in steady state a broadcast completes every 2 steps, mu = N-1.
    k = 12
    u = simulate(RunConfig.family(n, "pipelined", sessions=k)).utilization
    fill = 3 * (n - 1)
    steady = u[fill:len(u) - fill]
    assert len(steady) >= 2 * (n - 1)
    window = 2 * (n - 1)  # an even window spanning whole periods
    means = [steady[i:i + window].mean() for i in range(0, len(steady) - window + 1)]
    assert np.allclose(means, n - 1)


def test_multi_session_closed_form_refuses_to_guess():
    with pytest.raises(ValueError, match="only known in closed form for N = 5"):
        pipelined_length(8, 2)


@pytest.mark.parametrize("n, limit", [(2, 2), (4, 6), (5, 10), (8, 14), (9, 18)])
def test_physical_limit(n, limit):
    assert physical_limit(n) == limit
    assert physical_limit(n, channels=1) == n * (n - 1)


def test_closed_forms_reject_bad_n():
    with pytest.raises(ValueError, match="N must be an integer >= 2"):
        identity_length(1)
