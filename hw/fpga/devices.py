"""The FPGAs and boards the flow can build for, and each family's tools."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Device", "Board", "DEVICES", "BOARDS", "NETWORK_STORE"]


@dataclass(frozen=True)
class Device:
    """An FPGA the flow can place and route for."""

    name: str
    family: str                      # "ice40" or "ecp5"
    part: str                        # as printed in reports
    nextpnr_args: tuple[str, ...]    # device and package selection for nextpnr
    default_clock_mhz: float         # timing constraint of a bare build
    logic_cell: str                  # nextpnr cell type counted as "logic cells"


@dataclass(frozen=True)
class Board:
    """A board with an amaranth-boards platform and a self-checking top."""

    name: str
    device: str
    platform: str                    # "module:Class" in amaranth_boards
    bitstream: str                   # product file name
    program: str                     # how to load the bitstream (not needed to build)


DEVICES: dict[str, Device] = {
    "ice40-up5k": Device("ice40-up5k", "ice40", "iCE40UP5K-SG48",
                         ("--up5k", "--package", "sg48"), 50.0, "ICESTORM_LC"),
    **{f"ecp5-{k}k": Device(f"ecp5-{k}k", "ecp5", f"LFE5U-{k}F-6BG381C",
                            (f"--{k}k", "--package", "CABGA381", "--speed", "6"),
                            100.0, "TRELLIS_COMB")
       for k in (12, 25, 45, 85)},
}

BOARDS: dict[str, Board] = {
    "icebreaker": Board("icebreaker", "ice40-up5k", "amaranth_boards.icebreaker:ICEBreakerPlatform",
                        "top.bin", "iceprog top.bin"),
    **{f"ulx3s-{k}f": Board(f"ulx3s-{k}f", f"ecp5-{k}k",
                            f"amaranth_boards.ulx3s:ULX3S_{k}F_Platform",
                            "top.bit", "openFPGALoader -b ulx3s top.bit")
       for k in (12, 25, 45, 85)},
}

#: The network fabric's item store per family (``pipegossip.hw.network.store``): ECP5's
#: LUT RAM reads without a clock, so every bank becomes RAM; iCE40 has only clocked
#: EBR, its banks would be flip-flops holding more words than the one store's slots
#: (hypercube(3), depth 8: docs/network-fabric.md).
NETWORK_STORE = {"ice40": "single", "ecp5": "banks"}

#: nextpnr tool, Yosys synthesis command and "unconstrained pins are fine"
#: option per family (the bare build places its two pins anywhere).
_NEXTPNR = {"ice40": "nextpnr-ice40", "ecp5": "nextpnr-ecp5"}
_SYNTH = {"ice40": "synth_ice40", "ecp5": "synth_ecp5"}
_ALLOW_UNCONSTRAINED = {"ice40": "--pcf-allow-unconstrained", "ecp5": "--lpf-allow-unconstrained"}
