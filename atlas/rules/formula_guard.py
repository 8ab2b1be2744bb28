"""The formula-injection guard of every CSV the Atlas writes: a value a spreadsheet would read as a
formula is prefixed with a single quote. One rule, in the two forms its writers need: ``guarded``
for values Python writes (the API's CSV twin, the stored tags), ``guard_sql`` for values the
database writes (``/export.csv``: COPY on PostgreSQL, the csv module's rows elsewhere)."""

from __future__ import annotations

from collections.abc import Iterable

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def guarded(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def guard_sql(value: str, *, vendor: str) -> str:
    """``guarded`` of the SQL text expression ``value``, which appears three times (bind its
    parameters thrice). The first code point compared as an integer costs far less than LEFT()
    against strings, at one guard per field per row."""
    first = "ascii" if vendor == "postgresql" else "unicode"
    codes = ", ".join(str(ord(prefix)) for prefix in FORMULA_PREFIXES)
    return f"(CASE WHEN {first}({value}) IN ({codes}) THEN '''' || {value} ELSE {value} END)"


def export_tags(tags: Iterable[str] | None) -> str:
    """A source's tags as its CSV field: joined by commas in their stored order, guarded. Kept as
    a column (``Source.export_tags``) written with the display state: joining them per row
    in SQL was the largest cost of exporting 100,000 rows."""
    return guarded(",".join(tags or ()))
