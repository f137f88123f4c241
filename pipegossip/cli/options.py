"""Configuration options shared by every command that runs a configuration.

``pipegossip run``, ``verilog``, ``cosim``, ``fpga`` ... all take the same
``--n/--order/--seed/--receive/--substitute/--sessions/--channels`` with the
same meaning; this module is the one place that defines and checks them.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable

from ..infra.budgets import check_fabric, check_model_memory
from ..model.config import RECEIVE_DISCIPLINES, RunConfig
from ..model.errors import ConfigError
from ..model.orders import FAMILIES, load_orders

__all__ = ["add_config_arguments", "checked_number", "choice_list", "config_from_args", "decimal",
           "int_list", "list_items", "missing_config", "positive_int", "power_of_two", "progress_printer",
           "refuse_given", "time_limit_seconds", "word_width", "word_widths"]


_DECIMAL = re.compile(r"[+-]?[0-9]+")

#: Largest integer any option takes: sizes and counts beyond it are refused
#: by the budgets long before; this only keeps absurd digit strings out.
MAX_OPTION_INT = 10**12


def decimal(text: str) -> int:
    """Parse a plain ASCII decimal integer (no ``1_0``, no non-ASCII digits).

    Python's ``int`` also accepts ``'1_0'``, ``'٥'`` and ``'５'``; options take
    what a person types on a keyboard and nothing else.
    """
    text = text.strip()
    if not _DECIMAL.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected an integer, got {echo(text)}")
    value = int(text)
    if abs(value) > MAX_OPTION_INT:
        raise argparse.ArgumentTypeError(f"{text} is out of range (at most {MAX_OPTION_INT:,})")
    return value


def _items(text: str) -> list[str]:
    """The comma-separated items of ``text``, stripped; an empty item is refused.

    ``8,,16`` or a trailing comma is a typo more often than a wish: skipping
    the empty item would run something other than what was meant.
    """
    items = [x.strip() for x in text.split(",")]
    if text.strip() and "" in items:
        raise argparse.ArgumentTypeError(f"empty item in {echo(text)} (a doubled, leading or "
                                         "trailing comma)")
    return [x for x in items if x]


def list_items(text: str, option: str) -> list[str]:
    """The items of a comma-separated option value, at least one, none empty.

    For options parsed after argparse (their names depend on other options);
    ``option`` names the option in the refusal.

    Raises
    ------
    ConfigError
        For an empty value or an empty item.
    """
    try:
        items = _items(text)
    except argparse.ArgumentTypeError as e:
        raise ConfigError(f"{option}: {e}") from None
    if not items:
        raise ConfigError(f"{option}: expected at least one name, got {echo(text)}")
    return items


#: Longest user text quoted back in a message; longer text is cut with its length.
ECHO_CHARS = 60


def echo(text: object) -> str:
    """``repr`` of user input for a message, cut to :data:`ECHO_CHARS` characters."""
    text = str(text)
    if len(text) <= ECHO_CHARS:
        return repr(text)
    return f"{text[:ECHO_CHARS]!r}... ({len(text):,} characters)"


def int_list(minimum: int = 1) -> Callable[[str], list[int]]:
    """argparse type: a comma-separated list of integers, each >= ``minimum``."""
    def parse(text: str) -> list[int]:
        items = _items(text)
        try:
            values = [decimal(x) for x in items]
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated integers, got {echo(text)}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"expected at least one value, got {echo(text)}")
        if min(values) < minimum:
            raise argparse.ArgumentTypeError(
                f"values must be at least {minimum}, got {min(values)}")
        return values
    return parse


def choice_list(choices) -> Callable[[str], list[str]]:
    """argparse type: a comma-separated list of names, each one of ``choices``."""
    def parse(text: str) -> list[str]:
        values = _items(text)
        bad = [v for v in values if v not in choices]
        if not values or bad:
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated list of {', '.join(choices)}, got {echo(text)}")
        return values
    return parse


def checked_number(convert: Callable[[str], float], expected: str,
                   accept: Callable[[float], bool], refusal: str) -> Callable[[str], float]:
    """argparse type: ``convert(text)``, refused unless ``accept(value)``.

    ``expected`` names what a value looks like ("seconds"); ``refusal`` is the
    message for a value ``accept`` refuses, formatted with ``text`` and ``value``.
    """
    def parse(text: str) -> float:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {echo(text)}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(refusal.format(text=text, value=value))
        return value
    return parse


def progress_printer(prefix: str, quiet: bool = False) -> Callable[[str], None]:
    """A progress callback: one ``prefix: message`` line on stderr, or nothing."""
    if quiet:
        return lambda message: None
    return lambda message: print(f"{prefix}: {message}", file=sys.stderr, flush=True)


def word_width(text: str) -> int:
    """argparse type: a word width, 1 .. :data:`pipegossip.hw.ports.MAX_WIDTH` bits."""
    from ..hw.ports import MAX_WIDTH  # the fabric's own limit, stated once

    value = positive_int(text)
    if value > MAX_WIDTH:
        raise argparse.ArgumentTypeError(f"at most {MAX_WIDTH} bits, got {value}")
    return value


def word_widths(text: str) -> list[int]:
    """argparse type: a comma-separated list of word widths."""
    return [word_width(str(w)) for w in int_list(1)(text)]


_FLOAT = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def finite_float(text: str) -> float:
    """argparse type: a plain ASCII decimal number, finite (no nan, inf, ``1_0``, ``５``)."""
    text = text.strip()
    if not _FLOAT.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a number, got {echo(text)}")
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text} is out of range")
    return value


def bounded_int(minimum: int, maximum: int, what: str) -> Callable[[str], int]:
    """argparse type: an integer in ``minimum..maximum``; ``what`` names the bound's reason."""
    def convert(text: str) -> int:
        value = decimal(text)
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(
                f"must be {minimum:,}..{maximum:,} ({what}), got {value:,}")
        return value
    return convert


