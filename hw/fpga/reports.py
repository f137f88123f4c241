"""What the flow reports: nextpnr's JSON report and netlist, Yosys's statistics, text.

:func:`summarise_report` reads nextpnr's ``--report`` JSON (never its text
log); the cells of the placed netlist are attributed to the measured design
or to the boundary around it by their hierarchical names.
"""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from pathlib import Path

from .devices import Device

__all__ = ["summarise_report", "render_text"]

def _short_source(source: str) -> str:
    """A source location relative to the package, if it is inside it."""
    # The folder holding the package's top-level folders (hw/, model/...):
    # this module is hw/fpga/reports.py.
    root = str(Path(__file__).resolve().parents[2])
    for prefix in (root + os.sep, str(Path.cwd()) + os.sep):
        if source.startswith(prefix):
            return source[len(prefix):]
    return source


def summarise_report(report: dict, owner_prefix: str | None = None) -> dict:
    """The parts of a nextpnr ``--report`` JSON the flow reports.

    Returns ``cells`` (type -> {used, available}), ``clocks``, ``fmax_mhz``
    and ``constraint_mhz`` (of the clock with the smallest margin),
    ``timing_met`` and ``critical_path`` (start, end, delay, logic levels,
    and the nets on it with their source locations). ``owner_prefix``
    (``"fabric."``) marks which path cells belong to the measured design.
    """
    cells = {k: {"used": int(v["used"]), "available": int(v["available"])}
             for k, v in sorted(report.get("utilization", {}).items())}
    clocks = [{"clock": name, "fmax_mhz": round(float(v["achieved"]), 2),
               "constraint_mhz": round(float(v["constraint"]), 2)}
              for name, v in sorted(report.get("fmax", {}).items())]
    worst = min(clocks, key=lambda c: c["fmax_mhz"] / c["constraint_mhz"], default=None)
    critical = None
    paths = [p for p in report.get("critical_paths", [])
             if p.get("from", "").startswith("posedge") and p.get("from") == p.get("to")]
    if worst is not None:
        matching = [p for p in paths if p["from"] == f"posedge {worst['clock']}"]
        paths = matching or paths
    if paths and paths[0].get("path"):
        steps = paths[0]["path"]
        start = steps[0]["from"]
        end = steps[-1]["to"]
        nets = [{"net": s["net"], "delay_ns": round(float(s["delay"]), 3),
                 "sources": [_short_source(x) for x in s.get("sources", [])]}
                for s in steps if s.get("type") == "routing"]
        logic = [s["to"]["cell"] for s in steps if s.get("type") == "logic"]
        critical = {
            "clock": paths[0]["from"][len("posedge "):],
            "from": f"{start['cell']}.{start['port']}",
            "to": f"{end['cell']}.{end['port']}",
            "delay_ns": round(sum(float(s["delay"]) for s in steps), 3),
            "logic_levels": len(logic),
            "logic_ns": round(sum(float(s["delay"]) for s in steps if s.get("type") == "logic"), 3),
            "routing_ns": round(sum(float(s["delay"]) for s in steps
                                    if s.get("type") == "routing"), 3),
            "cells": logic,
            "nets": nets,
        }
        if owner_prefix is not None:
            critical["from_in_design"] = start["cell"].startswith(owner_prefix)
            critical["to_in_design"] = end["cell"].startswith(owner_prefix)
    return {
        "cells": cells,
        "clocks": clocks,
        "fmax_mhz": worst["fmax_mhz"] if worst else None,
        "constraint_mhz": worst["constraint_mhz"] if worst else None,
        "timing_met": all(c["fmax_mhz"] >= c["constraint_mhz"] for c in clocks) if clocks
        else None,
        "critical_path": critical,
    }


def _attribute(routed: Path, prefix: str) -> tuple[dict[str, int], dict[str, int]]:
    """Placed cells per type inside ``prefix`` (the measured design) and outside it."""
    netlist = json.loads(routed.read_text())
    inside: Counter[str] = Counter()
    outside: Counter[str] = Counter()
    for module in netlist.get("modules", {}).values():
        for name, cell in module.get("cells", {}).items():
            (inside if name.startswith(prefix) else outside)[cell["type"]] += 1
    return dict(sorted(inside.items())), dict(sorted(outside.items()))


