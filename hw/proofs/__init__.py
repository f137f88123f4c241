"""Formal proofs of the fabric with SymbiYosys (docs/proofs.md).

``harness.FabricHarness`` wraps the fabric with its delivery, timing and
watchdog properties; ``resolver_miter.ResolverMiter`` checks the
any+substitute resolution against the serial chain of the rule;
``schedule_harness.ScheduleHarness`` loads one compiled schedule into the
schedule fabric and checks its run (``schedule_suite`` picks the program and
maps the fabric's memories for the solver); ``runner.run_sby`` runs one
SymbiYosys job; ``suite`` lists the jobs of a configuration or a sweep;
``catalog`` holds the names the command line offers. Nothing is imported
here, so the command line starts without loading Amaranth.
"""
