"""Names the ``prove`` commands offer, without loading Amaranth.

The command line builds its parsers at start-up; keeping these tables here
lets it list mutants, order families and option sets before any hardware
module is imported.
"""

from __future__ import annotations

__all__ = ["FABRIC_MUTANTS", "RESOLVER_MUTANTS", "MUTANTS", "ORDER_FAMILIES", "OPTION_SETS",
           "SCHEDULE_MUTANTS", "SCHEDULE_FAMILIES", "SCHEDULE_WORDS", "NETWORK_MUTANTS",
           "NETWORK_PRIMITIVES"]

#: Deliberately broken fabrics: each must FAIL its proof (a proof that
#: cannot fail proves nothing).
FABRIC_MUTANTS = {
    "xbar-select": "crossbar output 0 swaps the select lines of inputs 1 and 2",
}

#: Deliberately broken resolutions; each must FAIL the equivalence.
RESOLVER_MUTANTS = {
    "order-swap": "sender 0's pick scans its order with the first two entries swapped",
    "chain-skip": "the resolver does not see sender 0's claim (a broken chain link)",
}

#: Every mutant, by name: what it breaks.
MUTANTS = {**FABRIC_MUTANTS, **RESOLVER_MUTANTS}

#: The order families of the sweep (random with seed 0).
ORDER_FAMILIES = ("identity", "pipelined", "random")

#: The option sets of the sweep: one per feature, and all together.
OPTION_SETS = {
    "base": {},
    "any": {"receive": "any"},
    "substitute": {"substitute": True},
    "any+substitute": {"receive": "any", "substitute": True},
    "sessions=2": {"sessions": 2},
    "channels=1": {"channels": 1},
    "all": {"receive": "any", "substitute": True, "sessions": 2, "channels": 1},
}

#: Deliberately broken schedule-fabric runs; each must FAIL its proof.
SCHEDULE_MUTANTS = {
    "xbar-select": "crossbar output 0 swaps the select lines of inputs 1 and 2",
    "xbar-double": "crossbar output 0 also takes the input after the selected one",
    "source-field": "node 0's first receiving program entry names another source",
}

#: Schedule generators the schedule-fabric proofs take by name (``--n`` gives N).
SCHEDULE_FAMILIES = ("cyclic-shift", "one-factor", "recursive-doubling", "min-calls")

#: Item words of a schedule-fabric proof: any-constants, or the tagged words.
SCHEDULE_WORDS = ("free", "tagged")

#: Network-fabric mutants (the program loaded with one entry altered, as the
#: fault injection of the co-simulation alters it); each must FAIL its proof.
NETWORK_MUTANTS = {
    "drop": "the first storing receive is dropped (the word is lost)",
    "misroute": "the first send of a node with two or more links whose next link sends "
                "something else is swapped with that link's",
    "combine": "the first receive's combine bit is flipped",
}

#: Generators ``prove --fabric network --primitive`` loads on the topology:
#: all-port gossip, reduce to node 0, allreduce.
NETWORK_PRIMITIVES = ("gossip", "reduce", "allreduce")
