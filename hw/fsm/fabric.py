"""The gossip fabric: N controllers, the resolver and the crossbar.

This is the pinned top-level interface (docs/hw.md): everything the
co-simulation, waveform and FPGA flows rely on is a port of :class:`Fabric`.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ...model.composer import compose_all
from ...model.config import RunConfig
from .arbiter import Resolver
from ..bits import count_ones, one_hot_to_binary, peer_width
from .controller import Controller
from .crossbar import Crossbar
from ..params import check_int
from ..ports import MAX_WIDTH, OUT, PORTS, Port, port_spec

__all__ = ["Fabric", "DeliverySignature", "Port", "fabric_ports", "fabric_signature"]


def DeliverySignature(n: int, sessions: int, width: int) -> wiring.Signature:
    """One processor's delivery port (all members Out), from :data:`~.ports.PORTS`."""
    return _group_signature("delivery", n, sessions, width)


def _group_signature(group: str, n: int, sessions: int, width: int) -> wiring.Signature:
    """The signature of one processor's member of a per-processor port group."""
    specs = [s for s in PORTS if s.group == group]
    return wiring.Signature({s.field: (Out if s.direction == OUT else In)(s.width(n, sessions, width))
                             for s in specs})


def fabric_ports(config: RunConfig, width: int = 8) -> list[Port]:
    """The fabric's top-level ports for ``config``, read off its built signature.

    Names are exactly those of the Verilog from
    :func:`pipegossip.hw.export.verilog_text`; the ``sync`` domain adds
    ``clk`` and ``rst``. Equal to :func:`pipegossip.hw.ports.ports` by
    construction (``tests/hw/test_hw_ports.py`` checks it against the Verilog).
    """
    signature = fabric_signature(config, width)
    return [Port("__".join(map(str, path)), "in" if member.flow == In else "out", len(value))
            for path, member, value in signature.flatten(signature.create())]


def _check(config: object, width: object) -> None:
    if not isinstance(config, RunConfig):
        raise TypeError(f"Fabric config must be a pipegossip.model.RunConfig, not {config!r}")
    check_int("Fabric", "width", width, 1, MAX_WIDTH)


def fabric_signature(config: RunConfig, width: int = 8) -> wiring.Signature:
    """The signature of :class:`Fabric` (its ports, seen from inside), built from ``PORTS``.

    Groups of per-processor ports become arrays of sub-signatures; the
    ``words`` group is Amaranth's ``stream.Signature`` (payload, valid in;
    ready out), so stream helpers and ``wiring.connect`` to a stream work.
    """
    _check(config, width)
    n, sessions = config.n, config.sessions
    members: dict[str, wiring.Member] = {}
    for spec in PORTS:
        if spec.group in members:
            continue
        if spec.field is None:
            member = (Out if spec.direction == OUT else In)(spec.width(n, sessions, width))
        elif spec.group == "words":
            member = In(stream.Signature(port_spec("words__payload").width(n, sessions, width)))
        else:
            member = Out(_group_signature(spec.group, n, sessions, width))
        members[spec.group] = member.array(n) if spec.per_processor else member
    return wiring.Signature(members)


