"""Parameter checks shared by the components' constructors.

Components validate everything in ``__init__``, before
``super().__init__()``, and raise ``TypeError``/``ValueError`` quoting the
bad value (house style, after amaranth ``lib/fifo.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["check_int", "refusing"]


def check_int(owner: str, name: str, value: object, minimum: int,
              maximum: int | None = None) -> int:
    """``value`` as an int in ``minimum..maximum``, else TypeError/ValueError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{owner} {name} must be an integer, not {value!r}")
    if value < minimum:
        raise ValueError(f"{owner} {name} must be at least {minimum}, not {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{owner} {name} must be at most {maximum}, not {value!r}")
    return value


@contextmanager
def refusing(component: object) -> Iterator[None]:
    """Run a constructor's checks; a refused component stays quiet.

    Amaranth warns about every Elaboratable that is created and never
    elaborated. One whose parameters were refused was never meant to be
    used, so it is marked used before the exception propagates.
    """
    try:
        yield
    except (TypeError, ValueError):
        component._MustUse__used = True
        raise
