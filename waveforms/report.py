"""``pipegossip report``: one self-contained HTML page for some configurations.

Per source (see :mod:`.sources` for the syntax) the page shows the run-table
picture (paper Fig. 4 colours), the utilisation profile, L, mu and E, the
closed form and the paper's table where they apply, and, when a dump is
attached with ``SOURCE@DUMP``, the hardware-versus-model verdict with the
first differences. A final section sets our Table 8 (identity order,
Algorithm 2, ``any``) beside the paper's.

The page needs no network: CSS is inline and every figure is a PNG embedded
as a ``data:`` URI.
"""

from __future__ import annotations

import base64
import datetime
import html
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import __version__
from ..model.closed_forms import identity_length, pipelined_length
from ..model.config import RunConfig
from ..model.engine import simulate
from ..model.errors import ConfigError, FormatError
from ..model.runtable import RunTable
from .diff import TableDiff, diff_tables
from .dump import DUMP_SUFFIXES
from .readback import Readback, read_dump
from .reference import reference_for
from .sources import Source, load_source, model_table

__all__ = ["ReportItem", "Verdict", "hardware_verdict", "build_items", "render_report",
           "split_item_spec", "MAX_TABLE8_N"]

#: Table 8 goes up to this N unless told otherwise (the paper's last row).
MAX_TABLE8_N = 2048
#: Run-tables up to this many slots are also shown as text.
_TEXT_CELLS = 6000


@dataclass
class Verdict:
    """Hardware (a dump) against the golden model for one configuration.

    ``ok`` needs equal run-tables including the WS/WR peers and the ``used``
    port, equal deliveries (when the dump has the delivery ports), a
    complete run and no interface-contract problems.
    """

    ok: bool
    diff: TableDiff
    deliveries_equal: bool | None
    problems: list[str]
    missing: list[str]

    def summary(self) -> str:
        if self.ok:
            extra = "" if self.deliveries_equal is None else " and every delivery"
            return f"PASS: the dump shows the model's run-table slot for slot{extra}"
        parts = []
        if not self.diff.equal:
            parts += self.diff.notes
            if self.diff.total:
                parts.append(f"{self.diff.total} slot(s) differ, first at step "
                             f"{self.diff.first_step}")
        if self.deliveries_equal is False:
            parts.append("the deliveries differ")
        if self.problems:
            parts.append(f"{len(self.problems)} interface problem(s)")
        return "FAIL: " + "; ".join(parts)


def hardware_verdict(readback: Readback, config: RunConfig) -> Verdict:
    """Hold a read-back against ``simulate(config)``."""
    if readback.n != config.n:
        d = diff_tables(model_table(config), readback.table, exact=True)
        return Verdict(False, d, None, readback.problems, readback.missing)
    model = simulate(config, table=True)
    d = diff_tables(model.table, readback.table, exact=True)
    deliveries_equal = None
    if readback.deliveries is not None:
        a, b = model.deliveries, readback.deliveries
        deliveries_equal = all(np.array_equal(x, y) for x, y in
                               ((a.step, b.step), (a.src, b.src), (a.dst, b.dst),
                                (a.session, b.session)))
    ok = d.equal and deliveries_equal is not False and not readback.problems
    return Verdict(ok, d, deliveries_equal, readback.problems, readback.missing)


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
            src = load_source(head, top=top)
            item = ReportItem(spec, src)
            if dump is not None:
                if src.kind == "dump":
                    raise FormatError("attach a dump to a configuration or a run-table, "
                                      "not to another dump")
                rb = read_dump(dump, top=top)
                item.dump = Path(dump)
                if src.config is None:
                    raise FormatError(f"{head!r} names no configuration to hold the dump "
                                      "against")
                item.verdict = hardware_verdict(rb, src.config)
                item.readback = rb
            elif src.kind == "dump":
                item.notes.append("no configuration given, so no hardware-versus-model verdict "
                                  "(write CONFIG@" + src.spec + ")")
        except (ConfigError, FormatError) as e:
            raise type(e)(f"report item {k} ({spec!r}): {e}") from None
        cfg = src.config
        if cfg is not None:
            if src.kind in ("text", "reference"):
                item.model_equal = src.table == model_table(cfg)
            item.reference = reference_for(cfg)
            if item.reference is not None:
                item.reference_equal = RunTable.read(item.reference) == src.table
        items.append(item)
    return items


# --- HTML ---------------------------------------------------------------------------

_CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 0; color: #1d2731;
       background: #f6f7f9; }
