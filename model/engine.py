"""The fast run simulator.

Same semantics as :mod:`.reference` (docs/reference.md), different cost: a
processor's state changes only when it takes part in a transfer, so the engine
touches only the endpoints of each step's transfers and the senders that are
actually waiting, never all N processors per step.

* ``ordered`` without Algorithm 2: a transfer i->j needs i at ``S_j`` and j at
  ``R_i``, so no two senders ever compete. The engine keeps the set of such
  ready pairs; after a step only pairs touching its endpoints can appear.
  Large steps are applied with NumPy on the same state arrays.
* ``any`` without Algorithm 2: each receiver keeps the senders aimed at it;
  the lowest eligible id wins (docs/reference.md "Resolution within a step").
* Algorithm 2 (either discipline): every sender is resolved in id order each
  step, as Algorithm 2 requires; the work is that of the sends and waits
  that happen. The receiver choice lives in :mod:`.pickers`. Under ``any``
  with cyclic orders (identity, pipelined) and no run-table, :func:`simulate`
  hands the run to the compiled loop of :mod:`.fastpath` instead (issue 18).

The state lives in ``array.array`` buffers with NumPy views on the same
memory, so scalar Python updates and vector updates see one state.
"""

from __future__ import annotations

import time
import warnings
from array import array
from collections.abc import Callable

import numpy as np

from . import fastpath
from .config import RunConfig
from .errors import DeadlockError, FastPathWarning
from .pickers import _DONE, _RECV, _SEND, CyclicPicker, OrderedPicker, WalkPicker, cyclic_starts
from .result import Deliveries, RunResult
from .runtable import IDLE, R, S, WR, WS, RunTable

__all__ = ["simulate", "BATCH_THRESHOLD"]

#: Kept under its old name for callers and tests.
_cyclic_starts = cyclic_starts

#: Steps with at least this many transfers are applied with NumPy.
BATCH_THRESHOLD = 48


Progress = Callable[[int, int, int], None]


