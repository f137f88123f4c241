"""The matching heuristic for telephone gossiping and broadcasting on any graph.

Beier and Sibeyn, "A Powerful Heuristic for Telephone Gossiping" (MPI-I-2000-1-002),
section 4: every round is a maximum-weight matching of the network, the matched
pairs call each other (model ``F1``) and, in the unit-cost model, exchange every
item the partner lacks. In the linear-cost model (``tau`` given) the round is
limited to ``s_opt`` steps, the ``s`` that maximises
``Transfer_Volume(s, M) / (1 + tau * s)``, unless the round can finish the
primitive, and each sender sends its ``s_opt`` highest-priority new items.

Edge weights
------------
* ``"potential"``: the number of items known by exactly one end of the edge.
* ``"bfs"`` (default): every node ``v`` outside the dispersion region ``DR(p)``
  of item ``p`` credits ``dist_v(p)^dist_exp`` to the border-crossing edges that
  start its shortest paths from ``DR(p)``. The paper splits that credit evenly
  over the set ``bce_v(p)`` (its ``Num_Exp`` = 1), a set union per node; here
  it is split in proportion to the number of shortest paths through each
  edge (Brandes' dependency accumulation), which needs one BFS and one reverse
  sweep per dispersion region, ``O(n + m)``, instead of set unions. Items
  with the same dispersion region (after round ``t`` of a hypercube, the
  ``2^t`` items of one subcube) share one BFS: the cost is per distinct region
  (the paper's conclusions suggest reducing the regions for speed).
* ``"bfs"`` with ``num_exp`` set: the paper's equation (9) literally, each node
  gives ``dist^Dist_Exp / |bce_v(p)|^Num_Exp`` to every edge of ``bce_v(p)``,
  the sets kept as bitsets along the BFS (:mod:`.matching_kernels`).

Matchers
--------
``"exact"`` is rustworkx's compiled ``max_weight_matching`` (blossom,
``O(n^3)``); ``"networkx"`` is networkx's pure-Python one on the same integer
weights, kept as the reference (a test holds the two to equal-weight
matchings); ``"greedy"`` takes edges by decreasing weight, a
1/2-approximation (the paper's "approximate matching", after Avis 1983).
Ties are broken towards lower edge ids in both (the paper finds the optimal
hypercube and torus schedules "for the most natural ordering of the edges");
``tries > 1`` adds runs whose ties follow random edge orders (fixed ``seed``)
and keeps the best schedule.
``"auto"`` is exact up to :data:`EXACT_MAX_EDGES` edges, greedy above.

Look-ahead (section 4.2): with ``lookahead=l``, each round also tries
matchings with a few of the best matching's edges suppressed, plays each
``l`` rounds further with the plain heuristic and keeps the one that finishes
first, else the one with the least ``cost(D) = sum_p sum_v dist_v(p)``.
"""

from __future__ import annotations

import time

import numpy as np

from ..schedules.chunks import join_ids, spans
from ..schedules.ir import Schedule
from ..schedules.topologies import Topology
from .matching_kernels import kernel

__all__ = ["matching_schedule", "max_weight_pairs", "WEIGHTINGS", "MATCHERS", "EXACT_MAX_EDGES",
           "OutOfTime"]


class OutOfTime(Exception):
    """The run passed its ``deadline`` (a ``time.process_time()`` value) between two rounds."""

WEIGHTINGS = ("bfs", "potential")
MATCHERS = ("auto", "exact", "greedy", "networkx")
#: ``matcher="auto"`` uses the exact blossom matcher up to this many edges:
#: above it, one blossom per round dominates the run time (even compiled, a
#: mesh of 12,640 edges takes about 3 s of CPU per matching).
EXACT_MAX_EDGES = 2500
#: Candidate matchings per round with look-ahead (the paper tested up to ten).
CANDIDATES = 4
#: Knowledge cells (and item ids) a round's plan and delivery handle at once: a late
#: gossip round on 22,528 nodes moves about n^2 / 2 items, whose int64 temporaries
#: would take several GB each; in blocks they stay near 100 MB.
BLOCK = 1 << 24


