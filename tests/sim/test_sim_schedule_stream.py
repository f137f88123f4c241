# amaranth: UnusedElaboratable=no
"""Streaming on the schedule fabric under Verilator: later gossips' words loaded while it runs."""

import pytest

from pipegossip.hw.ports import ScheduleSize
from pipegossip.model.algorithms.limits import cyclic_shift
from pipegossip.model.schedules.stream import VIA_LOAD, compile_stream
from pipegossip.sim.judge.schedule import judge_schedule, port_figures
from pipegossip.sim.schedule.cosim import build_schedule_fabric, run_schedule_build
from pipegossip.sim.tools.toolchain import ToolchainError, use_verilator


def _verilator():
    try:
        use_verilator()
    except ToolchainError as e:
        pytest.skip(str(e))


def _judged(sp, r):
    v = judge_schedule(sp, r)
    assert v.match, v.report()
    assert r.origin.startswith("cocotb")
    assert len(r.loads) == len(sp.loads) > 0  # the words written while running
    return port_figures(sp, r)


def test_n8_streaming_on_verilator_through_both_load_paths():
    _verilator()
    n = 8
    b = build_schedule_fabric(ScheduleSize(n, 8, 64, 4 * n))
    item = compile_stream(cyclic_shift(n), 8, banks=2, depth=64, slots=4 * n)
    (r,) = run_schedule_build(b, [item], seed=3)
    f = _judged(item, r)
    assert f["min_util"] == 1.0 and f["period"] == n - 1 and f["exchange_cycles"] == 8 * (n - 1)
    shared = compile_stream(cyclic_shift(n), 8, banks=3, depth=64, slots=4 * n)
    (r,) = run_schedule_build(b, [shared], seed=4, via=VIA_LOAD)
    assert {w[1] for w in r.loads} == {0}  # every timed write went through the load port
    f = _judged(shared, r)
    assert f["min_util"] == 1.0 and f["period"] == n - 1


def test_n16_streaming_on_verilator():  # about 26 s with a cold build
    _verilator()
    sp = compile_stream(cyclic_shift(16), 8, banks=2, depth=128)
    b = build_schedule_fabric(ScheduleSize(16, 8, 128, 32))
    (r,) = run_schedule_build(b, [sp], seed=16)
    f = _judged(sp, r)
    assert f["min_util"] == 1.0 and f["period"] == 15


def _cli(tmp_path, capsys, *args):
    from pipegossip.cli import main
    from pipegossip.model.algorithms.limits import one_factor
    from pipegossip.model.schedules.ir import save
    save(cyclic_shift(6), tmp_path / "cs6.json")
    save(one_factor(6), tmp_path / "of6.json")
    rc = main(["cosim-schedule", *[str(tmp_path / a) if a.endswith(".json") else a
                                    for a in args], "-q"])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_stream_reports_the_measured_figures(tmp_path, capsys):
    rc, out, _ = _cli(tmp_path, capsys, "cs6.json", "--stream", "4", "--simulator", "amaranth")
    assert rc == 0
    assert ("stream: 4 gossips, 2 bank(s) (12 slots), 12 words loaded while running; "
            "20 exchange cycles, port utilisation min 1.000; all-to-alls per 1000 cycles: "
            "200.0 steady (one every 5.0 cycles)") in out
    rc, out, _ = _cli(tmp_path, capsys, "of6.json", "--stream", "2", "--simulator", "amaranth",
                      "--format", "json")
    import json
    res = json.loads(out)["results"][0]
    assert rc == 0 and res["match"] and res["stream"]["min_util"] < 1.0


@pytest.mark.parametrize("args, says", [
    (["cs6.json", "--banks", "3"], "--banks applies only with --stream"),
    (["cs6.json", "--stream", "8", "--via", "load"], "load port cannot write"),
    (["cs6.json", "--stream", "100000000"], "PIPEGOSSIP_MAX_MEMORY"),
])
def test_cli_stream_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, says):
    rc, out, err = _cli(tmp_path, capsys, *args, "--simulator", "amaranth")
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1
    assert err.startswith("pipegossip cosim-schedule: error: ")
