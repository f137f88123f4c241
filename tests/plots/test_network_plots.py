"""`sim cosim --fabric network --plot`: the schedule's rounds beside the run's words per link.

The picture is drawn from stored records (tests/judge_records.py), so its
content is checked without a simulator: every cell is a message of the
schedule or a sample of the record, on the row of its directed link.
"""

import subprocess
import sys

import numpy as np
import pytest
from judge_records import stored
from matplotlib.patches import Rectangle

from pipegossip.cli import main
from pipegossip.model.algorithms.path_cycle import path_gossip
from pipegossip.model.algorithms.polling import polling_hypercube
from pipegossip.model.schedules import save
from pipegossip.plots.network import (network_run_figure, plot_network_run,
                                      record_link_words, schedule_link_items)


def _stored(name):
    return stored("network")[name]


@pytest.mark.parametrize("name", ["allreduce-q2", "polling-q3", "gossip-path4"])
def test_the_schedule_panel_and_the_record_agree_link_by_link(name):
    # One-word rounds: round r's messages are the sends of cycle latency + r
    # on the same rows (directed links), so both grids are the same picture.
    program, record = _stored(name)
    items = schedule_link_items(program.schedule, program)
    valid = record_link_words(record)[0]
    lat = record.latency
    assert items.shape == (program.ports, program.schedule.rounds_total)
    for r in range(items.shape[1]):
        np.testing.assert_array_equal(items[:, r] > 0, valid[lat + 1 + r])


def test_link_rows_are_sender_to_receiver():
    program, _ = _stored("allreduce-q2")
    items = schedule_link_items(program.schedule, program)
    # recursive doubling on Q_2: round 1 along bit 0 (0<->1, 2<->3), round 2 along bit 1
    for u, v, r in ((0, 1, 0), (1, 0, 0), (2, 3, 0), (0, 2, 1), (3, 1, 1)):
        assert items[program.port(u, v), r] == 2 ** r
    assert items[program.port(0, 2), 0] == 0 and items[program.port(0, 1), 1] == 0


def _cells(ax):
    return {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text()
            for t in ax.texts}


@pytest.mark.parametrize("name", ["allreduce-q2", "polling-q3", "broadcast-path4"])
def test_the_hardware_panel_shows_every_word_sent_and_every_accumulator(name):
    program, record = _stored(name)
    fig = network_run_figure(program.schedule, program, record, f"{name}: MATCH")
    ax_s, ax_h, ax_a = fig.axes[0], fig.axes[1], fig.axes[2]
    valid, acc, word, rx_valid, rx_comb = record_link_words(record)
    busy = np.flatnonzero(np.asarray(record.samples["busy"]))
    want = {}
    for k in range(busy[0], busy[-1] + 2):
        for p in np.flatnonzero(valid[k]):
            q = program.peer(p)
            want[(k, p)] = f"{int(word[k, p]):02x}" + ("+" if rx_comb[k, q] else "") + \
                ("s" if rx_valid[k, q] else "")
    assert want and _cells(ax_h) == want
    # the allreduce combines every word it sends, the broadcast stores every one
    marks = {"allreduce-q2": "+", "polling-q3": "+", "broadcast-path4": "s"}[name]
    assert all(t.endswith(marks) for t in want.values())
    accs = record.lane("acc")
    assert _cells(ax_a) == {(k, v): f"{int(accs[k, v]):02x}"
                            for k in range(busy[0], busy[-1] + 2) for v in range(program.n)}
    if name == "allreduce-q2":  # the last column: every node holds the one sum
        assert len({int(accs[busy[-1] + 1, v]) for v in range(program.n)}) == 1
    assert _cells(ax_s) == {(r + 1, p): str(c) for (p, r), c in
                            np.ndenumerate(schedule_link_items(program.schedule, program))
                            if c}
    assert sum(isinstance(x, Rectangle) for x in ax_h.patches) == len(want)


def test_the_picture_is_reproducible_png_and_svg():
    program, record = _stored("allreduce-q2")
    a = plot_network_run(program.schedule, program, record, "allreduce-q2: MATCH")
    assert a[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot_network_run(program.schedule, program, record, "allreduce-q2: MATCH") == a
    assert plot_network_run(program.schedule, program, record, "x", "svg").lstrip() \
        .startswith(b"<?xml")


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pipegossip", *args], capture_output=True,
                          text=True, timeout=900, cwd=cwd)


@pytest.mark.parametrize("extra, words", [
    (["--plot", "{d}/p.gif"], "give a .png or .svg"),
    (["--plot", "{d}/p.png", "--schedule", "{d}/s.json"], "2 schedules were given"),
    (["--plot", "{d}/p.png", "--fabric", "schedule"], "only to --fabric network"),
    (["--plot", "{d}/sub/p.png/"], "p.png/"),
])
def test_bad_plot_options_are_refused_before_any_build(tmp_path, capsys, extra, words):
    save(path_gossip(4, 1), tmp_path / "s.json")
    argv = ["sim", "cosim", "--fabric", "network", "--schedule", str(tmp_path / "s.json")]
    argv += [a.format(d=tmp_path) for a in extra]
    if "schedule" in extra:  # --fabric given twice: the later one counts
        argv.remove("network")
        argv.remove("--fabric")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_a_run_too_large_to_draw_is_refused(tmp_path, capsys):
    save(polling_hypercube(6), tmp_path / "q6.json")
    assert main(["sim", "cosim", "--fabric", "network", "--schedule",
                 str(tmp_path / "q6.json"), "--plot", str(tmp_path / "p.png")]) == 2
    assert "384 directed links" in capsys.readouterr().err
    assert not (tmp_path / "p.png").exists()


def test_cosim_draws_the_run_it_judged(tmp_path):
    from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(str(e))
    # the build of tests/sim/test_sim_network_cosim.py (path 4, depth 8), cached
    save(path_gossip(4, 1), tmp_path / "ar.json")
    proc = _cli("sim", "cosim", "--fabric", "network", "--schedule", str(tmp_path / "ar.json"),
                "--plot", str(tmp_path / "run.png"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "MATCH" in proc.stdout
    assert (tmp_path / "run.png").read_bytes()[:4] == b"\x89PNG"
