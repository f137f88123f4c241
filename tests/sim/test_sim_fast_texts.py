"""The generated-text cache (:func:`pipegossip.sim.tools.build_cache.cached_text`).

Generated Verilog is kept on disk keyed by its inputs and the generator's
sources: made once, read back after, made again when asked for fresh
(the benchmark) or when anything in the key differs.
"""

from __future__ import annotations

from pipegossip.model.config import RunConfig
from pipegossip.sim.tools import build_cache
from pipegossip.sim.fsm.runner import GENERATOR, fabric_verilog, generate_verilog


def _maker(calls: list, text: str):
    def make() -> str:
        calls.append(text)
        return text
    return make


def test_made_once_then_read_back(tmp_path):
    calls: list = []
    params = dict(kind="t", n=4)
    assert build_cache.cached_text("t", params, GENERATOR, _maker(calls, "a"), tmp_path) == "a"
    # Read back: the maker is not called, and its new answer is not seen.
    assert build_cache.cached_text("t", params, GENERATOR, _maker(calls, "b"), tmp_path) == "a"
    assert calls == ["a"]
    assert len(list((tmp_path / build_cache.TEXTS).iterdir())) == 1


def test_fresh_texts_and_other_keys_make_again(tmp_path):
    calls: list = []
    params = dict(kind="t", n=4)
    build_cache.cached_text("t", params, GENERATOR, _maker(calls, "a"), tmp_path)
    with build_cache.fresh_texts():
        assert build_cache.cached_text("t", params, GENERATOR, _maker(calls, "b"),
                                       tmp_path) == "b"
    # Another parameter, another set of generator packages: other entries.
    assert build_cache.cached_text("t", dict(params, n=5), GENERATOR, _maker(calls, "c"),
                                   tmp_path) == "c"
    assert build_cache.cached_text("t", params, GENERATOR[:1], _maker(calls, "d"),
                                   tmp_path) == "d"
    assert calls == ["a", "b", "c", "d"]
    # The fresh text replaced the old one.
    assert build_cache.cached_text("t", params, GENERATOR, _maker(calls, "e"), tmp_path) == "b"


def test_fabric_text_is_the_generators(tmp_path):
    config = RunConfig.family(3, "pipelined")
    text = fabric_verilog(config, 8, tmp_path)
    assert text == generate_verilog(config, 8)
    assert fabric_verilog(config, 8, tmp_path) == text
    (entry,) = (tmp_path / build_cache.TEXTS).iterdir()
    assert entry.name.startswith(f"{config.slug}-w8-")