def at_least(minimum: int) -> Callable[[str], int]:
    """argparse type: an integer >= ``minimum``, refused with the bad value quoted."""
    def convert(text: str) -> int:
        value = decimal(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    return convert


#: argparse types: an integer >= 1 (sizes, counts) and >= 0 (seeds).
positive_int = at_least(1)
nonnegative_int = at_least(0)


def power_of_two(text: str) -> int:
    """argparse type: a power of two >= 2 (Table 8's sizes), refused as typed.

    A size between two of them would silently run up to the one below it
    (``--max-n 3`` ran N = 2 only).
    """
    value = decimal(text)
    if value < 2 or value & (value - 1):
        raise argparse.ArgumentTypeError(f"must be a power of two (2, 4, 8, ... 2048), got "
                                         f"{text.strip()}")
    return value


class DefaultN(int):
    """``--n``'s default, told apart from the same number typed by the user:
    an order file gives its own N, which a default must not contradict."""


def add_config_arguments(parser: argparse.ArgumentParser, *, n_default: int | None = None,
                         order_default: str | None = None,
                         required: bool = True) -> None:
    """Add the configuration options to ``parser``.

    ``required=False`` leaves ``--order`` optional without a default, for
    commands where another option (``--fabric schedule``, ``--schedule``)
    replaces it; the command then checks what it needs (:func:`missing_config`).
    ``--n`` is never required here: an order file gives N, so
    :func:`config_from_args` asks for it only with an order family.
    """
    g = parser.add_argument_group("configuration")
    g.add_argument("--n", type=decimal, default=None if n_default is None else DefaultN(n_default),
                   metavar="N", help="number of processors (>= 2); "
                   + (f"default {n_default}" if n_default is not None else
                      "required with an order family")
                   + ", taken from the file with an order file")
    g.add_argument("--order", required=required and order_default is None,
                   default=order_default,
                   metavar="|".join(FAMILIES) + "|PATH.json",
                   help="broadcast-order family, or a JSON file holding N lists"
                   + (f"; default {order_default}" if order_default else ""))
    g.add_argument("--seed", type=decimal, default=None,
                   help="seed of the random family (NumPy PCG64); default 0")
    g.add_argument("--receive", choices=RECEIVE_DISCIPLINES, default="ordered",
                   help="receive discipline (docs/reference.md); default ordered")
    g.add_argument("--substitute", action="store_true",
                   help="Algorithm 2: substitute a waiting target on the fly")
    g.add_argument("--sessions", type=decimal, default=1, metavar="K",
                   help="streaming gossip sessions; default 1")
    g.add_argument("--channels", type=decimal, default=None, metavar="K",
                   help="at most K transfers per step (1 <= K <= N/2); default unlimited")


#: The configuration options of the FSM fabric and their values when not given.
FSM_OPTIONS = (("--order", "order", None), ("--seed", "seed", None),
               ("--receive", "receive", "ordered"), ("--substitute", "substitute", False),
               ("--sessions", "sessions", 1), ("--channels", "channels", None))


def refuse_given(args: argparse.Namespace, options, where: str) -> None:
    """Refuse, in one line, every option of ``options`` the user gave.

    ``options`` holds ``(flag, attribute, value when not given)`` triples;
    ``where`` ends the message (``"only to --fabric fsm"``).

    Raises
    ------
    ConfigError
        Naming every such option.
    """
    given = [flag for flag, key, unset in options if getattr(args, key) != unset]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ConfigError(f"{', '.join(given)} {verb} {where}")


def missing_config(args: argparse.Namespace) -> list[str]:
    """The options the configuration still lacks: ``--order``, and ``--n``
    unless the order is a file (which gives N)."""
    missing = ["--order"] if args.order is None else []
    if args.n is None and (args.order is None or args.order in FAMILIES):
        missing.insert(0, "--n")
    return missing


def _check_size(args: argparse.Namespace, n: int) -> None:
    # Before the orders (N^2 entries) or anything else is allocated.
    check_model_memory(n, max(1, args.sessions or 1))
    if getattr(args, "width", None) is not None:  # commands that build hardware
        check_fabric(n, args.width)
    early = getattr(args, "size_check", None)  # a command's own budget of N (run's table)
    if early is not None:
        early(args, n)


def orders_in_file(path: str | os.PathLike) -> int | None:
    """N of an order file, counted before it is parsed: its ``[`` less the outer one.

    A list of N orders has N + 1 opening brackets; counting them reads the
    bytes once (about a second for 150 MB) without building the N^2 Python
    objects that parsing makes (2.6 GB for N = 5000), so the budgets can
    refuse a file too big for them before it is loaded. None when the file is
    not a regular file within the input limit (the loader then says why).
    """
    from ..model.inputs import MAX_INPUT_BYTES
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_INPUT_BYTES:
            return None
        count = 0
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                count += chunk.count(b"[")
    except OSError:
        return None
    return count - 1 if count > 1 else None


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """Build and validate the configuration the options describe.

    With an order file N is the file's; a ``--n`` the user typed must agree
    with it (a default gives way).

    Raises
    ------
    ConfigError
        For anything the configuration rules refuse, or options that contradict.
    """
    options = dict(receive=args.receive, substitute=args.substitute,
                   sessions=args.sessions, channels=args.channels)
    if args.order in FAMILIES:
        if args.n is None:
            raise ConfigError(f"--n N is required with --order {args.order} "
                              "(an order file gives N itself)")
        _check_size(args, args.n)
        if args.seed is not None and args.order != "random":
            raise ConfigError(f"--seed applies only to --order random, not {args.order!r}")
        seed = args.seed
        if args.order == "random" and seed is None:
            seed = 0
        return RunConfig.family(args.n, args.order, seed, **options)
    typed_n = None if args.n is None or isinstance(args.n, DefaultN) else args.n
    if typed_n is not None:
        _check_size(args, typed_n)
    if not (args.order.endswith(".json") or os.path.sep in args.order or os.path.exists(args.order)):
        raise ConfigError(f"unknown order {args.order!r} (expected one of "
                          f"{', '.join(FAMILIES)} or a JSON file)")
    if args.seed is not None:
        raise ConfigError("--seed applies only to --order random, not to an order file")
    counted = orders_in_file(args.order)
    if counted is not None:  # the budgets of the file's N before it is parsed (issue 39)
        _check_size(args, counted)
    orders = load_orders(args.order)
    if typed_n is not None and len(orders) != typed_n:
        raise ConfigError(f"--n {typed_n} disagrees with {args.order}, which holds "
                          f"{len(orders)} orders (leave --n out: the file gives N)")
    _check_size(args, len(orders))
    return RunConfig.explicit(orders, **options)


#: argparse type of a solver's ``--time-limit``: seconds, more than 0, at most a week.
time_limit_seconds = checked_number(float, "seconds", lambda v: 0 < v <= 7 * 24 * 3600,
                                    "must be more than 0 and at most 604800 seconds, got {text}")
