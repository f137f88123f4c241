"""Shared pytest set-up: slow sweeps on request, waveforms on request."""

import os
import signal

import pytest

# Started in the background by a script (`cmd &`, nohup), the suite inherits
# SIGINT ignored, and so would every command a test starts: a test's Ctrl-C
# would then do nothing and the command run on to the test's timeout. A
# handler here is reset to the default in every child at exec, as from a
# terminal (issue 39: the suite must not depend on how it was started).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Tests of behaviour may call commands by their old flat spellings (kept for
# this release); their one-line notes are tested in tests/cli/test_cli_groups.py.
os.environ.setdefault("PIPEGOSSIP_OLD_SPELLINGS", "quiet")


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run tests marked slow (long sweeps)")
    parser.addoption("--waves", nargs="?", const="vcd", default=None, choices=("vcd", "fst"),
                     help="co-simulation tests dump waveforms into waveforms/dumps/ "
                     "(same as PIPEGOSSIP_WAVES=1; fst needs liblz4-dev)")


def pytest_configure(config):
    waves = config.getoption("--waves")
    if waves:
        os.environ["PIPEGOSSIP_WAVES"] = waves


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow") or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --runslow or -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
