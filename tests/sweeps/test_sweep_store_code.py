"""The sweep store's key covers the job's code (pipegossip.sweeps.store.code_digest):
a row cached before a change to a source the job imports is computed again, an
unchanged tree reuses it, and code the job never imports does not count.
"""

import importlib
import json
import sys

import pytest

from pipegossip.sweeps import store as sweep_store
from pipegossip.sweeps.runner import Job, SweepOptions, run_sweep
from pipegossip.cli.sweep import model_jobs
from pipegossip.sweeps.store import code_digest, job_key


@pytest.fixture
def fresh_digest():
    """code_digest's per-process memo emptied before and after (a test edits sources)."""
    code_digest.cache_clear()
    yield code_digest
    code_digest.cache_clear()


def test_key_depends_on_the_code_digest():
    a = job_key("m.f", {"n": 4}, {"pipegossip": "0.1.0"}, "c1")
    assert a == job_key("m.f", {"n": 4}, {"pipegossip": "0.1.0"}, "c1")
    assert a != job_key("m.f", {"n": 4}, {"pipegossip": "0.1.0"}, "c2")


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A throwaway package ``digestpkg``: job imports helper (through a subpackage),
    a module inside a function, and one two levels up; ``unrelated`` is imported by
    nobody."""
    files = {
        "digestpkg/__init__.py": "",
        "digestpkg/job.py": "import json\nfrom .sub.helper import X\n\n"
                            "def run(config):\n    from . import late\n    return {}\n",
        "digestpkg/late.py": "Y = 1\n",
        "digestpkg/sub/__init__.py": "",
        "digestpkg/sub/helper.py": "from ..deep import Z\nX = 1\n",
        "digestpkg/deep.py": "Z = 1\n",
        "digestpkg/unrelated.py": "W = 1\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    for name in [m for m in sys.modules if m == "digestpkg" or m.startswith("digestpkg.")]:
        del sys.modules[name]


def test_digest_covers_every_module_the_job_imports_and_only_those(package, fresh_digest):
    def digest():
        fresh_digest.cache_clear()
        return fresh_digest("digestpkg.job", "digestpkg")

    base = digest()
    assert digest() == base  # deterministic
    for name in ("job", "late", "sub/helper", "deep", "sub/__init__", "__init__"):
        path = package / "digestpkg" / f"{name}.py"
        text = path.read_text()
        path.write_text(text + "# edited\n")
        assert digest() != base, name
        path.write_text(text)
        assert digest() == base, name
    (package / "digestpkg" / "unrelated.py").write_text("W = 2\n")
    assert digest() == base
    assert not [m for m in sys.modules if m.startswith("digestpkg")]  # read, not imported


def test_a_code_change_recomputes_the_cached_row_and_an_unchanged_tree_reuses_it(
        tmp_path, monkeypatch, fresh_digest):
    jobs = model_jobs([4, 6])
    options = SweepOptions(tmp_path / "store", workers=0)
    first = run_sweep("t", jobs, options, progress=False)
    assert first.counts == {"done": 2, "cached": 0, "failed": 0}
    fresh_digest.cache_clear()  # as a new command would: the digest is made again
    again = run_sweep("t", jobs, options, progress=False)
    assert again.counts == {"done": 0, "cached": 2, "failed": 0}
    assert [o.key for o in again.outcomes] == [o.key for o in first.outcomes]

    # The engine the model points run, edited (as read by the digest only).
    engine = importlib.import_module("pipegossip.model.engine").__file__
    read = sweep_store._read_source
    monkeypatch.setattr(sweep_store, "_read_source",
                        lambda path: read(path) + (b"\n# edited\n" if path == engine else b""))
    fresh_digest.cache_clear()
    edited = run_sweep("t", jobs, options, progress=False)
    assert edited.counts == {"done": 2, "cached": 0, "failed": 0}
    assert [o.result for o in edited.outcomes] == [o.result for o in first.outcomes]
    records = [json.loads(p.read_text())["record"]
               for p in (tmp_path / "store").glob("objects/*/*.json")]
    assert len(records) == 4 and len({r["code"] for r in records}) == 2

    # A module the model points never import (an FPGA command's), edited: still cached.
    fpga = importlib.import_module("pipegossip.cli.fpga").__file__
    monkeypatch.setattr(sweep_store, "_read_source",
                        lambda path: read(path) + (b"\n# edited\n" if path == fpga else b""))
    fresh_digest.cache_clear()
    assert run_sweep("t", jobs, options, progress=False).counts["cached"] == 2


def test_a_job_of_another_module_gets_that_modules_digest(fresh_digest):
    a = code_digest("pipegossip.cli.sweep")
    assert a == code_digest("pipegossip.cli.sweep")
    assert a != code_digest("pipegossip.sweeps.heuristics")
    assert len(a) == 64 and int(a, 16) >= 0
    job = Job.of(test_key_depends_on_the_code_digest, {})
    assert code_digest(job.func.rpartition(".")[0])  # a test module: its own source
