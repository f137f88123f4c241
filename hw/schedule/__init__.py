"""The schedule-driven fabric: nodes with program memories, run at run time.

:class:`ScheduleFabric` loads per-node programs compiled from any validated
schedule (``pipegossip.model.schedules.program``) and runs them on a crossbar,
one word in and one word out per node per cycle; docs/schedule-fabric.md.
"""

from .fabric import LATENCY, LoadKind, ScheduleFabric, schedule_fabric_ports, schedule_signature
from .node import ScheduleNode

__all__ = ["ScheduleNode", "ScheduleFabric", "LoadKind", "LATENCY", "schedule_signature",
           "schedule_fabric_ports"]
