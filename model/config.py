"""Run configuration: everything that decides a run (docs/reference.md)."""

from __future__ import annotations

from collections.abc import Sequence
import zlib
from dataclasses import dataclass

import numpy as np

from .errors import ConfigError
from .orders import FAMILIES, RANDOM_GENERATOR, Orders, check_n, make_orders, validate_orders

__all__ = ["RECEIVE_DISCIPLINES", "RunConfig"]

RECEIVE_DISCIPLINES = ("ordered", "any")


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ConfigError(f"{name} must be at least 1, got {value}")
    return value


@dataclass(frozen=True, eq=False)
class RunConfig:
    """One gossip configuration.

    Build it with :meth:`family` or :meth:`explicit`; both validate everything
    of docs/reference.md "Refused configurations" before anything runs.

    Attributes
    ----------
    n : int
        Number of processors, at least 2.
    orders : numpy.ndarray
        Read-only ``(N, N-1)`` int32; row i is processor i's broadcast order.
    order_name : str
        ``identity``, ``pipelined``, ``random`` or ``explicit``.
    seed : int or None
        The seed of a ``random`` family, else None.
    receive : str
        ``ordered`` (default) or ``any`` (docs/reference.md "Receive disciplines").
    substitute : bool
        Algorithm 2, permutation scheduling (docs/reference.md "Algorithm 2").
    sessions : int
        Number of streaming sessions (docs/reference.md "Sessions").
    channels : int or None
        At most this many transfers per step; None is a full crossbar.
    """

    n: int
    orders: Orders
    order_name: str = "explicit"
    seed: int | None = None
    receive: str = "ordered"
    substitute: bool = False
    sessions: int = 1
    channels: int | None = None

    def __post_init__(self) -> None:
        n = check_n(self.n)
        object.__setattr__(self, "orders", validate_orders(n, self.orders))
        if self.receive not in RECEIVE_DISCIPLINES:
            raise ConfigError(f"receive must be one of {', '.join(RECEIVE_DISCIPLINES)}, "
                              f"got {self.receive!r}")
        if not isinstance(self.substitute, bool):
            raise ConfigError(f"substitute must be a bool, got {self.substitute!r}")
        _positive("sessions", self.sessions)
        if self.channels is not None:
            _positive("channels", self.channels)
            if self.channels > n // 2:
                raise ConfigError(f"channels must be at most floor(N/2) = {n // 2} for N={n}, "
                                  f"got {self.channels}")

    def _key(self) -> tuple:
        return (self.n, self.orders.tobytes(), self.order_name, self.seed, self.receive,
                self.substitute, self.sessions, self.channels)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunConfig):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def replace(self, **changes) -> RunConfig:
        """A copy with some options changed (validated again)."""
        fields = dict(n=self.n, orders=self.orders, order_name=self.order_name, seed=self.seed,
                      receive=self.receive, substitute=self.substitute,
                      sessions=self.sessions, channels=self.channels)
        fields.update(changes)
        return RunConfig(**fields)

    @classmethod
    def family(cls, n: int, order: str, seed: int | None = None, **options) -> RunConfig:
        """A configuration from a named order family."""
        if order not in FAMILIES:
            raise ConfigError(f"unknown order family {order!r} "
                              f"(expected one of {', '.join(FAMILIES)})")
        if order == "random" and seed is None:
            seed = 0
        return cls(n=check_n(n), orders=make_orders(n, order, seed), order_name=order,
                   seed=seed if order == "random" else None, **options)

    @classmethod
    def explicit(cls, orders: Sequence[Sequence[int]], **options) -> RunConfig:
        """A configuration from a user's list of N broadcast orders."""
        if isinstance(orders, (str, bytes)) or not isinstance(orders, (Sequence, np.ndarray)):
            raise ConfigError("orders must be a list of N lists")
        return cls(n=len(orders), orders=orders, order_name="explicit", **options)

    @property
    def slug(self) -> str:
        """A file-name-safe name, e.g. ``n8-pipelined-ordered-s1``."""
        parts = [f"n{self.n}", self.order_name]
        if self.seed is not None:
            parts.append(f"seed{self.seed}")
        if self.order_name == "explicit":
            parts.append(f"{zlib.crc32(self.orders.tobytes()):08x}")
        parts.append(self.receive)
        if self.substitute:
            parts.append("sub")
        if self.sessions != 1:
            parts.append(f"k{self.sessions}")
        if self.channels is not None:
            parts.append(f"c{self.channels}")
        return "-".join(parts)

    def header(self) -> str:
        """The docs/reference.md "Run-table text format" configuration line (without ``#``)."""
        order = self.order_name
        if self.order_name == "random":
            order += f" seed={self.seed} rng={RANDOM_GENERATOR}"
        channels = "none" if self.channels is None else str(self.channels)
        return (f"N={self.n} order={order} receive={self.receive} "
                f"substitute={'on' if self.substitute else 'off'} "
                f"sessions={self.sessions} channels={channels}")

    def to_json(self) -> dict:
        return {
            "N": self.n,
            "order": self.order_name,
            "seed": self.seed,
            "orders": self.orders.tolist(),
            "receive": self.receive,
            "substitute": self.substitute,
            "sessions": self.sessions,
            "channels": self.channels,
        }

    @classmethod
    def from_json(cls, data: dict) -> RunConfig:
        try:
            opts = dict(receive=data.get("receive", "ordered"),
                        substitute=bool(data.get("substitute", False)),
                        sessions=data.get("sessions", 1), channels=data.get("channels"))
            name = data.get("order", "explicit")
            if name in FAMILIES:
                return cls.family(data["N"], name, data.get("seed"), **opts)
            return cls.explicit(data["orders"], **opts)
        except KeyError as e:
            raise ConfigError(f"configuration lacks the key {e.args[0]!r}") from None
