"""Compiled kernels of the matching heuristic (:mod:`.matching`): edge weights, grouping
items by dispersion region, greedy matching.

Two BFS weightings of Beier and Sibeyn's equation (9), ``weight(v, p, t) =
dist_v(p)^Dist_Exp / |bce_v(p)|^Num_Exp`` credited by every node ``v`` outside the
dispersion region of item ``p`` to the border-crossing edges ``bce_v(p)`` that start
its shortest paths from the region:

* :func:`_bfs_weights` (``num_exp=None``): ``dist^Dist_Exp`` split over those edges in
  proportion to the shortest paths through each (Brandes' dependency accumulation):
  one BFS and one reverse sweep per region, ``O(n + m)``.
* :func:`_bce_weights` (``num_exp`` a number): the paper's literal rule, the sets
  ``bce_v(p)`` kept as bitsets over the region's border edges and united along the
  BFS (``O(n B / 64)`` per region for ``B`` border edges). Slower on large graphs.

Regions are spread over ``threads`` workers (``numba.prange``), each with its own
copy of the weights.
"""

from __future__ import annotations

import numpy as np

__all__ = ["kernel"]

_KERNELS: dict = {}
#: ``numba.prange`` once the kernels are compiled (plain ``range`` until then keeps
#: Numba out of the import of this module).
prange = range


def _bfs_weights(K, rep, cnt, indptr, nbr, eid, dist_exp, w, partner, contrib, threads):
    """Add every dispersion region's BFS credit to ``w``; return ``cost(D)``.

    Region ``g`` is the set of nodes ``v`` with ``K[v, rep[g]]`` (``cnt[g]``
    items share it). When ``partner`` is not all -1, the credit a region gives
    to the matched edge ``(y, partner[y])`` is also stored in ``contrib[g, y]``:
    the linear-cost model ranks a sender's items by it. -1: disconnected.
    """
    n = K.shape[0]
    G, m = len(rep), len(w)
    wt = np.zeros((threads, m))
    costs = np.zeros(threads)
    bad = np.zeros(threads, np.int64)
    for t in prange(threads):
        dist = np.empty(n, np.int64)
        sigma = np.empty(n, np.float64)
        delta = np.empty(n, np.float64)
        order = np.empty(n, np.int64)
        for g in range(t, G, threads):
            col = rep[g]
            tail = 0
            for v in range(n):
                delta[v] = 0.0
                if K[v, col]:
                    dist[v] = 0
                    sigma[v] = 1.0
                    order[tail] = v
                    tail += 1
                else:
                    dist[v] = -1
                    sigma[v] = 0.0
            inside = tail
            if inside == n:
                continue
            head = 0
            while head < tail:
                x = order[head]
                head += 1
                for a in range(indptr[x], indptr[x + 1]):
                    y = nbr[a]
                    if dist[y] < 0:
                        dist[y] = dist[x] + 1
                        order[tail] = y
                        tail += 1
                    if dist[y] == dist[x] + 1:
                        sigma[y] += sigma[x]
            if tail < n:
                bad[t] = 1  # a node the region cannot reach: the graph is disconnected
                continue
            for i in range(tail - 1, inside - 1, -1):
                x = order[i]
                d = dist[x]
                costs[t] += cnt[g] * d
                scale = (float(d) ** dist_exp + delta[x]) / sigma[x]
                for a in range(indptr[x], indptr[x + 1]):
                    y = nbr[a]
                    if dist[y] == d - 1:
                        share = sigma[y] * scale
                        if d == 1:
                            wt[t, eid[a]] += cnt[g] * share
                            if partner[y] == x:
                                contrib[g, y] += share
                        else:
                            delta[y] += share
    for t in range(threads):
        for e in range(m):
            w[e] += wt[t, e]
    return -1.0 if bad.sum() else costs.sum()


