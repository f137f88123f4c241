"""The modules of ``waveforms/`` import each other one way only.

Every import counts, also one inside a function or under ``TYPE_CHECKING``:
a circle hidden in a function body is still a circle to the reader.
"""

import ast
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "waveforms"


def imports_within(folder: Path) -> dict[str, set[str]]:
    """Module -> the sibling modules it imports (``from .x import``, ``from . import x``)."""
    names = {p.stem for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(a.name for a in node.names)
        graph[path.stem] = (found & names) - {path.stem}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each as the path that closes it."""
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_waveforms_modules_import_one_way():
    graph = imports_within(FOLDER)
    assert "reference" in graph["sources"] and "report" in graph["report_html"]
    assert circles(graph) == []


def test_a_circle_is_found(tmp_path):
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from . import a\n")
    (tmp_path / "c.py").write_text("from .a import y\n")
    assert circles(imports_within(tmp_path)) == [["a", "b", "a"]]
