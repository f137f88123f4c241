"""Communication schedules: one representation, one validator, bounds."""

from .bounds import Bound, bounds_for, round_bound
from .compile_run import compile_run, schedule_of_config
from .ir import FORMAT, MODELS, PRIMITIVES, Q, Message, Schedule, complete, dumps, load, loads, save
from .topologies import TOPOLOGIES, Topology, topology, topology_from_json
from .validate import ScheduleError, Validation, check, validate

__all__ = [
    "FORMAT", "MODELS", "PRIMITIVES", "Q", "Message", "Schedule", "complete",
    "dumps", "loads", "load", "save",
    "TOPOLOGIES", "Topology", "topology", "topology_from_json",
    "ScheduleError", "Validation", "check", "validate",
    "Bound", "bounds_for", "round_bound", "compile_run", "schedule_of_config",
]
