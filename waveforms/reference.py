"""Reference run-tables of the paper's tables (docs/reference.md "Closed forms").

``waveforms/reference/<name>.txt`` holds, for each paper table the project
reproduces, the golden model's run-table in the run-table text format. Its
header names the configuration (the configuration line) and the source::

    # pipegossip run-table v1
    # N=5 order=identity receive=ordered substitute=off sessions=1 channels=none
    # reference=table1 paper=Table-1 generator=pipegossip.waveforms.reference
    # The Algorithm of Pipelined Gossiping, Table 1: utilisation as published

The cases are the paper's tables of :mod:`pipegossip.model.paper`;
:func:`write_references` regenerates the files from them and
:func:`check_references` says which differ. :func:`reference_for` finds the
reference of a configuration from the files alone, through
:func:`config_from_header` (the configuration any run-table header names,
which :mod:`.sources` also uses: the import goes from there to here only).
"""

from __future__ import annotations

from pathlib import Path

from ..infra.files import MARKER, OutputKind, atomic_write
from ..model.config import RunConfig
from ..model.engine import simulate
from ..model.orders import FAMILIES
from ..model.paper import TITLE, PaperCase, paper_cases
from ..model.runtable import RunTable

__all__ = [
    "REFERENCE_DIR", "reference_filename", "render_reference",
    "write_references", "check_references", "reference_for", "reference_path", "references",
    "config_from_header", "REFERENCES_OUTPUT",
]

#: Where the reference run-tables live (package data of ``pipegossip.waveforms``).
REFERENCE_DIR = Path(__file__).resolve().parent / "reference"

_GENERATOR = "pipegossip.waveforms.reference"


def _is_reference_file(path: Path) -> bool:
    """A regular ``.txt`` file whose header names this module as its generator."""
    if path.suffix != ".txt" or path.is_symlink() or not path.is_file():
        return False  # never opened: a FIFO would block, a device would never end
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return f"generator={_GENERATOR}".encode() in head


def _is_reference_folder(folder: Path) -> bool:
    """Every entry of ``folder`` is a reference run-table written here (marker or not)."""
    entries = [e for e in folder.iterdir() if e.name != MARKER]
    return bool(entries) and all(_is_reference_file(e) for e in entries)


#: The folder of ``pipegossip references``: its files carry their generator line,
#: so a folder of them is recognised even without (or with an older) marker.
REFERENCES_OUTPUT = OutputKind("references", recognise=_is_reference_folder)


def reference_filename(case: PaperCase) -> str:
    """``<name>.txt``: the file of a paper case in the reference folder."""
    return f"{case.name}.txt"


def render_reference(case: PaperCase) -> str:
    """The reference file's text for ``case``, from the golden model."""
    table = simulate(case.config, table=True).table
    matches = tuple(int(u) for u in table.used) == case.utilization
    comments = [
        case.config.header(),
        f"reference={case.name} paper={case.paper.replace(' ', '-')} generator={_GENERATOR}",
        f"{TITLE}, {case.paper}: utilisation "
        + ("as published" if matches else "DIFFERS from the published string"),
    ]
    return table.render(comments)


def write_references(cases: tuple[PaperCase, ...] | None = None,
                     out_dir: str | Path = REFERENCE_DIR) -> list[Path]:
    """Write every case's reference file (atomically); return the paths."""
    cases = paper_cases() if cases is None else cases
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [atomic_write(out / reference_filename(c), render_reference(c)) for c in cases]


def check_references(cases: tuple[PaperCase, ...] | None = None,
                     out_dir: str | Path = REFERENCE_DIR) -> list[str]:
    """Names of the cases whose file is missing or differs from a regeneration."""
    cases = paper_cases() if cases is None else cases
    stale = []
    for c in cases:
        path = Path(out_dir) / reference_filename(c)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            stale.append(c.name)
            continue
        if text != render_reference(c):
            stale.append(c.name)
    return stale


def config_from_header(fields: dict[str, str]) -> RunConfig | None:
    """The configuration a run-table header names (docs/reference.md), if complete.

    Explicit orders are not in the header line, so they give None, as do
    headers without ``N`` and ``order``.
    """
    try:
        order = fields["order"]
        if order not in FAMILIES:
            return None
        channels = fields.get("channels", "none")
        return RunConfig.family(
            int(fields["N"]), order, int(fields["seed"]) if order == "random" else None,
            receive=fields.get("receive", "ordered"),
            substitute=fields.get("substitute", "off") == "on",
            sessions=int(fields.get("sessions", "1")),
            channels=None if channels == "none" else int(channels))
    except (KeyError, ValueError):
        return None


def references(ref_dir: str | Path = REFERENCE_DIR) -> dict[str, tuple[Path, RunConfig | None]]:
    """Reference name -> (file, configuration named by its header)."""
    out = {}
    for path in sorted(Path(ref_dir).glob("*.txt")):
        table = RunTable.read(path)
        out[path.stem] = (path, config_from_header(table.header_fields()))
    return out


def reference_path(name: str, ref_dir: str | Path = REFERENCE_DIR) -> Path | None:
    """The file of the reference called ``name`` (``table1`` ...), if any."""
    if not name.replace("_", "").replace("-", "").isalnum():
        return None
    path = Path(ref_dir) / f"{name}.txt"
    return path if path.is_file() else None


def reference_for(config: RunConfig, ref_dir: str | Path = REFERENCE_DIR) -> Path | None:
    """The reference run-table of exactly this configuration, or None.

    For the co-simulation: ``RunTable.read(reference_for(cfg))`` is what the
    paper's table says the fabric must show.
    """
    for path, ref_config in references(ref_dir).values():
        if ref_config is not None and ref_config == config:
            return path
    return None
