"""The engine against a recorded oracle of its own earlier outputs.

``tests/fixtures/engine_oracle.json`` was generated from the engine as it
stood before the Algorithm 2 + ``any`` fast path (issue 18) existed, so any
later optimisation has to reproduce those runs bit for bit: the run length L,
the utilisation string, every delivery and, for small N, the run-table.

Regenerate (only when the model's semantics change on purpose, never to make
an optimisation pass) with::

    .venv/bin/python tests/model/test_model_engine_oracle.py --regenerate

Digests are the first 16 hex digits of a SHA-256 (64 bits: ample to catch a
difference, and it keeps the fixture small):

* ``util``: of the utilisation string ``" ".join(str(u_t))`` (ASCII);
* ``deliv``: of the ``(transfers, 4)`` little-endian int32 array of rows
  ``(step, src, dst, session)`` in firing order, C order;
* ``table`` (N <= TABLE_MAX_N only): of the actions (uint8) then the peers
  (little-endian int32), both ``(N, L)`` in C order.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import sys
import time

import numpy as np
import pytest

from pipegossip.model import RunConfig, fastpath, simulate

FIXTURE = pathlib.Path(__file__).parent.parent / "fixtures" / "engine_oracle.json"

ORDERS = [("identity", None), ("pipelined", None)] + [("random", s) for s in range(5)]
RECEIVE = ("ordered", "any")
SUBSTITUTE = (False, True)
SESSIONS = (1, 2)
NS = list(range(2, 17)) + [24, 32, 64, 128, 256, 512]
#: Run-tables are digested up to this N (they grow as N x L).
TABLE_MAX_N = 32
#: The default (fast) suite checks N up to this; the rest is marked slow.
FAST_MAX_N = 64
#: Random orders are recorded up to this N (raise it only if generation stays quick).
RANDOM_MAX_N = 512


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def key(n, order, seed, receive, substitute, sessions) -> str:
    return RunConfig.family(n, order, seed, receive=receive, substitute=substitute,
                            sessions=sessions).slug


def configs():
    """Every configuration of the oracle, as ``(n, order, seed, receive, sub, sessions)``."""
    for n in NS:
        for order, seed in ORDERS:
            if order == "random" and n > RANDOM_MAX_N:
                continue
            for receive in RECEIVE:
                for sub in SUBSTITUTE:
                    for k in SESSIONS:
                        yield (n, order, seed, receive, sub, k)


def record(result, with_table: bool) -> dict:
    """The oracle entry of one run."""
    d = result.deliveries
    rows = np.stack([d.step, d.src, d.dst, d.session], axis=1).astype("<i4")
    out = {
        "L": result.length,
        "util": _digest(" ".join(map(str, result.utilization.tolist())).encode()),
        "deliv": _digest(np.ascontiguousarray(rows).tobytes()),
    }
    if with_table:
        t = result.table
        out["table"] = _digest(np.ascontiguousarray(t.actions, dtype=np.uint8).tobytes()
                               + np.ascontiguousarray(t.peers, dtype="<i4").tobytes())
    return out


def run(cfg, table: bool | None = None) -> dict:
    """The oracle entry of one configuration; with a table up to TABLE_MAX_N by default."""
    n, order, seed, receive, sub, k = cfg
    config = RunConfig.family(n, order, seed, receive=receive, substitute=sub, sessions=k)
    with_table = n <= TABLE_MAX_N if table is None else table
    return record(simulate(config, table=with_table), with_table)


def check(cfg, oracle) -> None:
    """Both engine paths against the oracle: with a run-table (general engine)
    where the oracle has one, and without (the compiled path where it applies)."""
    want = oracle[key(*cfg)]
    assert run(cfg, table=False) == {k: v for k, v in want.items() if k != "table"}, key(*cfg)
    if "table" in want:
        assert run(cfg, table=True) == want, key(*cfg)


def _load() -> dict:
    with open(FIXTURE, encoding="utf-8") as f:
        return json.load(f)["runs"]


def _cases(fast: bool):
    out = []
    for cfg in configs():
        if (cfg[0] <= FAST_MAX_N) == fast:
            out.append(pytest.param(cfg, id=key(*cfg)))
    return out


def _group(cases, size):
    """Batch small cases so the default suite does not pay per-test overhead."""
    return [pytest.param([c.values[0] for c in cases[i:i + size]], id=f"batch{i // size:03d}")
            for i in range(0, len(cases), size)]


@pytest.fixture(scope="module")
def oracle():
    return _load()


@pytest.fixture(autouse=True, scope="module")
def fast_path_from_small_n():
    """Send every covered configuration to the compiled path, however small."""
    saved = fastpath.MIN_N
    fastpath.MIN_N = 3
    yield
    fastpath.MIN_N = saved


@pytest.mark.parametrize("cfgs", _group(_cases(fast=True), 24))
def test_engine_matches_oracle(oracle, cfgs):
    for cfg in cfgs:
        check(cfg, oracle)


@pytest.mark.slow
@pytest.mark.parametrize("cfg", _cases(fast=False))
def test_engine_matches_oracle_large(oracle, cfg):
    check(cfg, oracle)


def test_oracle_covers_every_configuration(oracle):
    assert set(oracle) == {key(*c) for c in configs()}


def _regenerate() -> None:
    runs = {}
    start = time.perf_counter()
    for cfg in configs():
        t0 = time.perf_counter()
        runs[key(*cfg)] = run(cfg)
        dt = time.perf_counter() - t0
        if dt > 1:
            print(f"{key(*cfg)}: {dt:.1f} s", file=sys.stderr, flush=True)
    doc = {
        "about": "Outputs of pipegossip.model.simulate recorded as a regression oracle; "
                 "see tests/model/test_model_engine_oracle.py for the digests' definition.",
        "runs": runs,
    }
    FIXTURE.parent.mkdir(exist_ok=True)
    text = "{\n" + f' "about": {json.dumps(doc["about"])},\n "runs": {{\n'
    text += ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}"
                       for k, v in runs.items())
    text += "\n }\n}\n"
    tmp = FIXTURE.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(FIXTURE)
    print(f"wrote {len(runs)} runs to {FIXTURE} in {time.perf_counter() - start:.0f} s",
          file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: test_model_engine_oracle.py --regenerate")
    _regenerate()
