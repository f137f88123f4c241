"""No two pipegossip modules import each other, directly or around a longer circle.

Every import counts, also one inside a function or under ``TYPE_CHECKING``:
a circle hidden in a function body is still a circle to the reader, and it
only works while the import order happens to be the right one.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Import name -> folder, as pyproject.toml's ``package-dir`` maps them.
PACKAGES = {"pipegossip": ROOT / "pipegossip", "pipegossip.model": ROOT / "model",
            "pipegossip.hw": ROOT / "hw", "pipegossip.sim": ROOT / "sim",
            "pipegossip.waveforms": ROOT / "waveforms"}


def module_files(packages: dict[str, Path]) -> dict[str, tuple[Path, bool]]:
    """Module name -> (its file, whether it is a package's ``__init__``)."""
    found = {}
    for name, folder in packages.items():
        for path in folder.rglob("*.py"):
            if any(part.startswith(".") or part == "__pycache__" for part in path.parts):
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            package = parts[-1] == "__init__"
            found[".".join([name] + parts[:-1 if package else None])] = (path, package)
    return found


def import_graph(packages: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports, wherever the import stands."""
    files = module_files(packages)
    graph = {}
    for name, (path, package) in files.items():
        here = name if package else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[:len(here.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module
                # `from . import x` imports module x; `from .x import y`, module x
                for alias in node.names:
                    found.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in files
                              else source)
        graph[name] = {m for m in found if m in files} - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other (Tarjan's strongly connected components)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph(PACKAGES)
    assert len(graph) > 150
    # absolute, relative two levels up, `from . import module`, function-local
    assert "pipegossip.sim.judge.fsm" in graph["pipegossip.sim.fast.mode"]
    assert "pipegossip.model.config" in graph["pipegossip.sim.fast.mode"]
    assert "pipegossip.sim.tools.build_cache" in graph["pipegossip.sim.fast.build"]
    assert "pipegossip.sim.fast.mode" in graph["pipegossip.sim.fsm.cosim"]


def test_no_module_imports_one_that_imports_it():
    assert circles(import_graph(PACKAGES)) == []


@pytest.mark.parametrize("b_text, expected", [
    ("def f():\n    from . import a\n", [["pkg.a", "pkg.b"]]),
    ("from .sub.c import y\n", [["pkg.a", "pkg.b", "pkg.sub.c"]]),
    ("import pkg.sub.c\n", [["pkg.a", "pkg.b", "pkg.sub.c"]]),
    ("from pkg.sub import c\n", [["pkg.a", "pkg.b", "pkg.sub.c"]]),
    ("from .sub import d\n", []),
])
def test_a_circle_is_found(tmp_path, b_text, expected):
    folder = tmp_path / "pkg"
    (folder / "sub").mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "sub" / "__init__.py").write_text("")
    (folder / "a.py").write_text("from .b import x\n")
    (folder / "b.py").write_text(b_text)
    (folder / "sub" / "c.py").write_text("from ..a import y\n")
    (folder / "sub" / "d.py").write_text("y = 1\n")
    assert circles(import_graph({"pkg": folder})) == expected