def _bce_weights(K, rep, cnt, indptr, nbr, eid, dist_exp, num_exp, w, partner, contrib,
                 threads):
    """Equation (9) literally: ``dist^Dist_Exp / |bce_v|^Num_Exp`` to every edge of ``bce_v``.

    Same arguments and result as :func:`_bfs_weights`, plus ``num_exp``.
    """
    n = K.shape[0]
    G, m = len(rep), len(w)
    wt = np.zeros((threads, m))
    costs = np.zeros(threads)
    bad = np.zeros(threads, np.int64)
    for t in prange(threads):
        dist = np.empty(n, np.int64)
        order = np.empty(n, np.int64)
        border = np.empty(m, np.int64)  # the region's border edges: edge id,
        near = np.empty(m, np.int64)    # their end inside the region,
        far = np.empty(m, np.int64)     # and their end outside it
        for g in range(t, G, threads):
            col = rep[g]
            tail = 0
            for v in range(n):
                if K[v, col]:
                    dist[v] = 0
                    order[tail] = v
                    tail += 1
                else:
                    dist[v] = -1
            inside = tail
            if inside == n:
                continue
            head = 0
            while head < tail:
                x = order[head]
                head += 1
                for a in range(indptr[x], indptr[x + 1]):
                    y = nbr[a]
                    if dist[y] < 0:
                        dist[y] = dist[x] + 1
                        order[tail] = y
                        tail += 1
            if tail < n:
                bad[t] = 1
                continue
            B = 0
            for i in range(inside, tail):
                x = order[i]
                if dist[x] != 1:
                    break
                for a in range(indptr[x], indptr[x + 1]):
                    if dist[nbr[a]] == 0:
                        border[B] = eid[a]
                        near[B] = nbr[a]
                        far[B] = x
                        B += 1
            words = (B + 63) // 64
            bits = np.zeros((n, words), np.uint64)
            for b in range(B):
                bits[far[b], b // 64] |= np.uint64(1) << np.uint64(b % 64)
            acc = np.zeros(B)
            for i in range(inside, tail):
                x = order[i]
                d = dist[x]
                costs[t] += cnt[g] * d
                if d > 1:
                    for a in range(indptr[x], indptr[x + 1]):
                        y = nbr[a]
                        if dist[y] == d - 1:
                            for k in range(words):
                                bits[x, k] |= bits[y, k]
                size = 0
                for k in range(words):
                    word = bits[x, k]
                    while word:
                        word &= word - np.uint64(1)
                        size += 1
                share = float(d) ** dist_exp / float(size) ** num_exp
                for k in range(words):
                    word = bits[x, k]
                    j = 0
                    while word:
                        if word & np.uint64(1):
                            acc[k * 64 + j] += share
                        word >>= np.uint64(1)
                        j += 1
            for b in range(B):
                wt[t, border[b]] += cnt[g] * acc[b]
                if partner[near[b]] == far[b]:
                    contrib[g, near[b]] += acc[b]
    for t in range(threads):
        for e in range(m):
            w[e] += wt[t, e]
    return -1.0 if bad.sum() else costs.sum()


def _column_hash(K, keys):
    """A 64-bit key per item: the sum of its holders' random keys (mod 2^64)."""
    n, P = K.shape
    h = np.zeros(P, np.uint64)
    for v in range(n):
        key = keys[v]
        for p in range(P):
            if K[v, p]:
                h[p] += key
    return h


def _greedy_match(u, v, order, w, n):
    """Edges in ``order`` (decreasing weight), taken when both ends are free."""
    mate = np.full(n, -1, np.int64)
    for e in order:
        if w[e] <= 0:
            break
        a, b = u[e], v[e]
        if mate[a] < 0 and mate[b] < 0:
            mate[a] = b
            mate[b] = a
    return mate


def kernel(name: str):
    """A compiled kernel (``bfs``, ``bce``, ``hash``, ``greedy``) or ``threads``.

    Compiled with Numba on first use, cached beside this file.
    """
    if not _KERNELS:
        import numba
        globals()["prange"] = numba.prange
        _KERNELS["bfs"] = numba.njit(cache=True, parallel=True)(_bfs_weights)
        _KERNELS["bce"] = numba.njit(cache=True, parallel=True)(_bce_weights)
        _KERNELS["hash"] = numba.njit(cache=True)(_column_hash)
        _KERNELS["greedy"] = numba.njit(cache=True)(_greedy_match)
        _KERNELS["threads"] = numba.get_num_threads()
    return _KERNELS[name]
