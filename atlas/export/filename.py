"""The download name of a filtered view, shared by ``/export.csv`` and the API's CSV twin: the
filters it was made with, so two downloads of different views do not overwrite each other."""

from __future__ import annotations

import re
from collections.abc import Mapping

FILENAME_PART = re.compile(r"[^A-Za-z0-9._-]+")
# The filters a download name mentions, in this order (the sort and paging never change rows).
NAMED_FILTERS = (
    "origin", "type", "turns", "family", "benchmark", "quality", "difficulty", "difficulty_status",
    "q", "show_bad", "show_excluded",
)  # fmt: skip


def export_filename(*, choices: Mapping[str, str], prefix: str = "rl-data-atlas") -> str:
    """``rl-data-atlas.csv`` for the whole catalog, else one part per filter, e.g.
    ``rl-data-atlas_type-RLVR_quality-good.csv``."""
    parts = [prefix]
    for key in NAMED_FILTERS:
        value = str(choices.get(key) or "").strip()
        if not value:
            continue
        if key in ("show_bad", "show_excluded"):
            parts.append(key.replace("_", "-"))
            continue
        slug = FILENAME_PART.sub("-", value).strip("-.")[:40] or "value"
        parts.append(f"{key}-{slug}")
    return "_".join(parts)[:180] + ".csv"
