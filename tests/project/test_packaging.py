"""pyproject.toml declares every folder and data file it ships, so installing
prints no setuptools "Package would be ignored" warning and a wheel holds the
reference run-tables and templates."""

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _shipped_folders() -> dict[str, Path]:
    """Import name -> folder of every folder under the mapped package roots."""
    found = {}
    for name, where in SETUPTOOLS["package-dir"].items():
        root = ROOT / where
        for folder in [root, *root.rglob("*")]:
            if folder.is_dir() and folder.name != "__pycache__" and any(
                    f.is_file() for f in folder.iterdir()):
                rel = folder.relative_to(root).parts
                found[".".join((name, *rel))] = folder
    return found


def test_every_folder_with_files_is_a_declared_package():
    missing = sorted(set(_shipped_folders()) - set(SETUPTOOLS["packages"]))
    assert not missing, f"add to [tool.setuptools] packages: {missing}"


def test_every_data_file_is_package_data():
    data = SETUPTOOLS["package-data"]
    unlisted = []
    for package, folder in _shipped_folders().items():
        for f in folder.iterdir():
            if not f.is_file() or f.suffix in (".py", ".pyc"):
                continue
            # a pattern belongs to the package that declares it, relative to its folder
            owners = [(p, pat) for p, pats in data.items() for pat in pats
                      if package == p or package.startswith(p + ".")]
            if not any(fnmatch.fnmatch(_relative(f, ROOT, SETUPTOOLS["package-dir"], p), pat)
                       for p, pat in owners):
                unlisted.append(str(f.relative_to(ROOT)))
    assert not unlisted, f"add to [tool.setuptools.package-data]: {unlisted}"


def _relative(path: Path, root: Path, package_dir: dict[str, str], package: str) -> str:
    """``path`` relative to the folder of ``package``."""
    parts = package.split(".")
    for k in range(len(parts), 0, -1):
        head = ".".join(parts[:k])
        if head in package_dir:
            base = root / package_dir[head] / Path(*parts[k:])
            return path.relative_to(base).as_posix()
    raise AssertionError(f"{package} has no folder in package-dir")
