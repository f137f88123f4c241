"""The network fabric in simulation: per-link records, judged by :mod:`pipegossip.sim.judge.network`.

* :mod:`.run`: the record, Amaranth-simulator runs and fault injection;
* :mod:`~pipegossip.sim.fsm.cosim`: Verilator/cocotb runs on one build (the schedule fabric's
  testbench with ``fabric="network"``).
"""
