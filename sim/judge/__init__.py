"""The judges: every hardware record is held against the golden model here, and only here.

* :mod:`.fsm`: the FSM fabric's record (``HwRun``) against the model's run table;
* :mod:`.schedule`: the schedule fabric's record (``ScheduleRun``) against its program;
* :mod:`.network`: the network fabric's per-link record against its program;
* :mod:`.verdict`: the one ``Verdict`` and ``Mismatch`` all three return.
"""
