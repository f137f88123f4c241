"""The schedule fabric in simulation: Amaranth and Verilator/cocotb runs into a ``ScheduleRun``.

* :mod:`~pipegossip.sim.fsm.cosim`: one build per size, every schedule's runs on it, each judged
  by :mod:`pipegossip.sim.judge.schedule`;
* :mod:`~pipegossip.sim.fsm.testbench`: the cocotb testbench (runs inside the simulator; it also
  drives the network fabric, ``fabric="network"``).
"""
