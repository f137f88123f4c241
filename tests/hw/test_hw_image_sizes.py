# amaranth: UnusedElaboratable=no
"""Fabrics sized by their schedules, images that carry their sizes, one set of kind codes.

* ``hw verilog --schedule F.json ...`` sizes depth, slots (and the network
  fabric's bank depth) from the schedules it must run;
* every image names the fabric and sizes it was compiled for, and is refused
  in one line (exit 2) when loaded into a build that cannot run it: by the
  load-image reader (``hw program --check IMAGE --verilog FABRIC.v``) and by
  the co-simulation (``sim cosim --schedule F.json --image IMAGE``);
* the image's load entries carry the load port's own kind codes on both
  fabrics, so a driver copies them onto ``load__kind`` unchanged; images of
  the earlier format are refused with a hint.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipegossip.cli import main
from pipegossip.hw.network.fabric import DIRECTORY
from pipegossip.hw.network.load import network_writes
from pipegossip.hw.schedule.fabric import LoadKind
from pipegossip.hw.schedule.image import (FIRST_CHECK, ImageKind, ImageLayout, image_writes,
                                          schedule_image)
from pipegossip.hw.schedule.image_read import cannot_run, read_image, verilog_sizes
from pipegossip.hw.schedule.load import load_writes
from pipegossip.hw.network.image import network_image
from pipegossip.model.schedules.ir import load
from pipegossip.model.schedules.network_program import compile_network
from pipegossip.model.schedules.program import compile_schedule

from test_fpga_schedule import refused

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "gossip-n4.json")


def run(*args) -> int:
    return main([str(a) for a in args])


def header(path) -> str:
    return Path(path).read_text().splitlines()[1]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Schedules: cyclic shift n=4 and n=6, the mesh 3x4 allreduce (14 slots: rows' words
    beside the tokens) and the mesh 3x4 all-port gossip (12 slots)."""
    d = tmp_path_factory.mktemp("sched")
    out = {"cs4": d / "cs4.json", "cs6": d / "cs6.json", "ar": d / "ar.json",
           "ap": d / "ap.json"}
    assert run("schedule", "cyclic-shift", "--n", "4", "-o", out["cs4"]) == 0
    assert run("schedule", "cyclic-shift", "--n", "6", "-o", out["cs6"]) == 0
    assert run("schedule", "allreduce", "--topology", "mesh", "--a", "3", "--b", "4",
               "-o", out["ar"]) == 0
    assert run("schedule", "all-port", "--topology", "mesh", "--a", "3", "--b", "4",
               "-o", out["ap"]) == 0
    return out


# ------------------------------------------------------------------ hw verilog --schedule
def test_schedule_fabric_sized_by_its_schedules(tmp_path, files):
    out = tmp_path / "s.v"
    assert run("hw", "verilog", "--fabric", "schedule", "--schedule", files["cs4"],
               EXAMPLE, "-o", out) == 0
    need = [compile_schedule(load(f)) for f in (files["cs4"], EXAMPLE)]
    depth, slots = max(p.cycles for p in need), max(p.slots for p in need)
    assert header(out) == f"// n=4 width=8 depth={depth} slots={slots}"
    assert verilog_sizes(out) == dict(fabric="schedule", n=4, width=8, depth=depth,
                                      slots=slots)
    # --depth and --slots make it larger, never smaller than a schedule needs
    assert run("hw", "verilog", "--fabric", "schedule", "--schedule", files["cs4"],
               "--depth", "16", "--slots", "8", "-o", out) == 0
    assert header(out) == "// n=4 width=8 depth=16 slots=8"


def test_network_fabric_sized_by_its_schedules(tmp_path, files):
    out = tmp_path / "n.v"
    assert run("hw", "verilog", "--fabric", "network", "--schedule", files["ar"], files["ap"],
               "-o", out) == 0
    ar, ap = (compile_network(load(files[k])) for k in ("ar", "ap"))
    assert ar.slots == 14 and ap.slots == 12  # the allreduce's rows' words need 2 more
    z = verilog_sizes(out)
    assert (z["n"], z["depth"], z["slots"], z["bank_depth"], z["topology"]) == (
        12, max(ar.cycles, ap.cycles), 14, 14, "mesh(a=3,b=4)")