class _Engine:
    def __init__(self, config: RunConfig, record: bool, batch_threshold: int):
        n = self.n = config.n
        m = self.m = n - 1
        self.config = config
        self.ordered = config.receive == "ordered"
        self.substitute = config.substitute
        self.sessions = config.sessions
        self.channels = config.channels
        self.batch_threshold = batch_threshold
        self.record = record

        self.P = array("i", config.orders.tobytes())
        self.sess = array("i", bytes(4 * n))
        self.got = array("i", bytes(4 * n))
        self.nsent = array("i", bytes(4 * n))
        # Index in P_i of the first entry not yet served: the current target.
        self.ptr = array("i", bytes(4 * n))
        self.served = [bytearray(n) for _ in range(n)] if self.substitute else None

        self.np_P = np.frombuffer(self.P, dtype=np.int32).reshape(n, m)
        self.np_sess = np.frombuffer(self.sess, dtype=np.int32)
        self.np_got = np.frombuffer(self.got, dtype=np.int32)
        self.np_nsent = np.frombuffer(self.nsent, dtype=np.int32)
        self.np_ptr = np.frombuffer(self.ptr, dtype=np.int32)
        self.np_ids = np.arange(n, dtype=np.int32)

        self.t_step = array("i")
        self.t_src = array("i")
        self.t_dst = array("i")
        self.t_sess = array("i")
        self.util = array("i")
        # Table recording: from step `seg_t` on, processor `seg_p` waits
        # with (`seg_a`, `seg_peer`) until its next transfer.
        self.seg_t, self.seg_p, self.seg_a, self.seg_peer = array("i"), array("i"), array("i"), array("i")
        self.total = config.sessions * n * m

    # -- per-processor state, scalar -------------------------------------

    def phase(self, p: int) -> int:
        if self.sess[p] >= self.sessions:
            return _DONE
        g = self.got[p]
        if g < p:
            return _RECV
        if self.nsent[p] < self.m:
            return _SEND
        return _RECV

    def target(self, p: int) -> int:
        return self.P[p * self.m + self.ptr[p]]

    def awaited(self, p: int) -> int:
        """Under ``ordered``: the sender a receiving processor waits for."""
        g = self.got[p]
        return g if g < p else g + 1

    def wait_token(self, p: int) -> tuple[int, int]:
        ph = self.phase(p)
        if ph == _SEND:
            return WS, self.target(p)
        if ph == _RECV:
            return WR, (self.awaited(p) if self.ordered else 0)
        return IDLE, 0

    def after_transfer(self, p: int) -> None:
        """Roll a processor that just finished its program into the next session."""
        if self.nsent[p] == self.m and self.got[p] == self.m:
            self.sess[p] += 1
            self.got[p] = 0
            self.nsent[p] = 0
            self.ptr[p] = 0
            if self.served is not None:
                self.served[p] = bytearray(self.n)

    def transfer(self, t: int, i: int, j: int) -> None:
        """Apply i -> j fired in step t (scalar path)."""
        self.t_step.append(t)
        self.t_src.append(i)
        self.t_dst.append(j)
        self.t_sess.append(self.sess[i])
        self.nsent[i] += 1
        self.got[j] += 1
        if self.served is None:
            self.ptr[i] += 1
        else:
            served = self.served[i]
            served[j] = 1
            k, base, m, P = self.ptr[i], i * self.m, self.m, self.P
            while k < m and served[P[base + k]]:
                k += 1
            self.ptr[i] = k
        self.after_transfer(i)
        self.after_transfer(j)

    def note(self, t: int, p: int) -> None:
        """Record p's wait token from step t on (table recording only)."""
        a, peer = self.wait_token(p)
        self.seg_t.append(t)
        self.seg_p.append(p)
        self.seg_a.append(a)
        self.seg_peer.append(peer)

    def blocked(self) -> dict[int, str]:
        out = {}
        for p in range(self.n):
            ph = self.phase(p)
            if ph == _SEND:
                out[p] = f"waits to send to p{self.target(p)} (session {self.sess[p] + 1})"
            elif ph == _RECV:
                out[p] = (f"waits to receive from p{self.awaited(p)}" if self.ordered
                          else "waits to receive from any processor")
        return out

    # -- the run ------------------------------------------------------------

    def run(self, progress: Progress | None) -> RunResult:
        if self.record:
            for p in range(self.n):
                self.note(1, p)
        if self.substitute:
            self.run_substitute(progress)
        elif self.ordered:
            self.run_ordered(progress)
        else:
            self.run_any(progress)
        return self.result()

    def _progress(self, progress: Progress | None, t: int, last: list[float]) -> None:
        now = time.monotonic()
        if progress is not None and now - last[0] >= 0.5:
            last[0] = now
            progress(t, len(self.t_step), self.total)

    def run_ordered(self, progress: Progress | None) -> None:
        ready: set[int] = set()  # senders i whose target j sits at R_i
        for p in range(self.n):
            self._check_ordered(p, ready)
        t = 0
        last = [time.monotonic()]
        done = 0
        channels = self.channels
        while done < self.total:
            t += 1
            if not ready:
                raise DeadlockError(t, self.blocked())
            if channels is None:
                fire = sorted(ready)
                ready.clear()
            else:
                fire = sorted(ready)[:channels]
                ready.difference_update(fire)
            if len(fire) >= self.batch_threshold:
                self._batch_ordered(t, fire, ready)
            else:
                pairs = [(i, self.target(i)) for i in fire]
                for i, j in pairs:
                    self.transfer(t, i, j)
                for i, j in pairs:
                    self._check_ordered(i, ready)
                    self._check_ordered(j, ready)
                    if self.record:
                        self.note(t + 1, i)
                        self.note(t + 1, j)
            self.util.append(2 * len(fire))
            done += len(fire)
            self._progress(progress, t, last)

    def _check_ordered(self, p: int, ready: set[int]) -> None:
        """Add the ready pair that p's new state may have completed."""
        ph = self.phase(p)
        if ph == _SEND:
            j = self.target(p)
            if self.phase(j) == _RECV and self.awaited(j) == p and self.sess[j] == self.sess[p]:
                ready.add(p)
        elif ph == _RECV:
            a = self.awaited(p)
            if self.phase(a) == _SEND and self.target(a) == p and self.sess[a] == self.sess[p]:
                ready.add(a)

    def _phases(self, ps: np.ndarray) -> np.ndarray:
        got, nsent = self.np_got[ps], self.np_nsent[ps]
        ph = np.where((got >= ps) & (nsent < self.m), _SEND, _RECV)
        return np.where(self.np_sess[ps] >= self.sessions, _DONE, ph)

    def _batch_ordered(self, t: int, fire: list[int], ready: set[int]) -> None:
        """The scalar path of :meth:`run_ordered`, vectorised for big steps."""
        src = np.array(fire, dtype=np.int32)
        dst = self.np_P[src, self.np_ptr[src]]
        k = len(src)
        self.t_step.extend(array("i", np.full(k, t, dtype=np.int32).tobytes()))
        self.t_src.extend(array("i", src.tobytes()))
        self.t_dst.extend(array("i", dst.astype(np.int32).tobytes()))
        self.t_sess.extend(array("i", self.np_sess[src].tobytes()))
        # Senders and receivers of one step are distinct processors.
        self.np_nsent[src] += 1
        self.np_ptr[src] += 1
        self.np_got[dst] += 1
        ends = np.concatenate([src, dst])
        fin = ends[(self.np_nsent[ends] == self.m) & (self.np_got[ends] == self.m)]
        self.np_sess[fin] += 1
        self.np_got[fin] = 0
        self.np_nsent[fin] = 0
        self.np_ptr[fin] = 0
        ph = self._phases(ends)
        # Endpoints that now send: is their target waiting for them?
        s = ends[ph == _SEND]
        if len(s):
            j = self.np_P[s, self.np_ptr[s]]
            gj = self.np_got[j]
            ok = ((self._phases(j) == _RECV) & (np.where(gj < j, gj, gj + 1) == s)
                  & (self.np_sess[j] == self.np_sess[s]))
            ready.update(s[ok].tolist())
        # Endpoints that now receive: is their awaited sender aiming at them?
        r = ends[ph == _RECV]
        if len(r):
            gr = self.np_got[r]
            a = np.where(gr < r, gr, gr + 1)
            a_send = self._phases(a) == _SEND
            tgt = self.np_P[a, np.minimum(self.np_ptr[a], self.m - 1)]
            ok = a_send & (tgt == r) & (self.np_sess[a] == self.np_sess[r])
            ready.update(a[ok].tolist())
        if self.record:
            for p in ends.tolist():
                self.note(t + 1, p)

    def run_any(self, progress: Progress | None) -> None:
        n = self.n
        aimed: list[set[int]] = [set() for _ in range(n)]  # senders whose target is j
        cand: set[int] = set()  # receivers with an eligible sender aimed at them
        for p in range(n):
            if self.phase(p) == _SEND:
                aimed[self.target(p)].add(p)
        for p in range(n):
            self._check_any(p, aimed, cand)
        t = 0
        done = 0
        last = [time.monotonic()]
        channels = self.channels
        sess = self.sess
        while done < self.total:
            t += 1
            if not cand:
                raise DeadlockError(t, self.blocked())
            winners = sorted(min(w for w in aimed[j] if sess[w] == sess[j]) for j in cand)
            if channels is not None:
                winners = winners[:channels]
            pairs = [(i, self.target(i)) for i in winners]
            for i, j in pairs:
                aimed[j].discard(i)
                self.transfer(t, i, j)
            for i, j in pairs:
                for p in (i, j):
                    if self.phase(p) == _SEND:
                        q = self.target(p)
                        aimed[q].add(p)
                        self._check_any(q, aimed, cand)
                    self._check_any(p, aimed, cand)
                    if self.record:
                        self.note(t + 1, p)
            self.util.append(2 * len(pairs))
            done += len(pairs)
            self._progress(progress, t, last)

    def _check_any(self, j: int, aimed: list[set[int]], cand: set[int]) -> None:
        sj = self.sess[j]
        if self.phase(j) == _RECV and any(self.sess[w] == sj for w in aimed[j]):
            cand.add(j)
        else:
            cand.discard(j)

    def run_substitute(self, progress: Progress | None) -> None:
        """Algorithm 2: senders resolved in id order, each taking its target
        or else the first later unserved entry that can take its word."""
        n = self.n
        sess = self.sess
        channels = self.channels if self.channels is not None else n
        senders: set[int] = set()
        starts = None if self.ordered else cyclic_starts(self.config.orders)
        if self.ordered:
            pick = OrderedPicker(self)
        elif starts is not None:
            pick = CyclicPicker(self, starts)
        else:
            pick = WalkPicker(self)
        for p in range(n):
            if self.phase(p) == _SEND:
                senders.add(p)
        t = 0
        done = 0
        last = [time.monotonic()]
        while done < self.total:
            t += 1
            pick.begin_step()
            pairs = []
            for i in sorted(senders):
                if len(pairs) == channels:
                    break
                j = pick.choose(i)
                if j >= 0:
                    pairs.append((i, j))
            if not pairs:
                raise DeadlockError(t, self.blocked())
            for i, j in pairs:
                before = (sess[i], sess[j])
                self.transfer(t, i, j)
                pick.served(i, j)
                for p, s0 in ((i, before[0]), (j, before[1])):
                    ph = self.phase(p)
                    if ph == _SEND:
                        senders.add(p)
                    else:
                        senders.discard(p)
                    pick.changed(p, s0)
            if self.record:
                for i, j in pairs:
                    self.note(t + 1, i)
                    self.note(t + 1, j)
            self.util.append(2 * len(pairs))
            done += len(pairs)
            self._progress(progress, t, last)

    # -- results ------------------------------------------------------------

    def result(self) -> RunResult:
        # Views, not copies: the buffers are never appended to again.
        deliveries = Deliveries(
            np.frombuffer(self.t_step, dtype=np.int32),
            np.frombuffer(self.t_src, dtype=np.int32),
            np.frombuffer(self.t_dst, dtype=np.int32),
            np.frombuffer(self.t_sess, dtype=np.int32),
        )
        util = np.frombuffer(self.util, dtype=np.int32).astype(np.int64)
        table = self.build_table(deliveries, len(util)) if self.record else None
        return RunResult(self.config, deliveries, util, table)

    def build_table(self, d: Deliveries, length: int) -> RunTable:
        n = self.n
        actions = np.zeros((n, length + 1), dtype=np.uint8)
        peers = np.zeros((n, length + 1), dtype=np.int32)
        seg_t = np.frombuffer(self.seg_t, dtype=np.int32)
        seg_p = np.frombuffer(self.seg_p, dtype=np.int32)
        seg_a = np.frombuffer(self.seg_a, dtype=np.int32)
        seg_peer = np.frombuffer(self.seg_peer, dtype=np.int32)
        # A segment lasts until the next segment of the same processor.
        order = np.lexsort((seg_t, seg_p))
        seg_t, seg_p, seg_a, seg_peer = seg_t[order], seg_p[order], seg_a[order], seg_peer[order]
        end = np.append(seg_t[1:], length + 1)
        last = np.append(seg_p[1:] != seg_p[:-1], True)
        end[last] = length + 1
        for t0, t1, p, a, q in zip(seg_t.tolist(), end.tolist(), seg_p.tolist(),
                                   seg_a.tolist(), seg_peer.tolist()):
            if t0 <= length:
                actions[p, t0 - 1 : t1 - 1] = a
                peers[p, t0 - 1 : t1 - 1] = q
        col = d.step - 1
        actions[d.src, col] = S
        peers[d.src, col] = d.dst
        actions[d.dst, col] = R
        peers[d.dst, col] = d.src
        return RunTable(actions[:, :length], peers[:, :length], comments=[self.config.header()])


