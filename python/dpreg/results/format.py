"""Number formatting in the style of R's ``print.summary.lm`` and conversion to plain Python types.

Everything here is pure formatting of values that are already public or released; nothing reads data.
"""
from __future__ import annotations

import math

import numpy as np

from .._plain import to_plain  # noqa: F401  (the one converter; results code imports it from here)

#: R's default for summaries: digits = max(3, getOption("digits") - 3) = 4
DIGITS = 4
#: below this a p-value prints as "< 2e-16" in coefficient tables (R: .Machine$double.eps)
P_FLOOR = 2.220446049250313e-16
#: R's significance legend (ASCII quotes, as R prints it in a C locale)
SIGNIF_LEGEND = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"
#: upper ends of R's symnum intervals (right-closed, include.lowest): p <= 0.001 -> "***", ...
_STAR_CUTS = ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, "."))


def stars(p) -> str:
    """R's significance stars: p <= 0.001 '***', <= 0.01 '**', <= 0.05 '*', <= 0.1 '.', else ' '.
    Missing p-values give ''."""
    if p is None or not np.isfinite(p):
        return ""
    for cut, mark in _STAR_CUTS:
        if p <= cut:
            return mark
    return " "


def is_missing(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and not np.isfinite(x))


def _decimals_needed(x: float, digits: int) -> int:
    """Decimals needed to show ``x`` with ``digits`` significant digits, trailing zeros dropped."""
    if x == 0 or not np.isfinite(x):
        return 0
    mag = int(math.floor(math.log10(abs(x))))
    dec = max(0, digits - 1 - mag)
    text = f"{abs(x):.{dec}f}"
    if "." in text:
        frac = text.split(".")[1].rstrip("0")
        return len(frac)
    return 0


def format_column(values, digits: int = DIGITS, na: str = "NA") -> list[str]:
    """Format a numeric column with a common number of decimals, like R's ``format(x, digits=)``:
    every element shows at least ``digits`` significant digits; falls back to scientific notation when
    fixed notation would be much wider (R's ``scipen = 0`` rule, simplified)."""
    vals = [None if is_missing(v) else float(v) for v in values]
    finite = [v for v in vals if v is not None]
    if not finite:
        return [na for _ in vals]
    dec = min(15, max(_decimals_needed(v, digits) for v in finite))
    fixed = [f"{v:.{dec}f}" for v in finite]
    sci = [f"{v:.{digits - 1}e}" for v in finite]
    use_sci = max(len(s) for s in fixed) > max(len(s) for s in sci) and max(abs(v) for v in finite) > 0
    out = []
    for v in vals:
        if v is None:
            out.append(na)
        elif use_sci:
            out.append(_tidy_sci(f"{v:.{digits - 1}e}"))
        else:
            out.append(f"{v:.{dec}f}")
    return out


def _tidy_sci(text: str) -> str:
    """'1.230e-05' -> '1.23e-05' (R drops trailing zeros of the mantissa)."""
    mant, exp = text.split("e")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return f"{mant}e{exp}"


def format_number(x, digits: int = DIGITS, na: str = "NA") -> str:
    """One number with ``digits`` significant digits (R's ``signif``/``format`` for a scalar)."""
    if is_missing(x):
        return na
    x = float(x)
    if x == 0:
        return "0"
    mag = int(math.floor(math.log10(abs(x))))
    if mag >= 15 or mag < -4:
        return _tidy_sci(f"{x:.{digits - 1}e}")
    dec = max(0, digits - 1 - mag)
    text = f"{x:.{dec}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_pvalue(p, digits: int = 3, floor_text: str = "< 2e-16", na: str = "NA") -> str:
    """R's ``format.pval`` with eps = machine epsilon: tiny p-values print as ``< 2e-16``."""
    if is_missing(p):
        return na
    p = float(p)
    if p < P_FLOOR:
        return floor_text
    if p >= 1e-4:
        return format_number(p, digits)
    return _tidy_sci(f"{p:.{digits - 1}e}")


def format_percent_label(prob: float) -> str:
    """R's confint column labels: 0.025 -> '2.5 %', 0.975 -> '97.5 %'."""
    return f"{format_number(100 * prob, 3)} %"


# ---- plain Python types --------------------------------------------------------------------------
# the one converter, to_plain, lives in the base layer (dpreg._plain) and is re-exported above


def from_plain_array(values, shape_2d: bool = False) -> np.ndarray | None:
    """Inverse of :func:`to_plain` for numeric arrays: None -> NaN."""
    if values is None:
        return None
    if shape_2d:
        return np.array([[np.nan if v is None else float(v) for v in row] for row in values], dtype=float)
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)
