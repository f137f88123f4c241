"""Exceptions raised by the golden model."""

import json

__all__ = ["ConfigError", "DeadlockError", "FastPathWarning", "FormatError", "json_text"]


def json_text(value: object, limit: int = 40) -> str:
    """A value read from a JSON file, as the file spells it (``null``, ``true``, ``"x"``).

    Cut to ``limit`` characters: a message quotes the bad value, not a
    megabyte of it.
    """
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class ConfigError(ValueError):
    """A configuration was refused before anything ran (docs/reference.md "Refused configurations").

    The message names the processor and the bad value where there is one.
    """


class FormatError(ValueError):
    """A run-table or order file could not be read."""


class DeadlockError(RuntimeError):
    """A step fired no transfer while work remained.

    Attributes
    ----------
    step : int
        The step (1-based) in which nothing could fire.
    blocked : dict[int, str]
        For each unfinished processor, what it waits for.
    """

    def __init__(self, step: int, blocked: dict[int, str]):
        self.step = step
        self.blocked = dict(blocked)
        shown = "; ".join(f"p{p} {why}" for p, why in list(self.blocked.items())[:8])
        more = len(self.blocked) - 8
        if more > 0:
            shown += f"; ... and {more} more"
        super().__init__(f"deadlock at step {step}: {shown}")


class FastPathWarning(RuntimeWarning):
    """The compiled fast path (:mod:`.fastpath`) stopped on a run the general engine finishes.

    That is a bug of the fast path, never of the input: the result is the
    general engine's (correct, slower), and the warning says where the fast
    path stopped. The test suite turns it into an error.
    """
