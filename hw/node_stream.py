"""Per-node AXI4-Stream-style ports of a network node: its words in, its results out.

:class:`NodeStream` is written against the node's ``own``/``deliver``
contract (docs/integration.md, "Per-node streams"): the input stream
becomes writes of the node's ``own`` port (the node double-buffers its own
words and flips at ``start``), the node's ``deliver`` lanes fill an output
buffer that drains as a stream tagged with each word's source. Its
``ready`` tells the control block (:class:`~.control.ControlBlock`) that the
next start may go: the next collective's inputs are all in and the buffer has
room for a whole collective's results.
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .params import check_int

__all__ = ["NodeStream", "axis_signature", "own_signature", "deliver_signature"]


def axis_signature(width: int, user: int = 0) -> wiring.Signature:
    """An AXI4-Stream-style stream as its source drives it (``tuser`` when ``user`` > 0)."""
    members = {"tvalid": Out(1), "tready": In(1), "tdata": Out(width), "tlast": Out(1)}
    if user:
        members["tuser"] = Out(user)
    return wiring.Signature(members)


def own_signature(items: int, width: int) -> wiring.Signature:
    """The node's ``own`` write port, as the writer drives it."""
    return wiring.Signature({"valid": Out(1), "index": Out(range(items)), "data": Out(width)})


def deliver_signature(src_bits: int, width: int) -> wiring.Signature:
    """One ``deliver`` lane, as the node drives it."""
    return wiring.Signature({"valid": Out(1), "src": Out(src_bits), "data": Out(width)})


