"""pipegossip: generator and verification kit for crossbar gossip fabrics.

Subpackages map onto the repository's top-level folders:
``pipegossip.model`` (golden model), ``pipegossip.hw`` (Amaranth HDL),
``pipegossip.sim`` (cocotb co-simulation), ``pipegossip.waveforms``
(waveform read-back and reference run-tables).
"""

import os as _os
import signal as _signal
import sys as _sys
import threading as _threading

__version__ = "0.1.0"
__all__ = ["__version__"]


def _stopped_while_starting(signum, frame):
    # Nothing is written yet: end at once, without the traceback of the
    # import (NumPy, Amaranth) that the signal happened to interrupt.
    if signum == _signal.SIGINT:
        _os.write(2, b"pipegossip: interrupted\n")
    _os._exit(128 + signum)


def _guard_start() -> None:
    """Ctrl-C or SIGTERM while the command line starts exits 130 / 143, quietly.

    Starting takes seconds on a loaded machine (the imports); ``cli.main``
    installs the real handlers afterwards. Only when this process is the
    command (the ``pipegossip`` script, or ``python -m pipegossip``, whose
    package is imported while ``sys.argv[0]`` is still ``-m``), never for a
    program that imports the package.
    """
    first = _sys.argv[0] if _sys.argv else ""
    if first != "-m" and _os.path.basename(first) != "pipegossip":
        return
    if _threading.current_thread() is not _threading.main_thread():
        return
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _stopped_while_starting)
    if _signal.getsignal(_signal.SIGTERM) == _signal.SIG_DFL:
        _signal.signal(_signal.SIGTERM, _stopped_while_starting)


def _hold(point: str, wait: bool = True) -> None:
    """Test hook: wait at ``point`` while ``PIPEGOSSIP_TEST_HOLD`` names it.

    ``PIPEGOSSIP_TEST_HOLD=POINT:FILE`` creates FILE (holding the process id)
    on reaching POINT, then waits (up to a minute) for a signal: a test can
    signal the command at a known point instead of after a guessed delay,
    which a fast machine has passed already and a slow one not reached. With
    ``wait=False`` the point is only marked (the work goes on): for a point
    inside work that must really be running when the signal comes, such as a
    solver in C. The points are listed in docs/reference.md.
    """
    want, _, flag = _os.environ.get("PIPEGOSSIP_TEST_HOLD", "").partition(":")
    if want != point or not flag:
        return
    import time
    with open(flag + ".tmp", "w") as f:  # complete when it appears: a test reads the pid
        f.write(f"{_os.getpid()}\n")
    _os.replace(flag + ".tmp", flag)
    if not wait:
        return
    began = time.monotonic()
    while time.monotonic() - began < 60:
        time.sleep(0.01)


_guard_start()
_hold("imported")
