"""pipegossip: generator and verification kit for crossbar gossip fabrics.

Subpackages map onto the repository's top-level folders:
``pipegossip.model`` (golden model), ``pipegossip.hw`` (Amaranth HDL),
``pipegossip.sim`` (cocotb co-simulation), ``pipegossip.waveforms``
(waveform read-back and reference run-tables).
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
