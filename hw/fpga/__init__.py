"""The YoWASP FPGA flow: synthesis, place and route, reports, boards."""
