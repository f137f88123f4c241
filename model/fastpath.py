"""A compiled run loop for Algorithm 2 under ``any`` with cyclic orders.

This is the path the Conjecture 21 sweep needs (issue 18): identity order,
Algorithm 2 (``substitute=True``), ``receive="any"``, N up to 16384 and more.
It computes exactly what :class:`pipegossip.model.engine._Engine` computes for
those configurations (same L, utilisation string, deliveries); the test
``tests/model/test_model_engine_oracle.py`` holds it to outputs recorded from the
engine before this module existed.

Why compiled code and not NumPy
-------------------------------
A profile of the general engine at N = 1024 (3,059 steps, 1,047,552
transfers) puts all of its time in per-transfer Python: the sender loop of
``run_substitute``, ``transfer``, the picker's ``changed``/``choose`` and
``phase`` each run once or more per transfer, about 4-5 microseconds in all
per transfer. The step itself cannot be vectorised: docs/reference.md "Algorithm 2" resolves
the senders one after another in id order, each taking the first entry of its
order that is still free *after the lower senders have chosen*, so sender i's
choice depends on every lower sender's. That loop is compiled here with
Numba (compiled once per installation, about 5 s, then cached beside this
file; loading it costs a process about 0.3 s of CPU), on word-packed bit sets:

* ``unserved[i]``: bit j says i has not yet sent its word to j this session;
* ``recv[s]``: bit j says j is receiving in session s (copied per step into
  ``avail``, from which each choice removes its receiver);
* ``sending``: bit i says i is in its broadcast phase.

A sender's choice is then the lowest set bit of ``avail[s] & unserved[i]`` at
or above its order's start id, else the lowest set bit overall (a cyclic
order walks the ids upwards from its start, skipping its own id). Each bit
set also has a summary, one bit per 64-bit word that is non-zero, so a scan
skips 64 words at a time over the ids i has already served and over the
processors not receiving (under identity order the senders of a step are a
contiguous block of about N/3 ids that every scan would otherwise cross).

Coverage
--------
:func:`wanted` and :func:`.pickers.cyclic_starts` decide which configurations
:func:`pipegossip.model.simulate` sends here: ``receive="any"``,
``substitute=True``, cyclic orders (identity, pipelined, or explicit orders of
that shape), N >= 3 (N >= :data:`MIN_N` unless the loop is already loaded),
any number of sessions, any channel limit, and no run-table. Everything else
stays on the general engine.

Deliveries can be left out (``deliveries=False``): at N = 16384 they are
268 million rows (4.3 GB), while L and the utilisation string need a few
hundred kilobytes.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable

import numpy as np

__all__ = ["AVAILABLE", "MIN_N", "wanted", "run_cyclic_any_substitute"]

#: Whether the compiled path can run. Numba is a declared dependency; it is
#: imported only when a run first takes this path, because importing it and
#: loading the compiled loop costs about half a second, more than the whole
#: general-engine run below N = 512.
AVAILABLE = importlib.util.find_spec("numba") is not None

#: Smallest N sent here while the loop is not yet loaded in this process;
#: once it is (a sweep), every covered N comes here. Results never depend on it.
MIN_N = 512

#: Steps per call of the compiled loop; between calls progress is reported.
CHUNK_STEPS = 4096

Progress = Callable[[int, int, int], None]

_kernel = None  # the compiled _loop, once loaded


def wanted(config, table: bool) -> bool:
    """Whether ``config`` should run here, if its orders are cyclic.

    The caller still checks the orders with :func:`.pickers.cyclic_starts`
    (O(N^2) work, so it comes last) and passes the start ids to
    :func:`run_cyclic_any_substitute`.

    Parameters
    ----------
    config : RunConfig
    table : bool
        Whether a run-table is wanted (the compiled loop does not record one).
    """
    return (AVAILABLE and not table and config.receive == "any" and config.substitute
            and config.n >= 3 and (config.n >= MIN_N or _kernel is not None))


def _loop(n, m, sessions, channels, start, sess, got, nsent, unserved, usum, recv, nrecv,
          sending, avail, asum, navail, pi, pj, util, t0, done0, total, max_steps,
          record, d_step, d_src, d_dst, d_sess):
    """Run up to ``max_steps`` steps from step ``t0 + 1``; state is updated in place.

    Returns ``(steps_run, transfers_done, deadlocked)``. ``util[k]`` receives
    the used slots of step ``t0 + 1 + k``.
    """
    words = unserved.shape[1]
    one = np.uint64(1)
    zero = np.uint64(0)
    full = ~zero
    done = done0
    k = 0
    while done < total and k < max_steps:
        t = t0 + k + 1
        # Receivers free at the start of the step, per session, and a summary
        # bit per word of them that is non-zero.
        for s in range(sessions):
            navail[s] = nrecv[s]
            for g in range(asum.shape[1]):
                asum[s, g] = zero
            if nrecv[s] > 0:
                for w in range(words):
                    x = recv[s, w]
                    avail[s, w] = x
                    if x != zero:
                        asum[s, w >> 6] |= one << np.uint64(w & 63)
        # -- choices: senders in id order (docs/reference.md "Algorithm 2") ------------------
        npairs = 0
        stop = False
        for w in range(words):
            bits = sending[w]
            while bits != zero:
                i = w * 64 + _lowest(bits)
                bits &= bits - one
                if npairs == channels:
                    stop = True
                    break
                s = sess[i]
                if navail[s] == 0:
                    continue
                j = _choose(unserved, usum, avail, asum, s, i, start[i], words, full)
                if j >= 0:
                    wj = j >> 6
                    avail[s, wj] &= ~(one << np.uint64(j & 63))
                    if avail[s, wj] == zero:
                        asum[s, wj >> 6] &= ~(one << np.uint64(wj & 63))
                    navail[s] -= 1
                    pi[npairs] = i
                    pj[npairs] = j
                    npairs += 1
            if stop:
                break
        if npairs == 0:
            return k, done, True
        # -- transfers, applied after every choice of the step ---------------
        for q in range(npairs):
            i = pi[q]
            j = pj[q]
            if record:
                d_step[done + q] = t
                d_src[done + q] = i
                d_dst[done + q] = j
                d_sess[done + q] = sess[i]
            nsent[i] += 1
            got[j] += 1
            wj = j >> 6
            unserved[i, wj] &= ~(one << np.uint64(j & 63))
            if unserved[i, wj] == zero:
                usum[i, wj >> 6] &= ~(one << np.uint64(wj & 63))
        # -- phases of the endpoints: the sender of a pair was sending, its
        #    receiver receiving; either may have finished its session.
        for q in range(2 * npairs):
            p = pi[q >> 1] if (q & 1) == 0 else pj[q >> 1]
            old = sess[p]
            if (q & 1) == 0:
                sending[p >> 6] &= ~(one << np.uint64(p & 63))
            else:
                recv[old, p >> 6] &= ~(one << np.uint64(p & 63))
                nrecv[old] -= 1
            if nsent[p] == m and got[p] == m:  # program finished: next session
                sess[p] = old + 1
                got[p] = 0
                nsent[p] = 0
                _reset_unserved(unserved, usum, p, n)
            s = sess[p]
            if s >= sessions:
                continue
            if got[p] >= p and nsent[p] < m:
                sending[p >> 6] |= one << np.uint64(p & 63)
            else:
                recv[s, p >> 6] |= one << np.uint64(p & 63)
                nrecv[s] += 1
        util[k] = 2 * npairs
        done += npairs
        k += 1
    return k, done, False


def _reset_unserved(unserved, usum, p, n):
    """Processor p owes its word to everyone but itself again (new session)."""
    one = np.uint64(1)
    full = ~np.uint64(0)
    words = unserved.shape[1]
    for w in range(words):
        unserved[p, w] = full
    unserved[p, p >> 6] &= ~(one << np.uint64(p & 63))
    if n & 63:
        unserved[p, words - 1] &= (one << np.uint64(n & 63)) - one
    for g in range(usum.shape[1]):
        usum[p, g] = full
    if words & 63:
        usum[p, usum.shape[1] - 1] &= (one << np.uint64(words & 63)) - one
    for w in range(words):  # n = 1 mod 64 with p = n - 1 leaves a word empty
        if unserved[p, w] == np.uint64(0):
            usum[p, w >> 6] &= ~(one << np.uint64(w & 63))


def _scan(unserved, usum, avail, asum, s, i, w0, w1):
    """Lowest id in words w0..w1-1 that is unserved by i and free, or -1.

    Only words whose summary bits are set on both sides are looked at: the
    words of ids i has served, and of ids not receiving (the senders of the
    step, a contiguous block under identity order), are skipped 64 at a time.
    """
    if w0 >= w1:
        return -1
    one = np.uint64(1)
    full = ~np.uint64(0)
    g0 = w0 >> 6
    g1 = (w1 - 1) >> 6
    for g in range(g0, g1 + 1):
        c = usum[i, g] & asum[s, g]
        if g == g0:
            c &= full << np.uint64(w0 & 63)
        if g == g1 and (w1 & 63) != 0:
            c &= (one << np.uint64(w1 & 63)) - one
        while c != np.uint64(0):
            w = g * 64 + _lowest(c)
            x = unserved[i, w] & avail[s, w]
            if x != np.uint64(0):
                return w * 64 + _lowest(x)
            c &= c - one
    return -1


def _choose(unserved, usum, avail, asum, s, i, st, words, full):
    """The first entry of i's cyclic order from ``st`` that is unserved and free, or -1."""
    ws = st >> 6
    bs = np.uint64(st & 63)
    # Ids st..N-1: word ws from bit bs, then the words above.
    x = unserved[i, ws] & avail[s, ws] & (full << bs)
    if x != np.uint64(0):
        return ws * 64 + _lowest(x)
    j = _scan(unserved, usum, avail, asum, s, i, ws + 1, words)
    if j >= 0:
        return j
    # Ids 0..st-1, wrapping round.
    j = _scan(unserved, usum, avail, asum, s, i, 0, ws)
    if j >= 0:
        return j
    x = unserved[i, ws] & avail[s, ws] & ~(full << bs)
    if x != np.uint64(0):
        return ws * 64 + _lowest(x)
    return -1