@pytest.mark.parametrize("fabric,keys,word", [
    ("schedule", ("cs4", "cs6"), "one N"),
    ("network", ("ar", "cs4"), "one topology"),
    ("schedule", ("cs4",), "--depth 3"),
])
def test_schedules_that_one_fabric_cannot_run_are_refused(tmp_path, capsys, files, fabric,
                                                           keys, word):
    out = tmp_path / "x.v"
    extra = ["--depth", "2"] if word == "--depth 3" else []
    line = refused(capsys, "hw", "verilog", "--fabric", fabric, "--schedule",
                   *(str(files[k]) for k in keys), *extra, "-o", str(out))
    assert word in line and not out.exists()
    if word == "--depth 3":  # a schedule the fabric refuses is named
        assert str(files["cs4"]) in line


def test_fsm_fabric_refuses_schedule(capsys, files):
    line = refused(capsys, "hw", "verilog", "--n", "4", "--order", "identity", "--schedule",
                   str(files["cs4"]))
    assert "--schedule" in line


# ------------------------------------------------------------------ one set of kind codes
def test_load_entries_carry_the_load_ports_kinds(files):
    assert [ImageKind.PROGRAM, ImageKind.ITEM, ImageKind.HEADER, ImageKind.ACC] == list(LoadKind)
    assert ImageKind.DIRECTORY == DIRECTORY and FIRST_CHECK == 8
    assert all(k >= FIRST_CHECK for k in (ImageKind.EXPECT_WORD, ImageKind.EXPECT_EMPTY,
                                          ImageKind.EXPECT_ACC, ImageKind.END))
    # the image's load part is load_writes, entry for entry, kinds included
    p = compile_schedule(load(EXAMPLE))
    writes = [tuple(w) for w in load_writes(p, 3)]
    image = schedule_image(p, 3)
    assert image_writes(image) == writes and image[:len(writes)] == writes
    q = compile_network(load(files["ar"]))
    image = network_image(q, 1)
    writes = [tuple(w) for w in network_writes(q, 1)]
    assert {w[0] for w in writes} == {0, 1, 2, 3, DIRECTORY}   # every load kind is there
    assert image_writes(image) == writes and image[:len(writes)] == writes


# ------------------------------------------------------------------ the load-image reader
def test_image_carries_its_sizes_in_hex_and_json(tmp_path, files):
    hx, js = tmp_path / "ar.hex", tmp_path / "ar.json"
    for out in (hx, js):
        assert run("hw", "program", files["ar"], "--fabric", "network", "-o", out) == 0
    a, b = read_image(hx), read_image(js)
    assert a.sizes == b.sizes == json.loads(js.read_text())["sizes"]
    assert a.sizes == dict(fabric="network", n=12, width=8, depth=a.sizes["cycles"], slots=14,
                           cycles=a.sizes["cycles"], bank_depth=14, op="sum", ports=34,
                           topology="mesh(a=3,b=4)")
    assert a.entries == b.entries
    assert a.writes() == [tuple(w) for w in network_writes(compile_network(load(files["ar"])))]


def test_reader_refuses_an_image_a_build_cannot_run(tmp_path, capsys, files):
    fab = tmp_path / "n.v"
    assert run("hw", "verilog", "--fabric", "network", "--schedule", files["ar"], files["ap"],
               "-o", fab) == 0
    own = tmp_path / "ap.hex"   # compiled on its own: 12 slots, the build has 14
    assert run("hw", "program", files["ap"], "--fabric", "network", "-o", own) == 0
    line = refused(capsys, "hw", "program", "--check", str(own), "--verilog", str(fab))
    assert "slots 12 in the image, 14 in the build" in line and f"--verilog {fab}" in line
    # compiled for the build, it runs there
    good = tmp_path / "ap-for-build.hex"
    assert run("hw", "program", files["ap"], "--verilog", fab, "-o", good) == 0
    capsys.readouterr()
    assert run("hw", "program", "--check", good, "--verilog", fab) == 0
    assert "runs on" in capsys.readouterr().out
    # a schedule fabric's image on the network build
    sched = tmp_path / "cs4.hex"
    assert run("hw", "program", files["cs4"], "-o", sched) == 0
    line = refused(capsys, "hw", "program", "--check", str(sched), "--verilog", str(fab))
    assert "image for the schedule fabric" in line


@pytest.mark.parametrize("change,words", [
    (dict(width=16), "width 8 in the image, 16"),
    (dict(depth=2), "3 cycles, the build's depth is 2"),
    (dict(slots=8), "slots 4 in the image, 8"),   # 3 slot bits instead of 2
    (dict(n=5), "n 4 in the image, 5"),
])
def test_cannot_run_names_the_first_reason(change, words):
    image = dict(fabric="schedule", n=4, width=8, depth=3, slots=4, cycles=3)
    assert cannot_run(image, dict(image)) is None
    assert cannot_run(image, dict(image, slots=3, depth=9)) is not None  # fewer slots
    assert cannot_run(image, dict(image, depth=9, slots=4)) is None      # a deeper build runs it
    assert words in cannot_run(image, dict(image, **change))


