"""`pipegossip program`: a schedule's memory image as hex, JSON and UART bytes; hostile
inputs refused in one line with nothing written; `check` names the depth and slots."""

import json
from pathlib import Path

import pytest

from pipegossip.cli import main
from pipegossip.hw.ports import ScheduleSize
from pipegossip.hw.schedule.image import (ImageLayout, schedule_image, uart_bytes, UART_RUN,
                                          UART_WRITE)
from pipegossip.model.schedules.ir import load
from pipegossip.model.schedules.program import compile_schedule

from test_fpga_schedule import refused

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "gossip-n4.json")




def _expected(depth=None, seed=0):
    p = compile_schedule(load(EXAMPLE), width=8, depth=depth)
    return ScheduleSize(4, 8, p.depth, p.slots), schedule_image(p, seed)


def test_hex_image_is_the_load_writes_then_the_checks(tmp_path):
    out = tmp_path / "prog.hex"
    assert main(["program", EXAMPLE, "-o", str(out)]) == 0
    size, image = _expected()
    lines = out.read_text().splitlines()
    comments = [x for x in lines if x.startswith("//")]
    words = [int(x, 16) for x in lines if not x.startswith("//")]
    assert comments[1] == ("// pipegossip-image/2 fabric=schedule n=4 width=8 depth=3 "
                           "slots=4 cycles=3")
    assert "kind[3:0]" in comments[2] and "3 ACC" in comments[3] and "15 END" in comments[3]
    lay = ImageLayout(size)
    assert [lay.decode(w) for w in words] == image
    # header first (program length 3), the end last
    assert image[0] == (2, 0, 0, 3) and image[-1][0] == 15