def _synth_cells(stat: Path, module: str) -> dict[str, int]:
    """Yosys's cell counts of one module after synthesis (before packing).

    A kept submodule other than the ``top.*`` ones (the network fabric's node
    modules) counts as its own cells times its instances.
    """
    modules = json.loads(stat.read_text()).get("modules", {})

    def counts(name: str) -> dict[str, int]:
        mod = modules.get("\\" + name, modules.get(name, {}))
        out: dict[str, int] = {}
        for k, v in mod.get("num_cells_by_type", {}).items():
            sub = k.lstrip("\\")
            if k.startswith(("$", "top.")):
                continue
            inner = ({k: 1} if sub not in modules and "\\" + sub not in modules
                     else counts(sub))
            for cell, c in inner.items():
                out[cell] = out.get(cell, 0) + int(v) * c
        return out

    return dict(sorted(counts(module).items()))


def _logic_cells(dev: Device, cells: dict, fabric: dict | None, boundary: dict | None) -> dict:
    entry = cells.get(dev.logic_cell, {"used": 0, "available": 0})
    out = {"type": dev.logic_cell, "used": entry["used"], "available": entry["available"]}
    if fabric is not None:
        out["fabric"] = fabric.get(dev.logic_cell, 0)
        out["boundary"] = boundary.get(dev.logic_cell, 0)
    return out


def render_text(report: dict) -> str:
    """A human-readable summary of a flow report."""
    out = io.StringIO()
    if report["kind"] == "bare":
        what = "bare fabric in a registered boundary"
        if not report.get("trace_observed", True):
            what += " (trace outputs unobserved)"
    else:
        what = f"self-checking top for {report['board']}"
    print(f"pipegossip hw fpga: {report['header']} width={report['width']}", file=out)
    print(f"  {report['part']} ({report['device']}), {what}", file=out)
    lc = report["logic_cells"]
    pct = 100.0 * lc["used"] / lc["available"] if lc["available"] else 0.0
    line = f"  logic cells: {lc['used']} / {lc['available']} {lc['type']} ({pct:.1f}%)"
    if "fabric" in lc:
        line += f": fabric {lc['fabric']}, boundary {lc['boundary']}"
    print(line, file=out)
    others = [f"{k} {v['used']}/{v['available']}" for k, v in report["cells"].items()
              if v["used"] and k != lc["type"]]
    if others:
        print(f"  other cells: {', '.join(others)}", file=out)
    if report["kind"] == "bare":
        fabric = ", ".join(f"{k} {v}" for k, v in report["fabric_cells"].items())
        print(f"  fabric alone: {fabric}", file=out)
    if report["fmax_mhz"] is None:
        print("  Fmax: no clock constraint found in the report", file=out)
    else:
        verdict = "timing MET" if report["timing_met"] else "timing FAILED"
        print(f"  Fmax: {report['fmax_mhz']:.2f} MHz against a {report['constraint_mhz']:.2f} MHz "
              f"constraint: {verdict}", file=out)
    cp = report.get("critical_path")
    if cp:
        print(f"  critical path: {cp['delay_ns']:.2f} ns, {cp['logic_levels']} logic levels "
              f"({cp['logic_ns']:.2f} ns logic, {cp['routing_ns']:.2f} ns routing)", file=out)
        print(f"    from {cp['from']}", file=out)
        print(f"    to   {cp['to']}", file=out)
        for net in cp["nets"]:
            src = f"  [{', '.join(net['sources'])}]" if net["sources"] else ""
            print(f"    net {net['net']} {net['delay_ns']:.2f} ns{src}", file=out)
    if report.get("bitstream"):
        print(f"  bitstream: {report['bitstream']} (program: {report['program']})", file=out)
    else:
        print("  bitstream: none (a bare fabric has no pinout; use --board)", file=out)
    return out.getvalue()

