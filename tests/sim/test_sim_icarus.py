"""Icarus Verilog as a second simulator (optional: skipped without ``iverilog``).

Verilator is two-state and cycle-based; Icarus is four-state and
event-driven, so it also catches X propagation and ordering assumptions the
Verilog might make.
"""

from __future__ import annotations

import pytest

from pipegossip.model import RunConfig
from pipegossip.sim.fsm.cosim import cosimulate
from pipegossip.sim.tools.toolchain import iverilog_available

pytestmark = [pytest.mark.optional_tools,
              pytest.mark.skipif(not iverilog_available(),
                                 reason="iverilog/vvp not on PATH (apt-get install iverilog)")]

CASES = [
    RunConfig.family(5, "pipelined", sessions=2),
    RunConfig.family(6, "random", seed=31, receive="any", substitute=True, channels=2),
]


@pytest.mark.parametrize("config", CASES, ids=lambda c: f"{c.slug}-words0+1")
def test_icarus_matches_the_model(config):
    result = cosimulate(config, 8, simulator="icarus", word_seeds=(0, 1), spurious_start=True)
    assert result.build.simulator == "icarus"
    for verdict in result.verdicts:
        assert verdict.match, verdict.report()


def test_icarus_waveform(tmp_path):
    config = CASES[0]
    path = tmp_path / "icarus.vcd"
    result = cosimulate(config, 8, simulator="icarus", waves="vcd", waves_file=path)
    assert result.match and result.waveform == path
    text = path.read_text(encoding="ascii", errors="replace")
    head = text[:text.index("$enddefinitions")]
    assert " action__0 " in head and " clk " in head
    assert text.count("#") > 2 * result.verdicts[0].hw_length  # time steps were dumped
