"""The HTML page of ``pipegossip report``, rendered from Jinja2 templates.

:mod:`.report` loads the sources and computes the verdicts (imported from
here, so the imports go one way); this module turns them into the data the page shows (metrics as text, figures as
base64 PNGs, Table 8 rows) and renders ``templates/report.html.j2``, which
includes ``item.html.j2`` per configuration and ``table8.html.j2``.

Autoescaping is on. Values are escaped with :func:`html.escape`, as the page
always was (``&#x27;`` for ``'``, where MarkupSafe writes ``&#39;``), so the
page reads the same as before the templates.
"""

from __future__ import annotations

import base64
import datetime
import html
from collections.abc import Callable
from pathlib import Path

import jinja2
import numpy as np
from markupsafe import Markup

from .. import __version__
from ..model.closed_forms import identity_length, pipelined_length
from ..model.config import RunConfig
from ..model.runtable import RunTable
from .report import ReportItem

__all__ = ["render_report"]

#: Run-tables up to this many slots are also shown as text.
_TEXT_CELLS = 6000


def _escape(value: object) -> object:
    """Escape a template value with :func:`html.escape`; markup passes as it is."""
    if hasattr(value, "__html__"):
        return value
    return Markup(html.escape(str(value)))


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("pipegossip.waveforms", "templates"),
    autoescape=True, finalize=_escape, undefined=jinja2.StrictUndefined,
    trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def _png(fig) -> str:
    """A figure as base64 PNG data for a ``data:`` URI."""
    from ..plots.figures import figure_bytes
    return base64.b64encode(figure_bytes(fig, "png", dpi=100)).decode("ascii")


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


def _marked_figure(model: RunTable, got: RunTable, dump: Path | None, steps: int):
    """The dump's run-table picture with an x on every slot that differs from the model."""
    from ..plots.figures import runtable_figure
    fig = runtable_figure(got, title=f"Read back from {dump.name if dump else 'the dump'}: "
                          f"N = {got.n}, L = {got.length}; x = differs from the model",
                          steps=steps)
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


def _item_data(k: int, item: ReportItem) -> dict:
    """What ``item.html.j2`` shows of one configuration."""
    from ..plots.figures import runtable_figure, utilization_figure
    src, table = item.source, item.source.table
    m = table.metrics
    length = m.length
    mu = m.mu if length else float("nan")
    eff = m.efficiency if length else float("nan")
    metrics = [("N", table.n), ("L (steps)", length), ("mu = sum(u)/L", f"{mu:.4f}"),
               ("E = sum(u)/(N L)", f"{100 * eff:.2f} %"), ("used slots", m.used_slots)]
    cfg = src.config
    if cfg is not None:
        metrics.append(("invariant 2N(N-1)k", 2 * cfg.n * (cfg.n - 1) * cfg.sessions))
        cf = _closed_form(cfg)
        if cf is not None:
            metrics.append((f"closed form L = {cf[0]}", cf[1]))
    v = item.verdict
    whose = "" if v is None else (" (model and hardware)" if v.ok else " (model)")
    # One time axis for every picture of the item: a dump that runs longer
    # or shorter than the model is drawn to the same scale.
    steps = max(length, item.readback.table.length if item.readback is not None else 0)
    figures = [_png(runtable_figure(table, title=f"Run-table{whose}, N = {table.n}, "
                                    f"L = {length}", steps=steps))]
    if v is not None and not v.ok and item.readback is not None:
        figures.append(_png(_marked_figure(table, item.readback.table, item.dump, steps)))
    figures.append(_png(utilization_figure(
        table.used, n=table.n, title=f"Utilisation profile, L = {length}, mu = {mu:.3f}",
        steps=steps)))
    reference = None
    if item.reference is not None:
        reference = dict(stem=item.reference.stem, name=item.reference.name,
                         equal=item.reference_equal)
    return dict(
        k=k, label=src.label, spec=item.spec, metrics=metrics, reference=reference,
        model_equal=item.model_equal, verdict=v, dump=item.dump, notes=item.notes,
        figures=figures, used=" ".join(str(int(u)) for u in table.used),
        table_text=table.render() if table.n * length <= _TEXT_CELLS else None)


def _table8_data(ns: list[int], progress: Callable[[int], None] | None) -> dict:
    """Rows of ``table8.html.j2`` (numbers as the page prints them) and its verdict."""
    from ..model.sweeps import table8
    rows, below = [], []
    for r in table8(ns, progress=progress):
        paper = r.paper_efficiency
        rows.append(dict(n=r.n, length=r.length, efficiency=f"{100 * r.efficiency:.2f}",
                         below=r.below_two_thirds,
                         paper="" if paper is None else f"{100 * paper:.2f}",
                         delta="" if paper is None else f"{100 * (r.efficiency - paper):+.2f}"))
        if r.below_two_thirds:
            below.append(r.n)
    verdict = (f"Our E falls below 2/3 at N = {', '.join(map(str, below))}."
               if below else f"Our E stays at or above 2/3 for every N up to {ns[-1]} "
               "(the paper's Conjecture 21).")
    return dict(rows=rows, verdict=verdict)


def render_report(items: list[ReportItem], table8_ns: list[int] | None,
                  title: str = "pipegossip report", command: str | None = None,
                  progress: Callable[[int], None] | None = None) -> str:
    """The whole page as one HTML string; ``progress(n)`` before each Table 8 row."""
    verdicts = [i.verdict for i in items if i.verdict is not None]
    return _ENV.get_template("report.html.j2").render(
        title=title, version=__version__, command=command,
        when=datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        items=[_item_data(k, it) for k, it in enumerate(items, 1)],
        verdicts=len(verdicts), passed=sum(v.ok for v in verdicts),
        table8=_table8_data(table8_ns, progress) if table8_ns else None)
