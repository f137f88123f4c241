"""The golden model's run as a waveform with the fabric's port names.

:func:`write_golden_dump` writes what a correct fabric shows on its ports
(the pinned interface of docs/hw.md) for a model run: ``start`` sampled at
edge ``e0``, ``busy``/``cycle`` over cycles ``1..L``, each processor's
``action``/``peer`` from the model's run-table, ``used``, the deliveries and
the word handshakes, then ``done``. Open it in GTKWave beside a hardware
dump (same signal names, same save file), or feed it to the read-back.

Nothing here decides semantics: every value comes from
:func:`pipegossip.model.simulate`'s table and deliveries.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..infra.files import atomic_output
from ..hw.ports import CLOCK_PORTS, ports
from ..hw.words import WordScheme
from ..model.result import RunResult

__all__ = ["write_golden_dump"]


class _VCDOut:
    def __init__(self, path: Path, timescale_ps: int):
        from vcd import VCDWriter
        self.f = open(path, "w", encoding="ascii")
        self.w = VCDWriter(self.f, timescale=f"{timescale_ps} ps", date="-",
                           comment="pipegossip golden model run")
        self.vars: list = []

    def var(self, scope: list[str], name: str, size: int) -> int:
        self.vars.append(self.w.register_var(".".join(scope), name, "wire", size=size, init=0))
        return len(self.vars) - 1

    def change(self, t: int, handle: int, value: int) -> None:
        self.w.change(self.vars[handle], t, value)

    def close(self, t: int) -> None:
        self.w.close(t)
        self.f.close()


class _FSTOut:
    def __init__(self, path: Path, timescale_ps: int):
        import pylibfst
        self.ffi, self.lib = pylibfst.ffi, pylibfst.lib
        self.ctx = self.lib.fstWriterCreate(str(path).encode(), 1)
        if self.ctx == self.ffi.NULL:
            raise OSError(f"cannot create FST file {str(path)!r}")
        self.lib.fstWriterSetTimescaleFromString(self.ctx, f"{timescale_ps}ps".encode())
        self.handles: list[tuple[int, int]] = []
        self.scope: list[str] = []
        self.now = -1

    def var(self, scope: list[str], name: str, size: int) -> int:
        lib = self.lib
        if scope != self.scope:
            for _ in self.scope:
                lib.fstWriterSetUpscope(self.ctx)
            for s in scope:
                lib.fstWriterSetScope(self.ctx, lib.FST_ST_VCD_MODULE, s.encode(), self.ffi.NULL)
            self.scope = list(scope)
        h = lib.fstWriterCreateVar(self.ctx, lib.FST_VT_VCD_WIRE, lib.FST_VD_IMPLICIT, size,
                                   name.encode(), 0)
        self.handles.append((h, size))
        return len(self.handles) - 1

    def change(self, t: int, handle: int, value: int) -> None:
        if t != self.now:
            self.lib.fstWriterEmitTimeChange(self.ctx, t)
            self.now = t
        h, size = self.handles[handle]
        self.lib.fstWriterEmitValueChange(self.ctx, h, format(value, f"0{size}b").encode())

    def close(self, t: int) -> None:
        self.lib.fstWriterEmitTimeChange(self.ctx, t)
        self.lib.fstWriterClose(self.ctx)


def write_golden_dump(result: RunResult, path: str | Path, *, width: int = 8,
                      scope: str = "TOP.pipegossip_model", period_ps: int = 10_000,
                      reset_cycles: int = 2, tail_cycles: int = 2) -> Path:
    """Write the model run ``result`` as the fabric's port waveform.

    Parameters
    ----------
    result : RunResult
        From ``simulate(config, table=True)``.
    path : str or Path
        ``.vcd`` or ``.fst`` (chosen by suffix).
    width : int
        Word width; words are the tagged words of seed 0
        (:class:`pipegossip.hw.words.WordScheme`).
    scope : str
        Dotted scope for the ports.
    period_ps : int
        Clock period; the timescale is 1 ps, rising edges at ``(k + 1/2)`` periods.
    reset_cycles, tail_cycles : int
        Cycles with ``rst`` high before ``start``, and idle cycles after the run.

    Returns
    -------
    Path
    """
    if result.table is None:
        raise ValueError("write_golden_dump needs a run with its table (simulate(..., table=True))")
    path = Path(path)
    fst = path.suffix.lower() == ".fst"
    # Written under a temporary name and renamed: never a half-written dump.
    with atomic_output(path, temp_path=True) as tmp:
        out = _FSTOut(tmp, 1) if fst else _VCDOut(tmp, 1)
        _write(out, result, width, scope, period_ps, reset_cycles, tail_cycles)
    return path


def _write(out, result: RunResult, width: int, scope: str, period_ps: int,
           reset_cycles: int, tail_cycles: int) -> None:
    config, table = result.config, result.table
    n, length, sessions = config.n, table.length, config.sessions
    words = WordScheme(n, sessions, width)
    word_of = words.word
    sc = scope.split(".")
    handles: dict[str, int] = {}
    for name in CLOCK_PORTS:
        handles[name] = out.var(sc, name, 1)
    # Every port of the table, with the fabric's own widths.
    for port in ports(n, sessions, width):
        handles[port.name] = out.var(sc, port.name, port.width)

    d = result.deliveries
    # Each processor takes session s+1's word in the step of its last action of session s.
    last_step = np.zeros((n, sessions), dtype=np.int64)
    for arr in (d.src, d.dst):
        np.maximum.at(last_step, (arr, d.session), d.step)
    take_at: dict[int, list[int]] = {}
    for i in range(n):
        for s in range(sessions - 1):
            take_at.setdefault(int(last_step[i, s]), []).append(i)
    by_step: dict[int, list[int]] = {}
    for k in range(len(d)):
        by_step.setdefault(int(d.step[k]), []).append(k)

    frames: list[dict[str, int]] = []
    idle = {name: 0 for name in handles if name != "clk"}
    for _ in range(reset_cycles):
        frames.append(dict(idle, rst=1))
    first = dict(idle, start=1)
    for i in range(n):
        first.update({f"words__{i}__payload": word_of(i, 0),
                      f"words__{i}__valid": 1, f"words__{i}__ready": 1})
    frames.append(first)
    offered = [1] * n  # session 0's word went with start; the next one is presented
    for t in range(1, length + 1):
        fr = dict(idle, busy=1, cycle=t, used=int(table.used[t - 1]))
        for i in range(n):
            fr[f"action__{i}"] = int(table.actions[i, t - 1])
            fr[f"peer__{i}"] = int(table.peers[i, t - 1])
            if offered[i] < sessions:
                fr[f"words__{i}__payload"] = word_of(i, offered[i])
                fr[f"words__{i}__valid"] = 1
        for k in by_step.get(t, ()):
            j, src, ses = int(d.dst[k]), int(d.src[k]), int(d.session[k])
            fr.update({f"delivery__{j}__valid": 1, f"delivery__{j}__source": src,
                       f"delivery__{j}__session": ses,
                       f"delivery__{j}__word": word_of(src, ses)})
        for i in take_at.get(t, ()):
            fr[f"words__{i}__ready"] = 1
            offered[i] += 1
        frames.append(fr)
    for _ in range(tail_cycles):
        frames.append(dict(idle, done=1))

    # Frame k is sampled at rising edge k, at k*P + P/2; it is set at edge k-1.
    half = period_ps // 2
    clk = handles["clk"]
    out.change(0, clk, 0)
    prev: dict[str, int] = {}
    for k, fr in enumerate(frames):
        t_set = 0 if k == 0 else (k - 1) * period_ps + half
        if k:
            out.change(t_set, clk, 1)
        for name, value in fr.items():
            if prev.get(name) != value:
                out.change(t_set, handles[name], value)
        prev = fr
        if k:
            out.change(k * period_ps, clk, 0)
    last_edge = (len(frames) - 1) * period_ps + half
    out.change(last_edge, clk, 1)
    out.close(len(frames) * period_ps)
