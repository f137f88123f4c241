"""Which waveform to dump, where it goes, and how it gets there whole.

A dump is named after its configuration (:func:`dump_path`). The simulator
writes it for as long as the simulation runs, so an interrupted run leaves a
truncated file; beside a dump, :func:`pipegossip.waveforms.gtkw.write_gtkw`
writes its companions (``.gtkw`` save file, ``.action.txt`` and
``.slot.txt`` translate filters, and for a Verilator VCD a ports-only copy
``.ports.vcd``). :func:`staged_dump` therefore has all of them written in a
private folder beside the final place and renames them in only at a
successful end: the dump first, then its companions; a companion of an
earlier dump that this one did not get is removed, since it would describe
the old dump. On an exception or an interrupt the temporaries go and the
earlier dump and companions stay as they were.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from ..infra.files import atomic_write
from ..model.config import RunConfig
from ..model.errors import ConfigError
from .paths import dumps_root
from .scratch import deferred_signals, scratch, sweep

__all__ = ["WAVE_FORMATS", "COMPANIONS", "waves_requested", "dump_path", "companion",
           "staged_dump"]

WAVE_FORMATS = ("vcd", "fst")
#: Suffixes of the files written beside a dump ``<stem>.<fmt>``, in the order
#: they are renamed into place (the save file, which names the others, last).
COMPANIONS = (".ports.vcd", ".action.txt", ".slot.txt", ".run.json", ".gtkw")


def waves_requested(flag: str | bool | None = None) -> str | None:
    """The waveform format wanted: the flag if given, else ``$PIPEGOSSIP_WAVES``.

    ``PIPEGOSSIP_WAVES=1`` (or ``vcd``) asks for VCD, ``fst`` for FST; unset,
    empty or ``0`` for none.

    Raises
    ------
    ConfigError
        An unknown format.
    """
    if flag:
        value = "vcd" if flag is True else str(flag)
    else:
        value = os.environ.get("PIPEGOSSIP_WAVES", "").strip().lower()
        if value in ("", "0", "no", "off", "false"):
            return None
        if value in ("1", "yes", "on", "true"):
            value = "vcd"
    if value not in WAVE_FORMATS:
        raise ConfigError(f"waveform format must be one of {', '.join(WAVE_FORMATS)}, "
                          f"got {value!r}")
    return value


def dump_path(config: RunConfig, width: int, fmt: str, root: Path | None = None) -> Path:
    """``<dumps>/<slug>/<slug>-w<width>.<fmt>``: named after the configuration."""
    root = dumps_root() if root is None else Path(root)
    return root / config.slug / f"{config.slug}-w{width}.{fmt}"


def companion(dump: Path, suffix: str) -> Path:
    """The companion file ``suffix`` (one of :data:`COMPANIONS`) of ``dump``."""
    return Path(f"{Path(dump).with_suffix('')}{suffix}")


@contextlib.contextmanager
def staged_dump(final: Path) -> Iterator[Path]:
    """Have a dump and its companions written aside, and placed at a successful end.

    Parameters
    ----------
    final : Path
        Where the dump belongs. Its folder is created; abandoned staging
        folders of killed processes in it are swept first.

    Yields
    ------
    Path
        The absolute path to write the dump to (the simulator runs in its
        own working directory); companions go beside it, as
        :func:`~pipegossip.waveforms.gtkw.write_gtkw` puts them.
    """
    final = Path(final).resolve()
    final.parent.mkdir(parents=True, exist_ok=True)
    sweep(final.parent)
    with scratch(final.parent, final.name) as stage:
        staged = stage / final.name
        yield staged
        # A rename sequence cut in half would pair the new dump with old
        # companions: let Ctrl-C wait the few microseconds it takes.
        with deferred_signals():
            _place(staged, final)


def _place(staged: Path, final: Path) -> None:
    os.replace(staged, final)
    stage, home = str(staged.parent), str(final.parent)
    for suffix in COMPANIONS:
        src, dst = companion(staged, suffix), companion(final, suffix)
        if not src.exists():
            dst.unlink(missing_ok=True)
        elif suffix == ".gtkw":
            # The save file names the dump and its filters by absolute path.
            atomic_write(dst, src.read_text(encoding="utf-8").replace(stage, home))
        else:
            os.replace(src, dst)
