"""GTKWave save files that make a fabric dump read like its run-table.

:func:`write_gtkw` writes, beside a dump, a ``.gtkw`` save file and two
GTKWave translate filter files (lines ``<value> <name>``):

* ``<stem>.action.txt`` names the action codes of docs/reference.md "Trace codes"
  (``0 -``, ``1 WR``, ``2 R``, ``3 WS``, ``4 S``) on ``action__{i}``;
* ``<stem>.slot.txt`` names every value of the concatenation
  ``{action__{i}, peer__{i}}`` with its run-table token (``S3``, ``R0``,
  ``WS``, ``WR``, ``-``), so the first trace of each processor's group shows
  exactly the row of the run-table, cycle by cycle.

The save file shows the control ports (``clk``, ``rst``, ``start``, ``busy``,
``done``, ``stall``, ``cycle``, ``used``), then one group per processor with
its slot, action, peer, delivery and word-handshake signals, using the names
the dump itself declares (Verilator and Amaranth spell scopes differently).
Open it with ``gtkwave <stem>.gtkw``.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import re

from ..infra.files import OutputError, atomic_write, check_output_file
from ..hw.ports import CLOCK_PORTS, PORTS, PortSpec
from ..model.runtable import ACTION_NAMES, IDLE, R, S, WR, WS, token
from .dump import Var, open_dump
from .portdump import gtkwave_can_parse, write_port_dump
from ..model.errors import FormatError
from .readback import find_fabric, read_dump

__all__ = ["write_gtkw", "action_filter", "slot_filter", "gtkw_files", "check_gtkw_files"]


def _format(spec: PortSpec) -> str:
    """GTKWave data format of a port: bits in binary, words in hex, numbers in decimal."""
    wide = 1 << 20  # a width no other port has: tells word-sized ports apart
    if spec.width(3, 2, wide) == wide:
        return "hex"
    return "bin" if spec.width(3, 2, 8) == 1 else "dec"


def action_filter() -> str:
    """Translate filter text for ``action__{i}`` shown in decimal."""
    return "".join(f"{code} {ACTION_NAMES[code]}\n" for code in (IDLE, WR, R, WS, S))


def slot_filter(n: int, peer_bits: int) -> str:
    """Translate filter text for ``{action, peer}`` shown in decimal.

    Every value the concatenation can take gets a token; a peer that names
    no processor (>= n) is shown with ``?`` so a bad peer stands out.
    """
    lines = []
    for code in (IDLE, WR, R, WS, S):
        for peer in range(1 << peer_bits):
            name = token(code, peer) if code not in (R, S) or peer < n else f"{token(code, 0)[0]}?{peer}"
            lines.append(f"{(code << peer_bits) | peer} {name}\n")
    return "".join(lines)


def _name(var: Var) -> str:
    """The name GTKWave gives a variable: its path, plus ``[msb:0]`` for vectors."""
    path = f"{var.scope}.{var.raw}" if var.scope else var.raw
    if var.size > 1 and not var.raw.endswith("]"):
        path += f"[{var.size - 1}:0]"
    return path


def _bits(var: Var) -> list[str]:
    """The bits of a variable, MSB first, as GTKWave names them in a concatenation."""
    if var.size == 1:
        return [_name(var)]
    return [f"({k}){_name(var)}" for k in range(var.size)]


#: The window the save file asks for, and the widths of its signal search
#: tree (``[sst_width]``) and signal-name pane (``[signals_width]``).
_WINDOW = (1600, 900)
_SST_WIDTH = 240
_SIGNALS_WIDTH = 260
#: Pixels of the wave pane the run is fitted into: what the window leaves
#: beside the two panes, less 100 for pane handles, borders and the scroll
#: bar. Fitting the run into the full 1200 pixels the window once seemed to
#: leave cut off the last cycle when the tree was open; a wider pane than
#: assumed only shows more time after the run.
_WAVE_PIXELS = _WINDOW[0] - _SST_WIDTH - _SIGNALS_WIDTH - 100


def _run_view(dump_path: Path, top: str | None) -> tuple[int, float, int] | None:
    """Start time, GTKWave zoom and marker that frame run 1, if the dump has one.

    GTKWave draws ``2**-zoom`` time units per frame of 200 pixels (its
    ``calczoom``). Cycle ``k`` of the run is sampled at the rising edge
    ``start + k`` periods, so the view runs from two periods before the
    start to two after the edge of cycle L, fitted into
    :data:`_WAVE_PIXELS`.
    """
    try:
        rb = read_dump(dump_path, top=top)
    except FormatError:
        return None
    if rb.clock_period is None or rb.start_time < 0:
        return None
    dump = open_dump(dump_path)
    period = rb.clock_period / dump.timescale
    begin = max(0, int(rb.start_time - 2 * period))
    end = rb.start_time + (rb.length + 2) * period
    per_frame = (end - begin) / _WAVE_PIXELS * 200.0
    return begin, -math.log2(max(per_frame, 1.0)), int(rb.start_time)


#: What every file :func:`write_gtkw` writes starts with (or, for the filters, is
#: made of): an existing file of one of its names is replaced only when it is
#: recognisably one of these, never a file of the user's.
_SAVE_TAG = b"[*] pipegossip: fabric with N="
_PORTS_TAG = b"pipegossip: ports of "
_FILTER_LINE = re.compile(rb"[0-9]+ (?:-|WS|WR|[SR](?:\??[0-9]+)?)\n")


def gtkw_files(dump_path: str | Path, ports: bool = True) -> list[Path]:
    """The files :func:`write_gtkw` writes beside ``dump_path``: the save file, the two
    filters and (``ports``) the ports-only copy it writes when GTKWave cannot read
    the dump itself."""
    stem = Path(dump_path).with_suffix("")
    names = [f"{stem}.gtkw", f"{stem}.action.txt", f"{stem}.slot.txt"]
    return [Path(n) for n in names + ([f"{stem}.ports.vcd"] if ports else [])]


def _ours(path: Path) -> bool:
    """Whether the existing file ``path`` is one :func:`write_gtkw` wrote."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
            whole = len(head) < 1 << 16 or not f.read(1)
    except OSError:
        return False
    if path.name.endswith(".gtkw"):
        return head.startswith(_SAVE_TAG)
    if path.name.endswith(".ports.vcd"):
        return _PORTS_TAG in head[:4096]
    # a filter: every line `<value> <run-table token>`, as action_filter/slot_filter write
    lines = head.splitlines(keepends=True)
    if not whole:
        lines = lines[:-1]  # the last line read may be cut
    return bool(lines) and all(_FILTER_LINE.fullmatch(line) for line in lines)


