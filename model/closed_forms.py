"""Closed forms of docs/reference.md "Closed forms" (the paper's propositions, reconstructed)."""

from __future__ import annotations

from fractions import Fraction

__all__ = [
    "identity_length", "identity_four_steps", "pipelined_length",
    "pipelined_efficiency", "pipelined_mu", "physical_limit",
]


def _n(n: int, least: int = 2) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < least:
        raise ValueError(f"N must be an integer >= {least}, got {n!r}")
    return n


def identity_length(n: int) -> int:
    """L of the identity order: ``N(N-1) - floor((N-2)^2/4)`` (Prop. 14)."""
    n = _n(n)
    return n * (n - 1) - (n - 2) ** 2 // 4


def identity_four_steps(n: int) -> int:
    """Steps with 4 used slots under the identity order (Lemma 15)."""
    n = _n(n)
    return (n - 2) ** 2 // 4


def pipelined_length(n: int, sessions: int = 1) -> int:
    """L of pipelined gossiping: ``3(N-1)`` for N >= 3, 2 for N = 2 (Prop. 18).

    For several sessions only N = 5 is pinned by the paper (Table 6:
    ``10k + 2``); other N raise ``ValueError`` rather than guess.
    """
    n = _n(n)
    if sessions == 1:
        return 2 if n == 2 else 3 * (n - 1)
    if n == 5:
        return 10 * sessions + 2
    raise ValueError("the multi-session length is only known in closed form for N = 5")


def pipelined_efficiency(n: int) -> Fraction:
    """E of pipelined gossiping: 2/3 for N >= 3 (Prop. 19); 1 for N = 2."""
    n = _n(n)
    return Fraction(1) if n == 2 else Fraction(2, 3)


def pipelined_mu(n: int) -> Fraction:
    """mu of pipelined gossiping: 2N/3 for N >= 3 (Prop. 20); 2 for N = 2."""
    n = _n(n)
    return Fraction(2) if n == 2 else Fraction(2 * n, 3)


def physical_limit(n: int, sessions: int = 1, channels: int | None = None) -> int:
    """Lower bound on L with one word per message.

    N(N-1) transfers per session each occupy two processors, so at most
    floor(N/2) fire per step (fewer with a channel limit): ``2(N-1)`` for even
    N and ``2N`` for odd N with one session and a full crossbar.
    """
    n = _n(n)
    transfers = n * (n - 1) * sessions
    per_step = n // 2 if channels is None else min(channels, n // 2)
    return -(-transfers // per_step)
