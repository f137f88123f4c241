"""The hardware generator: Amaranth components of the gossip fabric.

``fabric.Fabric`` is the top (pinned interface, docs/hw.md), built from
``controller.Controller`` (one per processor, generated from its composer
program), ``arbiter.Resolver`` (resolution within a step) and ``crossbar.Crossbar``.
``export.verilog_text`` writes its Verilog, ``testbench.run_fabric`` runs it
in Amaranth's simulator, ``cost`` measures it with Yosys. Nothing is
imported here, so the command line starts without loading Amaranth.
"""
