"""The FSM fabric in simulation, per cycle: runs into an ``HwRun``, judged by :mod:`pipegossip.sim.judge.fsm`.

* :mod:`.amaranth_run`: the fabric in Amaranth's simulator;
* :mod:`.runner`: builds through cocotb's public runner API and the runs on them;
* :mod:`.testbench`: the cocotb testbench (runs inside the simulator);
* :mod:`.cosim`: build, run, judge, and the waveform; the fast mode
  (:mod:`pipegossip.sim.fast`) is chosen here.
"""
