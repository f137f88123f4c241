import os
import stat

import pytest

from pipegossip.files import atomic_directory, atomic_write


def test_atomic_write_gives_normal_permissions_and_leaves_no_temp(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic_write(tmp_path / "a.txt", "hello")
        assert path.read_text() == "hello"
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    finally:
        os.umask(old)
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_atomic_write_into_missing_folder_refuses(tmp_path):
    with pytest.raises(FileNotFoundError):
        atomic_write(tmp_path / "nope" / "a.txt", b"x")
    assert list(tmp_path.iterdir()) == []


def test_atomic_directory_replaces_only_on_success(tmp_path):
    target = tmp_path / "out"
    with atomic_directory(target) as d:
        (d / "f").write_text("1")
    assert (target / "f").read_text() == "1"
    with pytest.raises(RuntimeError):
        with atomic_directory(target) as d:
            (d / "f").write_text("2")
            raise RuntimeError("boom")
    assert (target / "f").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
