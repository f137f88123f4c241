"""L, mu and E computed once (model/metrics.py) for results and run-tables."""

from pipegossip.model import Metrics, RunConfig, simulate


def test_pipelined_run_has_the_closed_form_figures():
    r = simulate(RunConfig.family(10, "pipelined"), table=True)
    m = r.metrics
    assert (m.n, m.length, m.used_slots) == (10, 27, 180)
    assert m.mu == 180 / 27 and m.efficiency == 180 / 270
    assert r.table.metrics == m  # the table's used row gives the same figures
    assert m.summary() == "N=10 L=27 mu=6.6667 E=66.67% used=180"


def test_an_empty_run_has_no_mu_or_efficiency():
    m = Metrics.of(4, [])
    assert (m.length, m.used_slots, m.mu, m.efficiency) == (0, 0, None, None)
    assert "empty" in m.summary()
