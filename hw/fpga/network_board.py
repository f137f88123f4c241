# amaranth: UnusedElaboratable=no
"""The network fabric on a board: a compiled network program in block RAM, run and checked.

:class:`NetworkSelfTest` is the schedule board's self-test
(:class:`~.schedule_selftest.ScheduleSelfTest`: replay an image's load
writes, run, read every node's store and accumulator back against the
image's checks) around a :class:`~pipegossip.hw.network.NetworkFabric`,
whose extra load kind (the store directory, load kind 4) the image carries
with the same code, :attr:`~pipegossip.hw.schedule.image.ImageKind.DIRECTORY`.
:func:`network_board_top` puts it on a board with the schedule board's LEDs,
status line, button and UART upload
(:class:`~.schedule_board.ScheduleBoardTop`); the line reads
``PASS network n=4 runs=00000001`` or ``FAIL node 3 network ...``.
"""

# The first line's linter option is Amaranth's documented switch for
# UnusedElaboratable: self-tests are built to refuse bad images early.

from __future__ import annotations

from ...model.schedules.topologies import Topology
from ..network.fabric import NetworkFabric
from ..ports import NetworkSize
from ..schedule.image import ImageKind
from .schedule_board import ScheduleBoardCore, ScheduleBoardTop
from .schedule_selftest import ScheduleSelfTest

__all__ = ["NetworkSelfTest", "network_board_core", "network_board_top"]


class NetworkSelfTest(ScheduleSelfTest):
    """A network fabric that loads, runs and checks the image in its memory.

    Parameters
    ----------
    topology : Topology
    size : NetworkSize
        The fabric's size (:func:`~pipegossip.hw.network.image.network_image_size`).
    image : list of int
        Encoded entries (:func:`~pipegossip.hw.network.image.network_image`).
    op : {"sum", "xor"}
        The accumulators' operation (the image's expected values assume it).

    Attributes
    ----------
    As :class:`~.schedule_selftest.ScheduleSelfTest`; latency the same (the
    load writes include one directory entry per node and slot).
    """

    LAST_LOAD = ImageKind.DIRECTORY

    def __init__(self, topology: Topology, size: NetworkSize, image: list[int],
                 op: str = "sum"):
        fabric = NetworkFabric(topology, size.width, size.depth, size.slots, op,
                               size.bank_depth, size.store, size.node, size.trace)
        if fabric.size != size:
            raise ValueError(f"the network fabric of {topology.name} has size {fabric.size}, "
                             f"the image {size}")
        super().__init__(size, image, fabric)


def _factory(topology, size, image, op):
    return lambda: NetworkSelfTest(topology, size, image, op)


def network_board_core(topology: Topology, size: NetworkSize, image: list[int],
                       divisor: int, op: str = "sum") -> ScheduleBoardCore:
    """The board logic without pins (:class:`ScheduleBoardCore`) around a network self-test."""
    return ScheduleBoardCore(size, image, divisor, _factory(topology, size, image, op),
                             "network")


def network_board_top(topology: Topology, size: NetworkSize, image: list[int],
                      op: str = "sum", clock_mhz: float | None = None) -> ScheduleBoardTop:
    """The board top (:class:`ScheduleBoardTop`: LEDs, UART, button) of a network self-test."""
    return ScheduleBoardTop(size, image, clock_mhz, _factory(topology, size, image, op),
                            "network")
