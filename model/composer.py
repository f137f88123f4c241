"""The permutation composer (the paper's Algorithm 1; docs/reference.md).

It turns one broadcast order into one processor's program: a finite-state
automaton written as an ordered list of couples. A couple is a wait state and
the action that leaves it: ``(WR_j, R_j)`` receives from j, ``(WS_j, S_j)``
sends to j. ``hw/`` turns each program into a controller FSM whose states are
these couples, each with its peer as a constant.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .config import RunConfig

__all__ = ["Op", "Couple", "Program", "compose", "compose_all"]


class Op(enum.IntEnum):
    """What a couple does once its wait is over."""

    RECV = 0  #: wait ``WR``, act ``R``
    SEND = 1  #: wait ``WS``, act ``S``


@dataclass(frozen=True)
class Couple:
    """One FSA state: wait, then act with ``peer``.

    For a receive couple under the ``any`` discipline the peer is not known in
    advance: ``peer`` is None and any sender not yet heard from is accepted.
    """

    op: Op
    peer: int | None

    def __str__(self) -> str:
        who = "*" if self.peer is None else str(self.peer)
        return f"(WR{who},R{who})" if self.op is Op.RECV else f"(WS{who},S{who})"


@dataclass(frozen=True)
class Program:
    """Processor ``pid``'s automaton for one session.

    Attributes
    ----------
    pid : int
        The processor.
    n : int
        Number of processors.
    order : tuple of int
        Its broadcast order ``P_pid``.
    couples : tuple of Couple
        ``pid`` receive couples (pre-phase), N-1 send couples (broadcast),
        N-1-pid receive couples (post-phase): 2(N-1) in all.
    """

    pid: int
    n: int
    order: tuple[int, ...]
    couples: tuple[Couple, ...]

    @property
    def pre(self) -> tuple[Couple, ...]:
        return self.couples[: self.pid]

    @property
    def broadcast(self) -> tuple[Couple, ...]:
        return self.couples[self.pid : self.pid + self.n - 1]

    @property
    def post(self) -> tuple[Couple, ...]:
        return self.couples[self.pid + self.n - 1 :]

    def __str__(self) -> str:
        return f"p{self.pid}: " + " ".join(str(c) for c in self.couples)


def compose(n: int, pid: int, order: tuple[int, ...], receive: str = "ordered") -> Program:
    """Algorithm 1 for one processor.

    Under ``ordered`` the pre-phase receives from 0..pid-1 and the post-phase
    from pid+1..N-1, in increasing sender id (docs/reference.md); under ``any``
    the receive couples carry no peer.
    """
    labelled = receive == "ordered"
    pre = [Couple(Op.RECV, j if labelled else None) for j in range(pid)]
    sends = [Couple(Op.SEND, j) for j in order]
    post = [Couple(Op.RECV, j if labelled else None) for j in range(pid + 1, n)]
    return Program(pid=pid, n=n, order=tuple(order), couples=tuple(pre + sends + post))


def compose_all(config: RunConfig) -> tuple[Program, ...]:
    """Every processor's program for a configuration."""
    return tuple(compose(config.n, i, tuple(config.orders[i].tolist()), config.receive)
                 for i in range(config.n))
