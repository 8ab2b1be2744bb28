"""The public catalog page and its CSV export."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_http_methods

from atlas import labels
from atlas.contributions import catalog_cells
from atlas.csv_export import csv_response
from atlas.field_guide import definitions, intro_text
from atlas.filters import (
    BENCHMARK_CHOICES,
    DIFFICULTY_CHOICES,
    FAMILY_UNKNOWN_LABEL,
    QUALITY_CHOICES,
    TURNS_CHOICES,
    TYPE_CHOICES,
    UNKNOWN,
    CatalogQuery,
    lenient_filterset,
)
from atlas.models import Source
from atlas.pagination import lenient_paging, page_window
from atlas.permissions import is_curator
from atlas.selectors import (
    current_vocabulary,
    refresh_state,
    sync_status,
    view_totals,
)
from atlas.services.refresh import queue_refresh

REGION_HEADER = "X-Atlas-Region"
COLUMNS = (
    ("name", "Source name"), ("origin", "Catalog"), ("dataset", "Dataset"), ("rows", "Input rows"),
    ("turns", "Interaction"), ("type", "Type"), ("benchmark", "Benchmark"), ("family", "Family"),
    ("difficulty", "Difficulty"), ("quality", "Quality"), ("review_date", "Review date"),
    ("status", "Status"),
)  # fmt: skip
COLUMN_TITLES = {"rows": "Selected input rows before conversion or curation"}
SORT_ICONS = {"ascending": "↑", "descending": "↓", "none": "↕"}


def healthz(request: HttpRequest) -> JsonResponse:
    state = refresh_state()
    last_run = state["last_run"]
    return JsonResponse(
        {
            "status": "ok",
            "origins": [
                {
                    "origin": item.origin,
                    "revision": item.revision,
                    "checked_at": item.checked_at.isoformat(),
                    "synced_at": item.synced_at.isoformat(),
                    "row_count": item.row_count,
                }
                for item in state["refreshes"]
            ],
            "last_run": None
            if last_run is None
            else {
                "started_at": last_run.started_at.isoformat(),
                "trigger": last_run.trigger,
                "forced": last_run.forced,
                "outcome": last_run.outcome,
                "error": last_run.error,
            },
        }
    )


# -- rows ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CatalogRow:
    """One table row with everything its cells and its details drawer show."""

    source: Source
    chip: labels.QualityChip
    name_url: str | None
    dataset_url: str | None
    review_date: str | None
    review_date_title: str
    difficulty_fallback: str
    details: list[tuple[str, str]]
    links: list[tuple[str, str]]
    issues: list[Any]

    @property
    def details_html(self) -> SafeString:
        # Built here rather than in a template loop: it is repeated in every row's drawer.
        return format_html_join("", "<div><dt>{}</dt><dd>{}</dd></div>", self.details)

    @property
    def links_html(self) -> SafeString:
        return format_html_join(
            "",
            '<li><a href="{}" target="_blank" rel="noopener">{}</a></li>',
            ((href, label) for label, href in self.links),
        )

    @property
    def type_label(self) -> str:
        return labels.type_label(self.source.type)

    @property
    def is_generator(self) -> bool:
        return self.source.kind == "Generator"


def _input_rows_detail(source: Source) -> str:
    if source.task_count is not None:
        return f"{source.task_count:,}"
    return "No fixed count" if source.kind == "Generator" else "Unknown"


def catalog_row(source: Source) -> CatalogRow:
    payload = source.payload
    pipeline = payload.get("pipeline") or {}
    review_date = labels.review_date_label(source.display_review_date)
    details = [
        ("Dataset", payload.get("dataset_id")),
        ("Dataset revision", payload.get("dataset_revision")),
        ("Source ID", source.id),
        ("Input rows", _input_rows_detail(source)),
        ("Input files", ", ".join(pipeline.get("files") or [])),
        ("Pipeline", pipeline.get("name")),
        ("Pipeline version", pipeline.get("version")),
        ("Family", source.family),
        ("Tags", ", ".join(payload.get("tags") or [])),
        ("Verifier", payload.get("verifier_name")),
        ("Verifier revision", payload.get("verifier_revision")),
        ("Quality", labels.drawer_quality_label(effective_quality=source.effective_quality)),
        ("Review date", review_date),
        (
            "Review applicability",
            labels.APPLICABILITY_LABELS.get(source.review_applicability or ""),
        ),
        ("Native task attempts", source.display_traces),
    ]
    links = []
    if labels.is_web_link(payload.get("url")):
        links.append(("Pinned dataset ↗", payload["url"]))
    if labels.is_web_link(payload.get("verifier_url")):
        links.append(("Verifier code ↗", payload["verifier_url"]))
    if source.display_review_id:
        review_url = labels.review_page_url(review_id=source.display_review_id)
        links.append(("Read quality review ↗", review_url))
        if source.difficulty_summary:
            links.append(
                ("Read difficulty attempts & verifier results ↗", review_url + "#difficulty")
            )
    return CatalogRow(
        source=source,
        chip=labels.quality_chip(
            effective_quality=source.effective_quality,
            review_stale=source.review_stale,
            review_id=source.display_review_id,
            open_issue_count=source.open_issue_count,
            review_url=payload.get("review_url"),
        ),
        name_url=payload.get("url") if labels.is_https(payload.get("url")) else None,
        dataset_url=payload.get("canonical_url")
        if labels.is_https(payload.get("canonical_url"))
        else None,
        review_date=review_date,
        review_date_title=source.display_review_date_text or labels.NO_DATED_REVIEW,
        difficulty_fallback=labels.difficulty_fallback_text(
            open_issue_count=source.open_issue_count, review_stale=source.review_stale
        ),
        details=[(term, str(value)) for term, value in details if value not in (None, "")],
        links=links,
        issues=list(source.open_issues or []),
    )


# -- the page --------------------------------------------------------------------------------------
def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count:,} {singular if count == 1 else plural}"


def _status_text(*, curator: bool, status) -> str:
    if not curator:
        return "Saved snapshot"
    if status.last_run_failed:
        return "Needs attention"
    return "Up to date" if status.has_refreshes else "Awaiting sync"


def _caption(*, query: CatalogQuery, window, matching: int) -> str:
    view = query.get("origin") or "All catalogs"
    sort = query.get("sort") or "name"
    column = dict(COLUMNS)[sort.removeprefix("-")]
    direction = "descending" if sort.startswith("-") else "ascending"
    return (
        f"Sources in {view}, sorted by {column} {direction}: "
        f"{_plural(matching, 'matching entry', 'matching entries')}, "
        f"page {window.number} of {window.pages}"
    )


def _select(name: str, default_label: str, choices, selected: str, **extra: str) -> dict:
    options = [("", default_label), *choices]
    return {"name": name, "options": options, "selected": selected, **extra}


def catalog_context(request: HttpRequest) -> dict[str, Any]:
    vocabulary = current_vocabulary()
    filterset = lenient_filterset(data=request.GET, vocabulary=vocabulary)
    number, size = lenient_paging(request.GET)
    matching = filterset.qs
    totals = view_totals(matching=matching)
    window = page_window(matching=totals.matching, number=number, size=size)
    query = CatalogQuery(filterset=filterset, page=window.number, page_size=size)
    page_rows = matching[window.offset : window.offset + size]
    curator = is_curator(request.user)
    status = sync_status()
    shows_excluded = filterset.shows_excluded
    tabs = [
        {
            "label": "All catalogs",
            "count": vocabulary.active_total if shows_excluded else vocabulary.available_total,
            "url": query.url(origin=None),
            "current": not query.get("origin"),
        }
    ] + [
        {
            "label": item.origin,
            "count": item.total if shows_excluded else item.total - item.excluded,
            "url": query.url(origin=item.origin),
            "current": query.get("origin") == item.origin,
        }
        for item in vocabulary.origins
    ]
    family_choices = [(family, family) for family in vocabulary.families]
    if vocabulary.has_unknown_family:
        family_choices.append((UNKNOWN, FAMILY_UNKNOWN_LABEL))
    headers = []
    for key, label in COLUMNS:
        state = query.sort_state(key)
        headers.append(
            {
                "label": label,
                "url": query.sort_url(key),
                "aria_sort": state,
                "icon": SORT_ICONS[state],
                "title": COLUMN_TITLES.get(key, ""),
            }
        )
    return {
        "curator": curator,
        "cells": catalog_cells(),
        "field_guide_intro": intro_text(),
        "field_guide_terms": definitions(),
        "query": query,
        "headline_sources": vocabulary.available_total,
        "task_total": totals.task_total,
        "task_context": (
            f"{_plural(totals.matching, 'visible entry', 'visible entries')} · "
            f"{_plural(totals.unknown_counts, 'unknown dataset count', 'unknown dataset counts')}"
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
        "selects": [
            _select("type", "All types", TYPE_CHOICES, query.get("type"), label="Type"),
            _select(
                "turns", "All interactions", TURNS_CHOICES, query.get("turns"), label="Interaction"
            ),
            _select("family", "All families", family_choices, query.get("family"), label="Family"),
            _select(
                "benchmark",
                "Any designation",
                BENCHMARK_CHOICES,
                query.get("benchmark"),
                label="Benchmark",
            ),
            _select(
                "quality", "All ratings", QUALITY_CHOICES, query.get("quality"), label="Quality"
            ),
            _select(
                "difficulty",
                "Any difficulty",
                DIFFICULTY_CHOICES,
                query.get("difficulty"),
                label="Difficulty",
                title="Solve-rate ranges use the larger model; lower solve rates indicate harder "
                "tasks.",
            ),
        ],
        "shows_bad": filterset.shows_bad,
        "shows_excluded": shows_excluded,
        "headers": headers,
        "rows": [catalog_row(source) for source in page_rows],
        "caption": _caption(query=query, window=window, matching=totals.matching),
        "window": window,
        "previous_url": query.url(page=window.number - 1) if window.has_previous else None,
        "next_url": query.url(page=window.number + 1) if window.has_next else None,
        "matching": totals.matching,
        "result_count": (
            f"{totals.matching:,} of {vocabulary.active_total:,} entries · "
            f"{vocabulary.excluded_total:,} excluded sources "
            f"{'included' if shows_excluded else 'hidden'} · "
            f"bad quality {'included' if filterset.shows_bad else 'hidden'}"
        ),
        "has_sources": vocabulary.active_total > 0,
        "export_url": query.url(path="/export.csv", paging=False),
    }


@require_http_methods(["GET", "HEAD", "POST"])
def catalog_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _refresh_without_script(request)
    context = catalog_context(request)
    partial = request.headers.get(REGION_HEADER) == "1"
    template = "atlas/_regions.html" if partial else "atlas/catalog_list.html"
    response = render(request, template, context)
    patch_vary_headers(response, [REGION_HEADER])
    return response


def _refresh_without_script(request: HttpRequest) -> HttpResponse:
    """The no-JS "Refresh sources" form: forced sync, then 303 back to the same view."""
    if request.POST.get("refresh") != "force" or not is_curator(request.user):
        raise PermissionDenied("Only curators may refresh the catalog.")
    outcome = queue_refresh(force=True, trigger="button", user_id=request.user.pk)
    text, warning = labels.refresh_outcome_text(status=outcome.http_status, body=outcome.body)
    messages.add_message(request, messages.WARNING if warning else messages.SUCCESS, text)
    response = redirect(request.get_full_path())
    response.status_code = 303
    return response


@require_GET
def export_csv(request: HttpRequest) -> StreamingHttpResponse:
    filterset = lenient_filterset(data=request.GET)
    return csv_response(queryset=filterset.qs)
