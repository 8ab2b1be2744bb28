"""``/api/sources/`` and ``/api/sources/<id>/``: the catalog's rows with the page's filters,
search and ordering, as JSON or as the CSV twin."""

from __future__ import annotations

import functools
from typing import Any, cast

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from atlas.api.csv_twin import SourceCSVRenderer, csv_twin_response
from atlas.api.query_parameters import BOOLEAN_VALUES, StrictQueryMixin
from atlas.api.renderers import FastJSONRenderer
from atlas.api.row_values import (
    ROW_FIELDS,
    SourceRowSerializer,
    decoded,
    list_values,
    row_of_values,
    rows_of,
    source_row,
)
from atlas.export.filename import export_filename
from atlas.filters import (
    DIFFICULTY_CHOICES,
    DIFFICULTY_STATUS_CHOICES,
    SORT_CHOICES,
    SORT_KEYS,
    KeptFilterSets,
    SourceFilterSet,
)
from atlas.models import Source
from atlas.pagination import CatalogPagination
from atlas.rules.vocabularies import (
    Quality,
    SourceType,
    Turns,
)
from atlas.selectors import (
    CatalogVersions,
    catalog_versions,
    display_version,
    kept,
    shown_version,
    source_detail,
    vocabulary_at,
)
from atlas.web.source_links import RowLinks

LIST_PARAMETERS = (*SourceFilterSet.base_filters, "page", "page_size", "format")


