"""What ``pipegossip demo`` leaves on disk opens in standard waveform tools.

The demo builds the fabric with Verilator (skipped, with the reason, where
the toolchain is missing) and writes its dump, GTKWave view and summary.
Every VCD must parse with two independent readers (pywellen, the library of
the Surfer viewer, and pyvcd's tokenizer), the view must show the whole run,
and ``summary.json`` must name the save file it sits beside.
"""

from __future__ import annotations

import json

import pytest
from test_waveforms_gtkw import visible_range

from pipegossip.cli import main
from pipegossip.model import RunConfig, simulate
from pipegossip.waveforms.dump import open_dump
from pipegossip.waveforms.readback import read_dump

CONFIG = RunConfig.family(4, "identity")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(f"Verilator is not usable here: {e}")
    out = tmp_path_factory.mktemp("demo") / "out"
    assert main(["demo", "--n", "4", "--order", "identity", "--quiet", "-o", str(out)]) == 0
    return out


def test_every_vcd_opens_in_standard_readers(demo):
    import pywellen
    from vcd.reader import TokenKind, tokenize

    vcds = sorted(demo.glob("*.vcd"))
    assert vcds
    for path in vcds:
        wave = pywellen.Waveform(str(path))
        assert wave.file_format == "VCD" and wave.all_vars()
        changes = []
        wave.stream_changes(lambda t, signal, value: changes.append(t), wave.all_vars())
        assert changes
        with open(path, "rb") as f:
            kinds = [tok.kind for tok in tokenize(f)]
        assert TokenKind.ENDDEFINITIONS in kinds and kinds.count(TokenKind.CHANGE_TIME) > 1
        # Nothing a GTKWave-style parser reads as a keyword: no name starts with $.
        assert not [v.path for names in open_dump(path).scopes.values()
                    for v in names.values() if v.raw.startswith("$") or "$" in v.scope]


def test_the_view_covers_the_whole_run(demo):
    (save,) = demo.glob("*.gtkw")
    text = save.read_text()
    dump = text.split('[dumpfile] "', 1)[1].split('"', 1)[0]
    rb = read_dump(dump)
    assert rb.length == simulate(CONFIG).length
    period = rb.clock_period / open_dump(dump).timescale
    first, last = visible_range(text)
    # Cycle L is sampled at the rising edge L periods after the start.
    assert first < rb.start_time and last >= rb.start_time + rb.length * period


def test_summary_names_the_save_file(demo):
    summary = json.loads((demo / "summary.json").read_text())
    (save,) = demo.glob("*.gtkw")
    assert summary["gtkw"] == str(save)
    assert summary["waveform"] == str(demo / save.with_suffix(".vcd").name)
    assert save.is_file() and (demo / summary["waveform"]).is_file()


def test_exported_verilog_has_no_generated_escaped_names():
    """Verilator traces ``\\$auto$...`` and ``\\$1`` as names GTKWave and pyvcd refuse."""
    import re

    from pipegossip.hw.export import plain_internal_names, verilog_text
    text = verilog_text(RunConfig.family(3, "pipelined"))
    assert not re.search(r"\\\$", text)
    assert plain_internal_names("wire \\$1 ;\nwire _1;\nassign \\$1  = \\$auto$a.b:3$1 ;\n") \
        == "wire _1_ ;\nwire _1;\nassign _1_  = _auto_a_b_3_1 ;\n"
