"""``pipegossip cosim``, ``demo`` and ``throughput`` from the command line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pipegossip.cli import main
from pipegossip.model import RunConfig, RunTable, pipelined_length, simulate
from pipegossip.sim.tools.toolchain import fst_headers_available


def _one_error_line(capsys) -> str:
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


BAD = [
    (["cosim", "--n", "1", "--order", "identity"], "N"),
    (["cosim", "--n", "4", "--order", "identity", "--width", "0"], "at least 1"),
    (["cosim", "--n", "6", "--order", "pipelined", "--channels", "4"], "channels"),
    (["cosim", "--n", "4", "--order", "sideways"], "sideways"),
    (["cosim", "--n", "4", "--order", "identity", "--waves", "lxt"], "lxt"),
    (["cosim", "--n", "4", "--order", "identity", "--sessions", "0"], "sessions"),
    (["throughput", "--n", "5", "--sessions", "1"], "sessions"),
    (["cosim-bench", "--n", "1"], "N"),
    # the cocotb-driven fast mode is a network fabric's alternative only
    (["cosim-bench", "--n", "8", "--modes", "fast-cocotb"], "fast-cocotb"),
]


@pytest.mark.parametrize("argv,word", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(argv, word, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PIPEGOSSIP_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("PIPEGOSSIP_WAVES_DIR", str(tmp_path / "dumps"))
    assert main(argv) == 2
    assert word in _one_error_line(capsys)
    assert not any(tmp_path.iterdir()), "nothing may be written on refusal"


@pytest.mark.parametrize("mode", [[], ["--mode", "trace"], ["--waves", "vcd"]],
                         ids=["fast", "trace", "waves"])
def test_icarus_missing_is_refused(mode, capsys, tmp_path, monkeypatch):
    # An empty PATH hides iverilog whether or not this machine has it, so the
    # refusal is tested everywhere (it comes before any tool is looked for).
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    monkeypatch.setenv("PIPEGOSSIP_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("PIPEGOSSIP_WAVES_DIR", str(tmp_path / "dumps"))
    assert main(["cosim", "--n", "4", "--order", "identity", "--simulator", "icarus",
                 *mode]) == 2
    assert "iverilog" in _one_error_line(capsys)
    assert not any(tmp_path.iterdir()), "a refused command leaves nothing on disk"


def test_demo_output_folder_on_a_file_is_refused(capsys, tmp_path):
    target = tmp_path / "taken"
    target.write_text("x")
    assert main(["demo", "-o", str(target)]) == 2
    assert "not a folder" in _one_error_line(capsys)
    assert target.read_text() == "x"


def test_cosim_json(capsys, monkeypatch):
    monkeypatch.delenv("PIPEGOSSIP_WAVES", raising=False)
    assert main(["cosim", "--n", "5", "--order", "pipelined", "--format", "json",
                 "--quiet", "--runs", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    model = simulate(RunConfig.family(5, "pipelined"))
    assert out["match"] is True and out["first_mismatch"] is None
    assert out["L"] == out["cycles"] == model.length
    assert out["utilization"] == model.utilization.tolist()
    assert out["waveform"] is None
    assert [r["word_seed"] for r in out["runs"]] == [0, 1]


def _vcd_clock_edges(path) -> tuple[set[str], int]:
    """Signal names and rising clock edges of a VCD (a minimal reader: the
    project's own is pipegossip.waveforms; pyvcd rejects Verilator's
    ``$rootio`` scope name)."""
    names, clk, rises, body = set(), None, 0, False
    for line in open(path, encoding="ascii"):
        words = line.split()
        if not body and words[:1] == ["$var"]:
            names.add(words[4])
            if words[4] == "clk" and clk is None:
                clk = words[3]
        elif words[:1] == ["$enddefinitions"]:
            body = True
        elif body and clk is not None and line.strip() == "1" + clk:
            rises += 1
    return names, rises


def test_cosim_waves_land_named_after_the_configuration(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PIPEGOSSIP_WAVES_DIR", str(tmp_path))
    monkeypatch.setenv("PIPEGOSSIP_WAVES", "1")  # the environment switch alone
    assert main(["cosim", "--n", "5", "--order", "pipelined", "--format", "json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = tmp_path / "n5-pipelined-ordered" / "n5-pipelined-ordered-w8.vcd"
    assert out["waveform"] == str(expected.resolve())
    names, rises = _vcd_clock_edges(expected)
    assert {"clk", "start", "busy", "done", "action__0", "peer__4",
            "delivery__3__word"} <= names
    assert rises >= out["L"] + 2
    assert out["gtkw"] is not None and Path(out["gtkw"]).is_file()
    assert out["reference"] is None  # N=5 pipelined, one session: not a paper table


def test_cosim_dump_of_a_paper_table_is_diffed_against_its_reference(capsys, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setenv("PIPEGOSSIP_WAVES_DIR", str(tmp_path))
    assert main(["cosim", "--n", "5", "--order", "identity", "--waves", "--format", "json",
                 "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reference"]["path"].endswith("table1.txt") and out["reference"]["match"]


def test_demo_leaves_everything_in_one_folder(capsys, tmp_path):
    out_dir = tmp_path / "demo"
    assert main(["demo", "-o", str(out_dir), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "MATCH" in printed and str(out_dir) in printed
    files = {p.name for p in out_dir.iterdir()}
    slug = "n8-pipelined-ordered-w8"
    assert {f"{slug}.v", f"{slug}.vcd", f"{slug}.gtkw", "model.runtable.txt",
            "hardware.runtable.txt", "utilization.png", "summary.json", "report.html"} <= files
    # the report judges the dump again, names it where it now is, and says where it is
    page = (out_dir / "report.html").read_text()
    assert 'class="verdict pass">Hardware (' + str(out_dir / f"{slug}.vcd") in page
    assert f"report: {out_dir / 'report.html'}" in printed
    assert str(out_dir / f"{slug}.vcd") in (out_dir / f"{slug}.gtkw").read_text() or \
        f"{slug}.ports.vcd" in (out_dir / f"{slug}.gtkw").read_text()
    assert (out_dir / f"{slug}.v").read_text().lstrip().startswith("//")
    hw = RunTable.read(out_dir / "hardware.runtable.txt")
    model = RunTable.read(out_dir / "model.runtable.txt")
    assert hw == model and hw.length == pipelined_length(8)
    assert (out_dir / "utilization.png").read_bytes()[:4] == b"\x89PNG"
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["match"] and summary["waveform"].endswith(f"{slug}.vcd")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary left"


def test_throughput_from_the_hardware_trace(capsys):
    assert main(["throughput", "--n", "5", "--sessions", "3", "--format", "json",
                 "--quiet"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["runs"]
    assert row["match"] and row["L"] == row["model_L"] == pipelined_length(5, 3)
    assert set(row["gaps"]) == {2}
    assert row["steady_mu"] == 4.0


def test_cocotbs_waves_variable_does_not_break_a_build_without_tracing(monkeypatch):
    # cocotb's runner lets WAVES=1 override its arguments; on a build without
    # tracing compiled in the simulator would then refuse to start.
    monkeypatch.setenv("WAVES", "1")
    assert main(["cosim", "--n", "5", "--order", "pipelined", "--quiet"]) == 0
    assert os.environ["WAVES"] == "1"


@pytest.mark.slow
@pytest.mark.optional_tools
@pytest.mark.skipif(not fst_headers_available(), reason="FST needs liblz4-dev and zlib1g-dev")
def test_fst_waves(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PIPEGOSSIP_WAVES_DIR", str(tmp_path))
    assert main(["cosim", "--n", "4", "--order", "pipelined", "--waves", "fst",
                 "--format", "json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    path = tmp_path / "n4-pipelined-ordered" / "n4-pipelined-ordered-w8.fst"
    assert out["waveform"] == str(path.resolve())
    assert path.stat().st_size > 0


def test_cosim_modes_fast_by_default_trace_on_request(capsys, monkeypatch):
    monkeypatch.delenv("PIPEGOSSIP_WAVES", raising=False)
    model = simulate(RunConfig.family(5, "pipelined"))
    for argv, mode in (([], "fast"), (["--mode", "trace"], "trace")):
        assert main(["cosim", "--n", "5", "--order", "pipelined", "--format", "json",
                     "--quiet"] + argv) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["mode"] == mode and out["match"] is True
        assert out["cycles"] == model.length
    assert main(["cosim", "--n", "5", "--order", "pipelined", "--quiet"]) == 0
    assert "fast mode" in capsys.readouterr().out


@pytest.mark.slow
def test_cosim_bench_json_rows(capsys):
    assert main(["cosim-bench", "--n", "4", "--runs", "2", "--format", "json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["n"], r["mode"]) for r in rows] == [(4, "trace"), (4, "fast")]
    assert all({"n", "mode", "build_s", "cycles_per_s"} <= set(r) for r in rows)
