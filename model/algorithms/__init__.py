"""Schedule generators, one module per source."""

from .limits import GENERATORS, cyclic_shift, min_calls, one_factor, recursive_doubling

__all__ = ["GENERATORS", "one_factor", "cyclic_shift", "recursive_doubling", "min_calls"]
