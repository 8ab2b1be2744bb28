"""The formula-injection guard of every CSV the Atlas writes: a value a spreadsheet would read as a
formula is prefixed with a single quote."""

from __future__ import annotations

from collections.abc import Iterable

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def guarded(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def export_tags(tags: Iterable[str] | None) -> str:
    """A source's tags as its CSV field: joined by commas in their stored order, guarded. Kept as
    a column (``Source.export_tags``) written with the display state: joining them per row
    in SQL was the largest cost of exporting 100,000 rows."""
    return guarded(",".join(tags or ()))