class Fabric(wiring.Component):
    """A crossbar gossip fabric for one configuration (docs/reference.md).

    Parameters
    ----------
    config : RunConfig
        Orders, receive discipline, Algorithm 2, sessions and channel limit.
    width : int
        Word width in bits, at least 1.

    Attributes
    ----------
    start : In(1)
        Sampled at a rising edge while not busy: begins a run (cycle 1 is the
        next clock period). Ignored while busy.
    words : In(stream.Signature(width)).array(N)
        Processor i takes the word of its next session in a cycle where
        ``ready`` is high (transfer at that cycle's rising edge): session 0's
        with ``start`` (``ready = start & ~busy``), session s+1's in the
        cycle of its last action of session s. A missing word (``valid``
        low) does not stall the fabric; the previous word is kept.
    busy : Out(1)
        High during cycles 1..L.
    done : Out(1)
        High from the cycle after cycle L until the next start.
    cycle : Out(C)
        The step number t during cycles 1..L, 0 when idle. Saturates at
        ``2**C - 1`` (only a held run can get there).
    used : Out(ceil(log2(N+1)))
        Used slots (S plus R) this cycle, always even.
    action : Out(3).array(N)
        docs/reference.md "Trace codes" action code of each processor this cycle.
    peer : Out(PW).array(N)
        docs/reference.md "Trace codes" peer of each processor this cycle.
    delivery : Out(DeliverySignature).array(N)
        ``valid`` in the cycle processor i shows R, with the ``source``, the
        ``session`` and the ``word`` (the source's word of that session).
        ``source``, ``session`` and ``word`` are meaningful only while
        ``valid`` is high.
    stall : Out(1)
        Watchdog: high from the second cycle after a busy cycle without a
        transfer until the next start (latency 2: who acted is registered
        per processor before it is looked at, to keep a fabric-wide OR of
        every possible transfer off the clock path). A valid run fires a
        transfer in every step, so it never rises on a valid configuration
        with ``hold`` low.
    hold : In(N)
        Debug/test: a processor whose bit is set neither sends nor receives
        (it shows WS/WR). Tie to 0 in normal use.

    Notes
    -----
    Trace and delivery outputs are combinational from the state at the start
    of the cycle (latency 0); transfers take effect at the rising edge ending
    the cycle. ``sync`` domain; its reset is synchronous and active high.
    """

    def __init__(self, config: RunConfig, width: int = 8):
        signature = fabric_signature(config, width)
        self._config = config
        self._width = width
        super().__init__(signature)

    @property
    def config(self) -> RunConfig:
        return self._config

    @property
    def width(self) -> int:
        return self._width

    def elaborate(self, platform) -> Module:
        m = Module()
        cfg = self._config
        n = cfg.n
        ordered = cfg.receive == "ordered"

        # Without arbitration (ordered, no Algorithm 2, no binding channel
        # limit) every controller decides its transfers itself.
        local = (ordered and not cfg.substitute
                 and (cfg.channels is None or cfg.channels >= n // 2))
        ctrl = [Controller(p, sessions=cfg.sessions, substitute=cfg.substitute, local=local)
                for p in compose_all(cfg)]
        for i, c in enumerate(ctrl):
            m.submodules[f"p{i}"] = c
        res = m.submodules.resolver = Resolver(n, receive=cfg.receive, substitute=cfg.substitute,
                                               sessions=cfg.sessions, channels=cfg.channels)
        xbar = m.submodules.crossbar = Crossbar(n, self._width)

        busy = Signal()
        running = Signal()
        begin = Signal()
        m.d.comb += [
            busy.eq(Cat(*[c.active for c in ctrl]).any()),
            begin.eq(self.start & ~busy),
            self.busy.eq(busy),
            self.done.eq(running & ~busy),
        ]
        with m.If(begin):
            m.d.sync += running.eq(1)

        # Each processor's word register: what it sends in its current session.
        word = [Signal(self._width, name=f"word_{i}") for i in range(n)]
        for i, c in enumerate(ctrl):
            port = self.words[i]
            m.d.comb += [
                c.start.eq(begin),
                c.hold.eq(self.hold[i]),
                port.ready.eq(begin | c.next_word),
                res.request[i].eq(c.request),
                res.claim[i].eq(c.claim),
                res.awaits[i].eq(c.awaits),
                res.accepting[i].eq(c.accepting),
                res.parity[i].eq(c.parity),
                c.offer.eq(res.offer[i]),
                c.wanted.eq(Cat(*[ctrl[j].request[i] if j != i else Const(0, 1)
                                  for j in range(n)])),
                c.grant.eq(res.grant[i]),
            ]
            with m.If(port.valid & port.ready):
                m.d.sync += word[i].eq(port.payload)

        pw = peer_width(n)
        for j, c in enumerate(ctrl):
            # fires[i]: sender i's granted claim is receiver j.
            fires = [ctrl[i].claim[j] & res.grant[i] if i != j else Const(0, 1)
                     for i in range(n)]
            received = Cat(*fires).any()
            m.d.comb += c.received.eq(received)
            if not ordered:
                m.d.comb += c.source.eq(one_hot_to_binary(fires, pw))
            # Under `ordered` a receiver only ever takes its awaited sender's
            # word, so the select does not wait for the grant.
            select = c.awaits if ordered else Cat(*fires)
            d = self.delivery[j]
            m.d.comb += [
                xbar.inputs[j].eq(word[j]),
                xbar.select[j].eq(select),
                d.valid.eq(received),
                d.source.eq(c.peer),
                d.session.eq(c.session),
                d.word.eq(xbar.outputs[j]),
                self.action[j].eq(c.action),
                self.peer[j].eq(c.peer),
            ]

        # At most N/2 grants, so twice their count fits the port.
        m.d.comb += self.used.eq(count_ones([res.grant[i] for i in range(n)]) << 1)

        count = Signal.like(self.cycle, name="count")
        full = count == (1 << len(count)) - 1
        m.d.comb += self.cycle.eq(Mux(busy, count, 0))
        # The watchdog looks one cycle back: who acted is registered per
        # processor first, so "no transfer at all" is an OR of N flip-flops
        # rather than of every possible transfer (that OR was the critical
        # path of the base fabric on iCE40).
        acted = Signal(n, name="acted")
        was_busy = Signal()
        m.d.sync += [acted.eq(Cat(*[c.acts for c in ctrl])), was_busy.eq(busy)]
        stall = Signal()
        m.d.comb += self.stall.eq(stall)
        with m.If(begin):
            m.d.sync += [count.eq(1), stall.eq(0)]
        with m.Else():
            with m.If(busy & ~full):
                m.d.sync += count.eq(count + 1)
            with m.If(was_busy & ~acted.any()):
                m.d.sync += stall.eq(1)
        return m