def simulate(config: RunConfig, table: bool = False, progress: Progress | None = None,
             batch_threshold: int = BATCH_THRESHOLD, deliveries: bool = True) -> RunResult:
    """Run a configuration.

    ``receive="any"`` with Algorithm 2 and cyclic orders (identity,
    pipelined), without a run-table and from N = :data:`.fastpath.MIN_N`,
    runs on the compiled loop of :mod:`.fastpath` (see
    :func:`.fastpath.wanted`); everything else on the general engine of this
    module. Both give the same results, to the last delivery.

    Parameters
    ----------
    config : RunConfig
    table : bool
        Also build the full run-table (N x L); off by default because it is
        the only part whose size grows with N x L.
    progress : callable, optional
        Called as ``progress(step, transfers_done, transfers_total)`` about
        twice a second on long runs.
    batch_threshold : int
        Steps with at least this many transfers are applied with NumPy
        (``ordered`` without Algorithm 2 only). Results do not depend on it.
    deliveries : bool
        Keep every transfer in ``result.deliveries``. With False it is None:
        large sweeps (N = 16384 has 268 million transfers) need only the
        utilisation string.

    Raises
    ------
    DeadlockError
        If a step fires nothing while work remains (never for valid input).
    """
    starts = cyclic_starts(config.orders) if fastpath.wanted(config, table) else None
    if starts is not None:
        util, rows, deadlocked = fastpath.run_cyclic_any_substitute(config, starts, deliveries,
                                                                    progress)
        if not deadlocked:
            return RunResult(config, None if rows is None else Deliveries(*rows), util)
        # Fall through: the general engine names what each processor waits for.
    result = _Engine(config, table, batch_threshold).run(progress)
    if starts is not None:
        # The general engine finished what the compiled loop could not: a
        # fast-path bug, never silent (the result is right but much slower).
        warnings.warn(FastPathWarning(
            f"the compiled fast path (model/fastpath.py) stopped at step {len(util) + 1} of "
            f"N={config.n} ({config.slug}), which the general engine finishes in "
            f"{result.length} steps; the result is the general engine's"), stacklevel=2)
    if not deliveries:
        result.deliveries = None
    return result
