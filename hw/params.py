"""Parameter checks shared by the components' constructors.

Components validate everything in ``__init__``, before
``super().__init__()``, and raise ``TypeError``/``ValueError`` quoting the
bad value (house style, after amaranth ``lib/fifo.py``).

Amaranth warns (``UnusedElaboratable``) about a component created and never
elaborated, which a refused constructor leaves behind. It has no public
per-object switch; the public control is its documented file-level comment
``# amaranth: UnusedElaboratable=no``, which the files that construct
components they may refuse carry (tests, the FPGA flow).
"""

from __future__ import annotations

__all__ = ["check_int"]


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