header { background: #264653; color: #fff; padding: 18px 32px; }
header h1 { margin: 0 0 4px 0; font-size: 22px; }
header p { margin: 0; opacity: .85; font-size: 13px; }
main { padding: 8px 32px 40px 32px; max-width: 1500px; }
section { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; margin: 18px 0;
          padding: 14px 20px; }
h2 { font-size: 18px; margin: 4px 0 10px 0; }
h2 .spec { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; color: #5c6670;
           font-weight: normal; margin-left: 8px; }
table.metrics, table.t8, table.diff { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px 0; }
table.metrics td, table.metrics th, table.t8 td, table.t8 th, table.diff td, table.diff th {
    border: 1px solid #dde1e6; padding: 3px 10px; text-align: right; }
table.metrics th, table.t8 th, table.diff th { background: #eef1f4; }
table.metrics td.l, table.metrics th.l { text-align: left; }
.verdict { font-weight: bold; padding: 8px 12px; border-radius: 4px; margin: 8px 0; }
.pass { background: #e3f4ec; color: #1b6e4a; border: 1px solid #9fd8bd; }
.fail { background: #fbe7e3; color: #a0321c; border: 1px solid #f0b2a5; }
.info { background: #eef1f4; color: #3a4550; border: 1px solid #d3d9df; font-weight: normal; }
img { max-width: 100%; height: auto; display: block; margin: 8px 0; }
pre { font-family: "DejaVu Sans Mono", monospace; font-size: 11px; background: #f6f7f9;
      padding: 8px; overflow-x: auto; }
.below { color: #a0321c; font-weight: bold; }
ul.notes { font-size: 13px; }
"""


def _png(fig) -> str:
    from ..model.plots import figure_bytes
    data = base64.b64encode(figure_bytes(fig, "png", dpi=100)).decode("ascii")
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _esc(x: object) -> str:
    return html.escape(str(x))


def _closed_form(cfg: RunConfig) -> tuple[str, int] | None:
    plain = (cfg.receive == "ordered" and not cfg.substitute and cfg.channels is None)
    if not plain:
        return None
    if cfg.order_name == "identity" and cfg.sessions == 1:
        return "N(N-1) - floor((N-2)^2/4) (Prop. 14)", identity_length(cfg.n)
    if cfg.order_name == "pipelined":
        try:
            return ("3(N-1) (Prop. 18)" if cfg.sessions == 1 else "10k + 2 (Table 6)",
                    pipelined_length(cfg.n, cfg.sessions))
        except ValueError:
            return None
    return None


def _diff_html(d: TableDiff) -> str:
    rows = "".join(f"<tr><td>{x.step}</td><td>{_esc(x.row)}</td><td>{_esc(x.expected)}</td>"
                   f"<td>{_esc(x.got)}</td></tr>" for x in d.differences)
    more = (f"<p>{d.total - len(d.differences)} more not shown.</p>"
            if d.total > len(d.differences) else "")
    return ('<table class="diff"><tr><th>step</th><th>row</th><th>model</th><th>dump</th></tr>'
            + rows + "</table>" + more)


def _marked_figure(model: RunTable, got: RunTable, dump: Path | None):
    """The dump's run-table picture with an x on every slot that differs from the model."""
    from ..model.plots import runtable_figure
    fig = runtable_figure(got, title=f"Read back from {dump.name if dump else 'the dump'}: "
                          f"N = {got.n}, L = {got.length}; x = differs from the model")
    if got.n == model.n:
        length = min(got.length, model.length)
        differs = ((got.actions[:, :length] != model.actions[:, :length])
                   | (got.peers[:, :length] != model.peers[:, :length]))
        extra = np.zeros((got.n, got.length - length), dtype=bool)
        extra[:, :] = got.length > model.length
        p, t = np.nonzero(np.concatenate([differs, extra], axis=1))
        ax = fig.axes[0]
        ax.plot(t + 1, p, linestyle="none", marker="x", markersize=9, markeredgewidth=2.2,
                color="#d00000")
    return fig


def _item_html(k: int, item: ReportItem) -> str:
    src, table = item.source, item.source.table
    m = table.metrics
    length, total = m.length, m.used_slots
    mu = m.mu if length else float("nan")
    eff = m.efficiency if length else float("nan")
    out = [f'<section id="item{k}"><h2>{k}. {_esc(src.label)}'
           f'<span class="spec">{_esc(item.spec)}</span></h2>']
    metrics = [("N", table.n), ("L (steps)", length), ("mu = sum(u)/L", f"{mu:.4f}"),
               ("E = sum(u)/(N L)", f"{100 * eff:.2f} %"), ("used slots", total)]
    cfg = src.config
    if cfg is not None:
        metrics.append(("invariant 2N(N-1)k", 2 * cfg.n * (cfg.n - 1) * cfg.sessions))
        cf = _closed_form(cfg)
        if cf is not None:
            metrics.append((f"closed form L = {cf[0]}", cf[1]))
    out.append('<table class="metrics">' + "".join(
        f'<tr><th class="l">{_esc(a)}</th><td>{_esc(b)}</td></tr>' for a, b in metrics)
        + "</table>")
    if item.reference is not None:
        ok = item.reference_equal
        out.append(f'<div class="verdict {"pass" if ok else "fail"}">Paper reference '
                   f'{_esc(item.reference.stem)}: '
                   + ("run-table equal to waveforms/reference/" + _esc(item.reference.name)
                      if ok else "run-table DIFFERS from waveforms/reference/"
                      + _esc(item.reference.name)) + "</div>")
    if item.model_equal is not None:
        out.append(f'<div class="verdict {"pass" if item.model_equal else "fail"}">'
                   + ("Equal to the golden model's run-table" if item.model_equal
                      else "DIFFERS from the golden model's run-table") + "</div>")
    v = item.verdict
    if v is not None:
        out.append(f'<div class="verdict {"pass" if v.ok else "fail"}">Hardware '
                   f'({_esc(item.dump)}): {_esc(v.summary())}</div>')
        if v.diff.differences or v.diff.notes:
            out.append(_diff_html(v.diff))
        if v.problems:
            out.append('<ul class="notes">' + "".join(f"<li>{_esc(p)}</li>" for p in v.problems)
                       + "</ul>")
        if v.missing:
            out.append(f'<p class="verdict info">Not in the dump (checks skipped): '
                       f'{_esc(", ".join(v.missing))}</p>')
    for note in item.notes:
        out.append(f'<p class="verdict info">{_esc(note)}</p>')
    from ..model.plots import runtable_figure, utilization_figure
    whose = "" if v is None else (" (model and hardware)" if v.ok else " (model)")
    out.append(_png(runtable_figure(table, title=f"Run-table{whose}, N = {table.n}, L = {length}")))
    if v is not None and not v.ok and item.readback is not None:
        out.append(_png(_marked_figure(table, item.readback.table, item.dump)))
    out.append(_png(utilization_figure(table.used, n=table.n,
                                       title=f"Utilisation profile, L = {length}, mu = {mu:.3f}")))
    out.append("<details><summary>utilisation string</summary><pre>"
               + _esc(" ".join(str(int(u)) for u in table.used)) + "</pre></details>")
    if table.n * length <= _TEXT_CELLS:
        out.append("<details><summary>run-table text (SPEC 11)</summary><pre>"
                   + _esc(table.render()) + "</pre></details>")
    out.append("</section>")
    return "\n".join(out)


def _table8_html(ns: list[int], progress: Callable[[int], None] | None) -> str:
    from ..model.sweeps import table8
    rows = table8(ns, progress=progress)
    body = []
    below = []
    for r in rows:
        paper = "" if r.paper_efficiency is None else f"{100 * r.paper_efficiency:.2f}"
        delta = ("" if r.paper_efficiency is None
                 else f"{100 * (r.efficiency - r.paper_efficiency):+.2f}")
        flag = ' class="below"' if r.below_two_thirds else ""
        if r.below_two_thirds:
            below.append(r.n)
        body.append(f"<tr><td>{r.n}</td><td>{r.length}</td><td{flag}>{100 * r.efficiency:.2f}"
                    f"</td><td>{paper}</td><td>{delta}</td></tr>")
    verdict = (f"Our E falls below 2/3 at N = {', '.join(map(str, below))}."
               if below else f"Our E stays at or above 2/3 for every N up to {ns[-1]} "
               "(the paper's Conjecture 21).")
    return ('<section id="table8"><h2>Table 8: identity order, Algorithm 2, receive any'
            '</h2><p>Our L and E (SPEC sections 4-5 tie-breaking) beside the paper\'s '
            'efficiencies (its own simulator). ' + _esc(verdict) + '</p>'
            '<table class="t8"><tr><th>N</th><th>L (ours)</th><th>E % (ours)</th>'
            '<th>E % (paper)</th><th>ours - paper (points)</th></tr>'
            + "".join(body) + "</table></section>")


def render_report(items: list[ReportItem], table8_ns: list[int] | None,
                  title: str = "pipegossip report", command: str | None = None,
                  progress: Callable[[int], None] | None = None) -> str:
    """The whole page as one HTML string; ``progress(n)`` before each Table 8 row."""
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    nav = " &middot; ".join(f'<a style="color:#fff" href="#item{k}">{k}</a>'
                            for k in range(1, len(items) + 1))
    if table8_ns:
        nav += ' &middot; <a style="color:#fff" href="#table8">Table 8</a>'
    verdicts = [i.verdict for i in items if i.verdict is not None]
    summary = ""
    if verdicts:
        passed = sum(v.ok for v in verdicts)
        summary = f" &middot; hardware verdicts: {passed} of {len(verdicts)} pass"
    head = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
            f"<header><h1>{_esc(title)}</h1><p>pipegossip {_esc(__version__)} &middot; {when}"
            f" &middot; {len(items)} configuration(s){summary} &middot; {nav}</p>"
            + (f"<p><code>{_esc(command)}</code></p>" if command else "") + "</header><main>")
    parts = [head] + [_item_html(k, it) for k, it in enumerate(items, 1)]
    if table8_ns:
        parts.append(_table8_html(table8_ns, progress))
    parts.append("</main></body></html>\n")
    return "\n".join(parts)
