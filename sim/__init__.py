"""Hardware behaviour turned into a trace record and held against the golden model.

The folders follow the flow: runners produce a record, the judge holds it
against the model.

* :mod:`.record`: the one simulator-neutral trace record (``HwRun``, and
  ``ScheduleRun`` for the schedule fabric), and the job format the runner
  hands the testbench;
* :mod:`.judge`: the judges and the one ``Verdict`` (:mod:`.judge.fabric`
  for the FSM fabric, :mod:`.judge.schedule`, :mod:`.judge.network`);
* :mod:`.fabric`: the FSM fabric per cycle (Amaranth runner, cocotb
  testbench, builds through cocotb's public runner API, the whole cosim);
* :mod:`.fast`: the FSM fabric's fast mode, checked in the simulated hardware;
* :mod:`.schedule`, :mod:`.network`: the program-driven fabrics' runs;
* :mod:`.tools`: simulator tool chains, build and run-time library caches,
  cached and stamped per configuration;
* :mod:`.scratch`, :mod:`.waves`, :mod:`.paths`: temporary folders cleaned
  on every exit path, staged waveform dumps, where things go;
* :mod:`.throughput`, :mod:`.bench`, :mod:`.sweep_job`: streaming rate,
  speed, and the cosim sweep's job; :mod:`.netlist_sim`: the routed FPGA
  netlist in Verilator.

The commands live in :mod:`pipegossip.cli.sim`. Importing this package
imports neither cocotb nor the hardware generator.
"""