def _lowest(x):
    """Index of the lowest set bit of a non-zero uint64."""
    b = 0
    low = x & (~x + np.uint64(1))
    if low > np.uint64(0xFFFFFFFF):
        low >>= np.uint64(32)
        b += 32
    if low > np.uint64(0xFFFF):
        low >>= np.uint64(16)
        b += 16
    if low > np.uint64(0xFF):
        low >>= np.uint64(8)
        b += 8
    if low > np.uint64(0xF):
        low >>= np.uint64(4)
        b += 4
    if low > np.uint64(0x3):
        low >>= np.uint64(2)
        b += 2
    if low > np.uint64(0x1):
        b += 1
    return b


def _compile():
    """Compile (or load from the on-disk cache) the loop and its helpers."""
    global _kernel, _lowest, _reset_unserved, _scan, _choose
    if _kernel is None:
        import numba

        def jit(fn, **options):
            # cache=True keeps the machine code beside this file (__pycache__)
            # or in the user's cache, so a fresh process pays the compile once
            # per installation. Numba refuses caching when neither place is
            # writable (read-only install, no home): compile per process then.
            try:
                return numba.njit(cache=True, **options)(fn)
            except RuntimeError:
                return numba.njit(**options)(fn)

        # The helpers are rebound first: _loop finds them as module globals.
        _lowest = jit(_lowest, inline="always")
        _reset_unserved = jit(_reset_unserved, inline="always")
        _scan = jit(_scan, inline="always")
        _choose = jit(_choose, inline="always")
        _kernel = jit(_loop)
    return _kernel


