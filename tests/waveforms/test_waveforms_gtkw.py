"""GTKWave save file and translate filters written beside a dump."""

from __future__ import annotations

import re

import pytest

from pipegossip.model import RunConfig, simulate
from pipegossip.waveforms.dump import open_dump
from pipegossip.waveforms.golden import write_golden_dump
from pipegossip.waveforms.gtkw import action_filter, slot_filter, write_gtkw


def test_action_filter_names_the_spec_codes():
    assert action_filter() == "0 -\n1 WR\n2 R\n3 WS\n4 S\n"


def test_slot_filter_gives_run_table_tokens():
    table = dict(line.split(" ", 1) for line in slot_filter(5, 3).splitlines())
    assert len(table) == 5 * 8
    assert table[str((4 << 3) | 1)] == "S1"
    assert table[str((2 << 3) | 0)] == "R0"
    assert table[str((3 << 3) | 2)] == "WS"
    assert table[str((1 << 3) | 4)] == "WR"
    assert table["0"] == "-"
    assert table[str((4 << 3) | 6)] == "S?6"  # no processor 6 when N = 5


@pytest.fixture
def dump(tmp_path):
    result = simulate(RunConfig.family(5, "pipelined"), table=True)
    return write_golden_dump(result, tmp_path / "fab.vcd")


def _traced_names(text: str) -> list[str]:
    """Signal paths the save file refers to (aliases and bit selects removed)."""
    names = []
    for line in text.splitlines():
        if not line or line[0] in "[@-^*":
            continue
        line = re.sub(r"^\+\{[^}]*\} ", "", line)
        if line.startswith("#{"):
            names += [re.sub(r"^\(\d+\)", "", b) for b in line.split("} ", 1)[1].split()]
        else:
            names.append(line)
    return names


def test_save_file_refers_only_to_signals_in_the_dump(dump):
    save = write_gtkw(dump, 5)
    assert save == dump.with_suffix(".gtkw")
    text = save.read_text()
    d = open_dump(dump)
    declared = set()
    for scope, names in d.scopes.items():
        for v in names.values():
            declared.add(f"{scope}.{v.raw}" + (f"[{v.size - 1}:0]" if v.size > 1 else ""))
    names = _traced_names(text)
    assert names and set(names) <= declared
    assert f'[dumpfile] "{dump.resolve()}"' in text


def test_groups_and_translated_slot_trace_per_processor(dump):
    text = write_gtkw(dump, 5).read_text()
    slot = dump.with_name("fab.slot.txt")
    action = dump.with_name("fab.action.txt")
    assert slot.read_text() == slot_filter(5, 3)
    assert action.read_text() == action_filter()
    for i in range(5):
        assert text.count(f"-p{i}\n") == 2  # group begin and end
        bits = " ".join(f"({k})TOP.pipegossip_model.action__{i}[2:0]" for k in range(3))
        assert f"#{{p{i}}} {bits} (0)TOP.pipegossip_model.peer__{i}[2:0]" in text
    assert text.count(f"^1 {slot}") == 5 and text.count(f"^2 {action}") == 5


def visible_range(text: str) -> tuple[float, float]:
    """First and last time a save file shows, in the dump's units.

    GTKWave draws ``2**-zoom`` time units per 200 pixels from ``[timestart]``;
    the wave pane is taken as the ``[size]`` width less the ``[sst_width]``
    and ``[signals_width]`` panes and 100 pixels of borders and scroll bar.
    """
    def number(key):
        return float(re.search(rf"^\[{key}\] (\d+)", text, re.M).group(1))
    start = number("timestart")
    zoom = float(re.search(r"^\*(-?[\d.]+) ", text, re.M).group(1))
    pane = number("size") - number("sst_width") - number("signals_width") - 100
    return start, start + pane * 2 ** -zoom / 200


def test_view_frames_the_run(dump):
    text = write_gtkw(dump, 5).read_text()
    start = int(re.search(r"^\[timestart\] (\d+)$", text, re.M).group(1))
    zoom, marker = re.search(r"^\*(-?[\d.]+) (\d+)", text, re.M).groups()
    # The golden dump: 10 ns period in ps, start sampled at edge 2 (25 ns).
    assert int(marker) == 25_000 and start == 5_000
    # 2**-zoom ps per 200 pixels: the run (12 steps + 4) spans the 1000 pixels
    # the save file's panes leave (1600 - 240 - 260 - 100).
    per_pixel = 2 ** -float(zoom) / 200
    assert 990 < (12 + 4) * 10_000 / per_pixel < 1010
    # Cycle L = 12 is sampled at the edge 12 periods after the start: in view.
    first, last = visible_range(text)
    assert first <= 25_000 - 10_000 and last >= 25_000 + 12 * 10_000


def test_wrong_n_is_refused(dump):
    with pytest.raises(ValueError, match="N=5, not N=6"):
        write_gtkw(dump, 6)


def _with_yosys_internal_name(path):
    """Declare a wire as Verilator traces Yosys's ``\\$auto$...`` names."""
    text = path.read_text()
    line = "$var wire 1 ~~ $auto$verilog_backend.cc:2355:dump_module$1 $end\n"
    at = text.index("$var ")
    path.write_text(text[:at] + line + text[at:])
    return path


def test_unparsable_names_get_a_ports_only_copy(dump):
    from pipegossip.waveforms.portdump import gtkwave_can_parse
    from pipegossip.waveforms.readback import read_dump
    assert gtkwave_can_parse(open_dump(dump))
    _with_yosys_internal_name(dump)
    assert not gtkwave_can_parse(open_dump(dump))
    text = write_gtkw(dump, 5).read_text()
    copy = dump.with_name("fab.ports.vcd")
    assert f'[dumpfile] "{copy}"' in text
    assert gtkwave_can_parse(open_dump(copy))
    assert "$auto" not in copy.read_text()
    original, ported = read_dump(dump), read_dump(copy)
    assert ported.table == original.table and ported.problems == []
    assert ported.scope == original.scope and ported.clock_period == original.clock_period


def test_port_dump_turns_fst_into_vcd(tmp_path):
    from pipegossip.waveforms.portdump import write_port_dump
    from pipegossip.waveforms.readback import read_dump
    config = RunConfig.family(6, "identity", receive="any", sessions=2)
    fst = write_golden_dump(simulate(config, table=True), tmp_path / "g.fst")
    vcd = write_port_dump(fst, tmp_path / "g.vcd")
    a, b = read_dump(fst), read_dump(vcd)
    assert open_dump(vcd).format == "vcd"
    assert b.table == a.table == simulate(config, table=True).table
    assert b.words.tolist() == a.words.tolist()
