"""Compressed and streamed input is capped while it is read (issue 25).

``model/inputs.py`` counts a gzip file's bytes as they are decompressed and
standard input's as they arrive: a gzip bomb, a gzip of too much valid JSON
and an endless pipe are refused with one line naming the input and the
limit, in little time and memory. A schedule past the held limit is read as a
stream (``model/schedules/read_rounds.py``, issue 43): there a bomb of blanks
stops at the whitespace bound, text that is no schedule at its first byte. The command-line cases run in a child and
measure its wall time and peak memory (``resource.getrusage``).
"""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys

import pytest

from pipegossip.model.errors import FormatError
from pipegossip.model.inputs import decompress_input, read_input_bytes
from pipegossip.model.schedules.ir import dumps, load, loads
from pipegossip.model.schedules.read_rounds import MAX_WHITESPACE
from pipegossip.model.algorithms.limits import one_factor



def _gzip_of(block: bytes, times: int, head: bytes = b"", tail: bytes = b"") -> bytes:
    """``head + block * times + tail`` gzipped, the block's gzip member repeated (cheap to make)."""
    member = gzip.compress(block, 9, mtime=0)
    return gzip.compress(head, mtime=0) + member * times + gzip.compress(tail, mtime=0)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bombs")
    zeros = folder / "bomb.json.gz"  # about 4 MB, 4 GiB of zeros
    zeros.write_bytes(_gzip_of(b"\0" * (64 << 20), 64))
    spaces = folder / "spaces.json.gz"  # valid JSON whitespace: no early NUL refusal
    spaces.write_bytes(_gzip_of(b" " * (64 << 20), 16))
    big = folder / "big.json.gz"  # 300 MB of one valid JSON list
    big.write_bytes(_gzip_of(b"12345678," * (1 << 20), 32, head=b"[", tail=b"0]"))
    return {"zeros": zeros, "spaces": spaces, "big": big}


def test_the_bombs_are_what_they_claim(bombs):
    assert 3_000_000 < bombs["zeros"].stat().st_size < 5_000_000
    with gzip.open(bombs["big"]) as f:  # what the refused bytes would have been
        assert f.read(10) == b"[12345678,"
        total = 10 + sum(len(c) for c in iter(lambda: f.read(1 << 24), b""))
    assert total > 300_000_000


def _measure(argv, stdin=None, shell=None):
    """Run pipegossip in a child; (exit status, stderr, seconds, peak RSS in MB)."""
    code = ("import resource, subprocess, sys, time, json\n"
            "t = time.monotonic()\n"
            "p = subprocess.run(sys.argv[2:] if sys.argv[1] == 'argv' else sys.argv[2], "
            "shell=sys.argv[1] == 'shell', stdin=subprocess.DEVNULL if sys.argv[1] == 'argv' "
            "else None, capture_output=True)\n"
            "took = time.monotonic() - t\n"
            "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
            "print(json.dumps([p.returncode, p.stderr.decode(), took, rss]))\n")
    pg = [sys.executable, "-m", "pipegossip"]
    if shell is None:
        cmd = [sys.executable, "-c", code, "argv", *pg, *argv]
    else:
        cmd = [sys.executable, "-c", code, "shell",
               shell.format(pg=" ".join(pg), args=" ".join(argv))]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=stdin)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def startup():
    """Seconds to start the command line at all on this (possibly loaded) machine."""
    return _measure(["--version"])[2]


@pytest.mark.parametrize("case,how", [
    ("zeros", "file"), ("zeros", "stdin"), ("spaces", "file"), ("big", "file"),
    ("big", "stdin"), ("zeros", "cosim-schedule")])
def test_bombs_are_refused_in_time_and_memory(bombs, startup, case, how):
    path = str(bombs[case])
    if how == "file":
        status, err, took, rss = _measure(["check", path])
    elif how == "stdin":
        status, err, took, rss = _measure(["check", "-"], shell="{pg} {args} < " + path)
    else:
        status, err, took, rss = _measure(["cosim-schedule", path])
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert ("standard input" if how == "stdin" else path) in lines[0]
    if case == "zeros":
        assert "binary" in lines[0]
    elif case == "spaces":  # past the held limit: streamed, and the blanks are bounded
        assert f"more than {MAX_WHITESPACE:,} bytes of whitespace in a row" in lines[0]
    else:  # a list, read past the held limit: refused at its first byte
        assert "a schedule file holds one JSON object (byte 0)" in lines[0]
    assert rss < 500, f"{rss:.0f} MB"
    # Under 5 s on an idle machine; on a loaded one, starting Python takes longer.
    assert took < 5 + 2 * startup, f"{took:.1f} s (start-up {startup:.1f} s)"


def test_an_endless_pipe_is_refused(startup):
    status, err, took, rss = _measure(["check", "-"], shell="cat /dev/zero | {pg} {args}")
    assert status == 2 and "standard input is binary" in err, err
    status, err, took, rss = _measure(["check", "-"], shell="yes | {pg} {args}")
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert "standard input: a schedule file holds one JSON object (byte 0)" in err, err
    assert rss < 500 and took < 5 + 2 * startup


def test_decompression_is_counted_chunk_by_chunk():
    data = b'{"x": "' + b"a" * 5000 + b'"}'
    gz = gzip.compress(data)
    assert decompress_input(gz, "t") == data
    assert decompress_input(gz + gzip.compress(b"!") + b"\0" * 8, "t") == data + b"!"
    with pytest.raises(FormatError, match="more than 4,000 bytes"):
        decompress_input(gz, "schedule file", "a.json.gz", max_bytes=4000)
    assert decompress_input(gz, "t", max_bytes=len(data)) == data  # the limit itself is fine
    with pytest.raises(FormatError, match="ends early"):
        decompress_input(gz[:-10], "t")
    with pytest.raises(FormatError, match="not a readable gzip"):
        decompress_input(gz + b"junk", "t")


def test_stdin_is_counted_and_schedules_load_from_it(monkeypatch):
    schedule = one_factor(8)
    text = dumps(schedule)
    for data in (text, dumps(schedule, gz=True)):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        assert load("-").n == 8
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{" + b" " * 5000)))
    with pytest.raises(FormatError, match="on standard input holds more than 4,000 bytes"):
        read_input_bytes("-", "schedule file", max_bytes=4000)


def test_a_legal_gzip_schedule_still_loads(tmp_path):
    s = one_factor(16)
    (tmp_path / "s.json.gz").write_bytes(dumps(s, gz=True))
    assert load(tmp_path / "s.json.gz").n == 16
    assert loads(dumps(s, gz=True)).n == 16
