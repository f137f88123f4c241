"""One processor's controller, generated from its composer program.

The composer (:func:`pipegossip.model.compose_all`, the paper's Algorithm 1)
gives each processor an automaton of 2(N-1) couples. The controller is that
automaton in hardware: one flip-flop per couple (one-hot), each couple's
peer a constant. One-hot keeps every question the fabric asks of a
processor ("is p at S_j?", "is p at R_i?") a bare flip-flop output, so the
base ``ordered`` fabric fires transfer i->j with a single AND and needs no
decoder on any path.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.composer import Op, Program
from ...model.runtable import IDLE, R, S, WR, WS
from ..params import check_int
from ..bits import any_of, first_set, one_hot_to_binary, peer_width, session_width

__all__ = ["Controller"]


class Controller(wiring.Component):
    """The automaton of one processor (docs/reference.md).

    States are the program's couples in order, one flip-flop each; a run
    walks them once per session and then idles (all flip-flops low). The
    couple's peer is a constant of its state. Under Algorithm 2
    (``substitute``) the send couples only count sends; a mask of served
    order positions picks the target (the first unserved entry of the
    order) and the substitute.

    Parameters
    ----------
    program : Program
        From :func:`pipegossip.model.compose_all`. Receive couples without
        a peer mean the ``any`` discipline.
    sessions : int
        Sessions to run before idling (at least 1).
    substitute : bool
        Algorithm 2, permutation scheduling.
    local : bool
        Decide each transfer inside the controller from ``offer`` and
        ``wanted`` instead of waiting for ``grant``/``received``. Only for
        arbitration-free fabrics (``ordered``, no Algorithm 2, no binding
        channel limit), where a transfer i->j fires exactly when i is at
        S_j and j at R_i. Each couple's next state then depends on itself,
        the couple before it and their partners' flags: one LUT level
        instead of a fabric-wide grant network (see docs/hw.md).

    Attributes
    ----------
    start : In(1)
        Enter the first couple of session 0 at the next rising edge. Only
        valid while idle (``active`` low), where every couple is off.
    hold : In(1)
        Test input: while high the processor neither sends nor receives.
    offer : In(N)
        Bit j: processor j can take this processor's word this cycle
        (computed by :class:`~pipegossip.hw.fsm.arbiter.Resolver`).
    wanted : In(N)
        ``local`` only: bit j is processor j's ``request`` bit for this
        processor (j is at S_this and not held).
    grant : In(1)
        This processor's ``claim`` fires at the rising edge ending the cycle.
    received : In(1)
        A word for this processor arrives at the rising edge ending the cycle.
    source : In(PW)
        The sender of that word (used for the trace under ``any`` only).
    request : Out(N)
        One-hot current target while sending and not held, else 0.
    claim : Out(N)
        One-hot receiver this processor would send to, given ``offer``: the
        target if offered, else (``substitute``) the first offered unserved
        entry of the order; 0 if none.
    accepting : Out(1)
        In a receive couple and not held.
    awaits : Out(N)
        ``ordered`` only (else 0): one-hot awaited sender while accepting.
    parity : Out(1)
        Lowest bit of the session number (0 when ``sessions`` is 1).
    session : Out(SW)
        The session number.
    active : Out(1)
        In some couple (not idle); registered (latency 0 from the state).
    acts : Out(1)
        This processor sends or receives this cycle.
    next_word : Out(1)
        This cycle's action ends a session and another follows: the
        processor takes its next word at the rising edge ending the cycle.
    action : Out(3)
        docs/reference.md "Trace codes" trace code of this cycle.
    peer : Out(PW)
        docs/reference.md "Trace codes" peer of this cycle.

    Notes
    -----
    Outputs are combinational from the state and this cycle's inputs
    (latency 0); the state moves at the rising edge ending a cycle in which
    ``grant`` or ``received`` is high.
    """

    def __init__(self, program: Program, *, sessions: int = 1, substitute: bool = False,
                 local: bool = False):
        if not isinstance(program, Program):
            raise TypeError(f"Controller program must be a pipegossip.model.Program, "
                            f"not {program!r}")
        check_int("Controller", "sessions", sessions, 1)
        if not isinstance(substitute, bool):
            raise TypeError(f"Controller substitute must be a bool, not {substitute!r}")
        if local and (substitute or any(c.peer is None for c in program.couples)):
            raise ValueError("Controller local=True needs the ordered discipline "
                             "without substitution")
        n = program.n
        self._program = program
        self._sessions = sessions
        self._substitute = substitute
        self._ordered = all(c.peer is not None for c in program.couples)
        self._local = bool(local)
        pw = peer_width(n)
        super().__init__({
            "start": In(1),
            "hold": In(1),
            "offer": In(n),
            "wanted": In(n),
            "grant": In(1),
            "received": In(1),
            "source": In(pw),
            "request": Out(n),
            "claim": Out(n),
            "accepting": Out(1),
            "awaits": Out(n),
            "parity": Out(1),
            "session": Out(session_width(sessions)),
            "active": Out(1),
            "acts": Out(1),
            "next_word": Out(1),
            "action": Out(3),
            "peer": Out(pw),
        })

    @property
    def program(self) -> Program:
        return self._program

    def elaborate(self, platform) -> Module:
        m = Module()
        prog = self._program
        n = prog.n
        pw = peer_width(n)
        couples = prog.couples
        # The couples' flip-flops as one vector (bit k: couple k is on), so
        # the next-state logic below is a handful of vector operations, not
        # a cell per couple: the same gates, but the generated Verilog, and
        # every simulator's model of it, shrink several times at large N.
        state = Signal(len(couples), name="state")
        at = [state[k] for k in range(len(couples))]
        send_at = {c.peer: at[k] for k, c in enumerate(couples) if c.op is Op.SEND}
        recv_states = [at[k] for k, c in enumerate(couples) if c.op is Op.RECV]

        is_send = Signal()
        is_recv = Signal()
        # `live` equals "some couple is on", kept as its own flip-flop so the
        # fabric's `busy` (and `start` gating) is an OR of N flip-flops, not
        # of all 2N(N-1) couples: that OR fed every state flip-flop and was
        # the critical path on iCE40 and ECP5.
        live = Signal(name="live")
        m.d.comb += [
            is_send.eq(any_of(list(send_at.values()))),
            is_recv.eq(any_of(recv_states)),
            self.active.eq(live),
            self.accepting.eq(is_recv & ~self.hold),
        ]
        if self._ordered:
            recv_at = {c.peer: at[k] for k, c in enumerate(couples) if c.op is Op.RECV}
            m.d.comb += self.awaits.eq(Cat(*[(recv_at[i] & ~self.hold) if i in recv_at
                                             else Const(0, 1) for i in range(n)]))

        last_session = Signal()
        if self._sessions > 1:
            sess = Signal(session_width(self._sessions), name="sess")
            m.d.comb += [
                self.session.eq(sess),
                self.parity.eq(sess[0]),
                last_session.eq(sess == self._sessions - 1),
            ]
        else:
            m.d.comb += last_session.eq(1)

        # The target, one-hot over processors (unmasked by hold: a held
        # sender still shows WS with its target).
        target = Signal(n)
        order = prog.order
        if self._substitute:
            # Bit k: order[k] served this session. The target is the first
            # unserved entry; the claim the first unserved entry on offer.
            served = Signal(n - 1, name="served")
            target_pos = first_set(m, [~served[k] for k in range(n - 1)], "target")
            pick_pos = first_set(m, [~served[k] & self.offer[order[k]] for k in range(n - 1)],
                                 "pick")
            pick_bits = [Const(0, 1)] * n
            target_bits = [Const(0, 1)] * n
            for k, j in enumerate(order):
                pick_bits[j] = pick_pos[k]
                target_bits[j] = target_pos[k]
            m.d.comb += [
                target.eq(Cat(*target_bits) & is_send.replicate(n)),
                self.claim.eq(Cat(*pick_bits) & (is_send & ~self.hold).replicate(n)),
            ]
        else:
            m.d.comb += [
                target.eq(Cat(*[send_at.get(j, Const(0, 1)) for j in range(n)])),
                self.claim.eq(self.request & self.offer),
            ]
        m.d.comb += self.request.eq(target & (~self.hold).replicate(n))

        if self._local:
            # fire[k]: couple k acts this cycle; its partner's matching
            # couple is on (and neither side is held).
            partner = Cat(*[self.offer[c.peer] if c.op is Op.SEND else self.wanted[c.peer]
                            for c in couples])
            fires = Signal(len(couples), name="fire")
            m.d.comb += fires.eq(state & partner & (~self.hold).replicate(len(couples)))
            fire = [fires[k] for k in range(len(couples))]
            sent = any_of([f for f, c in zip(fire, couples) if c.op is Op.SEND])
            got = any_of([f for f, c in zip(fire, couples) if c.op is Op.RECV])
        else:
            sent, got = self.grant, self.received
        advance = sent | got
        m.d.comb += self.acts.eq(advance)
        last_fires = fire[-1] if self._local else at[-1] & advance
        m.d.comb += self.next_word.eq(last_fires & ~last_session)
        # `start` only comes while idle (the fabric gates it with ~busy), and
        # an idle controller has every couple off, an empty served mask and
        # no grant or word in flight. So `start` need only switch the first
        # couple on (and zero the session count); the other couples and the
        # served mask do not depend on it, which keeps `start` off their
        # next-state logic.
        finish = last_fires & last_session
        with m.If(self.start):
            m.d.sync += [at[0].eq(1), live.eq(1)]
            if self._sessions > 1:
                m.d.sync += sess.eq(0)
        with m.Elif(finish):
            m.d.sync += live.eq(0)
        if self._sessions > 1:
            with m.If(~self.start & last_fires):
                m.d.sync += sess.eq(sess + 1)
        # The last couple wraps to the first only if another session follows.
        if self._local:
            # One-hot, so only the couple that is on can move: couple k's next
            # state depends on its own flag and fire and the fire of couple
            # k-1 (one LUT), not on a processor-wide `advance`. Couple 0
            # follows the last one's fire when another session follows, and
            # `start` (above) switches it on.
            moved = (state & ~fires) | Cat(fire[-1] & ~last_session, fires[:-1])
            with m.If(~self.start):
                m.d.sync += at[0].eq(moved[0])
            m.d.sync += state[1:].eq(moved[1:])
        else:
            with m.If(~self.start & advance):
                # The whole one-hot vector moves one couple on.
                m.d.sync += state.eq(Cat(at[-1] & ~last_session, state[:-1]))
                if self._substitute:
                    with m.If(at[-1]):
                        m.d.sync += served.eq(0)
                    with m.Elif(self.grant):
                        m.d.sync += served.eq(served | Cat(*pick_pos))

        with m.If(is_send):
            m.d.comb += self.action.eq(Mux(sent, S, WS))
        with m.Elif(is_recv):
            m.d.comb += self.action.eq(Mux(got, R, WR))
        with m.Else():
            m.d.comb += self.action.eq(IDLE)

        # Peer (docs/reference.md "Trace codes"): constants where the couple names the peer.
        const_peer = one_hot_to_binary(
            [a for a, c in zip(at, couples) if c.peer is not None], pw,
            [c.peer for c in couples if c.peer is not None])
        if self._substitute:
            send_peer = Mux(self.grant, one_hot_to_binary(self.claim, pw),
                            one_hot_to_binary(target, pw))
        else:
            send_peer = const_peer
        if self._ordered:
            recv_peer = const_peer
        else:
            recv_peer = Mux(self.received, self.source, 0)
        if self._substitute or not self._ordered:
            m.d.comb += self.peer.eq(Mux(is_send, send_peer, recv_peer))
        else:
            m.d.comb += self.peer.eq(const_peer)
        return m
