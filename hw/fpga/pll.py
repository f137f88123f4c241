"""PLL settings for a faster clock than the board's oscillator (iCE40, ECP5).

Plain arithmetic, no hardware: the flow checks a requested clock with these
before it builds anything.
"""

from __future__ import annotations

__all__ = ["ice40_pll_params", "ecp5_pll_params"]


def ice40_pll_params(f_in_mhz: float, f_out_mhz: float) -> tuple[dict, float]:
    """SB_PLL40 parameters (simple feedback) closest to ``f_out_mhz``.

    Returns the parameter dict and the achieved output frequency; refuses
    (ValueError) when no setting comes within 1 %. Limits from the iCE40
    sysCLOCK PLL guide (as used by ``icepll``): PFD
    10-133 MHz, VCO 533-1066 MHz, output 16-275 MHz.
    """
    best = None
    for divr in range(16):
        pfd = f_in_mhz / (divr + 1)
        if not 10 <= pfd <= 133:
            continue
        for divf in range(128):
            vco = pfd * (divf + 1)
            if not 533 <= vco <= 1066:
                continue
            for divq in range(1, 7):
                out = vco / 2 ** divq
                if 16 <= out <= 275 and (best is None or abs(out - f_out_mhz) < best[0]):
                    best = (abs(out - f_out_mhz), divr, divf, divq, pfd, out)
    if best is None or best[0] > 0.01 * f_out_mhz:
        nearest = f" (nearest {best[-1]:.3f} MHz)" if best else ""
        raise ValueError(f"the iCE40 PLL cannot make {f_out_mhz} MHz from {f_in_mhz} MHz"
                         f"{nearest}")
    _, divr, divf, divq, pfd, out = best
    filter_range = next(k for k, top in enumerate((17, 26, 44, 66, 101), start=1) if pfd < top) \
        if pfd < 101 else 6
    return (dict(p_FEEDBACK_PATH="SIMPLE", p_DIVR=divr, p_DIVF=divf, p_DIVQ=divq,
                 p_FILTER_RANGE=filter_range), out)


def ecp5_pll_params(f_in_mhz: float, f_out_mhz: float) -> tuple[dict, float]:
    """EHXPLLL parameters (CLKOP feedback) closest to ``f_out_mhz``.

    Returns the parameter dict and the achieved output frequency; refuses
    (ValueError) when no setting comes within 1 %. Limits as in ``ecppll``:
    PFD 3.125-400 MHz, VCO 400-800 MHz, output 3.125-400 MHz.
    """
    best = None
    for clki_div in range(1, 129):
        pfd = f_in_mhz / clki_div
        if not 3.125 <= pfd <= 400:
            continue
        for clkfb_div in range(1, 81):
            out = pfd * clkfb_div
            if not 3.125 <= out <= 400:
                continue
            for clkop_div in range(1, 129):
                if 400 <= out * clkop_div <= 800:
                    if best is None or abs(out - f_out_mhz) < best[0]:
                        best = (abs(out - f_out_mhz), clki_div, clkfb_div, clkop_div, out)
                    break
    if best is None or best[0] > 0.01 * f_out_mhz:
        nearest = f" (nearest {best[-1]:.3f} MHz)" if best else ""
        raise ValueError(f"the ECP5 PLL cannot make {f_out_mhz} MHz from {f_in_mhz} MHz"
                         f"{nearest}")
    _, clki_div, clkfb_div, clkop_div, out = best
    return (dict(p_CLKI_DIV=clki_div, p_CLKFB_DIV=clkfb_div, p_CLKOP_DIV=clkop_div,
                 p_CLKOP_CPHASE=clkop_div - 1, p_CLKOP_FPHASE=0), out)

