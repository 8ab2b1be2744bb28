"""Facet counts of the catalog's filters: for every option of a filter, how many sources the view
would show with that option chosen and every other filter, search and toggle as they are (the
Datasette and CKAN habit), so nobody picks an option that gives nothing without knowing it.

The counts come from the page's own ``SourceFilterSet`` (``facet_queryset``: the view without the
counted filter), grouped in SQL — one statement for every facet, a ``UNION ALL`` of one grouped
count per facet. The origin's counts are the catalog tabs' badges (``catalog_view.view_counts``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Case, Count, F, QuerySet, TextField, Value, When
from django.db.models.functions import Coalesce

from atlas.filters import DIFFICULTY_RANGES, UNKNOWN, SourceFilterSet, difficulty_condition

# The filters whose options are counted; each groups by one expression of the row.
FACETS = ("type", "turns", "family", "benchmark", "quality", "difficulty")
# The difficulty filter's options overlap (a current source may also be in a range), so it is
# counted twice: by status, and by the Large model's range.
_RANGE = "difficulty_range"
_MEASURED = "current"


TEXT = TextField()


def _grouping(name: str):
    """The row's value of facet ``name``, as the option value that chooses it (``""`` when no
    option does); text, so every facet's values share the union's column."""
    if name in ("type", "turns", "family"):
        return Case(When(**{name: ""}, then=Value(UNKNOWN)), default=F(name), output_field=TEXT)
    if name == "benchmark":
        return Case(
            When(is_benchmark=True, then=Value("true")), default=Value("false"), output_field=TEXT
        )
    if name == "quality":
        return Coalesce(F("effective_quality"), Value(UNKNOWN), output_field=TEXT)
    if name == "difficulty":
        return Coalesce(F("difficulty_status"), Value(""), output_field=TEXT)
    if name == _RANGE:
        return Case(
            *(When(difficulty_condition(key), then=Value(key)) for key in DIFFICULTY_RANGES),
            default=Value(""),
            output_field=TEXT,
        )
    raise ValueError(f"Not a facet: {name}")


@dataclass(frozen=True)
class FacetCounts:
    """``counts[facet][option value]``: the sources that option would show; ``""`` is the
    filter's "any" option (the view without it)."""

    counts: dict[str, dict[str, int]]

    def of(self, facet: str) -> dict[str, int]:
        return self.counts.get(facet, {})


def _grouped(queryset: QuerySet, *, facet: str) -> QuerySet:
    return (
        queryset.order_by()
        .annotate(facet=Value(facet, output_field=TEXT), option=_grouping(facet))
        .values("facet", "option")
        .annotate(n=Count("*"))
    )


def facet_counts(*, filterset: SourceFilterSet) -> FacetCounts:
    """Every facet's option counts under the other active filters, in one query."""
    parts = [_grouped(filterset.facet_queryset(name), facet=name) for name in FACETS]
    parts.append(_grouped(filterset.facet_queryset("difficulty"), facet=_RANGE))
    grouped: dict[str, dict[str, int]] = {name: {} for name in (*FACETS, _RANGE)}
    for row in parts[0].union(*parts[1:], all=True):
        grouped[row["facet"]][row["option"]] = row["n"]
    counts: dict[str, dict[str, int]] = {}
    for name in FACETS:
        options = {key: n for key, n in grouped[name].items() if key}
        counts[name] = {"": sum(grouped[name].values()), **options}
    # Quality's "any" option is the view without a quality filter: Bad rows only if the toggle
    # shows them (facet_queryset counted them for the Bad option).
    if not filterset.toggles_bad_on:
        counts["quality"][""] -= counts["quality"].get("bad", 0)
    difficulty = counts["difficulty"]
    difficulty["unmeasured"] = difficulty[""] - difficulty.get(_MEASURED, 0)
    difficulty.update((key, n) for key, n in grouped[_RANGE].items() if key)
    return FacetCounts(counts=counts)


def with_counts(*, options: list[tuple[str, str]], counts: dict[str, int]) -> list[tuple[str, str]]:
    """Option labels with the count each would show: "RLVR (120)"."""
    return [(value, f"{label} ({counts.get(value, 0):,})") for value, label in options]
