# amaranth: UnusedElaboratable=no
"""The network fabric's memory image and board top: the image round trip (hex -> load
writes -> the same program), the self-test in Amaranth's simulator (PASS, and FAIL at the
planted fault's node), the status line, the CLI's refusals, and the bitstream-level run."""

import dataclasses
import json
import subprocess
import sys

import pytest
from amaranth.sim import Simulator

from pipegossip.cli import main
from pipegossip.hw.fpga.network_board import NetworkSelfTest, network_board_core
from pipegossip.hw.fpga.schedule_selftest import schedule_status_text
from pipegossip.hw.network.fabric import DIRECTORY
from pipegossip.hw.network.image import (FAULTS, fault_candidates, network_image,
                                         network_image_size, plant_network_fault)
from pipegossip.hw.network.load import network_writes
from pipegossip.hw.schedule.image import (ImageKind, ImageLayout, image_capacity, image_writes,
                                          uart_bytes)
from pipegossip.model.algorithms.path_cycle import cycle_gossip, path_gossip
from pipegossip.model.algorithms.polling import polling_hypercube
from pipegossip.model.algorithms.reduce import allreduce_schedule, reduce_schedule
from pipegossip.model.schedules.ir import load, save
from pipegossip.model.schedules.network_program import NONE, compile_network
from pipegossip.model.schedules.topologies import topology

from test_fpga_board_top import decode_uart
from test_fpga_schedule_board import EXAMPLE

CASES = {
    "cycle4": lambda: compile_network(cycle_gossip(4, 1)),
    "path4": lambda: compile_network(path_gossip(4, 1)),
    # the hand-written N=4 example on the network fabric of hypercube(2)
    "example-hypercube2": lambda: compile_network(load(EXAMPLE),
                                                  topology=topology("hypercube", k=2)),
    "allreduce-cycle4": lambda: compile_network(allreduce_schedule(topology("cycle", n=4))),
    "reduce-cycle6-xor": lambda: compile_network(reduce_schedule(topology("cycle", n=6), 2),
                                                 op="xor"),
    "polling-hypercube3": lambda: compile_network(polling_hypercube(3), depth=8),
}


def _encoded(size, entries):
    lay = ImageLayout(size)
    return [lay.encode(e) for e in entries]


