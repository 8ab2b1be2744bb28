"""Facet counts of the catalog's filters: for every option of a filter, how many sources the view
would show with that option chosen and every other filter, search and toggle as they are (the
Datasette and CKAN habit), so nobody picks an option that gives nothing without knowing it.

One SQL statement counts them all: the page's own ``SourceFilterSet`` without the faceted filters
(``queryset_without``: search, origin, the other filters and the Excluded toggle stay in its
WHERE; Bad rows are kept), grouped by the option of each facet that selects a row. That is one
scan of the view, where a grouped count per facet was one scan each (at 100,000 sources, seven
scans were most of the page's time). The groups — a few thousand at most, the combinations the
data holds — are then summed per facet, each group counted for a facet's options only when it
passes the other facets' chosen options. The origins' counts are the catalog tabs' badges
(``catalog_view.view_counts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Count, F, TextField, Value, When
from django.db.models.functions import Coalesce

from atlas.filters import DIFFICULTY_RANGES, UNKNOWN, SourceFilterSet, difficulty_condition

# The filters whose options are counted.
FACETS = ("type", "turns", "family", "benchmark", "quality", "difficulty")
BAD = "bad"
MEASURED = "current"
UNMEASURED = "unmeasured"
# The difficulty filter's options overlap (a current source is also in a range, a historical one
# is also "not measured"), so a row is grouped by its status and by its Large model's range.
_RANGE = "difficulty_range"
TEXT = TextField()


def _grouping(name: str):
    """The option of facet ``name`` that selects a row (``""``: none does), as SQL text."""
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


def _selecting(group: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Per facet, the options that select a group's rows. Each facet but the difficulty has one;
    the difficulty's are the status, the range, and "not measured" for anything not current."""
    options = {name: frozenset({group[name]}) for name in FACETS if name != "difficulty"}
    status, in_range = group["difficulty"], group[_RANGE]
    options["difficulty"] = frozenset(
        value for value in (status, in_range, UNMEASURED if status != MEASURED else "") if value
    )
    return options


@dataclass(frozen=True)
class FacetCounts:
    """``counts[facet][option value]``: the sources that option would show; ``""`` is the
    filter's "any" option (the view without it)."""

    counts: dict[str, dict[str, int]]

    def of(self, facet: str) -> dict[str, int]:
        return self.counts.get(facet, {})


def facet_counts(*, filterset: SourceFilterSet) -> FacetCounts:
    """Every facet's option counts under the other active filters, in one query."""
    chosen = {name: filterset.form.cleaned_data.get(name) or "" for name in FACETS}
    groupings = {name: _grouping(name) for name in (*FACETS, _RANGE)}
    groups = (
        filterset.queryset_without(*FACETS, shows_bad=True)
        .order_by()
        .annotate(**{f"facet_{name}": expression for name, expression in groupings.items()})
        .values(*(f"facet_{name}" for name in groupings))
        .annotate(n=Count("*"))
    )
    counts: dict[str, dict[str, int]] = {name: {"": 0} for name in FACETS}
    for row in groups:
        group = {name: row[f"facet_{name}"] for name in groupings}
        selecting = _selecting(group)
        passing = {name: not chosen[name] or chosen[name] in selecting[name] for name in FACETS}
        # Hidden from a view without a Bad filter, unless the toggle shows them.
        hidden_bad = group["quality"] == BAD and not filterset.toggles_bad_on
        for facet in FACETS:
            if not all(passing[other] for other in FACETS if other != facet):
                continue
            # Bad rows are in a view only when the toggle or a Bad filter shows them; the Bad
            # option itself always shows them.
            if facet != "quality" and hidden_bad and chosen["quality"] != BAD:
                continue
            options = counts[facet]
            if facet != "quality" or not hidden_bad:
                options[""] += row["n"]
            for option in selecting[facet]:
                options[option] = options.get(option, 0) + row["n"]
    return FacetCounts(counts=counts)
