"""`pipegossip cosim-sweep`: a configuration matrix co-simulated on the sweep runner
(Verilator), judged by the model; cached on a rerun; 2 workers give the serial verdicts."""

import json

import pytest

from pipegossip.cli import main
from pipegossip.model.errors import ConfigError
from pipegossip.sim.sweep_job import cosim_configs

ARGS = ["cosim-sweep", "--n", "4", "--orders", "pipelined,identity", "--word-seeds", "0,1",
        "--format", "json"]


def verdicts(data):
    # Timings and cache status differ between runs; the verdicts must not.
    return [{k: v for k, v in r.items() if k not in ("seconds", "cache")}
            for r in data["rows"]]


def test_a_two_configuration_matrix_matches_the_model_and_is_cached(tmp_path, capsys):
    store = ["--store", str(tmp_path / "store")]
    assert main([*ARGS, *store, "--workers", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"] == {"done": 2, "cached": 0, "failed": 0} and data["mismatches"] == 0
    assert [(r["slug"], r["status"]) for r in data["rows"]] == [
        ("n4-pipelined-ordered", "match"), ("n4-identity-ordered", "match")]
    for r in data["rows"]:
        assert [x["word_seed"] for x in r["runs"]] == [0, 1]
        assert all(x["match"] and x["cycles"] == r["L"] and x["mismatch_counts"] == {}
                   for x in r["runs"])
    assert main([*ARGS, *store, "--workers", "0"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["counts"] == {"done": 0, "cached": 2, "failed": 0}
    assert verdicts(again) == verdicts(data)
    assert len((tmp_path / "store" / "cosim-sweep" / "table.jsonl").read_text()
               .splitlines()) == 2


@pytest.mark.slow
def test_two_workers_give_the_serial_verdicts(tmp_path, capsys):
    serial = ["--store", str(tmp_path / "a"), "--workers", "0"]
    assert main([*ARGS, *serial]) == 0
    expected = verdicts(json.loads(capsys.readouterr().out))
    assert main([*ARGS, "--store", str(tmp_path / "b"), "--workers", "2"]) == 0
    assert verdicts(json.loads(capsys.readouterr().out)) == expected


def test_a_refused_combination_is_bad_input_before_any_build(tmp_path, capsys):
    with pytest.raises(ConfigError, match="sessions"):
        cosim_configs([4], ["pipelined"], sessions=[0])
    assert main(["cosim-sweep", "--n", "4", "--orders", "pipelined,spiral",
                 "--store", str(tmp_path / "s")]) == 2
    assert "spiral" in capsys.readouterr().err and not (tmp_path / "s").exists()
