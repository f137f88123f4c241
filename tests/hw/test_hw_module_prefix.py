# amaranth: UnusedElaboratable=no
"""``hw verilog --name PREFIX`` for every fabric: two generated fabrics in one design.

Every module of a generated text carries the prefix (the top is ``PREFIX``,
its submodules ``PREFIX.node0``, ...), so two fabrics of the same kind and
size, generated with two names, lint together in one Verilator run under a
top that instantiates both; generated with one name they clash.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from pipegossip.cli import main
from pipegossip.sim.tools.toolchain import use_verilator

from test_hw_export import ALLOWED, lint

#: ``hw verilog`` arguments of one small fabric of each kind.
FABRICS = {
    "fsm": ["--n", "3", "--order", "identity", "--width", "4"],
    "schedule": ["--fabric", "schedule", "--n", "3", "--width", "4", "--depth", "4"],
    "network": ["--fabric", "network", "--topology", "cycle", "--n", "4", "--width", "4",
                "--depth", "4"],
}

_MODULE = re.compile(r"^module\s+(\\\S+|\w+)\s*\(", re.M)
_PORT = re.compile(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(\[\d+:\d+\]\s*)?(\w+)\s*;", re.M)


def modules(text: str) -> list[str]:
    """The names of every module a Verilog text declares (escaped names without ``\\``)."""
    return [m.removeprefix("\\") for m in _MODULE.findall(text)]


def generate(tmp_path, kind: str, name: str | None, file: str):
    out = tmp_path / file
    args = ["hw", "verilog", *FABRICS[kind], "-o", str(out)]
    assert main(args + (["--name", name] if name else [])) == 0
    return out


def top_of(text: str, module: str, instance: str) -> tuple[list[str], str]:
    """Top-level ports and an instance of ``module``: every port of it wired to a port of
    the top of the same direction (``u_a_load__valid``)."""
    body = text[text.index(f"module {module}("):]
    body = body[:body.index("endmodule")]
    ports, conns = [], []
    for direction, rng, port in _PORT.findall(body):
        ports.append(f"  {direction} wire {rng or ''}{instance}_{port}")
        conns.append(f".{port}({instance}_{port})")
    return ports, f"  {module} {instance} ({', '.join(conns)});"


def top_text(*instances: tuple[list[str], str]) -> str:
    ports = [p for ps, _ in instances for p in ps]
    return "\n".join(["module two_fabrics (", ",\n".join(ports), ");",
                      *(i for _, i in instances), "endmodule", ""])


def two_fabric_top(a, ma: str, b, mb: str) -> str:
    return top_text(top_of(a.read_text(), ma, "u_a"), top_of(b.read_text(), mb, "u_b"))


def lint_together(tmp_path, files) -> subprocess.CompletedProcess:
    use_verilator()
    return subprocess.run(["verilator", "--lint-only", "-Wall", *(f"-Wno-{k}" for k in ALLOWED),
                           "--top-module", "two_fabrics",
                           *map(str, files)], capture_output=True, text=True, cwd=tmp_path)


@pytest.mark.parametrize("kind", sorted(FABRICS))
def test_every_module_carries_the_prefix(tmp_path, kind):
    text = generate(tmp_path, kind, "acme_gossip", "f.v").read_text()
    names = modules(text)
    assert "acme_gossip" in names and len(names) > 1, names
    assert all(m == "acme_gossip" or m.startswith("acme_gossip.") for m in names), names
    # the prefix is the name given, nothing of the default survives in a module name
    assert not any("pipegossip" in m for m in names)
    assert {k for k, _ in lint(tmp_path / "f.v")} <= ALLOWED


@pytest.mark.parametrize("kind", ["schedule", "network"])
def test_two_fabrics_of_one_kind_lint_in_one_design(tmp_path, kind):
    a = generate(tmp_path, kind, "fab_a", "a.v")
    b = generate(tmp_path, kind, "fab_b", "b.v")
    top = tmp_path / "two.v"
    top.write_text(two_fabric_top(a, "fab_a", b, "fab_b"))
    proc = lint_together(tmp_path, [top, a, b])
    assert proc.returncode == 0, proc.stderr


def test_two_fabrics_with_one_name_clash(tmp_path):
    # What --name prevents: the same default name twice is a duplicate module.
    a = generate(tmp_path, "schedule", None, "a.v")
    b = generate(tmp_path, "schedule", None, "b.v")
    top = tmp_path / "two.v"
    top.write_text(top_text(top_of(a.read_text(), "pipegossip_schedule_fabric", "u_a")))
    proc = lint_together(tmp_path, [top, a, b])
    assert proc.returncode != 0 and "Duplicate" in proc.stderr, proc.stderr


def test_default_names_unchanged(tmp_path):
    for kind, top in (("fsm", "pipegossip_fabric"), ("schedule", "pipegossip_schedule_fabric"),
                      ("network", "pipegossip_network_fabric")):
        names = modules(generate(tmp_path, kind, None, f"{kind}.v").read_text())
        assert top in names and all(m.startswith(top) for m in names)


@pytest.mark.parametrize("kind", ["schedule", "network"])
def test_bad_prefix_refused(tmp_path, capsys, kind):
    out = tmp_path / "x.v"
    assert main(["hw", "verilog", *FABRICS[kind], "--name", "9lives", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--name" in err[0] and "'9lives'" in err[0]
    assert not out.exists()