class NodeStream(wiring.Component):
    """Stream ports of one network node, with stated buffering.

    Parameters
    ----------
    items : int
        Own words per collective (the node's ``own`` indices ``0 .. items-1``).
    lanes : int
        ``deliver`` lanes (the node's degree; 1 for reduce, allreduce, polling).
    width : int
        Word width W.
    src_bits : int
        Bits of ``deliver.src`` (an item id).
    results : int
        Most words the node delivers in one collective: the room ``ready`` waits for.
    depth : int, optional
        Output buffer words, at least ``results`` and ``lanes``; default
        ``results + 1``: the newest word waits for ``end`` (for its ``tlast``),
        so with ``depth = results`` the next start waits until that word has
        drained too (2 cycles more per collective without back-pressure).

    Attributes
    ----------
    s_axis : In(axis_signature(width))
        The node's own words of the next collective, ``items`` beats, ``tlast``
        on the last. ``tready`` is high until the ``items`` words of the next
        collective are in, then low until ``start`` (one collective's words are
        buffered, in the node's second own buffer); a beat becomes an ``own``
        write in the same cycle (latency 0).
    own : Out(own_signature(items, width))
        To the node.
    deliver : In(deliver_signature(src_bits, width)).array(lanes)
        From the node: up to ``lanes`` words per cycle, written into the
        buffer at the edge ending the cycle, in lane order.
    m_axis : Out(axis_signature(width, src_bits))
        The buffered results, oldest first, ``tuser`` the source; ``tlast``
        on the last word of each collective. While a collective runs its newest
        word is held back (only ``end`` tells that it is the last), so the stream
        lags the deliveries by one word until ``end``.
    start : In(1)
        The fabric's start pulse (the control block's ``started``).
    end : In(1)
        High in the cycle the collective's last word can have been delivered
        (the fabric's ``busy`` falling: the first cycle with ``done``).
    ready : Out(1)
        The next collective's words are all in and, after this cycle's
        deliveries, the buffer has room for ``results`` words, while no
        collective runs or in its ``end`` cycle (a start may come then: the
        wrapper adds no idle cycle to the fabric's).
    error : Out(1)
        Sticky: a ``tlast`` not on the ``items``-th beat (or missing on it), or a
        delivery into a full buffer (``results`` too small for the program).
    """

    def __init__(self, items: int, lanes: int, width: int, src_bits: int, results: int,
                 depth: int | None = None):
        check_int("NodeStream", "items", items, 1)
        check_int("NodeStream", "lanes", lanes, 1)
        check_int("NodeStream", "width", width, 1)
        check_int("NodeStream", "src_bits", src_bits, 1)
        check_int("NodeStream", "results", results, 1)
        depth = results + 1 if depth is None else depth
        check_int("NodeStream", "depth", depth, max(results, lanes))
        self._items, self._lanes, self._width = items, lanes, width
        self._src, self._results, self._depth = src_bits, results, depth
        super().__init__({
            "s_axis": In(axis_signature(width)),
            "own": Out(own_signature(items, width)),
            "deliver": In(deliver_signature(src_bits, width)).array(lanes),
            "m_axis": Out(axis_signature(width, src_bits)),
            "start": In(1), "end": In(1), "ready": Out(1), "error": Out(1),
        })

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform) -> Module:
        m = Module()
        items, lanes, depth = self._items, self._lanes, self._depth
        s, o = self.s_axis, self.m_axis
        error = Signal()
        m.d.comb += self.error.eq(error)

        # input: count the next collective's beats; full until its start
        index = Signal(range(items + 1))
        full_in = Signal()
        m.d.comb += full_in.eq(index == items)
        take = Signal()
        m.d.comb += [s.tready.eq(~full_in), take.eq(s.tvalid & ~full_in),
                     self.own.valid.eq(take), self.own.index.eq(index[:len(self.own.index)]),
                     self.own.data.eq(s.tdata)]
        with m.If(self.start):
            # the node flips its own buffers here: a beat in this cycle is the next's first
            m.d.sync += index.eq(take)
        with m.Elif(take):
            m.d.sync += index.eq(index + 1)
        with m.If(take & (s.tlast != (index == items - 1))):
            m.d.sync += error.eq(1)

        # output: a circular buffer written by every lane at once, in lane order
        wp = Signal(range(depth))
        rp = Signal(range(depth))
        level = Signal(range(depth + 1))
        words = Array(Signal(self._width, name=f"buf_word{k}") for k in range(depth))
        srcs = Array(Signal(self._src, name=f"buf_src{k}") for k in range(depth))
        lasts = Array(Signal(name=f"buf_last{k}") for k in range(depth))
        running = Signal()
        with m.If(self.start):
            m.d.sync += running.eq(1)
        with m.Elif(self.end):
            m.d.sync += running.eq(0)

        def wrap(x):
            return Mux(x >= depth, x - depth, x)

        offset = Const(0, range(lanes + 1))
        for j, lane in enumerate(self.deliver):
            at = Signal(range(depth), name=f"at{j}")
            m.d.comb += at.eq(wrap(wp + offset))
            with m.If(lane.valid):
                m.d.sync += [words[at].eq(lane.data), srcs[at].eq(lane.src), lasts[at].eq(0)]
            offset = offset + lane.valid
        written = Signal(range(lanes + 1))
        m.d.comb += written.eq(offset)

        # the newest word waits while the collective runs (`end` included): only `end`
        # says it is the last, and its tlast is set at the edge ending that cycle
        hold = Signal()
        m.d.comb += hold.eq(running & (level == 1) & (written == 0) & ~lasts[rp])
        m.d.comb += [o.tvalid.eq((level != 0) & ~hold), o.tdata.eq(words[rp]),
                     o.tuser.eq(srcs[rp]), o.tlast.eq(lasts[rp])]
        pop = Signal()
        m.d.comb += pop.eq(o.tvalid & o.tready)
        with m.If(pop):
            m.d.sync += rp.eq(wrap(rp + 1))
        m.d.sync += [wp.eq(wrap(wp + written)), level.eq(level + written - pop)]
        with m.If(written > depth - level + pop):
            m.d.sync += error.eq(1)
        # `end`: the newest word of this collective (if it delivered any) is its last
        got = Signal()
        with m.If(self.start):
            m.d.sync += got.eq(0)
        with m.Elif(written != 0):
            m.d.sync += got.eq(1)
        last_at = Signal(range(depth))
        m.d.comb += last_at.eq(Mux(written != 0, wrap(wp + written - 1),
                                   Mux(wp == 0, depth - 1, wp - 1)))
        with m.If(self.end & (got | (written != 0))):
            m.d.sync += lasts[last_at].eq(1)

        # room for a whole collective after this cycle's words; the start may come in the
        # cycle of `end` (no idle cycle added to the fabric's)
        room = Signal()
        m.d.comb += room.eq(level + written + self._results <= depth)
        m.d.comb += self.ready.eq(full_in & room & (~running | self.end))
        return m