def test_json_by_extension_and_by_format(tmp_path, capsys):
    size, image = _expected(depth=8, seed=5)
    assert main(["program", EXAMPLE, "--depth", "8", "--seed", "5", "-o",
                 str(tmp_path / "p.json")]) == 0
    doc = json.loads((tmp_path / "p.json").read_text())
    assert doc["size"] == {"n": 4, "width": 8, "depth": 8, "slots": 4}
    assert [tuple(e) for e in doc["entries"]] == image
    assert doc["cycles"] == 3 and doc["seed"] == 5
    capsys.readouterr()
    assert main(["program", EXAMPLE, "--depth", "8", "--seed", "5", "--format", "json",
                 "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == doc


def test_uart_bytes_write_every_entry_then_run(tmp_path):
    out = tmp_path / "p.uart"
    assert main(["program", EXAMPLE, "-o", str(out)]) == 0
    size, image = _expected()
    data = out.read_bytes()
    assert data == uart_bytes(size, image)
    step = 3 + ImageLayout(size).data_bytes
    assert len(data) == step * len(image) + 1 and data[-1] == UART_RUN
    assert data[0] == UART_WRITE and data[step] == UART_WRITE and data[step + 1] == 1


@pytest.mark.parametrize("args,word", [
    (["--op", "xor"], "--op applies to --fabric network only"),
    (["--depth", "2"], "--depth 3"),
    (["--slots", "3"], "more slots"),
    (["--width", "0"], "--width"),
    (["--format", "verilog"], "invalid choice"),
])
def test_bad_options_are_one_line_and_write_nothing(tmp_path, capsys, args, word):
    out = tmp_path / "p.hex"
    line = refused(capsys, "program", EXAMPLE, *args, "-o", str(out))
    assert line.startswith("pipegossip program: error: ") and word in line
    assert not out.exists()


@pytest.mark.parametrize("content,word", [
    (None, "does not exist"),
    ("{not json", "JSON"),
    ('{"format": "pipegossip-schedule/1"}', "missing key"),
])
def test_bad_files_are_one_line_and_write_nothing(tmp_path, capsys, content, word):
    src = tmp_path / "s.json"
    if content is not None:
        src.write_text(content)
    out = tmp_path / "p.hex"
    line = refused(capsys, "program", str(src), "-o", str(out))
    assert word.lower() in line.lower()
    assert not out.exists()


def test_an_existing_image_survives_a_refused_run(tmp_path, capsys):
    out = tmp_path / "p.hex"
    out.write_text("keep\n")
    refused(capsys, "program", EXAMPLE, "--depth", "1", "-o", str(out))
    assert out.read_text() == "keep\n"
    refused(capsys, "program", EXAMPLE, "-o", str(tmp_path))   # a folder
    assert out.read_text() == "keep\n"


def test_check_prints_the_depth_and_slots_each_fabric_needs(capsys):
    assert main(["check", EXAMPLE]) == 0
    out = capsys.readouterr().out
    assert "schedule fabric: depth 3 (cycles), slots 4" in out
    # the second round brings two items over one link: two words in that bank
    assert "network fabric: depth 3 (cycles), slots 4, bank depth 2" in out
    assert main(["check", EXAMPLE, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["fabrics"] == {
        "schedule": {"depth": 3, "slots": 4},
        "network": {"depth": 3, "slots": 4, "bank_depth": 2}}


def test_check_says_which_fabric_cannot_run_a_schedule(tmp_path, capsys):
    # the cycle's allreduce forwards part of an accumulator: the network fabric sends it
    # from a store slot, the crossbar (one accumulator, nothing else) refuses it
    f = tmp_path / "ar.json"
    assert main(["schedule", "allreduce", "--topology", "cycle", "--n", "6", "-o", str(f)]) == 0
    capsys.readouterr()
    assert main(["check", str(f), "--format", "json"]) == 0
    fabrics = json.loads(capsys.readouterr().out)["fabrics"]
    assert "only the whole accumulator" in fabrics["schedule"]["refused"]
    assert fabrics["network"] == {"depth": 3, "slots": 6, "bank_depth": 3}
    # the tree allreduce's down messages recombine words: refused by both
    assert main(["schedule", "allreduce", "--topology", "shuffle_exchange", "--k", "3", "-o",
                 str(f)]) == 0
    capsys.readouterr()
    assert main(["check", str(f), "--format", "json"]) == 0
    fabrics = json.loads(capsys.readouterr().out)["fabrics"]
    assert "only the whole accumulator" in fabrics["schedule"]["refused"]
    assert "split or recombine" in fabrics["network"]["refused"]


def test_an_unknown_option_names_the_command_once(capsys):
    line = refused(capsys, "fpga", "--fabric", "schedule", "--n", "4", "--bogus", "-o", "x")
    assert line == "pipegossip fpga: error: unrecognized arguments: --bogus"


@pytest.mark.parametrize("args,word", [
    (["--fabric", "schedule", "--schedule", EXAMPLE], "give --board"),
    (["--fabric", "schedule", "--board", "icebreaker"], "needs --schedule"),
    (["--fabric", "schedule", "--schedule", EXAMPLE, "--board", "icebreaker", "--fault",
      "program"], "with --simulate"),
    (["--fabric", "schedule", "--schedule", EXAMPLE, "--board", "icebreaker", "--simulate",
      "--fault", "word"], "--fault expected, program"),
    (["--fabric", "schedule", "--schedule", EXAMPLE, "--board", "icebreaker", "--depth", "2"],
     "--depth 3"),
    (["--fabric", "schedule", "--schedule", EXAMPLE, "--board", "icebreaker", "--n", "5"],
     "has n=4"),
    (["--fabric", "schedule", "--schedule", EXAMPLE, "--board", "ulx3s-85f", "--simulate"],
     "iCE40 boards only"),
    (["--n", "4", "--order", "pipelined", "--simulate"], "needs --board"),
    (["--n", "4", "--order", "pipelined", "--board", "icebreaker", "--fault", "word"],
     "with --simulate"),
    (["--n", "4", "--order", "pipelined", "--board", "icebreaker", "--simulate", "--fault",
      "program"], "--fault word"),
    (["--n", "4", "--order", "pipelined", "--schedule", EXAMPLE], "--schedule applies"),
])
def test_board_and_simulate_options_are_refused_before_any_tool(tmp_path, capsys, args, word):
    out = tmp_path / "b"
    line = refused(capsys, "fpga", *args, "-o", str(out))
    assert line.startswith("pipegossip fpga: error: ") and word in line, line
    assert not out.exists()