def check_gtkw_files(dump_path: str | Path, ports: bool = True) -> None:
    """Refuse to write the save file and filters of ``dump_path`` over anything not ours.

    Raises
    ------
    OutputError
        One of :func:`gtkw_files` cannot be written, or exists and was not
        written by pipegossip (a save file of the user's own, beside the dump).
    """
    for path in gtkw_files(dump_path, ports):
        real = check_output_file(path)
        if (real.exists() or path.is_symlink()) and not _ours(real):
            what = "exists and was not written by pipegossip (no pipegossip tag in it)" \
                if real.exists() else "is a symbolic link to a missing file"
            raise OutputError(f"{str(path)!r} {what}; move it away, or leave out --gtkw")


def write_gtkw(dump_path: str | Path, n: int, top: str | None = None,
               home: str | Path | None = None) -> Path:
    """Write ``<dump>.gtkw`` and its translate filter files beside the dump.

    Parameters
    ----------
    dump_path : str or Path
        An existing ``.vcd`` or ``.fst`` dump of a fabric.
    n : int
        The number of processors the caller expects in the dump.
    top : str, optional
        The fabric's scope, when the dump holds several (as for ``waves``).
    home : str or Path, optional
        The folder the dump and these files will be in when the save file is
        opened, when they are written in a temporary folder first (the save
        file names its dump and filters by absolute path); default: beside
        the dump.

    Returns
    -------
    Path
        The save file. When GTKWave could not parse the dump itself (a
        Verilator VCD, see :mod:`.portdump`), the save file opens
        ``<stem>.ports.vcd``, a ports-only copy written beside it.

    Raises
    ------
    FormatError
        The dump is unreadable or has no fabric ports.
    ValueError
        The dump's fabric has a different N.
    OutputError
        A file of one of these names exists and is not one pipegossip wrote
        (:func:`check_gtkw_files`): nothing is written.
    """
    from vcd.gtkw import GTKWSave

    dump_path = Path(dump_path).resolve()
    dump = open_dump(dump_path)
    ports = find_fabric(dump, top)
    if ports.n != n:
        raise ValueError(f"{dump_path} holds a fabric with N={ports.n}, not N={n}")
    stem = dump_path.with_suffix("")
    readable = gtkwave_can_parse(dump)
    check_gtkw_files(dump_path, ports=not readable)  # before writing any of them
    if not readable:
        # GTKWave would refuse the whole file: show it a ports-only copy.
        dump_path = write_port_dump(dump_path, Path(f"{stem}.ports.vcd"), top)
        dump = open_dump(dump_path)
        ports = find_fabric(dump)
        top = ports.scope
    v = ports.vars
    action_path = Path(f"{stem}.action.txt")
    slot_path = Path(f"{stem}.slot.txt")
    save_path = Path(f"{stem}.gtkw")
    peer_bits = v["peer__0"].size
    atomic_write(action_path, action_filter())
    atomic_write(slot_path, slot_filter(n, peer_bits))

    buf = io.StringIO()
    g = GTKWSave(buf)
    g.comment(f"pipegossip: fabric with N={n} in scope {ports.scope}",
              f"first trace of each group pN = that processor's run-table row "
              f"(filters {action_path.name}, {slot_path.name})")
    def named(path: Path) -> str:
        return str(path if home is None else Path(home).resolve() / path.name)

    g.dumpfile(named(dump_path))
    g.savefile(named(save_path))
    g.size(*_WINDOW)
    view = _run_view(dump_path, top)
    if view is not None:
        start, zoom, marker = view
        g.timestart(start)
        g.zoom_markers(zoom, marker)
    parts = ports.scope.split(".")
    for k in range(1, len(parts) + 1):
        g.treeopen(".".join(parts[:k]))
    buf.write(f"[sst_width] {_SST_WIDTH}\n")  # pyvcd has no call for it
    g.signals_width(_SIGNALS_WIDTH)
    g.sst_expanded(True)
    # The fabric-wide ports of the table: single bits first, then the counters.
    scalars = [s for s in PORTS if not s.per_processor]
    shown = [(p, "bin") for p in CLOCK_PORTS] + [(s.key, "bin") for s in scalars
                                                 if _format(s) == "bin"]
    shown += [(s.key, _format(s)) for s in scalars if _format(s) != "bin"]
    for port, fmt in shown:
        if port in v:
            g.trace(_name(v[port]), alias=port, datafmt=fmt)
    for i in range(n):
        with g.group(f"p{i}"):
            act, peer = v[f"action__{i}"], v[f"peer__{i}"]
            g.trace("#{" + f"p{i}" + "} " + " ".join(_bits(act) + _bits(peer)),
                    datafmt="dec", translate_filter_file=named(slot_path))
            g.trace(_name(act), alias=f"action_{i}", datafmt="dec",
                    translate_filter_file=named(action_path))
            g.trace(_name(peer), alias=f"peer_{i}", datafmt="dec")
            # GTKWave shows an alias only after its last dot, hence the underscores.
            for prefix in ("delivery", "words"):
                for spec in (s for s in PORTS if s.group == prefix):
                    name = spec.verilog_name(i)
                    if name in v:
                        g.trace(_name(v[name]), alias=f"{prefix}_{i}_{spec.field}",
                                datafmt=_format(spec))
    atomic_write(save_path, buf.getvalue())
    return save_path
