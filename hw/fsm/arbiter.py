"""Resolution within a step (docs/reference.md): who may send to whom.

The rules resolve senders one at a time in increasing id, each seeing
the claims of lower ids. Read literally that is an N-stage chain; this block
builds the same answer with as little of the chain as each configuration
needs:

* ``ordered``: a receiver waits for exactly one sender, so no two senders
  ever compete; the offer to sender i is the set of receivers awaiting i
  (wires only).
* ``any`` without Algorithm 2: each sender claims only its target, so a
  receiver goes to the lowest eligible sender aimed at it. "Claimed by a
  lower sender" is a prefix OR over the senders' requests, built as a
  log-depth parallel prefix.
* ``any`` with Algorithm 2: whether sender i may substitute receiver j
  depends on what lower senders picked, which depends on their offers: a
  true serial chain, one stage per sender (each stage a log-depth
  lowest-set-bit over the sender's order).
* channel limit K: the first K senders (by id) that can send get a channel;
  once K have, every higher sender is refused, so grants are the claims
  gated by a saturating prefix count, again log-depth.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.config import RECEIVE_DISCIPLINES
from ..bits import prefix_exclusive, thermometer_add
from ..params import check_int

__all__ = ["Resolver"]


class Resolver(wiring.Component):
    """Offers and channel grants for one step.

    Parameters
    ----------
    n : int
        Number of processors, at least 2.
    receive : str
        ``ordered`` or ``any`` (docs/reference.md "Receive disciplines").
    substitute : bool
        Algorithm 2 (docs/reference.md "Algorithm 2").
    sessions : int
        Sessions per run; above 1 a receiver only takes words of its own
        session, told apart by the session parity (two processors are never
        more than one session apart: finishing a session needs a word from
        every other processor in that session).
    channels : int or None
        At most this many transfers per step; None (or ``N // 2``, which
        no step can exceed) needs no limiter.

    Attributes
    ----------
    request : In(N).array(N)
        Per sender: one-hot current target while sending and not held.
    claim : In(N).array(N)
        Per sender: one-hot receiver it picks from its ``offer``.
    accepting : In(N)
        Bit j: processor j is in a receive couple and not held.
    awaits : In(N).array(N)
        ``ordered``: per receiver, one-hot awaited sender while accepting.
    parity : In(N)
        Bit j: session parity of processor j.
    offer : Out(N).array(N)
        Per sender: the receivers that can take its word this step, given
        the claims of lower senders.
    grant : Out(N)
        Bit i: sender i's claim fires at the rising edge ending the step.

    Notes
    -----
    Combinational, latency 0. ``offer[i]`` depends on ``claim[0..i-1]``
    only under ``any`` with Algorithm 2.
    """

    def __init__(self, n: int, *, receive: str = "ordered", substitute: bool = False,
                 sessions: int = 1, channels: int | None = None):
        check_int("Resolver", "n", n, 2)
        if receive not in RECEIVE_DISCIPLINES:
            raise ValueError(f"Resolver receive must be one of "
                             f"{', '.join(RECEIVE_DISCIPLINES)}, not {receive!r}")
        if not isinstance(substitute, bool):
            raise TypeError(f"Resolver substitute must be a bool, not {substitute!r}")
        check_int("Resolver", "sessions", sessions, 1)
        if channels is not None:
            check_int("Resolver", "channels", channels, 1, n // 2)
        self._n = n
        self._receive = receive
        self._substitute = substitute
        self._sessions = sessions
        self._channels = channels
        super().__init__({
            "request": In(n).array(n),
            "claim": In(n).array(n),
            "accepting": In(n),
            "awaits": In(n).array(n),
            "parity": In(n),
            "offer": Out(n).array(n),
            "grant": Out(n),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        n = self._n
        if self._receive == "ordered":
            for i in range(n):
                m.d.comb += self.offer[i].eq(Cat(*[self.awaits[j][i] for j in range(n)]))
        else:
            eligible = []
            for i in range(n):
                if self._sessions > 1:
                    same = ~(self.parity ^ self.parity[i].replicate(n))
                    eligible.append(self.accepting & same)
                else:
                    eligible.append(self.accepting)
            if self._substitute:
                # The serial chain: one stage per sender (module docstring).
                taken = Const(0, n)
                for i in range(n):
                    m.d.comb += self.offer[i].eq(eligible[i] & ~taken)
                    after = Signal(n, name=f"taken_after_{i}")
                    m.d.comb += after.eq(taken | self.claim[i])
                    taken = after
            else:
                wanted = [self.request[i] & eligible[i] for i in range(n)]
                taken = prefix_exclusive(m, wanted, lambda a, b: a | b, Const(0, n), "taken")
                for i in range(n):
                    m.d.comb += self.offer[i].eq(eligible[i] & ~taken[i])

        wins = [self.claim[i].any() for i in range(n)]
        limit = self._channels
        if limit is None or limit >= n // 2:
            m.d.comb += self.grant.eq(Cat(*wins))
        else:
            # Bit t of a count: at least t+1 lower senders can send.
            codes = [Cat(w, Const(0, limit - 1)) if limit > 1 else w for w in wins]
            before = prefix_exclusive(m, codes, thermometer_add(limit), Const(0, limit),
                                      "channels_used")
            m.d.comb += self.grant.eq(Cat(*[w & ~c[limit - 1] for w, c in zip(wins, before)]))
        return m
