"""The README keeps its promises: two set-up-and-go commands, CI runs the
test one, and its Table 8 is what the model computes."""

import re
from pathlib import Path

from pipegossip.model.sweeps import table8

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else None]


def test_set_up_and_go_has_exactly_two_commands():
    blocks = re.findall(r"```sh\n(.*?)```", _section("Set up and go"), re.S)
    commands = [line for b in blocks for line in b.splitlines() if line.strip()]
    assert commands == ["python3 dev.py demo", "python3 dev.py test"]


def test_ci_runs_the_readme_test_command_before_installing_anything():
    script = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
              if not line.lstrip().startswith("#")]
    runs = [k for k, line in enumerate(script) if "dev.py" in line and "echo" not in line]
    assert [script[k].strip() for k in runs] == [
        "python3 dev.py test", "python3 dev.py test -m optional_tools --runslow || status=$?"]
    # Phase 1 is the newcomer's bare machine: nothing is installed before it.
    install = next(k for k, line in enumerate(script) if "apt-get install" in line)
    assert runs[0] < install < runs[1]


def test_no_placeholder_is_left():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        assert not re.search(r"\b[A-Z]+_(?:TABLE|TABLES|TIME|PLACEHOLDER)\b", text), path.name


def test_readme_table8_rows_are_the_models():
    # Rows up to N=256 keep this fast; the slow Table 8 test covers the rest.
    rows = re.findall(r"^\| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \|$",
                      _section("The golden model"), re.M)
    printed = {int(n): (int(length), float(ours), float(paper))
               for n, length, ours, paper in rows}
    assert sorted(printed) == [2 ** k for k in range(1, 12)]
    ns = [n for n in sorted(printed) if n <= 256]
    for row in table8(ns):
        length, ours, paper = printed[row.n]
        assert length == row.length
        assert ours == round(100 * row.efficiency, 2)
        assert paper == round(100 * row.paper_efficiency, 2)
