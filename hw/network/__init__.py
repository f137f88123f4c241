"""The network fabric: one program-driven node per vertex, one full-duplex link per edge.

:class:`NetworkFabric` loads per-node programs compiled from any validated
schedule on its topology (``pipegossip.model.schedules.network_program``) and
runs them without a crossbar, combining in every node's accumulator;
docs/network-fabric.md.
"""

from .fabric import LATENCY, NetworkFabric, network_fabric_ports, network_signature, network_size
from .node import NetworkNode

__all__ = ["NetworkNode", "NetworkFabric", "LATENCY", "network_signature", "network_size",
           "network_fabric_ports"]
