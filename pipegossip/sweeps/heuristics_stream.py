"""Table 5's and Table 6's gossip rows past the held-schedule limit, run streamed.

A unit-cost gossip schedule holds ``n(n-1)`` item ids: on ccc_12 and butterfly_12
(49,152 nodes) 2.4 billion, 19.3 GB as int64, so ``network-table`` keeps held
schedules to :data:`~.limits.MAX_GOSSIP_NODES`. Above it, up to
:data:`~.limits.MAX_STREAMED_GOSSIP_NODES`, a row whose graph has the paper's
Table 6 colour string (the setting that won its k = 11 rows) runs that string
streamed: the generator yields one round at a time
(:func:`~pipegossip.model.algorithms.coloring.color_rounds`) and the validator
checks each as it comes (:func:`~pipegossip.model.schedules.validate_rounds.validate_rounds`);
R, S and the verdict come from that validation, and the schedule itself is never
held or stored. It is the row's one setting: no portfolio, whatever ``--best`` says.
Table 6 runs the same function on its rows in that window (star_8, pancake_8, ccc_12,
butterfly_12).
"""

from __future__ import annotations

import time

from ..infra.budgets import MAX_GOSSIP_NODES, MAX_STREAMED_GOSSIP_NODES

__all__ = ["streamed_colors", "streamed_row", "STREAMED_BY"]

#: The ``by`` column of a streamed row (after the colour string).
STREAMED_BY = "the paper's Table 6 string, streamed: schedule not held or stored"


def streamed_colors(spec: dict, primitive: str) -> str | None:
    """The Table 6 colour string a row of topology ``spec`` runs streamed, or None (the
    row is held as usual, or not run): gossip past the held limit, within the streamed
    one, on a graph the paper gives a string for."""
    from ..model.algorithms.portfolio import table6_string
    from ..model.schedules.topologies import _size
    colors = table6_string(spec["name"], spec.get("k"))
    if primitive != "gossip" or colors is None:
        return None
    return colors if MAX_GOSSIP_NODES < _size(spec["name"], spec) <= MAX_STREAMED_GOSSIP_NODES \
        else None


def streamed_row(config: dict) -> dict:
    """Job: the colour string ``config["colors"]`` on ``config["topology"]``, generated
    and validated round by round; R, S, CPU seconds (a sweep job's result)."""
    import numpy as np

    from ..model.algorithms.coloring import color_rounds
    from ..model.schedules.ir import Schedule
    from ..model.schedules.topologies import topology
    from ..model.schedules.validate_rounds import validate_rounds
    spec = config["topology"]
    topo = topology(spec["name"], **{k: v for k, v in spec.items() if k != "name"})
    none = np.zeros(1, np.int64)
    header = Schedule(topology=topo, model="F1", p=None, round_ptr=none, src=none[:0],
                      dst_ptr=none, dst=none[:0], item_ptr=none, items=none[:0])
    c0 = time.process_time()
    v = validate_rounds(header, color_rounds(topo, config["colors"]))
    if not v.valid:
        raise AssertionError(f"the streamed schedule is invalid: {v.error}")
    return {"R": v.R, "S": v.S, "by": f"coloring {config['colors']} ({STREAMED_BY})",
            "candidates": 1, "cpu_s": round(time.process_time() - c0, 1)}
