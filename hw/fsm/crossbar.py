"""The crossbar switch: any input word to any output, one-hot selected."""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..bits import or_tree
from ..params import check_int

__all__ = ["Crossbar"]


class Crossbar(wiring.Component):
    """An N-port crossbar switch.

    Output j carries the input named by its one-hot select; several outputs
    may take the same input in one cycle. AND-OR form: every output bit is
    an OR of N gated input bits, with no binary decoder on the select path.

    Parameters
    ----------
    n : int
        Number of ports, at least 1.
    width : int
        Word width in bits, at least 1.

    Attributes
    ----------
    inputs : In(width).array(n)
        The word offered by each port.
    select : In(n).array(n)
        ``select[j]`` is one-hot (bit i: output j takes input i) or zero
        (output j shows 0). Several set bits OR their words together; callers
        keep it one-hot.
    outputs : Out(width).array(n)
        The switched words.

    Notes
    -----
    Purely combinational: latency 0 cycles.
    """

    def __init__(self, n: int, width: int):
        check_int("Crossbar", "n", n, 1)
        check_int("Crossbar", "width", width, 1)
        self._n = n
        self._width = width
        super().__init__({
            "inputs": In(width).array(n),
            "select": In(n).array(n),
            "outputs": Out(width).array(n),
        })

    @property
    def n(self) -> int:
        return self._n

    @property
    def width(self) -> int:
        return self._width

    def elaborate(self, platform) -> Module:
        m = Module()
        for j in range(self._n):
            gated = [self.inputs[i] & self.select[j][i].replicate(self._width)
                     for i in range(self._n)]
            m.d.comb += self.outputs[j].eq(or_tree(gated))
        return m
