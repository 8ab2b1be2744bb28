"""The catalog page's view model: the query read leniently (with a note for every value it
ignored or clamped), counts that follow the view, the page of rows, pagers, tabs and controls."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from django.db.models import Count, Q, QuerySet, Sum
from django.urls import reverse
from django.utils.safestring import SafeString

from atlas.contributions import catalog_cells
from atlas.filters import (
    BENCHMARK_CHOICES,
    DIFFICULTY_CHOICES,
    DIFFICULTY_STATUS_CHOICES,
    FAMILY_UNKNOWN_LABEL,
    QUALITY_CHOICES,
    TURNS_CHOICES,
    TYPE_CHOICES,
    UNKNOWN,
    CatalogQuery,
    SourceFilterSet,
    lenient_filterset,
)
from atlas.models import Source
from atlas.pagination import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    MIN_PAGE_SIZE,
    PageWindow,
    lenient_paging,
    page_window,
)
from atlas.rules import labels
from atlas.rules.vocabularies import SourceKind
from atlas.selectors import CatalogVocabulary, SyncStatus, kept
from atlas.web.catalog_html import (
    filter_help_html,
    headers_html,
    options_html,
    rows_html,
    selects_html,
)
from atlas.web.catalog_rows import PAGE_ROWS, CatalogRow, catalog_row, decoded_summary
from atlas.web.source_links import RowLinks

COLUMNS = (
    ("name", "Source name"), ("origin", "Catalog"), ("dataset", "Dataset"), ("rows", "Input rows"),
    ("turns", "Interaction"), ("type", "Type"), ("benchmark", "Benchmark"), ("family", "Family"),
    ("difficulty", "Difficulty"), ("quality", "Quality"), ("review_date", "Review date"),
    ("status", "Status"),
)  # fmt: skip
COLUMN_TITLES = {"rows": "Selected input rows before conversion or curation"}
SORT_ICONS = {"ascending": "↑", "descending": "↓", "none": "↕"}
PAGE_SIZES = (25, 50, 100, 200, 500)
# The rows-per-page select's options: the default size is the parameter's absence.
PAGE_SIZE_OPTIONS = tuple(
    ("" if size == DEFAULT_PAGE_SIZE else str(size), str(size)) for size in PAGE_SIZES
)
# Parameters the page reads besides the filters: paging, and the source whose details are open.
PAGE_PARAMETERS = ("page", "page_size", "source")
TITLE = "RL Data Atlas"
FILTER_KEYS = (
    "type", "turns", "family", "benchmark", "quality", "difficulty", "difficulty_status",
    "show_bad", "show_excluded",
)  # fmt: skip


@dataclass(frozen=True)
class ViewCounts:
    """Counts of the rows matching the view (all pages), per origin and in total."""

    matching: int
    task_total: int
    known_counts: int
    unknown_counts: int
    by_origin: dict[str, int]


def origin_groups(*, without_origin: QuerySet[Source]) -> dict[str, dict[str, Any]]:
    """One grouped query over the view without its tab: per origin, its matching rows, their
    task total, known and unknown dataset counts."""
    # COUNT(*) and COUNT(kind) (never null; Django refuses a filtered COUNT(*)), not COUNT(id):
    # every column read must be in a covering index (catalog_src_view_counts, catalog_src_type_rows,
    # catalog_src_facet_counts) for an index-only scan instead of a full table scan.
    return {
        row["origin"]: {key: value for key, value in row.items() if key != "origin"}
        for row in without_origin.order_by()
        .values("origin")
        .annotate(
            matching=Count("*"),
            task_total=Sum("task_count"),
            known=Count("task_count"),
            unknown=Count("kind", filter=Q(kind=SourceKind.DATASET, task_count__isnull=True)),
        )
    }


def view_counts(*, groups: Mapping[str, Mapping[str, Any]], origin: str) -> ViewCounts:
    """The tab badges, and the totals of the selected tab (or of all of them)."""
    chosen = [row for name, row in groups.items() if not origin or name == origin]
    return ViewCounts(
        matching=sum(row["matching"] for row in chosen),
        task_total=sum(row["task_total"] or 0 for row in chosen),
        known_counts=sum(row["known"] for row in chosen),
        unknown_counts=sum(row["unknown"] for row in chosen),
        by_origin={name: row["matching"] for name, row in groups.items()},
    )


def parameter_notes(
    *, query: Mapping[str, str], filterset: SourceFilterSet, window: PageWindow
) -> list[str]:
    """A sentence for every parameter of the URL that was ignored or changed."""
    notes = []
    for key in query:
        if key not in filterset.filters and key not in PAGE_PARAMETERS:
            notes.append(f"Unknown parameter “{key}” was ignored.")
    for key, value in getattr(filterset, "ignored", {}).items():
        notes.append(f"“{key}={value}” is not a valid value and was ignored.")
    raw_page = (query.get("page") or "").strip()
    raw_size = (query.get("page_size") or "").strip()
    requested_page, requested_size = _int_or_none(raw_page), _int_or_none(raw_size)
    if raw_size and (
        requested_size is None or not MIN_PAGE_SIZE <= requested_size <= MAX_PAGE_SIZE
    ):
        notes.append(
            f"“page_size={raw_size}” is not from {MIN_PAGE_SIZE} to {MAX_PAGE_SIZE}; "
            f"showing {DEFAULT_PAGE_SIZE} rows per page."
        )
    if raw_page and (requested_page is None or requested_page < 1):
        notes.append(f"“page={raw_page}” is not a page number; showing page 1.")
    elif requested_page is not None and requested_page > window.pages:
        notes.append(
            f"There is no page {requested_page:,}; showing page {window.number:,} of "
            f"{window.pages:,}."
        )
    return notes


def _int_or_none(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdecimal() else None


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count:,} {singular if count == 1 else plural}"


def _status_text(*, curator: bool, status: SyncStatus) -> str:
    if not curator:
        return "Saved snapshot"
    if status.last_run_failed:
        return "Needs attention"
    return "Up to date" if status.has_refreshes else "Awaiting sync"


def _caption(*, query: CatalogQuery, window: PageWindow, matching: int) -> str:
    view = query.get("origin") or "All catalogs"
    sort = query.get("sort") or "name"
    column = dict(COLUMNS)[sort.removeprefix("-")]
    direction = "descending" if sort.startswith("-") else "ascending"
    return (
        f"Sources in {view}, sorted by {column} {direction}: "
        f"{_plural(matching, 'matching entry', 'matching entries')}, "
        f"page {window.number} of {window.pages}"
    )


def _view_line(*, query: CatalogQuery, window: PageWindow, matching: int) -> tuple[str, str]:
    """The visible line above the table: which rows of how many, in which order (the table's
    caption says the same to assistive technology)."""
    sort = query.get("sort") or "name"
    column = dict(COLUMNS)[sort.removeprefix("-")]
    direction = "descending" if sort.startswith("-") else "ascending"
    order = f"sorted by {column} {direction}"
    if not matching:
        return "No matching entries", order
    first = window.offset + 1
    last = min(window.offset + window.size, matching)
    return f"{first:,}–{last:,} of {_plural(matching, 'entry', 'entries')}", order


def _select(name: str, default_label: str, choices, selected: str, **extra: str) -> dict:
    """A filter's select. The script adds to each option the count of sources it would show
    (``atlas.web.facets``, asked at ``/facets.json``)."""
    options = [("", default_label), *choices]
    return {
        "name": name,
        "options_html": options_html(options=options, selected=selected),
        "chosen": dict(choices).get(selected) if selected else None,
        **extra,
    }


def page_title(*, query: CatalogQuery, selects: list[dict], window: PageWindow) -> str:
    """The document title names the view, so a tab, a bookmark or the history list tells views
    apart: "Search: “gsm” · Type: RLVR · Page 2 · RL Data Atlas"."""
    parts = []
    if query.get("q"):
        parts.append(f"Search: “{query.get('q')}”")
    if query.get("origin"):
        parts.append(query.get("origin"))
    parts += [f"{select['label']}: {select['chosen']}" for select in selects if select["chosen"]]
    if query.get("difficulty_status"):
        status = dict(DIFFICULTY_STATUS_CHOICES).get(query.get("difficulty_status"))
        parts.append(f"Difficulty status: {status}")
    if query.get("show_bad") and query.get("quality") != "bad":
        parts.append("Bad quality shown")
    if query.get("show_excluded"):
        parts.append("Excluded shown")
    if window.number > 1:
        parts.append(f"Page {window.number:,}")
    return " · ".join([*parts, TITLE])


def active_filter_count(*, query: CatalogQuery) -> int:
    """How many filters and toggles differ from their defaults (search, tab and sort aside)."""
    return sum(1 for key in FILTER_KEYS if query.get(key))


def column_headers_html(*, query: CatalogQuery) -> SafeString:
    """The table's column headers, each a sort link with its state. They depend only on the
    view's query and page size (a sort link starts at page 1), so each view's are made once per
    process: twelve sort links were twelve query strings to encode and 84 values to escape per
    page."""
    return _column_headers_html(tuple(query.params.items()), query.page_size)


@functools.lru_cache(maxsize=256)
def _column_headers_html(params: tuple[tuple[str, str], ...], page_size: int) -> SafeString:
    query = CatalogQuery(params=dict(params), page=1, page_size=page_size)
    headers = []
    for key, label in COLUMNS:
        state = query.sort_state(key)
        headers.append(
            {
                "key": key,
                "label": label,
                "url": query.sort_url(key),
                "aria_sort": state,
                "icon": SORT_ICONS[state],
                "title": COLUMN_TITLES.get(key, ""),
            }
        )
    return headers_html(headers)


def page_rows(*, filterset: SourceFilterSet, window: PageWindow) -> list[CatalogRow]:
    cell = catalog_cells().get("difficulty")
    # PAGE_ROWS reads values (mappings), which the filters do not change.
    matching = cast("QuerySet[Source, dict[str, Any]]", filterset.filtered(PAGE_ROWS))
    values = matching[window.offset : window.offset + window.size]
    links = RowLinks(request=None)  # the page links its rows by path
    return [catalog_row(decoded_summary(row), cell=cell, links=links) for row in values]


def catalog_context(
    *,
    query: Mapping[str, str],
    vocabulary: CatalogVocabulary,
    curator: bool,
    status: SyncStatus,
) -> dict[str, Any]:
    filterset = lenient_filterset(data=query, vocabulary=vocabulary)
    filterset.is_valid()
    origin = filterset.form.cleaned_data.get("origin") or ""
    # Kept per version of the catalog and view: on the unfiltered landing the grouped count reads
    # every active source, most of the page's time when it ran per request.
    groups = kept(
        version=status.versions.shown,
        name="origin-groups",
        view=filterset.counted_view("origin"),
        read=lambda: origin_groups(without_origin=filterset.queryset_without("origin")),
    )
    counts = view_counts(groups=groups, origin=origin)
    number, size = lenient_paging(query)
    window = page_window(matching=counts.matching, number=number, size=size)
    catalog_query = CatalogQuery.of_view(filterset=filterset, page=window.number, page_size=size)
    tabs = [
        {
            "label": "All catalogs",
            "count": sum(counts.by_origin.values()),
            "url": catalog_query.url(origin=None),
            "current": not origin,
        }
    ] + [
        {
            "label": item.origin,
            "count": counts.by_origin.get(item.origin, 0),
            "url": catalog_query.url(origin=item.origin),
            "current": origin == item.origin,
        }
        for item in vocabulary.origins
    ]
    family_choices = [(family, family) for family in vocabulary.families]
    if vocabulary.has_unknown_family:
        family_choices.append((UNKNOWN, FAMILY_UNKNOWN_LABEL))
    shows_excluded = filterset.shows_excluded
    all_unknown = counts.matching > 0 and counts.known_counts == 0
    cell = catalog_cells().get("difficulty")
    rows = page_rows(filterset=filterset, window=window)
    selects = [
        _select(
            "type",
            "All",
            TYPE_CHOICES,
            catalog_query.get("type"),
            label="Type",
        ),
        _select(
            "turns",
            "All",
            TURNS_CHOICES,
            catalog_query.get("turns"),
            label="Interaction",
        ),
        _select(
            "family",
            "All",
            family_choices,
            catalog_query.get("family"),
            label="Family",
        ),
        _select(
            "benchmark",
            "Any",
            BENCHMARK_CHOICES,
            catalog_query.get("benchmark"),
            label="Benchmark",
        ),
        _select(
            "quality",
            "All",
            QUALITY_CHOICES,
            catalog_query.get("quality"),
            label="Quality",
        ),
        _select(
            "difficulty",
            "Any",
            DIFFICULTY_CHOICES,
            catalog_query.get("difficulty"),
            label="Difficulty",
            title="Solve-rate ranges use the larger model; lower solve rates indicate harder "
            "tasks.",
            help=cell.filter_help if cell else "",
        ),
    ]
    return {
        "curator": curator,
        "cells": catalog_cells(),
        "difficulty_legend": cell.legend() if cell and cell.legend else "",
        "query": catalog_query,
        "view_sources": counts.matching,
        "available_sources": vocabulary.available_total,
        "task_total_text": "Unknown" if all_unknown else f"{counts.task_total:,}",
        "task_context": (
            f"{_plural(counts.matching, 'visible entry', 'visible entries')} · "
            f"{_plural(counts.unknown_counts, 'unknown dataset count', 'unknown dataset counts')}"
            " · may overlap"
        ),
        "status_text": _status_text(curator=curator, status=status),
        "status_failed": curator and status.last_run_failed,
        "checked_at": status.earliest_checked_at,
        "checked_at_label": labels.last_checked_label(status.earliest_checked_at)
        if status.earliest_checked_at
        else None,
        "last_run_id": status.last_run.id if status.last_run else "",
        "tabs": tabs,
        "selects": selects,
        "selects_html": selects_html(selects),
        "filter_help_html": filter_help_html(selects),
        "page_title": page_title(query=catalog_query, selects=selects, window=window),
        "active_filter_count": active_filter_count(query=catalog_query),
        "page_size_options_html": options_html(
            options=PAGE_SIZE_OPTIONS,
            selected="" if size == DEFAULT_PAGE_SIZE else str(size),
        ),
        "shows_bad": filterset.shows_bad,
        "shows_excluded": shows_excluded,
        "headers_html": column_headers_html(query=catalog_query),
        "rows": rows,
        "rows_html": rows_html(rows),
        "caption": _caption(query=catalog_query, window=window, matching=counts.matching),
        "view_line": _view_line(query=catalog_query, window=window, matching=counts.matching),
        "window": window,
        "previous_url": catalog_query.url(page=window.number - 1) if window.has_previous else None,
        "next_url": catalog_query.url(page=window.number + 1) if window.has_next else None,
        "first_url": catalog_query.url(page=1) if window.number > 2 else None,
        "last_url": catalog_query.url(page=window.pages)
        if window.number < window.pages - 1
        else None,
        "matching": counts.matching,
        "notes": parameter_notes(query=query, filterset=filterset, window=window),
        "result_count": (
            f"{counts.matching:,} of {vocabulary.active_total:,} entries · "
            f"{vocabulary.excluded_total:,} excluded sources "
            f"{'included' if shows_excluded else 'hidden'} · "
            f"bad quality {'included' if filterset.shows_bad else 'hidden'}"
        ),
        "has_sources": vocabulary.active_total > 0,
        "export_url": catalog_query.url(path=reverse("catalog-export"), paging=False),
    }
