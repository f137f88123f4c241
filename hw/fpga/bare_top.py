"""A registered two-pin boundary around a component, to measure it on a real package.

Every input of the measured design comes from a serial shift chain, every
output is registered and folded into one pin by a pipelined XOR tree. Apart
from the ports explicitly tied or left unobserved, no input is constant and
no output is unobserved, so synthesis keeps all of the design's logic, and
the boundary adds only register-to-register paths. The ports are read off
the design's own signature, so any :class:`~amaranth.lib.wiring.Component`
can be measured.
"""

from amaranth.hdl import Cat, Elaboratable, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["BareTop"]


def _reg(width: int, name: str) -> Signal:
    # Boundary registers need no reset: their contents are don't-care data,
    # and a reset would only add enable/reset logic that is not the fabric's.
    return Signal(width, name=name, reset_less=True)


class _Tied(Elaboratable):
    """``dut`` (as submodule ``core``) with some inputs tied to constants.

    The flow flattens ``core`` into this module but keeps this module apart
    from the measuring registers, so the constants reach the fabric's logic
    and nothing else crosses the boundary.
    """

    def __init__(self, dut: wiring.Component, tied: dict[str, int]):
        self._dut = dut
        self._tied = tied

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.core = self._dut
        for name, value in self._tied.items():
            m.d.comb += getattr(self._dut, name).eq(value)
        return m


class BareTop(wiring.Component):
    """A registered two-pin boundary around a component, for measurement.

    Parameters
    ----------
    dut : wiring.Component
        The design to measure; added as submodule ``name``.
    name : str
        Its submodule name (cells placed for it are named ``name.*``).
    tied : dict of str to int
        Top-level input ports of ``dut`` driven by constants instead of the
        chain (the fabric's debug input ``hold`` is tied to 0, its normal use).
    unobserved : iterable of str
        Top-level output ports of ``dut`` left unconnected (synthesis removes
        the logic only they need), e.g. the fabric's trace outputs for a
        deployment that only consumes deliveries.

    Attributes
    ----------
    serial_in : In(1)
        Shifted into a chain of registers, one per (untied) input bit of
        ``dut``; the chain drives those inputs.
    serial_out : Out(1)
        The XOR of all of ``dut``'s output bits, registered once at the
        boundary and then once per level of a 4-input XOR tree (latency
        ``1 + ceil(log4(output bits))`` cycles).

    Notes
    -----
    Every live ``dut`` input and output crosses one flip-flop at the
    boundary, as a registered bus interface would: the timing paths that
    remain are the design's own (register to register, input register to
    output register through its combinational logic).
    """

    serial_in: In(1)
    serial_out: Out(1)

    def __init__(self, dut: wiring.Component, name: str = "fabric",
                 tied: dict[str, int] | None = None, unobserved: tuple[str, ...] = ()):
        if not isinstance(dut, wiring.Component):
            raise TypeError(f"BareTop needs an amaranth wiring.Component, not {dut!r}")
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"BareTop submodule name must be an identifier, not {name!r}")
        tied = dict(tied or {})
        for port in tied:
            member = dut.signature.members[port] if port in dut.signature.members else None
            if member is None or not member.is_port or member.flow != In:
                raise ValueError(f"BareTop can only tie an input port of {dut!r}, not {port!r}")
        unobserved = tuple(unobserved)
        for port in unobserved:
            member = dut.signature.members[port] if port in dut.signature.members else None
            if member is None or not member.is_port or member.flow != Out:
                raise ValueError(f"BareTop can only leave an output port of {dut!r} "
                                 f"unobserved, not {port!r}")
        self._dut = dut
        self._name = name
        self._tied = tied
        self._unobserved = unobserved
        super().__init__()

    @property
    def dut_name(self) -> str:
        return self._name

    def elaborate(self, platform) -> Module:
        m = Module()
        dut = self._dut
        m.submodules[self._name] = _Tied(dut, self._tied) if self._tied else dut
        inputs, outputs = [], []
        for path, member, value in dut.signature.flatten(dut):
            if member.flow == In:
                if path[0] not in self._tied:
                    inputs.append(value)
            elif path[0] not in self._unobserved:
                outputs.append(value)

        n_in = sum(len(v) for v in inputs)
        chain = _reg(max(1, n_in), "chain")
        m.d.sync += chain.eq(Cat(self.serial_in, chain[:-1]))
        offset = 0
        for v in inputs:
            m.d.comb += v.eq(chain[offset:offset + len(v)])
            offset += len(v)

        level = _reg(sum(len(v) for v in outputs), "outputs")
        m.d.sync += level.eq(Cat(*outputs))
        depth = 0
        while len(level) > 1:
            depth += 1
            groups = range(0, len(level), 4)
            folded = _reg(len(groups), f"xor_{depth}")
            m.d.sync += folded.eq(Cat(*[level[k:k + 4].xor() for k in groups]))
            level = folded
        m.d.comb += self.serial_out.eq(level[0])
        return m
