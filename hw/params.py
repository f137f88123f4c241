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
    """Run a constructor's checks (``with refusing(self): ...``); refusals propagate.

    Amaranth warns (``UnusedElaboratable``) about an Elaboratable that is
    created and never elaborated, and a component whose parameters were
    refused has already been created by the time its ``__init__`` runs.
    Amaranth has no public per-object "used" switch (only its private
    ``MustUse`` state), so nothing is marked here. The public controls are:

    * Amaranth's documented linter option ``# amaranth: UnusedElaboratable=no``
      as the first line of the file that *calls* the constructor (the warning
      is attributed to that line): the flow and board-top modules and the
      test files that construct refused components carry it;
    * the warning is off until the first elaboration in the process, so a
      command that refuses its input before elaborating anything prints
      only its own error line.
    """
    del component  # kept so the constructors' call sites stay as they are
    yield
