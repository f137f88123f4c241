"""``verilog --fabric network`` and ``cosim --fabric network``: the Verilog written, and every
option of another fabric or a bad topology refused in one line, nothing written."""

import subprocess
import sys

import pytest

PG = [sys.executable, "-m", "pipegossip"]


def pg(*args, cwd=None):
    return subprocess.run([*PG, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_verilog_fabric_network_writes_the_topology_s_fabric(tmp_path):
    out = tmp_path / "q2.v"
    r = pg("verilog", "--fabric", "network", "--topology", "hypercube", "--k", "2", "--width",
           "6", "--depth", "8", "--op", "xor", "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert ("topology=hypercube(k=2) n=4 ports=8 width=6 depth=8 slots=4 bank_depth=4 op=xor"
            in text)
    assert "tx__7__word" in text and "acc__3" in text and "rx__0__comb" in text


def test_verilog_fabric_network_builds_shallower_banks_on_request(tmp_path):
    out = tmp_path / "q2.v"
    r = pg("verilog", "--fabric", "network", "--topology", "hypercube", "--k", "2", "--depth",
           "8", "--bank-depth", "2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "slots=4 bank_depth=2 op=sum" in out.read_text() and "bank_depth=2" in r.stderr


@pytest.mark.parametrize("argv, words", [
    (["verilog", "--fabric", "network", "--n", "4"], "needs --topology"),
    (["verilog", "--fabric", "network", "--topology", "path", "--n", "4", "--k", "2"],
     "--k does not apply to --topology path"),
    (["verilog", "--fabric", "network", "--topology", "path", "--n", "4", "--order",
      "identity"], "--order applies only to --fabric fsm"),
    (["verilog", "--fabric", "schedule", "--n", "4", "--topology", "path"],
     "--topology applies only to --fabric network"),
    (["verilog", "--fabric", "network", "--topology", "complete", "--n", "65"],
     "at most complete(64)"),
    (["cosim", "--fabric", "network"], "needs --schedule"),
    (["fpga", "--fabric", "network", "--topology", "cycle", "--n", "8", "--board",
      "icebreaker", "-o", "f"], "--board with --fabric network needs --schedule"),
    (["fpga", "--fabric", "network", "--topology", "cycle", "--n", "8", "--order",
      "identity", "-o", "f"], "--order applies to --fabric fsm only"),
    (["fpga", "--n", "8", "--order", "identity", "--op", "xor", "-o", "f"],
     "--op applies to --fabric network only"),
    (["cosim", "--schedule", "s.json", "--op", "xor"], "--op applies only to --fabric network"),
    (["cosim", "--fabric", "fsm", "--schedule", "s.json"], "not fsm"),
    (["verilog", "--fabric", "schedule", "--n", "4", "--bank-depth", "4"],
     "--bank-depth applies only to --fabric network"),
    (["verilog", "--fabric", "network", "--topology", "path", "--n", "4", "--bank-depth", "0"],
     "--bank-depth"),
])
def test_bad_network_options_are_refused(tmp_path, argv, words):
    (tmp_path / "s.json").write_text("{}")
    r = pg(*argv, "-o", "x.v", cwd=tmp_path) if argv[0] == "verilog" else pg(*argv, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"pipegossip {argv[0]}: error:") and words in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
