"""The public pages of the catalog: the catalog and its CSV export, one source, the history."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_http_methods

from atlas.contributions import catalog_cells
from atlas.export.csv_export import csv_response
from atlas.export.filename import export_filename
from atlas.filters import SourceFilterSet, lenient_filterset
from atlas.permissions import REFRESH_REFUSED, is_curator
from atlas.rules import labels
from atlas.selectors import (
    catalog_versions,
    kept,
    refresh_state,
    source_detail,
    sync_status,
    vocabulary_at,
)
from atlas.services.refresh import queue_refresh
from atlas.web import croissant
from atlas.web.catalog_view import catalog_context
from atlas.web.changes_view import changes_context
from atlas.web.facets import facet_counts
from atlas.web.field_guide import field_guide_html
from atlas.web.source_page import DRAWER_HISTORY
from atlas.web.source_page import source_page as build_source_page

REGION_HEADER = "X-Atlas-Region"
# Parameters a shared page URL may carry that do not change the exported rows.
EXPORT_IGNORED = ("page", "page_size", "source")


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


# -- the page --------------------------------------------------------------------------------------
@require_http_methods(["GET", "HEAD", "POST"])
def catalog_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _refresh_without_script(request)
    status = sync_status()
    vocabulary = vocabulary_at(run=status.versions.run)
    context = catalog_context(
        query=request.GET, vocabulary=vocabulary, curator=is_curator(request.user), status=status
    )
    partial = request.headers.get(REGION_HEADER) == "1"
    template = "atlas/_regions.html" if partial else "atlas/catalog_list.html"
    if not partial:
        context.update(field_guide_html=field_guide_html())
    response = render(request, template, context)
    patch_vary_headers(response, [REGION_HEADER])
    return response


def _refresh_without_script(request: HttpRequest) -> HttpResponse:
    """The no-JS "Refresh sources" form: forced sync, then 303 back to the same view."""
    if request.POST.get("refresh") != "force" or not is_curator(request.user):
        raise PermissionDenied(REFRESH_REFUSED)
    outcome = queue_refresh(force=True, trigger="button", user_id=request.user.pk)
    text, warning = labels.refresh_outcome_text(status=outcome.http_status, body=outcome.body)
    messages.add_message(request, messages.WARNING if warning else messages.SUCCESS, text)
    response = redirect(request.get_full_path())
    response.status_code = 303
    return response


@require_GET
def catalog_facets(request: HttpRequest) -> JsonResponse:
    """The count of sources each filter option of the page's view would give, read as leniently
    as the page reads the query. Asked by the page's script after the view, so the page itself
    does not wait for a count over the whole catalog."""
    versions = catalog_versions()
    filterset = lenient_filterset(data=request.GET, vocabulary=vocabulary_at(run=versions.run))
    filterset.is_valid()
    # Kept per version of the catalog and view: the count reads every row of the view.
    counts = kept(
        version=versions.shown,
        name="facets",
        view=filterset.counted_view(),
        read=lambda: facet_counts(filterset=filterset).counts,
    )
    return JsonResponse({"counts": counts})


@require_GET
def export_csv(request: HttpRequest) -> HttpResponseBase:
    """The view as CSV; an invalid filter is a 400 naming it, never the whole catalog."""
    filterset = SourceFilterSet(request.GET)
    problems = [
        f"{key}: {'; '.join(errors)}" for key, errors in sorted(filterset.errors.items())
    ] + [
        f"{key}: unknown parameter"
        for key in sorted(request.GET)
        if key not in filterset.filters and key not in EXPORT_IGNORED
    ]
    if problems:
        return HttpResponseBadRequest(
            "Invalid export query:\n" + "\n".join(problems) + "\n",
            content_type="text/plain; charset=utf-8",
        )
    response = csv_response(queryset=filterset.qs)
    filename = export_filename(choices=filterset.choices)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# -- one source --------------------------------------------------------------------------------
@require_GET
def source_page(request: HttpRequest, source_id: str) -> HttpResponse:
    """The page of one source (retired ones too). With the region header, only the body the
    catalog's details drawer shows."""
    source = source_detail(source_id=source_id)
    drawer = request.headers.get(REGION_HEADER) == "details"
    if source is None:
        missing = {"title": "Source not found", "source_id": source_id}
        return render(request, "atlas/source_not_found.html", missing, status=404)
    page = build_source_page(source=source, history_limit=DRAWER_HISTORY if drawer else None)
    template = "atlas/_source_drawer.html" if drawer else "atlas/source.html"
    context: dict[str, Any] = {"page": page, "cells": catalog_cells()}
    if not drawer:
        document = croissant.source_document(source=source, absolute=request.build_absolute_uri)
        context["croissant"] = croissant.embedded(document)
    response = render(request, template, context)
    if drawer:
        # The drawer shows only an answer that says it was rendered as one (catalog.js).
        response[REGION_HEADER] = "details"
    patch_vary_headers(response, [REGION_HEADER])
    return response


@require_GET
def source_croissant(request: HttpRequest, source_id: str) -> HttpResponse:
    """The source's Croissant metadata (JSON-LD), what its page links and embeds."""
    source = source_detail(source_id=source_id)
    if source is None:
        return JsonResponse({"detail": "Source not found"}, status=404)
    document = croissant.source_document(source=source, absolute=request.build_absolute_uri)
    return _json_ld(document)


@require_GET
def catalog_croissant(request: HttpRequest) -> HttpResponse:
    """The whole catalog's Croissant metadata (JSON-LD)."""
    synced = [item.synced_at for item in refresh_state()["refreshes"]]
    document = croissant.catalog_document(
        absolute=request.build_absolute_uri,
        synced_at=max(synced).isoformat() if synced else None,
    )
    return _json_ld(document)


def _json_ld(document: dict[str, Any]) -> HttpResponse:
    return JsonResponse(
        document, content_type="application/ld+json", json_dumps_params={"ensure_ascii": False}
    )


# -- catalog history ---------------------------------------------------------------------------
@require_GET
def changes_page(request: HttpRequest) -> HttpResponse:
    context = changes_context(query=request.GET)
    if context is None:
        context = {"title": "Catalog revision not found", "source_id": request.GET.get("run")}
        return render(request, "atlas/source_not_found.html", context, status=404)
    return render(request, "atlas/changes.html", context)
