"""Where a run-table comes from: a text file, a dump, or a configuration.

``pipegossip diff`` and ``pipegossip report`` take the same kinds of argument
(a *source*), tried in this order:

``key=value,...``
    A configuration, run through the golden model: ``n=8,order=pipelined``,
    ``n=16,order=identity,receive=any,substitute``. Keys are the options of
    ``pipegossip run`` without dashes: ``n``, ``order`` (a family or a JSON
    file), ``seed``, ``receive``, ``substitute`` (alone, or ``=on/off``),
    ``sessions``, ``channels``. They mean exactly what the options mean.
``PATH.vcd`` / ``PATH.fst``
    A waveform dump, read back with :func:`~.readback.read_dump`.
``PATH``
    Any other existing file: a docs/reference.md "Run-table text format" run-table text.
``table1`` ... ``table9``
    A reference run-table of the paper (``waveforms/reference/``).
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..model.config import RunConfig
from ..model.engine import simulate
from ..model.errors import ConfigError, FormatError
from ..model.orders import FAMILIES
from ..model.runtable import RunTable
from ..infra.budgets import check_budget
from ..cli.options import config_from_args
from .dump import DUMP_SUFFIXES
from .readback import Readback, read_dump
from .reference import config_from_header, reference_path

__all__ = ["Source", "parse_config_spec", "load_source", "is_config_spec"]

_KEYS = ("n", "order", "seed", "receive", "substitute", "sessions", "channels")
_ON = {"on": True, "true": True, "yes": True, "1": True,
       "off": False, "false": False, "no": False, "0": False}


def is_config_spec(text: str) -> bool:
    """Whether ``text`` is written as ``key=value,...`` (not a file name)."""
    return "=" in text.split(os.sep)[0] or text.split(",")[0].strip() == "substitute"


def parse_config_spec(text: str) -> RunConfig:
    """``n=8,order=pipelined,receive=any,substitute`` -> a validated RunConfig.

    Raises
    ------
    ConfigError
        Unknown or repeated key, a value that is not a number where one is
        needed, or anything ``pipegossip run`` would refuse; the message
        quotes the bad part.
    """
    values: dict[str, object] = {"n": None, "order": None, "seed": None, "receive": "ordered",
                                 "substitute": False, "sessions": 1, "channels": None}
    seen: set[str] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ConfigError(f"empty item in configuration {text!r}")
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        value = value.strip()
        if key == "k":
            key = "sessions"
        if key not in _KEYS:
            raise ConfigError(f"unknown key {key!r} in configuration {text!r} "
                              f"(expected {', '.join(_KEYS)})")
        if key in seen:
            raise ConfigError(f"key {key!r} given twice in configuration {text!r}")
        seen.add(key)
        if key == "substitute":
            if eq and value.lower() not in _ON:
                raise ConfigError(f"substitute must be on or off, got {value!r}")
            values[key] = _ON[value.lower()] if eq else True
            continue
        if not eq or not value:
            raise ConfigError(f"configuration item {part!r} needs a value ({key}=...)")
        if key in ("n", "seed", "sessions", "channels"):
            if key == "channels" and value.lower() in ("none", "unlimited"):
                values[key] = None
                continue
            if not re.fullmatch(r"[+-]?\d+", value):
                raise ConfigError(f"{key} must be an integer, got {value!r}")
            values[key] = int(value)
        else:
            values[key] = value
    if values["order"] is None:
        raise ConfigError(f"configuration {text!r} names no order (order=identity|pipelined|"
                          "random|PATH.json)")
    if values["n"] is None and values["order"] in FAMILIES:
        raise ConfigError(f"configuration {text!r} names no n (n=N)")
    return config_from_args(argparse.Namespace(**values))


@dataclass
class Source:
    """A run-table and what it came from.

    Attributes
    ----------
    spec : str
        The argument as given.
    kind : str
        ``config``, ``dump``, ``text`` or ``reference``.
    label : str
        One line saying what it is, for headings.
    table : RunTable
    config : RunConfig or None
        The configuration, when known (given, or named by the header).
    readback : Readback or None
        For a dump: the read-back with its checks.
    """

    spec: str
    kind: str
    label: str
    table: RunTable
    config: RunConfig | None = None
    readback: Readback | None = None

    @property
    def exact(self) -> bool:
        """Whether WS/WR peers are known (a text table drops them)."""
        return self.kind in ("config", "dump")


def model_table(config: RunConfig) -> RunTable:
    """The golden model's run-table, refused when it would be huge."""
    probe = simulate(config)
    check_budget("readback-cells", config.n * probe.length,
                 f"the run-table of {config.slug} (N={config.n}, L={probe.length})")
    return simulate(config, table=True).table


def load_source(spec: str, top: str | None = None, run: int = 1) -> Source:
    """Read one source (see the module docstring).

    Raises
    ------
    ConfigError, FormatError
        With one line saying what is wrong with ``spec``.
    """
    if is_config_spec(spec):
        config = parse_config_spec(spec)
        return Source(spec, "config", f"model {config.header()}", model_table(config), config)
    path = Path(spec)
    if path.suffix.lower() in DUMP_SUFFIXES:
        rb = read_dump(path, top=top, run=run)
        label = f"{path} [{rb.scope}, run {rb.run} of {rb.runs}]"
        return Source(spec, "dump", label, rb.table, None, rb)
    if path.is_file():
        table = RunTable.read(path)
        return Source(spec, "text", str(path), table, config_from_header(table.header_fields()))
    ref = reference_path(spec)
    if ref is not None:
        table = RunTable.read(ref)
        return Source(spec, "reference", f"{spec} ({ref.name})", table,
                      config_from_header(table.header_fields()))
    raise FormatError(f"{spec!r} is not a file, a dump (.vcd/.fst), a configuration "
                      "(n=..,order=..) or a reference name (table1, table2, ...)")
