"""The Wilson 95 % interval of a solve rate and its one text form.

The bar tooltip and the review page's counts line once printed 1.3–50.0 % and 1.2–50.0 % for the
same report (half-up rounding of the decimal value in one, binary float formatting in the other);
both now ask ``percent_range``.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

Z_95 = 1.959963984540054


def wilson_95(*, solved: int, verified: int) -> list[float] | None:
    """[low, high] as fractions rounded to 4 places; None without a verified attempt."""
    if verified <= 0:
        return None
    p = solved / verified
    denominator = 1 + Z_95 * Z_95 / verified
    centre = (p + Z_95 * Z_95 / (2 * verified)) / denominator
    half = Z_95 * math.sqrt(p * (1 - p) / verified + Z_95 * Z_95 / (4 * verified**2)) / denominator
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def percent_range(bounds: Any) -> str | None:
    """``"1.3–50.0%"`` from recorded ``wilson_95`` fractions (one decimal, half up); None when the
    report recorded no usable interval."""
    if not (
        isinstance(bounds, list | tuple)
        and len(bounds) == 2
        and all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds)
    ):
        return None
    low, high = (_one_decimal(bound) for bound in bounds)
    return f"{low}–{high}%"


def _one_decimal(fraction: float) -> str:
    return str(Decimal(str(fraction * 100)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
