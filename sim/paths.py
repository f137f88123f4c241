"""Where the co-simulation keeps its builds and writes its waveforms.

Both default to folders of the checkout (``build/cosim``,
``waveforms/dumps``), or of the working directory for an installed copy,
and move with ``$PIPEGOSSIP_BUILD_DIR`` and ``$PIPEGOSSIP_WAVES_DIR``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["project_root", "build_root", "dumps_root"]


def project_root() -> Path | None:
    """The checkout holding this package, or None for an installed copy."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def _default_root(env: str, *parts: str) -> Path:
    if os.environ.get(env):
        return Path(os.environ[env]).resolve()
    base = project_root() or Path.cwd()
    return base.joinpath(*parts)


def build_root() -> Path:
    """Where builds are cached: ``$PIPEGOSSIP_BUILD_DIR`` or ``<checkout>/build/cosim``."""
    return _default_root("PIPEGOSSIP_BUILD_DIR", "build", "cosim")


def dumps_root() -> Path:
    """Where waveforms go: ``$PIPEGOSSIP_WAVES_DIR`` or ``<checkout>/waveforms/dumps``."""
    return _default_root("PIPEGOSSIP_WAVES_DIR", "waveforms", "dumps")
