"""``pipegossip report``: one self-contained HTML page for some configurations.

Per source (see :mod:`.sources` for the syntax) the page shows the run-table
picture (paper Fig. 4 colours), the utilisation profile, L, mu and E, the
closed form and the paper's table where they apply, and, when a dump is
attached with ``SOURCE@DUMP``, the hardware-versus-model verdict with the
first differences. A final section sets our Table 8 (identity order,
Algorithm 2, ``any``) beside the paper's.

This module loads the sources and computes the verdicts; the page itself is
rendered from Jinja2 templates by :mod:`.report_html`, which imports this
module (never the other way round). The page needs no network: CSS is inline
and every figure is a PNG embedded as a ``data:`` URI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..model.config import RunConfig
from ..model.engine import simulate
from ..model.errors import ConfigError, FormatError
from ..model.runtable import RunTable
from .dump import DUMP_SUFFIXES
from ..sim.judge.fsm import Verdict, judge
from .readback import Readback, read_dump
from .reference import reference_for
from .sources import Source, load_source, model_table

__all__ = ["ReportItem", "hardware_verdict", "build_items", "config_item", "split_item_spec",
           "MAX_TABLE8_N"]

#: Table 8 goes up to this N unless told otherwise (the paper's last row).
MAX_TABLE8_N = 2048


def hardware_verdict(readback: Readback, config: RunConfig) -> Verdict:
    """Hold a read-back against ``simulate(config)``: the judge on its trace record.

    ``ok`` needs the model's run-table including the WS/WR peers and the
    ``used`` port, equal deliveries and handshakes (when the dump has those
    ports; otherwise the verdict lists them as unchecked), a complete run and
    no interface-contract problems.
    """
    # The width only sizes seeded words; a dump's seed is unknown (word_seed
    # None), so the judge takes the words the dump shows at the handshakes.
    return judge(config, 8, readback.record)


@dataclass
class ReportItem:
    """One section of the report."""

    spec: str
    source: Source
    dump: Path | None = None
    verdict: Verdict | None = None
    model_equal: bool | None = None  #: a text table held against the model
    reference: Path | None = None
    reference_equal: bool | None = None
    readback: Readback | None = None
    notes: list[str] = field(default_factory=list)


def split_item_spec(spec: str) -> tuple[str, str | None]:
    """``CONFIG@DUMP`` -> ``(CONFIG, DUMP)``; the dump must end in .vcd or .fst."""
    head, at, tail = spec.rpartition("@")
    if at and head and tail.lower().endswith(DUMP_SUFFIXES):
        return head, tail
    return spec, None


def build_items(specs: list[str], top: str | None = None) -> list[ReportItem]:
    """Load every source and dump and compute the verdicts (nothing written).

    Raises
    ------
    ConfigError, FormatError
        The first bad source, with its position in the list.
    """
    items = []
    for k, spec in enumerate(specs, 1):
        head, dump = split_item_spec(spec)
        try:
            item = _finished(ReportItem(spec, load_source(head, top=top)), dump, top)
        except (ConfigError, FormatError) as e:
            raise type(e)(f"report item {k} ({spec!r}): {e}") from None
        items.append(item)
    return items


def config_item(config: RunConfig, dump: str | Path, label: str | None = None,
                top: str | None = None) -> ReportItem:
    """The report item of ``config`` held against ``dump``, from the
    configuration itself rather than a ``key=value`` spec (``pipegossip
    demo``'s page: any order file, whatever its path)."""
    spec = label or config.header()
    source = Source(spec, "config", f"model {config.header()}", model_table(config), config)
    return _finished(ReportItem(spec, source), str(dump), top)


def _finished(item: ReportItem, dump: str | None, top: str | None) -> ReportItem:
    """``item`` with its dump's verdict and its paper reference filled in."""
    src = item.source
    if dump is not None:
        if src.kind == "dump":
            raise FormatError("attach a dump to a configuration or a run-table, "
                              "not to another dump")
        rb = read_dump(dump, top=top)
        item.dump = Path(dump)
        if src.config is None:
            raise FormatError(f"{src.spec!r} names no configuration to hold the dump against")
        item.verdict = hardware_verdict(rb, src.config)
        item.readback = rb
    elif src.kind == "dump":
        item.notes.append("no configuration given, so no hardware-versus-model verdict "
                          "(write CONFIG@" + src.spec + ")")
    cfg = src.config
    if cfg is not None:
        if src.kind in ("text", "reference"):
            item.model_equal = src.table == model_table(cfg)
        item.reference = reference_for(cfg)
        if item.reference is not None:
            item.reference_equal = RunTable.read(item.reference) == src.table
    return item