class SourceListView(StrictQueryMixin, ListAPIView):
    """Active sources with the catalog page's filters, search and ordering; ``?format=csv`` is
    the same list as CSV with the same field names."""

    serializer_class = SourceRowSerializer
    pagination_class = CatalogPagination
    renderer_classes = [FastJSONRenderer, BrowsableAPIRenderer, SourceCSVRenderer]
    allowed_parameters = LIST_PARAMETERS
    # The list's columns are resolved once, here, and each request filters a copy (DRF's
    # get_queryset() clones it): values() resolving its two dozen names and casts per request
    # cost a quarter of a millisecond, a sixth of the fixed work of a list. Each row also
    # carries the display version (last), which keys the kept count: no statement of its own.
    queryset = list_values(Source.objects.active()).annotate(display_version=display_version())
    # The filter sets of the queries asked most recently, over these rows (see KeptFilterSets).
    filtersets = KeptFilterSets(queryset=queryset)

    def get_queryset(self):
        return self.validated_filterset().qs

    def validated_filterset(self, *, checked_by_rows: bool = False) -> SourceFilterSet:
        filterset = self.filtersets.get(self.request.query_params, checked_by_rows=checked_by_rows)
        if not filterset.is_valid():
            # All of the refusals, the origin's and family's included.
            filterset = filterset.with_values_checked()
            filterset.is_valid()
            raise ValidationError(filterset.errors)
        self.filterset = filterset
        return filterset

    @functools.cached_property
    def versions(self) -> CatalogVersions:
        """The catalog's versions, read once per request and only when needed (a full page's
        count, an empty page's vocabulary)."""
        return catalog_versions()

    def refuse_unchecked_values(self) -> None:
        """An empty page may name an origin or family no source has: checked now."""
        if not self.filterset.checked_by_rows:
            return  # checked with the query already, or named none
        vocabulary = vocabulary_at(run=self.versions.run)
        refused = self.filterset.refused_values(vocabulary=vocabulary)
        if refused:
            raise ValidationError(refused)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # A page with rows proves its origin and family exist: no vocabulary read for them.
        rows = self.validated_filterset(checked_by_rows=True).qs
        # The count is kept per version of the catalog and view (the unfiltered list counts
        # every active source).
        filterset = self.filterset

        def count(page: list[tuple[Any, ...]]) -> int:
            return kept(
                version=shown_version(page[-1][-1]) if page else self.versions.shown,
                name="api-count",
                view=filterset.counted_view(),
                read=rows.count,
            )

        try:
            page = cast(CatalogPagination, self.paginator).paginate_queryset(
                rows, request, view=self, count=count
            )
        except NotFound:
            self.refuse_unchecked_values()
            raise
        if not page:
            self.refuse_unchecked_values()
        # The rows without a serializer: one per row cost a context lookup each.
        return self.get_paginated_response(rows_of(items=page, request=request))

    @extend_schema(
        summary="List active sources",
        description=(
            "The catalog page's filters, search and ordering. Filter values are the values rows "
            "return (`?type=RLVR`, `?quality=some_issues`, `?difficulty_status=current`), "
            "matched without regard to case; `unknown` selects an empty type, interaction or "
            "family, or a null quality or difficulty status. Boolean parameters take `true`/"
            "`false` as well as `1`/`0`. Unknown parameters, and values a parameter does not "
            "take, answer 400 naming the parameter (a refused value's message lists the valid "
            "ones, e.g. the sort keys); a `page` past the last answers 404. Each row carries the "
            "solve rates of its difficulty summary as numbers "
            "(`difficulty_<small|large|hosted>_<solved|verified|rate>`). `?format=csv` answers "
            "the same rows as CSV with the JSON field names as header (all matching rows, or one "
            "page when `page` or `page_size` is given); lists of strings are comma-joined, "
            "objects JSON text, booleans `true`/`false`, null empty."
        ),
        parameters=[
            OpenApiParameter(
                "q", str, description="Search: every word must match (names, IDs, tags…)."
            ),
            OpenApiParameter("origin", str, description="Origin name (a catalog tab)."),
            OpenApiParameter("type", str, enum=[*SourceType.values, "unknown"]),
            OpenApiParameter("turns", str, enum=[*Turns.values, "unknown"]),
            OpenApiParameter("family", str, description="A family, or `unknown`."),
            OpenApiParameter(
                "benchmark", str, enum=BOOLEAN_VALUES, description="The `is_benchmark` value."
            ),
            OpenApiParameter("quality", str, enum=[*Quality.values, "unknown"]),
            OpenApiParameter(
                "difficulty",
                str,
                enum=[value for value, _ in DIFFICULTY_CHOICES],
                description="The catalog page's Difficulty filter (not the row's `difficulty` "
                "text): `current`, `historical`, `invalid` (as `difficulty_status`), `unmeasured` "
                "(no current measurement), or a range of the current Large model's solve rate in "
                "percent (`difficulty_large_rate` × 100).",
            ),
            OpenApiParameter(
                "difficulty_status",
                str,
                enum=[value for value, _ in DIFFICULTY_STATUS_CHOICES],
                description="The row's `difficulty_status`; `unknown` for null (no summary).",
            ),
            OpenApiParameter("show_bad", str, enum=BOOLEAN_VALUES, description="Include Bad rows."),
            OpenApiParameter(
                "show_excluded", str, enum=BOOLEAN_VALUES, description="Include Excluded rows."
            ),
            OpenApiParameter(
                "sort",
                str,
                enum=[value for value, _ in SORT_CHOICES],
                description="Sort key, `-` prefix for descending: "
                + ", ".join(SORT_KEYS)
                + ". Another value answers 400 listing them.",
            ),
            OpenApiParameter("format", str, enum=["json", "csv"]),
        ],
        responses={
            (200, "application/json"): SourceRowSerializer(many=True),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The CSV twin."),
            # Both in the format asked for (the CSV twin's refusals are CSV).
            400: OpenApiTypes.OBJECT,
            404: OpenApiResponse(OpenApiTypes.OBJECT, description="A page past the last."),
        },
    )
    # The CSV twin streams a Django response, not a DRF one.
    def get(  # type: ignore[override]
        self, request: Request, *args: Any, **kwargs: Any
    ) -> Response | StreamingHttpResponse:
        self.check_query_parameters(request)
        if request.accepted_renderer.format == "csv":
            return self.csv(request)
        return super().get(request, *args, **kwargs)

    def csv(self, request: Request) -> StreamingHttpResponse:
        queryset = self.get_queryset()
        links = RowLinks(request=request)
        if "page" in request.query_params or "page_size" in request.query_params:
            queryset = self.paginate_queryset(queryset)
        return csv_twin_response(
            rows=(
                row_of_values(decoded(values), request=request, links=links)
                for values in _iterate(queryset)
            ),
            fields=ROW_FIELDS,
            filename=export_filename(choices=self.filterset.choices, prefix="rl-data-atlas-api"),
        )


def _iterate(rows):
    return rows.iterator(chunk_size=2000) if hasattr(rows, "iterator") else iter(rows)


class SourceDetailView(StrictQueryMixin, APIView):
    allowed_parameters = ("format",)

    @extend_schema(
        summary="One source by ID (retired sources included)",
        responses={200: SourceRowSerializer, 404: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, source_id: str) -> Response:
        self.check_query_parameters(request)
        source = source_detail(source_id=source_id)
        if source is None:
            raise NotFound("Source not found")
        return Response(source_row(source, request=request))
