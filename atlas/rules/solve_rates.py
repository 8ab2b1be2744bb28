"""The solve rates of a difficulty summary as flat columns, one number per cell.

A notebook reading ``/api/sources/`` (or its CSV twin) wants ``difficulty_large_rate`` as a
number, not a JSON document to unpack: these are the role arms of ``difficulty_summary`` (the
Small, Large and Hosted models of the protocol; never a follow-up, which keeps its place in the
summary), under the summary's own status (``difficulty_status``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ROLES = ("small", "large", "hosted")
MEASURES = ("solved", "verified", "rate")
COLUMNS = tuple(f"difficulty_{role}_{measure}" for role in ROLES for measure in MEASURES)
_EMPTY = dict.fromkeys(COLUMNS)


def arm_rate(entry: Mapping[str, Any]) -> float | None:
    """The report's ``solve_rate``; when absent, solved / verified if anything was verified
    (never recomputed from attempts)."""
    rate = entry.get("solve_rate")
    if rate is not None:
        return rate
    solved, verified = entry.get("solved"), entry.get("verified")
    if isinstance(solved, int) and isinstance(verified, int) and verified > 0:
        return solved / verified
    return None


def solve_rate_columns(summary: Mapping[str, Any] | None) -> dict[str, Any]:
    """``difficulty_<role>_solved``, ``…_verified`` and ``…_rate`` for each role, in ``COLUMNS``
    order; null for a role the summary has no arm for, and all null without a summary."""
    if not summary:
        return dict(_EMPTY)
    columns = dict(_EMPTY)
    seen: set[str] = set()
    for entry in summary.get("models") or ():
        role = entry.get("size")
        # A hosted follow-up is also sized "hosted"; it is not the protocol's Hosted arm.
        if role not in ROLES or role in seen or entry.get("followup_id"):
            continue
        seen.add(role)
        columns[f"difficulty_{role}_solved"] = entry.get("solved")
        columns[f"difficulty_{role}_verified"] = entry.get("verified")
        columns[f"difficulty_{role}_rate"] = arm_rate(entry)
    return columns