def run_cyclic_any_substitute(config, starts: list[int], deliveries: bool = True,
                              progress: Progress | None = None):
    """Run a configuration that :func:`wanted` admits and whose orders are cyclic.

    Parameters
    ----------
    config : RunConfig
    starts : list of int
        Cyclic start id of each processor's order.
    deliveries : bool
        Record every transfer (``sessions * N * (N-1)`` rows). Off, only the
        utilisation string is kept.
    progress : callable, optional
        ``progress(step, transfers_done, transfers_total)``, about twice a
        second on long runs.

    Returns
    -------
    tuple
        ``(utilization, rows, deadlocked)``: the int64 utilisation string, the
        four int32 arrays ``(step, src, dst, session)`` or None, and whether
        a step fired nothing (the caller then reports the deadlock).
    """
    n, m, k = config.n, config.n - 1, config.sessions
    words = (n + 63) // 64
    channels = n if config.channels is None else config.channels
    total = k * n * m
    start = np.asarray(starts, dtype=np.int64)
    sess = np.zeros(n, np.int64)
    got = np.zeros(n, np.int64)
    nsent = np.zeros(n, np.int64)
    # Every processor starts unserved towards everyone but itself; usum has
    # a bit per word of `unserved` that is non-zero.
    # (Built word-wise: a bool matrix would be N^2 bytes, 256 MiB at N = 16384.)
    unserved = np.full((n, words), ~np.uint64(0), dtype=np.uint64)
    if n & 63:
        unserved[:, -1] = (1 << (n & 63)) - 1
    ids = np.arange(n)
    unserved[ids, ids >> 6] &= ~(np.uint64(1) << (ids & 63).astype(np.uint64))
    groups = (words + 63) // 64
    wbits = np.zeros((n, groups * 64), dtype=bool)
    wbits[:, :words] = unserved != 0
    usum = np.packbits(wbits, axis=1, bitorder="little").view(np.uint64).copy()
    del wbits
    # Session 0: processor 0 sends first (it receives nothing before), the others receive.
    recv = np.zeros((k, words), np.uint64)
    recv_bits = np.zeros(words * 64, dtype=bool)
    recv_bits[1:n] = True
    recv[0] = np.packbits(recv_bits, bitorder="little").view(np.uint64)
    nrecv = np.zeros(k, np.int64)
    nrecv[0] = n - 1
    sending = np.zeros(words, np.uint64)
    sending[0] = np.uint64(1)
    avail = np.zeros((k, words), np.uint64)
    asum = np.zeros((k, groups), np.uint64)
    navail = np.zeros(k, np.int64)
    pi = np.zeros(n, np.int64)
    pj = np.zeros(n, np.int64)
    if deliveries:
        rows = tuple(np.empty(total, np.int32) for _ in range(4))
    else:
        rows = tuple(np.empty(0, np.int32) for _ in range(4))
    kernel = _compile()
    chunks = []
    t = done = 0
    last = time.monotonic()
    deadlocked = False
    while done < total:
        util = np.empty(CHUNK_STEPS, np.int64)
        ran, done, deadlocked = kernel(n, m, k, channels, start, sess, got, nsent, unserved, usum,
                                      recv, nrecv, sending, avail, asum, navail, pi, pj, util, t,
                                      done, total, CHUNK_STEPS, deliveries, *rows)
        chunks.append(util[:ran])
        t += ran
        if deadlocked:
            break
        now = time.monotonic()
        if progress is not None and now - last >= 0.5:
            last = now
            progress(t, done, total)
    utilization = np.concatenate(chunks) if chunks else np.zeros(0, np.int64)
    return utilization, (rows if deliveries else None), deadlocked
