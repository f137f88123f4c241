"""The portfolio spread over Dask (issue 43 item 2): candidates as sweep jobs, cached in
the store, the winner made again here and validated."""

import json

import pytest

from pipegossip import cli
from pipegossip.sweeps import portfolio as portfolio_sweep
from pipegossip.model.algorithms.matching import matching_schedule
from pipegossip.model.algorithms.portfolio import best_schedule, matching_runs
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate
from pipegossip.sweeps.portfolio import candidate_job, candidates, spread_best
from pipegossip.sweeps.runner import SweepOptions


def _key(s, tau=None):
    v = validate(s)
    assert v.valid, v.error
    return v.R + (tau or 0) * v.S, v.S


def test_candidates_are_the_settings_then_look_ahead_then_restarts():
    topo = topology("cycle", n=6)
    runs = list(matching_runs(topo))
    got = candidates(topo, count=3 * len(runs) + 1)
    names = [n for n, _ in got]
    assert names[:len(runs)] == runs
    assert names[len(runs):2 * len(runs)] == [r + " lookahead=1" for r in runs]
    assert names[2 * len(runs):] == [r + " restart=1" for r in runs] + [runs[0] + " restart=2"]
    assert got[-1][1]["first_try"] == 2 and got[len(runs)][1]["lookahead"] == 1


def test_a_workers_candidate_wins_is_made_again_and_cached(tmp_path, monkeypatch):
    # shuffle-exchange_5: every setting takes 10 rounds; the potential weights have the
    # least S (73), the first setting (bfs de=2, the local run) more
    topo = topology("shuffle_exchange", k=5)
    local = best_schedule(topo, budget=0.0)[0]
    monkeypatch.setattr(portfolio_sweep, "MAX_CANDIDATES", len(matching_runs(topo)) - 1)
    options = SweepOptions(store=tmp_path / "store", workers=0)
    s, tried, info = spread_best(topo, options, budget=100.0, progress=False)
    assert _key(s) < _key(local)
    assert s.origin["source"].startswith("matching potential: best of")
    assert info["sent"] == len(matching_runs(topo)) - 1 and info["cached"] == 0
    again, _, info2 = spread_best(topo, options, budget=100.0, progress=False)
    assert info2["cached"] == info["sent"] and _key(again) == _key(s)


def test_a_candidate_past_its_cap_is_stopped():
    topo = topology("shuffle_exchange", k=5)
    name, kw = candidates(topo, count=1)[0]
    config = {"topology": topo.to_json(), "primitive": "gossip", "root": None, "tau": None,
              "name": name, "kw": kw, "cap": 0.0}
    assert candidate_job(config)["stopped"] is True
    done = candidate_job({**config, "cap": 600.0})
    v = validate(matching_schedule(topo, **kw))
    assert "stopped" not in done and (done["R"], done["S"], done["T"]) == (v.R, v.S, v.R)


def test_schedule_best_on_local_dask_workers(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(portfolio_sweep, "MAX_CANDIDATES", 2)
    out = tmp_path / "se5.json"
    assert cli.main(["schedule", "best", "--topology", "shuffle_exchange", "--k", "5",
                     "--budget", "100", "--workers", "1", "--store", str(tmp_path / "st"),
                     "-o", str(out)]) == 0
    source = json.loads(out.read_text())["origin"]["source"]
    assert "2 on Dask" in source
    assert cli.main(["schedule", "check", str(out)]) == 0
    assert cli.main(["schedule", "best", "--topology", "cycle", "--n", "6", "--store",
                     str(tmp_path), "-o", str(out)]) == 2
    assert "--store and --no-cache apply with --workers" in capsys.readouterr().err