def test_network_cannot_run_compares_banks_op_and_topology():
    image = dict(fabric="network", n=4, width=8, depth=4, slots=4, cycles=4, bank_depth=2,
                 op="sum", ports=8, topology="cycle(n=4)")
    assert cannot_run(image, dict(image)) is None
    for k, v in (("bank_depth", 4), ("op", "xor"), ("topology", "path(n=4)"), ("slots", 5)):
        assert k in cannot_run(image, dict(image, **{k: v}))


OLD_HEX = """// pipegossip program x.json: ...
// n=4 width=8 depth=3 slots=4; 30 entries of 25 bits: kind[2:0], node[4:3], addr[6:5], data[24:7]
// kinds: 0 PROGRAM, 1 ITEM, 2 HEADER, 3 EXPECT_WORD, 4 EXPECT_EMPTY, 5 EXPECT_ACC, 6 ACC, 7 END
000182
"""


@pytest.mark.parametrize("name,text,word", [
    ("old.hex", OLD_HEX, "earlier format"),
    ("old.json", json.dumps({"format": "pipegossip-schedule-image/1", "entries": []}),
     "earlier format"),
    ("other.hex", "// hello\n00\n", "not a pipegossip load image"),
    ("bad.json", "{nope", "not valid JSON"),
    ("missing.hex", None, "cannot read"),
])
def test_reader_refuses_other_files_in_one_line(tmp_path, capsys, name, text, word):
    f = tmp_path / name
    if text is not None:
        f.write_text(text)
    line = refused(capsys, "hw", "program", "--check", str(f))
    assert word in line and str(f) in line
    if word == "earlier format":
        assert "pipegossip hw program" in line


def test_reader_refuses_a_truncated_image(tmp_path, capsys, files):
    f = tmp_path / "cs4.hex"
    assert run("hw", "program", files["cs4"], "-o", f) == 0
    lines = f.read_text().splitlines()
    f.write_text("\n".join(lines[:-1]) + "\n")   # the END entry lost
    assert "END entry" in refused(capsys, "hw", "program", "--check", str(f))


# ------------------------------------------------------------------ the co-simulation
def test_cosim_loads_the_image_and_refuses_one_it_cannot_run(tmp_path, capsys, files):
    good, wide, bad = tmp_path / "good.hex", tmp_path / "wide.hex", tmp_path / "bad.hex"
    assert run("hw", "program", files["cs4"], "-o", good) == 0
    assert run("hw", "program", files["cs4"], "--slots", "5", "-o", wide) == 0
    base = ["sim", "cosim", "--schedule", str(files["cs4"]), "--simulator", "amaranth",
            "--image"]
    capsys.readouterr()
    assert main(base + [str(good)]) == 0
    line = refused(capsys, *base, str(wide))
    assert "cannot run on the co-simulation's build" in line and "slots 5 in the image, 4" in line
    # the image's writes are what the fabric loads: one item word altered is a mismatch
    text = good.read_text().splitlines()
    at = next(i for i, x in enumerate(text) if not x.startswith("//") and int(x, 16) & 15 == 1)
    data = ImageLayout(read_image(good).size).offset("data")  # the word's low bit
    text[at] = f"{int(text[at], 16) ^ (1 << data):0{len(text[at])}x}"
    bad.write_text("\n".join(text) + "\n")
    capsys.readouterr()
    assert main(base + [str(bad)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_cosim_image_count_must_match(capsys, files, tmp_path):
    good = tmp_path / "good.hex"
    assert run("hw", "program", files["cs4"], "-o", good) == 0
    line = refused(capsys, "sim", "cosim", "--schedule", str(files["cs4"]), str(EXAMPLE),
                   "--simulator", "amaranth", "--image", str(good))
    assert "one image per --schedule file" in line


def test_network_cosim_refuses_an_image_before_building(tmp_path, capsys, files):
    own = tmp_path / "ap.hex"
    assert run("hw", "program", files["ap"], "--fabric", "network", "--slots", "16",
               "-o", own) == 0
    line = refused(capsys, "sim", "cosim", "--fabric", "network", "--schedule",
                   str(files["ap"]), "--image", str(own))
    assert re.search(r"slots 16 in the image, 12 in the build", line), line
