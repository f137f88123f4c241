"""The YoWASP FPGA flow: synthesis, place and route, reports, boards.

The flow (docs/fpga.md):

* :mod:`.devices`: the FPGAs and boards, and each family's tools;
* :mod:`.tools`: finding and running the YoWASP tools, :class:`~.tools.FlowError`;
* :mod:`.flow`: :func:`~.flow.prepare` a job, :func:`~.flow.run_flow` it;
* :mod:`.outputs`: which output folders may be (re)filled, checked up front;
* :mod:`.reports`: nextpnr's JSON report and the text summary;
* :mod:`.sweep`: the scaling sweep, its table and plot.

The designs it builds (Amaranth components):

* :mod:`.bare_top`: the registered two-pin boundary that measures a fabric;
* :mod:`.selftest`, :mod:`.checker`: the self-checking run loop and its
  on-chip delivery checkers;
* :mod:`.board_top`, :mod:`.uart`, :mod:`.pll`: the board top around it.

Nothing is imported here, so the command line registers ``fpga`` without
loading Amaranth.
"""
