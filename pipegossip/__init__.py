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


_guard_start()
