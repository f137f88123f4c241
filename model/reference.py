"""A literal, per-step reading of docs/reference.md.

Every step looks at every processor, so its cost grows with N x L. It is the
oracle the fast engine (:mod:`.engine`) is tested against and the baseline
the benchmark compares with; it walks the composer's programs directly.
"""

from __future__ import annotations

import numpy as np

from .composer import Op, compose_all
from .config import RunConfig
from .errors import DeadlockError
from .result import Deliveries, RunResult
from .runtable import IDLE, R, S, WR, WS, RunTable

__all__ = ["simulate_reference"]


class _Proc:
    """One processor walking its program, one session after another."""

    def __init__(self, program, sessions: int):
        self.program = program
        self.sessions = sessions
        self.session = 0
        self.pos = 0  # index of the current couple
        self.heard: set[int] = set()
        self.served: set[int] = set()

    @property
    def done(self) -> bool:
        return self.session >= self.sessions

    def couple(self):
        return self.program.couples[self.pos]

    def sending(self) -> bool:
        return not self.done and self.couple().op is Op.SEND

    def receiving(self) -> bool:
        return not self.done and self.couple().op is Op.RECV

    def target(self) -> int:
        """First entry of the order not yet served this session."""
        return next(j for j in self.program.order if j not in self.served)

    def unserved_after_target(self) -> list[int]:
        rest = [j for j in self.program.order if j not in self.served]
        return rest[1:]

    def advance(self) -> None:
        self.pos += 1
        if self.pos == len(self.program.couples):
            self.session += 1
            self.pos = 0
            self.heard.clear()
            self.served.clear()


def simulate_reference(config: RunConfig, max_steps: int | None = None) -> RunResult:
    """Run ``config`` step by step and return the result with its table."""
    n = config.n
    procs = [_Proc(p, config.sessions) for p in compose_all(config)]
    ordered = config.receive == "ordered"
    columns_a: list[list[int]] = []
    columns_p: list[list[int]] = []
    steps, srcs, dsts, sess = [], [], [], []
    t = 0
    while not all(p.done for p in procs):
        t += 1
        if max_steps is not None and t > max_steps:
            raise RuntimeError(f"no end after {max_steps} steps")
        acts = [IDLE] * n
        peers = [0] * n
        claimed: set[int] = set()

        def can_take(j: int, i: int) -> bool:
            q = procs[j]
            if j in claimed or not q.receiving() or q.session != procs[i].session:
                return False
            if ordered:
                return q.couple().peer == i
            return i not in q.heard

        fired = []
        for i in range(n):
            p = procs[i]
            if not p.sending():
                continue
            target = p.target()
            choice = None
            if config.channels is None or len(fired) < config.channels:
                if can_take(target, i):
                    choice = target
                elif config.substitute:
                    choice = next((j for j in p.unserved_after_target() if can_take(j, i)), None)
            if choice is None:
                acts[i], peers[i] = WS, target
            else:
                claimed.add(choice)
                fired.append((i, choice))
                acts[i], peers[i] = S, choice
                acts[choice], peers[choice] = R, i
        for j, q in enumerate(procs):
            if q.receiving() and j not in claimed:
                acts[j], peers[j] = WR, (q.couple().peer if ordered else 0)
        if not fired:
            blocked = {}
            for j, q in enumerate(procs):
                if q.sending():
                    blocked[j] = f"waits to send to p{q.target()}"
                elif q.receiving():
                    blocked[j] = ("waits to receive from p%d" % q.couple().peer if ordered
                                  else "waits to receive")
            raise DeadlockError(t, blocked)
        for i, j in fired:
            steps.append(t)
            srcs.append(i)
            dsts.append(j)
            sess.append(procs[i].session)
            procs[i].served.add(j)
            procs[j].heard.add(i)
        # Transitions happen at the end of the step: both sides leave their couple.
        for i, j in fired:
            procs[i].advance()
            procs[j].advance()
        columns_a.append(acts)
        columns_p.append(peers)
    actions = np.array(columns_a, dtype=np.uint8).T.reshape(n, t)
    peer_arr = np.array(columns_p, dtype=np.int32).T.reshape(n, t)
    table = RunTable(actions, peer_arr, comments=[config.header()])
    deliveries = Deliveries(np.array(steps, np.int32), np.array(srcs, np.int32),
                            np.array(dsts, np.int32), np.array(sess, np.int32))
    return RunResult(config, deliveries, table.used.copy(), table)
