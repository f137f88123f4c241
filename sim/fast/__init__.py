"""The fast co-simulation mode: the FSM fabric checked by a checker in the simulated hardware.

* :mod:`.ports`: the names the fast top and its testbench share (imports nothing);
* :mod:`.checker`, :mod:`.batch`: the wrapper top with the in-hardware checker,
  and runs batched in the hardware;
* :mod:`.build`, :mod:`.mode`: the fabric and top texts, their builds, the runs
  and the per-cycle rerun of a failing run (judged by :mod:`pipegossip.sim.judge.fsm`);
* :mod:`.faults`: stand-in fabrics with one planted fault each;
* :mod:`~pipegossip.sim.fsm.testbench`: the cocotb testbench (runs inside the simulator).
"""
