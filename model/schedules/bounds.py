"""Lower (and a few upper) bounds that schedules are measured against.

Every bound carries its source as a string, so tables and ``check`` output
can say where a number comes from. A bound holds only for the model it was
derived under: :func:`bounds_for` lists only those that hold for a schedule's
model, topology and primitive (an all-port schedule beats the one-receive
bounds, so they are not shown for it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .distances import degrees, diameter, eccentricity
from .ir import Schedule

__all__ = ["Bound", "h1_gossip_rounds", "port_gossip_rounds", "telephone_gossip_rounds",
           "telephone_min_calls", "packet_split", "packet_calls_lower", "packet_calls_upper",
           "hstar_rounds", "polling_rounds", "polling_messages", "polling_hypercube_messages",
           "linear_cost_steps", "allport_gossip_rounds", "combining_rounds",
           "bounds_for", "round_bound", "SINGLE_RECEIVE"]

#: Models in which a node receives at most one message per round.
SINGLE_RECEIVE = ("H1", "F1", "port")


@dataclass(frozen=True)
class Bound:
    """``metric >= value`` (``kind = "lower"``) or ``<=`` (``"upper"``)."""

    metric: str
    value: float
    source: str
    kind: str = "lower"

    def __str__(self) -> str:
        op = ">=" if self.kind == "lower" else "<="
        v = int(self.value) if float(self.value).is_integer() else round(self.value, 2)
        return f"{self.metric} {op} {v} ({self.source})"


def h1_gossip_rounds(n: int, h: int = 1) -> Bound:
    """H1, one item per message, complete graph: ``2h(n-1)`` (n even), ``2hn`` (n odd).

    ``h n (n-1)`` transfers each occupy two nodes; at most ``floor(n/2)``
    transfers fit in a round.
    """
    value = 2 * h * (n - 1) if n % 2 == 0 else 2 * h * n
    return Bound("R", value, "H1 p=1: n(n-1)h transfers, floor(n/2) per round "
                 "(pipelined-gossiping paper's physical limit)")


def port_gossip_rounds(n: int, h: int = 1) -> Bound:
    """Crossbar ports, one item per message: every node receives ``h(n-1)`` items."""
    return Bound("R", h * (n - 1), "port p=1: each node receives h(n-1) items, one per round")


def telephone_gossip_rounds(n: int) -> Bound:
    """F1, unlimited packets: ``ceil(log2 n)``, plus one for odd n."""
    return Bound("R", math.ceil(math.log2(n)) + n % 2,
                 "telephone model: ceil(log2 n) + odd(n) (Bavelas; Knodel 1975)")


def telephone_min_calls(n: int) -> Bound:
    """F1, unlimited packets: ``2n - 4`` calls for n >= 4 (1 for n=2, 3 for n=3)."""
    value = {2: 1, 3: 3}.get(n, 2 * n - 4)
    return Bound("calls", value, "minimum calls 2n-4 for n>=4 (Tijdeman; Baker-Shostak 1972)")


_BGP = "Bermond, Gargano, Perennes, Optimal sequential gossiping by short messages (1998)"


def packet_split(n: int, p: int) -> tuple[int, int]:
    """``n = hp + k`` with ``h >= 0`` and ``2 <= k <= p + 1`` (the short-messages paper's notation)."""
    k = (n - 2) % p + 2
    return (n - k) // p, k


def packet_calls_lower(n: int, p: int) -> Bound:
    """F1 with packets of at most ``p`` items: the calls lower bounds (1) and (2).

    (1): ``n^2/(2p) + (p-2)n/(2p)``; (2) for ``p >= 2``, ``n >= p + 2``,
    ``n = hp + k``: ``n^2/(2p) + (1 - k/(2p) - 1/(2(k-1))) n`` (Theorem 2.1).
    For ``p = 1``, (1) is ``n(n-1)/2``, which is exact; for ``n <= p + 1`` the
    packet limit binds nothing and ``2n - 4`` is exact. The largest of (1),
    (2) and ``2n - 4`` (which holds for any packet size and is the largest
    when n is small against p, e.g. n = 6, p = 4) is returned, rounded up.
    """
    if n <= p + 1:
        return Bound("calls", {2: 1, 3: 3}.get(n, 2 * n - 4),
                     f"n <= p+1: the unlimited case, 2n-4 ({_BGP})")
    one = n * n / (2 * p) + (p - 2) * n / (2 * p)
    best, src = one, f"calls bound (1) of {_BGP}"
    if p >= 2:
        _, k = packet_split(n, p)
        two = n * n / (2 * p) + (1 - k / (2 * p) - 1 / (2 * (k - 1))) * n
        if two > best:
            best, src = two, f"calls bound (2), Theorem 2.1 of {_BGP}"
    if 2 * n - 4 > math.ceil(best - 1e-9):  # small n, large p: packets cannot beat 2n-4
        return Bound("calls", 2 * n - 4, "2n-4: no gossip uses fewer calls, whatever the "
                     "packet size (Tijdeman; Baker-Shostak 1972)")
    return Bound("calls", math.ceil(best - 1e-9), src)


def packet_calls_upper(n: int, p: int) -> Bound:
    """Theorem 3.1 of the short-messages paper: bound (2) plus ``p`` calls suffice.

    Stated for ``p >= 2``, ``n >= p + 2``; for ``p = 1`` and ``n <= p + 1``
    the exact values ``n(n-1)/2`` and ``2n - 4`` are returned instead.
    """
    if p == 1 or n <= p + 1:
        value = n * (n - 1) // 2 if p == 1 else {2: 1, 3: 3}.get(n, 2 * n - 4)
        return Bound("calls", value, f"exact for p = 1 or n <= p+1 ({_BGP})", "upper")
    _, k = packet_split(n, p)
    value = n * n / (2 * p) + (1 - k / (2 * p) - 1 / (2 * (k - 1))) * n + p
    return Bound("calls", math.floor(value + 1e-9), f"Theorem 3.1 of {_BGP}", "upper")


def hstar_rounds(name: str, n: int, p: int | None) -> Bound | None:
    """Hstar on a path or cycle: the tight bounds of the H* packet paper's Table 1.

    One exception: the triangle (cycle, N = 3) with p > 1. Table 1 gives 3
    rounds, but its Theorem 3.5 assumes N > 3 and 2 rounds suffice (the p = 1
    schedule). 2 is the true bound for every p: in one round each node would
    have to receive on both its edges, six receptions on three edges.
    """
    big = p is None or p > 1
    even = n % 2 == 0
    src = (f"H* model, {name}, p{'>1' if big else '=1'}: Table 1 of the H*-model "
           "bounded-packet paper (paths and cycles)")
    if name == "path":
        value = (n if even else n - 1) if big else (3 * n // 2 - 1 if even else 3 * (n - 1) // 2)
    elif name == "cycle" and n == 3:
        return Bound("R", 2, "H* model, triangle, any p: 2 rounds (one round would need six "
                     "receptions on three edges); Table 1's 3 for p>1 assumes N > 3")
    elif name == "cycle":
        value = (n // 2 + 1 if even else (n + 1) // 2 + 1) if big else n - 1
    else:
        return None
    return Bound("R", value, src)


_CKS = "Czygrinow, Karonski, Sunderam 1999"


def polling_rounds(n: int) -> Bound:
    """Polling on ``N = n`` nodes (H1): Proposition 2's round bound.

    With ``k = ceil(log2 N)``: ``2k`` if ``N = 2^k``, ``2k - 1`` if
    ``N >= 3 * 2^(k-2)``, ``2k - 2`` otherwise (computed by
    :func:`pipegossip.model.algorithms.polling.prop2_rounds`, which the
    polling generators also use).
    """
    from ..algorithms.polling import prop2_rounds  # the algorithms import schedules: lazy
    return Bound("R", prop2_rounds(n), f"polling: Proposition 2 of {_CKS} (2k rounds on "
                 "2^k nodes, 2k-1 or 2k-2 otherwise)")


def polling_messages(n: int) -> Bound | None:
    """Messages of polling in ``2k`` rounds on ``K_{2^k}``: ``2^k + 2^(k-3) + r - 1``.

    ``r = ceil((2^(k-3)+1)/3)``. This is the form of the algorithm and of the
    last line of Proposition 3's proof; the statement of Proposition 3 and
    the abstract print ``... - 2`` instead of ``... + r - 1``, one less, and
    exact search (SAT, ``pipegossip polling-search``) shows that is
    infeasible for k = 3 and 4, where ``+ r - 1`` is optimal.
    """
    if n & (n - 1) or n < 8:
        return None
    from ..algorithms.polling import prop3_messages
    k = n.bit_length() - 1
    return Bound("messages", prop3_messages(k), f"polling in 2k rounds on K_{{2^k}}: "
                 f"Proposition 3 of {_CKS}, in the corrected '+ r - 1' form (the printed "
                 "'- 2' form is one too low: SAT search, k = 3, 4)")


#: Exact minimum messages for polling Q_k in 2k rounds (SAT search, polling_search).
_HYPERCUBE_EXACT = {3: 9, 4: 18}


def polling_hypercube_messages(k: int) -> list[Bound]:
    """Message bounds for polling the hypercube ``Q_k`` in ``2k`` rounds.

    * upper: Proposition 8's algorithm, ``2^k + 3 * 2^(k-4) - 1`` messages
      (k >= 4; validated schedules have exactly this count);
    * lower: Corollary 6 (even k), ``ceil(2^k + 2^(k-1)/3 + sqrt(2^k)/4 - 4/3)``,
      **false for k = 4 and 6**: it exceeds the algorithm's 18 and 75. For
      those k (and k = 3) the exact optimum from SAT search is given where
      known (k = 3: 9, k = 4: 18); from k = 8 on, Corollary 6 lies below the
      algorithm and is reported as printed.
    """
    from ..algorithms.polling import cor6_bound, prop8_messages
    out = []
    if k >= 4:
        out.append(Bound("messages", prop8_messages(k), f"polling Q_k in 2k rounds: "
                         f"Proposition 8's algorithm, {_CKS}", "upper"))
    if k in _HYPERCUBE_EXACT:
        out.append(Bound("messages", _HYPERCUBE_EXACT[k], "polling Q_k in 2k rounds: exact "
                         "optimum by SAT search (Corollary 6 of "
                         f"{_CKS} fails for k = 4 and 6)"))
    elif k % 2 == 0 and k >= 8:
        out.append(Bound("messages", cor6_bound(k), f"polling Q_k in 2k rounds: Corollary 6 of "
                         f"{_CKS} (as printed; false for k = 4 and 6)"))
    return out


def linear_cost_steps(n: int, h: int = 1, least_degree: int = 1) -> Bound:
    """Linear-cost model: every node receives ``h(n-1)`` items, ``S >= h(n-1)``.

    That needs one message received per round (H1, F1, port). Under Hstar
    and Fstar a node ``v`` receives on up to ``deg(v)`` edges at once, each
    message at most the round's largest, so ``deg(v) * S >= h(n-1)``: pass
    the least degree ``least_degree`` for ``S >= ceil(h(n-1)/delta)``.
    """
    if least_degree <= 1:
        return Bound("S", h * (n - 1), "linear cost: S >= h(n-1) (Beier and Sibeyn, bound (1))")
    return Bound("S", -(-h * (n - 1) // least_degree),
                 f"linear cost, all-port: S >= ceil(h(n-1)/delta), least degree delta = "
                 f"{least_degree} (Beier and Sibeyn's bound (1) over delta receiving edges)")


def allport_gossip_rounds(s: Schedule, h: int = 1) -> Bound | None:
    """Hstar/Fstar gossip: ``R >= max(diameter, ceil(h(n-1) / (delta p)))``.

    The farthest token needs ``diameter`` hops, one per round; a node of
    least degree ``delta`` takes at most ``delta`` messages of at most ``p``
    items per round and needs ``h(n-1)`` items (for a regular graph of
    degree ``deg``, p = 1: ``max(diameter, ceil((n-1)/deg))``). None when the
    diameter is unknown (disconnected, or too large to compute).
    """
    diam = diameter(s.topology)
    if diam is None:
        return None
    delta = int(degrees(s.topology).min())
    if s.p is None:
        return Bound("R", diam, f"all-port ({s.model}), unlimited p: R >= diameter")
    per_round = -(-h * (s.n - 1) // (delta * s.p))
    return Bound("R", max(diam, per_round), f"all-port ({s.model}): R >= max(diameter "
                 f"{diam}, ceil(h(n-1)/(delta p)) = {per_round}), least degree delta = {delta}")


def combining_rounds(s: Schedule) -> list[Bound]:
    """Rounds of ``reduce`` and ``allreduce`` with combining.

    * every model: the farthest token needs one hop per round, so
      ``R >= ecc(root)`` for reduce (at least the radius) and
      ``R >= diameter`` for allreduce;
    * H1, F1, port (one message received per round): a node's set at most
      doubles per round, so ``R >= ceil(log2 n)``.
    """
    t, out = s.topology, []
    if s.primitive == "reduce":
        ecc = eccentricity(t, s.root)
        if ecc is not None:
            out.append(Bound("R", ecc, f"reduce: R >= eccentricity of root {s.root} "
                             "(>= radius): the farthest token moves one hop per round"))
    else:
        diam = diameter(t)
        if diam is not None:
            out.append(Bound("R", diam, "allreduce: R >= diameter: the farthest token "
                             "moves one hop per round"))
    if s.model in SINGLE_RECEIVE:
        out.append(Bound("R", math.ceil(math.log2(s.n)), f"{s.primitive}, {s.model}: one "
                         "message received per round, so a node's set at most doubles: "
                         "R >= ceil(log2 n)"))
    return out


def bounds_for(s: Schedule, h: int = 1) -> list[Bound]:
    """The bounds that apply to ``s`` (R bound first when there is one)."""
    n, out = s.n, []
    topo = s.topology.name
    if s.primitive in ("reduce", "allreduce"):
        return combining_rounds(s)
    if s.primitive == "gossip":
        if s.model == "H1" and s.p == 1 and topo == "complete":
            out.append(h1_gossip_rounds(n, h))
        elif s.model == "port" and s.p == 1 and topo == "complete":
            out.append(port_gossip_rounds(n, h))
        elif s.model == "F1":
            if h == 1:
                out.append(telephone_gossip_rounds(n))
            if s.p is None and h == 1:
                out.append(telephone_min_calls(n))
            elif s.p is not None and h == 1:
                out += [packet_calls_lower(n, s.p), packet_calls_upper(n, s.p)]
        elif s.model == "Hstar":
            b = hstar_rounds(topo, n, s.p)
            if b and h == 1:
                out.append(b)
        if s.model in SINGLE_RECEIVE:
            out.append(linear_cost_steps(n, h))
        else:
            b = allport_gossip_rounds(s, h)
            if b:
                out.append(b)
            out.append(linear_cost_steps(n, h, int(degrees(s.topology).min())))
    elif s.primitive == "polling" and s.model == "H1" and topo == "complete":
        out.append(polling_rounds(n))
        b = polling_messages(n)
        if b:
            out.append(b)
    elif s.primitive == "polling" and s.model == "H1" and topo == "hypercube":
        out.append(polling_rounds(n))  # Proposition 2 holds on any graph of n nodes
        out += polling_hypercube_messages(n.bit_length() - 1)
    return out


def round_bound(s: Schedule, h: int = 1) -> Bound | None:
    """The largest lower bound on R for ``s``, or None when none is known here."""
    found = [b for b in bounds_for(s, h) if b.metric == "R" and b.kind == "lower"]
    return max(found, key=lambda b: b.value) if found else None