def run_selftest(program, entries, cycles=600, store="banks"):
    """The first verdict of a network self-test holding ``entries``: (ok, node, stall)."""
    size = network_image_size(program)
    if store != size.store:  # the single store has no banks
        size = dataclasses.replace(size, store=store, bank_depth=None)
    dut = NetworkSelfTest(program.topology, size, _encoded(size, entries), program.op)
    out = []

    async def bench(ctx):
        for _ in range(cycles):
            await ctx.tick()
            if ctx.get(dut.report):
                out.append((ctx.get(dut.ok), ctx.get(dut.node), ctx.get(dut.stall)))
                return

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert out, "no verdict"
    return out[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_compiled_network_program_passes_on_the_self_test(name):
    program = CASES[name]()
    assert run_selftest(program, network_image(program, seed=3)) == (1, 0, 0)


@pytest.mark.parametrize("name", ["cycle4", "allreduce-cycle4", "polling-hypercube3"])
def test_the_single_store_board_iCE40_builds_passes_and_fails_at_the_fault(name):
    # iCE40 boards build the single flip-flop store (the device default): the
    # image's directory writes are ignored there, the read-back is the same.
    program = CASES[name]()
    entries = network_image(program, seed=3)
    assert run_selftest(program, entries, store="single") == (1, 0, 0)
    bad, at = plant_network_fault(program, entries, "expected")
    ok, node, _ = run_selftest(program, bad, store="single")
    assert ok == 0 and node == at


def _fault_cases():
    # Every fault kind on gossip, and on each way a node ends wrong: a stored word
    # (path4), an accumulator only (allreduce), a reduce keeping no word (its
    # "expected" fault flips an accumulator), polling's drained accumulators.
    yield from (("cycle4", "expected"), ("cycle4", "program"), ("path4", "program"),
                ("allreduce-cycle4", "program"), ("reduce-cycle6-xor", "expected"),
                ("polling-hypercube3", "program"))


@pytest.mark.parametrize("name,fault", list(_fault_cases()))
def test_a_planted_fault_fails_at_its_node(name, fault):
    program = CASES[name]()
    entries, node = plant_network_fault(program, network_image(program), fault)
    assert entries != network_image(program)
    assert run_selftest(program, entries) == (0, node, 0)


def test_the_program_fault_is_the_latest_receive_a_node_does_not_pass_on():
    # cycle(4) gossip: 3 cycles, the last one's receives are never sent on; the latest
    # (highest port) is node 3's
    program = CASES["cycle4"]()
    entries, node = plant_network_fault(program, network_image(program), "program")
    assert node == 3
    changed = [(a, b) for a, b in zip(network_image(program), entries) if a != b]
    assert len(changed) == 1
    (kind, v, c, good), (_, _, _, bad) = changed[0]
    assert (kind, v, c) == (ImageKind.PROGRAM, 3, program.cycles - 1)
    lay = program.layout(3)
    fields = lay.decode(good)
    j = max(k for k in range(len(program.links[3])) if fields[f"rx{k}"])
    assert lay.decode(bad) == {**fields, f"rx{j}": 0, f"comb{j}": 0}


@pytest.mark.parametrize("name", ["cycle4", "allreduce-cycle4"])
def test_every_fault_candidate_fails_at_its_own_node(name):
    """Not only the latest: each receive offered for the program fault fails at its node
    (a receive whose node passes it on later would fail a neighbour first)."""
    program = CASES[name]()
    image = network_image(program)
    candidates = fault_candidates(program)
    assert len(candidates) >= 2
    for at in candidates:
        entries, node = plant_network_fault(program, image, "program", at=at)
        assert run_selftest(program, entries) == (0, node, 0), at


def test_a_wrong_accumulator_fails_at_its_node():
    program = CASES["allreduce-cycle4"]()
    entries = network_image(program)
    at = [i for i, e in enumerate(entries) if e[0] == ImageKind.EXPECT_ACC]
    k, v, x, d = entries[at[1]]
    entries[at[1]] = (k, v, x, d ^ 0x80)
    assert run_selftest(program, entries) == (0, 1, 0)


def test_an_entry_the_fabric_does_not_know_fails_instead_of_ending_the_checks():
    """Kind 9 where the checks start: the load stops there, and a run that checked
    nothing must not PASS (a self-test without the directory load would)."""
    program = CASES["cycle4"]()
    entries = network_image(program)
    first = next(i for i, e in enumerate(entries) if e[0] == ImageKind.EXPECT_WORD)
    entries[first] = (9, 2, 0, 0)
    assert run_selftest(program, entries) == (0, 2, 0)


def test_the_hex_image_round_trips_to_the_same_program(tmp_path):
    """hex -> image entries -> load writes equal network_writes; the decoded program
    entries give back the compiler's per-port sends, receives and combines."""
    sched = tmp_path / "cycle4.json"
    save(allreduce_schedule(topology("cycle", n=4)), sched)
    out = tmp_path / "p.hex"
    assert main(["hw", "program", str(sched), "--fabric", "network", "--seed", "2",
                 "--op", "xor", "-o", str(out)]) == 0
    program = compile_network(load(sched), op="xor")
    size = network_image_size(program)
    lines = out.read_text().splitlines()
    assert "kind[3:0]" in lines[2] and "4 DIRECTORY" in lines[3]
    lay = ImageLayout(size)
    image = [lay.decode(int(x, 16)) for x in lines if not x.startswith("//")]
    assert image == network_image(program, seed=2)
    # one set of kind codes: the image's load entries are the load port's writes unchanged
    assert DIRECTORY == ImageKind.DIRECTORY
    assert image_writes(image) == network_writes(program, seed=2)
    for v in range(program.n):
        entries = {a: d for k, node, a, d in image if k == ImageKind.PROGRAM and node == v}
        assert sorted(entries) == list(range(program.cycles))
        base = program.offsets[v]
        for c, word in entries.items():
            f = program.layout(v).decode(word)
            for j in range(len(program.links[v])):
                tx, rx = int(program.tx[c, base + j]), int(program.rx[c, base + j])
                assert f[f"tx{j}"] == (tx != NONE) and f[f"rx{j}"] == (rx != NONE)
                assert f[f"comb{j}"] == program.comb[c, base + j]
            assert f["drain"] == program.drain[c, v]


def test_json_and_uart_images(tmp_path, capsys):
    sched = tmp_path / "c.json"
    save(cycle_gossip(4, 1), sched)
    assert main(["hw", "program", str(sched), "--fabric", "network", "--depth", "5",
                 "--bank-depth", "3", "-o", str(tmp_path / "p.json")]) == 0
    doc = json.loads((tmp_path / "p.json").read_text())
    program = compile_network(load(sched), depth=5, bank_depth=3)
    assert doc["fabric"] == "network" and doc["topology"] == {"name": "cycle", "n": 4}
    assert doc["size"] == {"n": 4, "width": 8, "depth": 5, "slots": 4}
    assert doc["bank_depth"] == 3 and doc["op"] == "sum" and doc["cycles"] == 3
    assert [tuple(e) for e in doc["entries"]] == network_image(program)
    assert main(["hw", "program", str(sched), "--fabric", "network", "-o",
                 str(tmp_path / "p.uart")]) == 0
    program = compile_network(load(sched))
    size = network_image_size(program)
    assert (tmp_path / "p.uart").read_bytes() == uart_bytes(size, network_image(program))
    assert len(network_image(program)) <= image_capacity(size)


@pytest.mark.parametrize("args,word", [
    (["--op", "xor"], "--op applies to --fabric network only"),
    (["--bank-depth", "2"], "--bank-depth applies to --fabric network only"),
    (["--fabric", "network", "--bank-depth", "1"], "--bank-depth 3"),
    (["--fabric", "network", "--depth", "2"], "--depth 3"),
])
def test_bad_program_options_write_nothing(tmp_path, capsys, args, word):
    sched = tmp_path / "c.json"
    save(cycle_gossip(4, 1), sched)
    out = tmp_path / "p.hex"
    assert main(["hw", "program", str(sched), *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and word in err, err
    assert not out.exists()


def test_the_board_core_says_fail_node_over_the_uart():
    program = CASES["cycle4"]()
    size = network_image_size(program)
    faulty, node = plant_network_fault(program, network_image(program), "program")
    divisor = 4
    dut = network_board_core(program.topology, size, _encoded(size, faulty), divisor)
    text_len = len(schedule_status_text(4, 1, False, node, False, "network"))
    tx = []

    async def bench(ctx):
        for _ in range(400 + (text_len + 2) * 10 * divisor):
            tx.append(ctx.get(dut.tx))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert decode_uart(tx, divisor).decode() == "FAIL node 3 network n=4 runs=00000001\r\n"


def pg(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True, cwd=cwd)


@pytest.mark.parametrize("argv,words", [
    (["--topology", "cycle", "--n", "4", "--board", "icebreaker"], "needs --schedule"),
    (["--schedule", "c.json"], "give --board"),
    (["--topology", "cycle", "--n", "4", "--fault", "program"],
     "--fault applies only with --schedule and --board"),
    (["--schedule", "c.json", "--board", "icebreaker", "--fault", "program"],
     "with --simulate"),
    (["--schedule", "c.json", "--board", "icebreaker", "--topology", "path", "--n", "4"],
     "non-edge"),
    (["--schedule", "c.json", "--board", "icebreaker", "--bank-depth", "1"], "--bank-depth 3"),
    (["--schedule", "c.json", "--board", "ulx3s-85f", "--simulate"], "iCE40 boards only"),
])
def test_bad_network_board_options_are_one_line(tmp_path, argv, words):
    save(cycle_gossip(4, 1), tmp_path / "c.json")
    r = pg("hw", "fpga", "--fabric", "network", *argv, "-o", "b", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and words in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


@pytest.mark.parametrize("board,pins", [
    ("icebreaker", ["set_io uart_0__rx__io 6", "set_io led_g_0__io 37", "set_io led_r_0__io 11",
                    "set_io led_2__io 26", "set_io button_0__io 10"]),
    ("ulx3s-85f", ['"uart_0__rx__io" SITE "M1"', '"led_0__io" SITE "B2"', '"led_3__io" SITE "D2"',
                   '"button_0__io" SITE "R1"']),
])
def test_network_board_plan_uses_the_uart_and_the_node_leds(board, pins):
    from pipegossip.hw.fpga.flow import board_plan, prepare_network
    program = CASES["cycle4"]()
    size = network_image_size(program)
    job = prepare_network(program.topology, 8, size.depth, size.slots, board=board,
                          image=_encoded(size, network_image(program)))
    job.netlist = True
    plan = board_plan(job)
    constraints = plan.files["top.pcf" if board == "icebreaker" else "top.lpf"]
    for pin in pins:
        assert pin in constraints
    assert job.fabric == "network" and job.slug.startswith("network-cycle4")
    with pytest.raises(ValueError, match="needs an image"):
        prepare_network(program.topology, 8, size.depth, size.slots, board=board)


@pytest.mark.fpga
@pytest.mark.slow
@pytest.mark.parametrize("fault", [None, *FAULTS])
def test_the_cycle4_board_bitstream_passes_and_fails_at_the_fault(tmp_path, fault):
    save(cycle_gossip(4, 1), tmp_path / "c.json")
    r = pg("hw", "fpga", "--fabric", "network", "--topology", "cycle", "--n", "4",
           "--schedule", "c.json", "--board", "icebreaker", "--simulate", "--quiet",
           "--format", "json", "-o", "b", *(["--fault", fault] if fault else []), cwd=tmp_path)
    assert r.returncode == (1 if fault else 0), r.stderr
    sim = json.loads(r.stdout)["simulation"]
    if fault is None:
        assert sim["verdict"] == "PASS" and sim["line"].startswith("PASS network n=4 runs=")
    else:
        assert sim["verdict"] == f"FAIL node {sim['fault_node']}"
        assert sim["line"].startswith(f"FAIL node {sim['fault_node']} network n=4")
    assert (tmp_path / "b" / "top.bin").is_file()


@pytest.mark.parametrize("board,extra,store", [
    ("icebreaker", [], "single"), ("icebreaker", ["--store", "banks"], "banks"),
    ("icebreaker", ["--bank-depth", "4"], "banks"), ("ulx3s-85f", [], "banks")])
def test_a_board_build_takes_the_devices_store(tmp_path, board, extra, store):
    # The board path once passed the image's bank depth to a single-store iCE40
    # build, and every `hw fpga --fabric network --board icebreaker` was refused.
    from pipegossip.cli import build_parser
    from pipegossip.cli.fpga import _prepare_job
    from pipegossip.cli.spellings import respell
    save(cycle_gossip(4, 1), tmp_path / "c.json")
    argv, _ = respell(["hw", "fpga", "--fabric", "network", "--schedule",
                       str(tmp_path / "c.json"), "--board", board, *extra, "-o",
                       str(tmp_path / "b")])
    job, node = _prepare_job(build_parser(argv).parse_args(argv))
    assert node is None and job.fabric == "network"
    assert job.slug.endswith("-single") == (store == "single"), job.slug
