"""Equivalence of the any+substitute resolution with the serial chain of the rule.

Under ``receive=any`` with Algorithm 2 (SPEC sections 4-5) a step is resolved
one sender at a time in increasing id: sender i sends to its target (the
first entry of its order it has not served this session) if that receiver
can take its word, else to the first unserved entry after the target that
can; a receiver can take i's word if no lower sender claimed it this step,
it is receiving, it is in i's session and it has not heard from i yet; with
a channel limit K only the first K senders that fire get a channel.

The miter puts two circuits side by side on the same free step state:

* the hardware: :class:`~pipegossip.hw.fsm.arbiter.Resolver` closed by the
  controllers' pick rule as the fabric wires it (each sender claims the
  first unserved entry of its order on offer, the lowest-set-bit network of
  :func:`pipegossip.hw.bits.first_set`), granted by the resolver;
* :class:`SerialChain`, the rule above written literally as nested
  if/else, one stage per sender, including the "has not heard from i" test
  that the hardware leaves out;

and asserts that both fire the same sender -> receiver pairs. The circuit
is combinational, so one step of bounded model checking covers every input.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cat, Const, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.config import RunConfig
from ..fsm.arbiter import Resolver
from ..bits import first_set
from .catalog import RESOLVER_MUTANTS

__all__ = ["SerialChain", "ResolverMiter", "RESOLVER_MUTANTS"]

class SerialChain(wiring.Component):
    """The reference: SPEC sections 4-5 for one step, one sender after another.

    Parameters
    ----------
    orders : list of list of int
        Each processor's broadcast order (N-1 entries).
    channels : int or None
        At most this many transfers in the step.

    Attributes
    ----------
    sending : In(N)
        Bit i: processor i is in a send couple.
    receiving : In(N)
        Bit j: processor j is in a receive couple.
    parity : In(N)
        Bit j: session parity of processor j (two processors are never more
        than one session apart, so equal parity means the same session).
    served : In(N-1).array(N)
        Bit k of ``served[i]``: ``orders[i][k]`` was served this session.
    heard : In(N).array(N)
        Bit i of ``heard[j]``: j has received i's word this session.
    fired : Out(N).array(N)
        One-hot receiver sender i sends to this step, or 0.
    """

    def __init__(self, orders: list[list[int]], channels: int | None = None):
        self._orders = [list(map(int, row)) for row in orders]
        self._channels = channels
        n = len(self._orders)
        super().__init__({
            "sending": In(n), "receiving": In(n), "parity": In(n),
            "served": In(n - 1).array(n), "heard": In(n).array(n),
            "fired": Out(n).array(n),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        orders = self._orders
        n = len(orders)
        claimed = Const(0, n)
        count = Const(0, 4)
        for i in range(n):
            order = orders[i]
            served = self.served[i]

            def can_take(j: int, claimed=claimed, i=i):
                return (~claimed[j] & self.receiving[j] & (self.parity[j] == self.parity[i])
                        & ~self.heard[j][i])

            choice = Signal(n, name=f"choice_{i}")
            room = Const(1) if self._channels is None else (count < self._channels)
            with m.If(self.sending[i] & room):
                # The target is the first unserved entry; the first k whose
                # entry is unserved wins this if/elif chain.
                for k in range(n - 1):
                    with (m.If if k == 0 else m.Elif)(~served[k]):
                        with m.If(can_take(order[k])):
                            m.d.comb += choice.eq(1 << order[k])
                        with m.Else():
                            # Algorithm 2: the first unserved entry after the
                            # target that can take the word.
                            for q in range(k + 1, n - 1):
                                with (m.If if q == k + 1 else m.Elif)(
                                        ~served[q] & can_take(order[q])):
                                    m.d.comb += choice.eq(1 << order[q])
            m.d.comb += self.fired[i].eq(choice)
            claimed = claimed | choice
            count = count + choice.any()
        return m


class ResolverMiter(wiring.Component):
    """The hardware resolution against :class:`SerialChain` (no ports).

    Parameters
    ----------
    config : RunConfig
        ``receive="any"``, ``substitute=True``; its orders, sessions and
        channel limit are used.
    mutant : str or None
        A name of :data:`RESOLVER_MUTANTS`.

    Notes
    -----
    Every input is free (``AnySeq``) under these assumptions, all true of a
    running fabric: no processor both sends and receives; a sender has an
    unserved entry left; nobody has heard from itself; and if receiver j
    has heard from sender i in the same session, i has served j (the same
    transfer, seen from both sides). Without sessions the parities are 0.
    """

    def __init__(self, config: RunConfig, mutant: str | None = None):
        if config.receive != "any" or not config.substitute:
            raise ValueError("the resolver miter needs receive=any and substitute")
        if mutant is not None and mutant not in RESOLVER_MUTANTS:
            raise ValueError(f"unknown resolver mutant {mutant!r}")
        self._config = config
        self._mutant = mutant
        super().__init__({})

    def elaborate(self, platform) -> Module:
        m = Module()
        cfg = self._config
        n = cfg.n
        orders = cfg.orders.tolist()
        m.d.comb += Assume(~ResetSignal("sync"))

        sending, receiving, parity = Signal(n), Signal(n), Signal(n)
        served = [Signal(n - 1, name=f"served_{i}") for i in range(n)]
        heard = [Signal(n, name=f"heard_{j}") for j in range(n)]
        m.d.comb += [sending.eq(AnySeq(n)), receiving.eq(AnySeq(n))]
        m.d.comb += parity.eq(AnySeq(n) if cfg.sessions > 1 else 0)
        for s in served + heard:
            m.d.comb += s.eq(AnySeq(len(s)))
        m.d.comb += Assume((sending & receiving) == 0)
        for i in range(n):
            pos = {j: k for k, j in enumerate(orders[i])}
            m.d.comb += [Assume(~sending[i] | ~served[i].all()), Assume(~heard[i][i])]
            for j in range(n):
                if j != i:
                    same = parity[i] == parity[j]
                    m.d.comb += Assume(~(heard[j][i] & same) | served[i][pos[j]])

        ref = m.submodules.reference = SerialChain(orders, cfg.channels)
        m.d.comb += [ref.sending.eq(sending), ref.receiving.eq(receiving), ref.parity.eq(parity)]
        m.d.comb += [ref.served[i].eq(served[i]) for i in range(n)]
        m.d.comb += [ref.heard[j].eq(heard[j]) for j in range(n)]

        res = m.submodules.resolver = Resolver(n, receive="any", substitute=True,
                                               sessions=cfg.sessions, channels=cfg.channels)
        m.d.comb += [res.accepting.eq(receiving), res.parity.eq(parity)]
        claims = []
        for i in range(n):
            order = list(orders[i])
            if self._mutant == "order-swap" and i == 0:
                order[0], order[1] = order[1], order[0]
            # The controller's rule: target = first unserved entry, claim =
            # first unserved entry on offer (the same answer as "target if
            # offered, else the first unserved one after it").
            target = first_set(m, [~served[i][k] for k in range(n - 1)], f"target_{i}")
            pick = first_set(m, [~served[i][k] & res.offer[i][order[k]] for k in range(n - 1)],
                             f"pick_{i}")
            claim = Signal(n, name=f"claim_{i}")
            request = Signal(n, name=f"request_{i}")
            m.d.comb += [
                claim.eq(Cat(*[pick[order.index(j)] if j != i else Const(0, 1)
                               for j in range(n)]) & sending[i].replicate(n)),
                request.eq(Cat(*[target[order.index(j)] if j != i else Const(0, 1)
                                 for j in range(n)]) & sending[i].replicate(n)),
                res.request[i].eq(request),
                res.awaits[i].eq(0),
            ]
            seen = Const(0, n) if (self._mutant == "chain-skip" and i == 0) else claim
            m.d.comb += res.claim[i].eq(seen)
            claims.append(claim)

        for i in range(n):
            fired = claims[i] & res.grant[i].replicate(n)
            m.d.comb += Assert(fired == ref.fired[i], f"sender {i}: same receiver as the chain")
        return m
