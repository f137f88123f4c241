"""Lower (and a few upper) bounds that schedules are measured against.

Every bound carries its source as a string, so tables and ``check`` output
can say where a number comes from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .ir import Schedule

__all__ = ["Bound", "h1_gossip_rounds", "port_gossip_rounds", "telephone_gossip_rounds",
           "telephone_min_calls", "packet_calls_lower", "packet_calls_upper",
           "hstar_rounds", "polling_rounds", "polling_messages", "linear_cost_steps",
           "bounds_for", "round_bound"]


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


def _split(n: int, p: int) -> tuple[int, int]:
    """``n = hp + k`` with ``2 <= k <= p + 1``."""
    k = (n - 2) % p + 2
    return (n - k) // p, k


def packet_calls_lower(n: int, p: int) -> Bound:
    """F1 with packets of at most ``p`` items: the calls lower bounds (1) and (2).

    (1): ``n^2/(2p) + (p-2)n/(2p)``; (2) for ``p >= 2``, ``n >= p + 2``,
    ``n = hp + k``: ``n^2/(2p) + (1 - k/(2p) - 1/(2(k-1))) n``.
    """
    if n <= p + 1:
        return Bound("calls", {2: 1, 3: 3}.get(n, 2 * n - 4),
                     "n <= p+1: the unlimited case, 2n-4 (Bermond, Gargano, Perennes 1998)")
    one = n * n / (2 * p) + (p - 2) * n / (2 * p)
    best, src = one, "calls bound (1) of Bermond, Gargano, Perennes 1998"
    if p >= 2:
        _, k = _split(n, p)
        two = n * n / (2 * p) + (1 - k / (2 * p) - 1 / (2 * (k - 1))) * n
        if two > best:
            best, src = two, "calls bound (2), Theorem 2.1 of Bermond, Gargano, Perennes 1998"
    return Bound("calls", math.ceil(best - 1e-9), src)


def packet_calls_upper(n: int, p: int) -> Bound:
    """Theorem 3.1 of Bermond, Gargano, Perennes: bound (2) plus ``p`` calls suffice."""
    _, k = _split(n, p)
    value = n * n / (2 * p) + (1 - k / (2 * p) - 1 / (2 * max(k - 1, 1))) * n + p
    return Bound("calls", math.floor(value), "Theorem 3.1 of Bermond, Gargano, Perennes 1998", "upper")


def hstar_rounds(name: str, n: int, p: int | None) -> Bound | None:
    """Hstar on a path or cycle: the tight bounds of the H* packet paper's Table 1."""
    big = p is None or p > 1
    even = n % 2 == 0
    if name == "path":
        value = (n if even else n - 1) if big else (3 * n // 2 - 1 if even else 3 * (n - 1) // 2)
    elif name == "cycle":
        value = (n // 2 + 1 if even else (n + 1) // 2 + 1) if big else n - 1
    else:
        return None
    return Bound("R", value, f"H* model, {name}, p{'>1' if big else '=1'}: Table 1 of the "
                 "H*-model bounded-packet paper (paths and cycles)")


def polling_rounds(n: int) -> Bound:
    """Polling on ``K_n``: question out and answers back, ``2 ceil(log2 n)`` rounds."""
    return Bound("R", 2 * math.ceil(math.log2(n)), "polling: 2k rounds on K_{2^k} "
                 "(Czygrinow, Karonski, Sunderam 1999, Lemma 2)")


def polling_messages(n: int) -> Bound | None:
    """Messages of polling in ``2k`` rounds on ``K_{2^k}`` (Proposition 3)."""
    if n & (n - 1) or n < 8:
        return None
    k = n.bit_length() - 1
    value = 2 ** k + 2 ** (k - 3) + math.ceil((2 ** (k - 3) + 1) / 3) - 2
    return Bound("messages", value, "polling in 2k rounds on K_{2^k}: Proposition 3 of "
                 "Czygrinow, Karonski, Sunderam 1999")


def linear_cost_steps(n: int, h: int = 1) -> Bound:
    """Linear-cost model: every node receives ``h(n-1)`` items, ``S >= h(n-1)``."""
    return Bound("S", h * (n - 1), "linear cost: S >= h(n-1) (Beier and Sibeyn, bound (1))")


def bounds_for(s: Schedule, h: int = 1) -> list[Bound]:
    """The bounds that apply to ``s`` (R bound first when there is one)."""
    n, out = s.n, []
    topo = s.topology.name
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
        out.append(linear_cost_steps(n, h))
    elif s.primitive == "polling" and s.model == "H1" and topo == "complete":
        out.append(polling_rounds(n))
        b = polling_messages(n)
        if b:
            out.append(b)
    return out


def round_bound(s: Schedule, h: int = 1) -> Bound | None:
    """The bound on R for ``s``, or None when none is known here."""
    return next((b for b in bounds_for(s, h) if b.metric == "R" and b.kind == "lower"), None)
