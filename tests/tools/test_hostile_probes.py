"""The hostile probes of ``tools/hostile_probes.py`` (issue 19) in the test suite.

The default suite runs the quick subset (one cheap probe per class, about a
minute); ``--runslow`` adds the whole catalogue (see the module for the
command line: ``python3 tools/hostile_probes.py``).
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import hostile_probes as hp  # noqa: E402


@pytest.fixture(scope="module")
def catalogue():
    return hp.catalogue()


def test_the_catalogue_covers_every_command_and_class(catalogue):
    assert len(catalogue) >= 360
    assert hp.all_commands() <= {p.command for p in catalogue}
    per_command = collections.Counter(p.command for p in catalogue)
    thin = {c: k for c, k in per_command.items() if k < 5 and c != "pipegossip"}
    assert not thin, f"commands with fewer than 5 probes: {thin}"
    assert {p.expect for p in catalogue} == set(hp.EXPECTS)
    assert len({p.id for p in catalogue}) == len(catalogue)
    heavy = [p for p in catalogue if p.heavy]
    assert len(heavy) <= 20, "keep the probes that build few"


def test_the_quick_subset_has_one_probe_of_each_class(catalogue):
    quick = hp.select(catalogue, quick=True)
    assert {p.id for p in quick} == set(hp.quick_ids()), "a quick id names no probe"
    assert not any(p.heavy for p in quick)
    # A failing tool (exit 3) takes a real build: only heavy probes reach it.
    assert {p.expect for p in quick} == set(hp.EXPECTS) - {"tool"}
    assert any(p.expect == "tool" for p in catalogue)


@pytest.fixture(scope="module")
def quick_results(catalogue, tmp_path_factory):
    base = tmp_path_factory.mktemp("probes")
    return {r.probe.id: r for r in hp.run_all(hp.select(catalogue, quick=True), jobs=2,
                                               base=base)}


@pytest.mark.parametrize("probe_id", hp.quick_ids())
def test_quick_probe(quick_results, probe_id):
    r = quick_results[probe_id]
    assert r.ok, (f"{probe_id}: {'; '.join(r.problems)}\n"
                  f"pipegossip {' '.join(r.probe.argv)}\n{r.stderr[-2000:]}")


def test_the_runner_sees_what_goes_wrong(tmp_path):
    """A probe that expects the wrong thing, touches the user's file or leaves
    a temporary is a failure: the checks themselves can fail."""
    cfg = ["run", "--n", "4", "--order", "identity"]
    probes = [
        hp.Probe("self/wrong-class", "run", cfg, "refused"),
        hp.Probe("self/overwrites-a-sentinel", "run", [*cfg, "-o", "keep.txt"], "success"),
        hp.Probe("self/ok", "run", [*cfg, "-o", "new.txt"], "success", creates=("new.txt",)),
        hp.Probe("self/missing-output", "run", cfg, "success", creates=("never.txt",)),
    ]
    results = {r.probe.id: r for r in hp.run_all(probes, jobs=2, base=tmp_path)}
    assert results["self/ok"].ok, results["self/ok"].problems
    assert not results["self/wrong-class"].ok
    assert "exit 0, expected 2 (refused)" in results["self/wrong-class"].problems
    bad = results["self/overwrites-a-sentinel"]
    assert bad.outcome == "data touched" and "keep.txt (changed)" in bad.problems[0]
    assert "never.txt was not written" in results["self/missing-output"].problems
    # A temporary the command would leave: planted in a scratch folder by hand.
    folder = tmp_path / "planted"
    folder.mkdir()
    before = hp._snapshot(folder)
    (folder / ".out.txt.abc123.tmp").write_text("half")
    assert hp._temporaries(folder, before, None) == [".out.txt.abc123.tmp"]


@pytest.mark.slow
def test_the_whole_catalogue(catalogue, tmp_path):
    results = hp.run_all(catalogue, jobs=2, base=tmp_path)
    failed = [r for r in results if not r.ok]
    assert not failed, hp.summary(results)