# -------------------------------------------------------------- the graph
class _Graph:
    """CSR adjacency of a topology with the edge id of every entry."""

    def __init__(self, topo: Topology):
        if topo.edges is None:
            from ..schedules.topologies import _simple
            n = topo.n
            iu = np.triu_indices(n, 1)
            self.edges = _simple(n, np.stack(iu, axis=1))
        else:
            self.edges = topo.edges
        n, e = topo.n, self.edges
        self.n, self.m = n, len(e)
        ends = np.concatenate([e[:, 0], e[:, 1]])
        other = np.concatenate([e[:, 1], e[:, 0]])
        ids = np.concatenate([np.arange(self.m), np.arange(self.m)])
        order = np.lexsort((other, ends))
        self.nbr, self.eid = other[order], ids[order]
        self.indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(ends, minlength=n), out=self.indptr[1:])


# ------------------------------------------------------------- one round
class _State:
    """What every node knows: ``K[v, j]`` for the primitive's items ``j``."""

    def __init__(self, graph: _Graph, items: np.ndarray, weights: str, dist_exp: float,
                 num_exp: float | None = None, rank: np.ndarray | None = None):
        self.g, self.items, self.weights, self.dist_exp = graph, items, weights, dist_exp
        self.num_exp = num_exp
        #: Tie-break priority of every edge (lower first): the edge ids, or a permutation.
        self.rank = np.arange(graph.m) if rank is None else rank
        n = graph.n
        self.K = np.zeros((n, len(items)), dtype=bool)
        self.K[items, np.arange(len(items))] = True
        self.keys = np.random.default_rng(2000).integers(0, 1 << 63, n, dtype=np.uint64)
        #: Linear cost: senders of the same new items divide them (:func:`_choose`).
        self.split = False

    def copy(self) -> _State:
        other = object.__new__(_State)
        other.__dict__.update(self.__dict__)
        other.K = self.K.copy()
        return other

    def done(self) -> bool:
        return bool(self.K.all())

    def regions(self):
        """Distinct dispersion regions: a representative item each, sizes, item -> region.

        Items are grouped by a 64-bit hash of their holder set (random keys,
        fixed seed): a collision, about ``G^2 / 2^64`` likely, would only blur
        the weights; the schedule is judged by the validator either way.
        """
        h = kernel("hash")(self.K, self.keys)
        _, rep, inverse, counts = np.unique(h, return_index=True, return_inverse=True,
                                            return_counts=True)
        return rep, counts.astype(np.float64), inverse.ravel()

    def weights_of(self, partner: np.ndarray | None = None):
        """Edge weights (and, with ``partner``, per-region sender credits; and cost)."""
        g = self.g
        if self.weights == "potential" and partner is None:
            return self._potential(), None, None
        rep, cnt, inverse = self.regions()
        w = np.zeros(g.m)
        part = np.full(g.n, -1, np.int64) if partner is None else partner
        contrib = np.zeros((len(cnt), g.n) if partner is not None else (1, 1))
        threads = min(len(rep), kernel("threads"))
        if self.num_exp is None:
            cost = kernel("bfs")(self.K, rep, cnt, g.indptr, g.nbr, g.eid, float(self.dist_exp),
                                 w, part, contrib, threads)
        else:
            cost = kernel("bce")(self.K, rep, cnt, g.indptr, g.nbr, g.eid, float(self.dist_exp),
                                 float(self.num_exp), w, part, contrib, threads)
        if cost < 0:
            raise ValueError("the topology is disconnected: the primitive cannot complete")
        return w, (contrib, inverse), cost

    def _potential(self) -> np.ndarray:
        packed = np.packbits(self.K, axis=1)
        e, out = self.g.edges, np.empty(self.g.m)
        step = max(1, (1 << 24) // max(1, packed.shape[1]))
        for a in range(0, len(e), step):  # chunks bound the temporary to ~16 MB
            x = packed[e[a:a + step, 0]] ^ packed[e[a:a + step, 1]]
            out[a:a + step] = np.bitwise_count(x).sum(axis=1)
        return out


def _match(graph: _Graph, w: np.ndarray, matcher: str, rank: np.ndarray) -> np.ndarray:
    """Mate array of a maximum-weight (or greedy) matching; ties to lower ``rank``."""
    if matcher == "auto":
        matcher = "exact" if graph.m <= EXACT_MAX_EDGES else "greedy"
    e = graph.edges
    if matcher == "greedy":
        order = np.lexsort((rank, -w))
        return kernel("greedy")(e[:, 0], e[:, 1], order, w, graph.n)
    live = np.flatnonzero(w > 0)
    mate = np.full(graph.n, -1, np.int64)
    if not len(live):
        return mate
    # Integer weights keep the blossom exact; the low digits prefer low ranks
    # among equal-weight matchings, never outweighing one quantum of weight.
    quanta = np.rint(w[live] / w[live].max() * (1 << 30)).astype(np.int64)
    scale = graph.n * graph.m + 1
    weighted = [(int(e[i, 0]), int(e[i, 1]), int(q) * scale + graph.m - int(r))
                for i, q, r in zip(live.tolist(), quanta.tolist(), rank[live].tolist())]
    for a, b in max_weight_pairs(graph.n, weighted, "networkx" if matcher == "networkx"
                                 else "rustworkx"):
        mate[a], mate[b] = b, a
    return mate


def max_weight_pairs(n: int, weighted: list[tuple[int, int, int]], backend: str = "rustworkx"):
    """The pairs of a maximum-weight matching of integer-weighted edges ``(u, v, w)``.

    ``rustworkx`` is the compiled blossom (Rust); ``networkx`` the pure-Python
    one, kept as the reference. Integer weights make both exact, so they find
    matchings of equal weight (not always the same one).
    """
    if backend == "networkx":
        import networkx as nx
        G = nx.Graph()
        G.add_weighted_edges_from(weighted)
        return [tuple(p) for p in nx.max_weight_matching(G)]
    import rustworkx as rx
    G = rx.PyGraph(multigraph=False)
    G.add_nodes_from(range(n))
    G.add_edges_from(weighted)
    return list(rx.max_weight_matching(G, weight_fn=int))


def _plan(state: _State, mate: np.ndarray, tau: float | None):
    """The round's messages ``(src, dst, items)`` for the matched pairs.

    The item ids are int32 (node ids: n is far below 2^31), in blocks of about
    :data:`BLOCK` cells: a stored gossip round costs 4 bytes an item, not 8."""
    K = state.K
    a = np.flatnonzero(mate > np.arange(len(mate)))
    b = mate[a]
    src = np.concatenate([a, b])
    dst = np.concatenate([b, a])
    if tau is not None:
        new = K[src] & ~K[dst]
        counts = new.sum(axis=1)
        if len(counts) and counts.max() > 0:
            s = _steps(state, dst, new, counts, tau)
            if s < counts.max():
                new = _choose(state, mate, src, new, counts, s, state.split)
        return _messages(state, src, dst, [new])
    step = max(1, BLOCK // max(1, K.shape[1]))
    return _messages(state, src, dst, (K[src[i:i + step]] & ~K[dst[i:i + step]]
                                       for i in range(0, len(src), step)))


def _messages(state: _State, src: np.ndarray, dst: np.ndarray, blocks):
    """``(src, dst, item_ptr, items)`` of the pairs whose rows of ``new`` (given in
    consecutive row blocks) are not empty; items int32."""
    keep, sizes, items = [], [], []
    for new in blocks:
        counts = new.sum(axis=1)
        keep.append(counts > 0)
        sizes.append(counts[keep[-1]])
        flat = np.flatnonzero(new[keep[-1]])  # one index array: about twice as fast as 2-D nonzero
        items.append(state.items[flat % max(1, new.shape[1])].astype(np.int32))
    keep = np.concatenate(keep) if keep else np.zeros(0, bool)
    sizes = np.concatenate(sizes) if sizes else np.zeros(0, np.int64)
    ptr = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return (src[keep], dst[keep], ptr,
            np.concatenate(items) if items else np.zeros(0, np.int32))


def _steps(state: _State, dst: np.ndarray, new: np.ndarray, counts: np.ndarray,
           tau: float) -> int:
    """``s_opt``: the steps maximising transferred items per unit of time."""
    top = int(counts.max())
    after = state.K.copy()
    after[dst] |= new
    if after.all():
        return top  # the round can finish the primitive: do not cut it short
    c = np.sort(counts)
    s = np.arange(1, top + 1)
    below = np.searchsorted(c, s, side="left")
    prefix = np.concatenate([[0], np.cumsum(c)])
    volume = prefix[below] + s * (len(c) - below)
    return int(s[np.argmax(volume / (1.0 + tau * s))])


def _choose(state: _State, mate: np.ndarray, src: np.ndarray, new: np.ndarray,
            counts: np.ndarray, s: int, split: bool = False) -> np.ndarray:
    """Keep each sender's ``s`` new items of highest priority (section 4.1).

    ``split``: senders that hold the same new items divide them between their calls
    (the superpackets of the paper's Lemma 2 and section 3): each cut sender takes
    first the items fewest of this round's messages carry yet, then by priority, so
    that where the plain rule sends one top-``s`` set down several calls, the calls
    carry different parts of it, at the same round cost."""
    _, (contrib, inverse), _ = state.weights_of(partner=mate)
    out = np.zeros_like(new)
    small = counts <= s
    out[small] = new[small]
    carried = new[small].sum(axis=0) if split else None  # messages carrying each item
    for r in np.flatnonzero(counts > s):
        cand = np.flatnonzero(new[r])
        if state.weights == "bfs":
            pri = contrib[inverse[cand], src[r]]
        else:  # rarest first: the items the fewest nodes know
            pri = -state.K[:, cand].sum(axis=0).astype(np.float64)
        keys = (cand, -pri) if carried is None else (cand, -pri, carried[cand])
        chosen = cand[np.lexsort(keys)[:s]]
        out[r, chosen] = True
        if carried is not None:
            carried[chosen] += 1
    return out


def _apply(state: _State, src: np.ndarray, dst: np.ndarray, ptr: np.ndarray,
           items: np.ndarray, index: np.ndarray) -> None:
    """Deliver a round's messages: receivers learn the items (usable next round).

    Messages go in blocks of about :data:`BLOCK` items (two int64 indices an item)."""
    for x, y in spans(ptr, 0, len(dst), BLOCK):
        rows = np.repeat(dst[x:y], np.diff(ptr[x:y + 1]))
        state.K[rows, index[items[ptr[x]:ptr[y]]]] = True


def _round(state: _State, matcher: str, tau: float | None,
           suppress: np.ndarray | None = None) -> tuple[tuple, np.ndarray]:
    """One ROUND_HEURISTIC: weights, matching (``suppress``: edges forced to 0), plan."""
    w = state.weights_of()[0]
    if suppress is not None:
        w[suppress] = 0.0
    mate = _match(state.g, w, matcher, state.rank)
    return _plan(state, mate, tau), mate


def _cost(state: _State) -> float:
    """``cost(D)``: distances summed over items and nodes (the look-ahead's measure)."""
    if state.done():
        return 0.0
    return float(_State.weights_of(state)[2]) if state.weights == "bfs" else float(
        (~state.K).sum())


def _lookahead_round(state: _State, matcher: str, tau: float | None, depth: int, rnd: int,
                     index: np.ndarray, candidates: int, salt: tuple | None) -> tuple:
    """Best of a few candidate matchings, judged ``depth`` rounds later."""
    base, mate = _round(state, matcher, tau)
    rng = np.random.default_rng(rnd if salt is None else (*salt, rnd))
    e = state.g.edges
    used = np.flatnonzero(mate[e[:, 0]] == e[:, 1])
    best_key, best = None, base
    for c in range(candidates):
        plan = base
        if c:
            k = max(1, len(used) // 10)
            plan = _round(state, matcher, tau, rng.choice(used, size=min(k, len(used)),
                                                          replace=False))[0]
        trial = state.copy()
        _apply(trial, *plan, index)
        played = 0
        while played < depth and not trial.done():
            _apply(trial, *_round(trial, matcher, tau)[0], index)
            played += 1
        key = (played if trial.done() else depth + 1, _cost(trial))
        if best_key is None or key < best_key:
            best_key, best = key, plan
    return best


def _run(state: _State, matcher: str, tau: float | None, lookahead: int, candidates: int,
         salt: tuple | None, index: np.ndarray, limit: int, decay: tuple | None = None,
         deadline: float | None = None) -> list[tuple]:
    """Rounds ``(src, dst, item_ptr, items)`` until the primitive completes.

    ``decay = (end, factor)`` lowers ``Dist_Exp`` after every round towards ``end``:
    ``end + (dist_exp - end) * factor^t`` in round ``t + 1`` (the paper: "better
    results are achieved when Dist_Exp decreases from round to round")."""
    rounds = []
    start = state.dist_exp
    while not state.done():
        if len(rounds) >= limit:
            raise ValueError(f"no completion within {limit} rounds")
        if deadline is not None and time.process_time() > deadline:
            raise OutOfTime(f"stopped after {len(rounds)} rounds")
        if decay is not None:
            end, factor = decay
            state.dist_exp = end + (start - end) * factor ** len(rounds)
        if lookahead:
            plan = _lookahead_round(state, matcher, tau, lookahead, len(rounds) + 1, index,
                                    candidates, salt)
        else:
            plan = _round(state, matcher, tau)[0]
        _apply(state, *plan, index)
        rounds.append(plan)
    return rounds


def matching_schedule(topo: Topology, *, primitive: str = "gossip", root: int | None = None,
                      tau: float | None = None, weights: str = "bfs", dist_exp: float = 4.0,
                      matcher: str = "auto", lookahead: int = 0, num_exp: float | None = None,
                      tries: int = 1, seed: int = 0, first_try: int = 0,
                      candidates: int = CANDIDATES,
                      max_rounds: int | None = None, dist_exp_end: float | None = None,
                      dist_decay: float = 0.9, deadline: float | None = None,
                      split: bool = False) -> Schedule:
    """Telephone (``F1``) gossip or broadcast schedule by the matching heuristic.

    Parameters
    ----------
    topo : Topology
        Any connected topology.
    primitive : {"gossip", "broadcast"}
    root : int, optional
        The broadcast root.
    tau : float, optional
        Linear-cost model with this ratio of transfer to start-up cost; None is
        the unit-cost model (every call exchanges everything new).
    weights : {"bfs", "potential"}
        The paper's BFS approach or potential approach (section 4.1).
    dist_exp : float
        ``Dist_Exp`` of the paper's weight (9); it reports 0.25-60 useful,
        larger for larger graphs.
    matcher : {"auto", "exact", "greedy", "networkx"}
    lookahead : int
        Rounds of look-ahead (0: none).
    num_exp : float, optional
        None: split each node's ``dist^Dist_Exp`` over its border edges by
        shortest-path counts. A number: the paper's equation (9) literally, every
        edge of ``bce_v`` gets ``dist^Dist_Exp / |bce_v|^num_exp`` (slower).
    tries : int
        Runs of the heuristic; the first breaks ties between equal-weight edges
        by edge id (the paper's "natural ordering"), the others by a random
        permutation of the edges drawn from ``seed`` (and draw the look-ahead's
        suppressed edges from it). The best result (least ``R + tau S``, then
        least S) is returned: deterministic for a given ``seed``.
    seed : int
    first_try : int
        Number of the first run: ``tries`` runs ``first_try, first_try + 1, ...``
        (run 0 is the natural ordering, run ``i > 0`` the tie order drawn from
        ``(seed, i)``), so restarts one run at a time continue one sequence.
    candidates : int
        Matchings compared per round with look-ahead (the paper: up to ten).
    max_rounds : int, optional
        Give up after this many rounds (default ``2n + 8``).
    dist_exp_end : float, optional
        Lower ``Dist_Exp`` round by round from ``dist_exp`` towards this value:
        round ``t`` uses ``end + (dist_exp - end) * dist_decay^(t-1)``.
    dist_decay : float
        The factor of that decay, in ``(0, 1]``.
    deadline : float, optional
        A ``time.process_time()`` value (CPU seconds of this process): past it,
        the run stops between rounds
        with :class:`OutOfTime`.
    split : bool
        Linear cost only: superpacket splitting. Where the ``s_opt`` cut leaves a
        sender part of its new items, senders that hold the same new items divide
        them between their calls (each takes first the items fewest of the round's
        messages carry), as the holders of a superpacket do in the paper's Lemma 2,
        instead of every one sending the same top-priority part.

    Returns
    -------
    Schedule
        Model ``F1``, ``p = None``; check it with
        :func:`pipegossip.model.schedules.validate.validate`.

    Raises
    ------
    ValueError
        Bad parameters, a disconnected topology, or no completion in
        ``max_rounds`` rounds.
    OutOfTime
        Past ``deadline``.
    """
    if primitive not in ("gossip", "broadcast"):
        raise ValueError(f"primitive must be gossip or broadcast, got {primitive!r}")
    if weights not in WEIGHTINGS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTINGS)}, got {weights!r}")
    if matcher not in MATCHERS:
        raise ValueError(f"matcher must be one of {', '.join(MATCHERS)}, got {matcher!r}")
    if tau is not None and not tau >= 0:
        raise ValueError(f"tau must be >= 0, got {tau}")
    if split and tau is None:
        raise ValueError("split (superpacket splitting) is for the linear-cost model: give tau")
    if not dist_exp >= 0 or lookahead < 0 or (num_exp is not None and not num_exp >= 0):
        raise ValueError("dist_exp, num_exp and lookahead must be >= 0")
    if tries < 1 or candidates < 1 or first_try < 0:
        raise ValueError(f"tries and candidates must be >= 1 and first_try >= 0, got {tries}, "
                         f"{candidates} and {first_try}")
    if dist_exp_end is not None and not (dist_exp_end >= 0 and 0 < dist_decay <= 1):
        raise ValueError("dist_exp_end must be >= 0 and dist_decay in (0, 1]")
    decay = None if dist_exp_end is None else (dist_exp_end, dist_decay)
    n = topo.n
    if primitive == "broadcast":
        if root is None or not 0 <= root < n:
            raise ValueError(f"broadcast needs a root in 0..{n - 1}, got {root!r}")
        items = np.array([root])
    elif root is not None:
        raise ValueError("gossip has no root")
    else:
        items = np.arange(n)
    index = np.zeros(n, np.int64)
    index[items] = np.arange(len(items))
    graph = _Graph(topo)
    limit = 2 * n + 8 if max_rounds is None else max_rounds
    best_key, best = None, None
    for attempt in range(first_try, first_try + tries):
        rank = salt = None
        if attempt:
            salt = (seed, attempt)
            rank = np.random.default_rng(salt).permutation(graph.m)
        state = _State(graph, items, weights, dist_exp, num_exp, rank)
        state.split = split
        rounds = _run(state, matcher, tau, lookahead, candidates, salt, index, limit, decay,
                      deadline)
        R = len(rounds)
        S = sum(int(np.diff(r[2]).max()) if len(r[0]) else 0 for r in rounds)
        key = (R + (tau or 0.0) * S, S)
        if best_key is None or key < best_key:
            best_key, best = key, rounds
    src, dst = ([r[i] for r in best] for i in (0, 1))
    dptr = [np.diff(r[2]) for r in best]
    round_ptr = np.concatenate([[0], np.cumsum([len(r[0]) for r in best])]).tolist()
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, np.int64))
    sizes = cat(dptr)
    item_ptr = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=item_ptr[1:])
    m = len(sizes)
    # the schedule's int64 item ids, filled round by round while each round's int32
    # ids are let go: a 22,528-node gossip peaks at 4 + 2 GB here, not 4 + 4 + 4
    del rounds, state  # the last run's plans and knowledge, when another run won
    pieces = [r[3] for r in best]
    best = None
    msg_items = join_ids(pieces, int(item_ptr[-1]))
    cost = "unit cost" if tau is None else f"linear cost tau={tau:g}"
    how = (f"Beier and Sibeyn matching heuristic: {weights} weights, dist_exp={dist_exp:g}"
           + ("" if decay is None else f" lowered towards {decay[0]:g} by {decay[1]:g} per round")
           + f", {matcher} matching, {cost}, lookahead={lookahead}"
           + ("" if num_exp is None else f", num_exp={num_exp:g}")
           + (", superpackets split" if split else "")
           + ("" if tries == 1 and not first_try else
              f", best of {tries} tie orders (seed {seed}"
              + (f", from run {first_try})" if first_try else ")")))
    return Schedule(topology=topo, model="F1", p=None, round_ptr=np.array(round_ptr),
                    src=cat(src), dst_ptr=np.arange(m + 1), dst=cat(dst), item_ptr=item_ptr,
                    items=msg_items, primitive=primitive,
                    root=root if primitive == "broadcast" else None,
                    origin={"algorithm": "matching", "source": how})
