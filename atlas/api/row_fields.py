"""Catalog API: sources, refresh status and the curator refresh."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast
from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from atlas.api.authentication import LockingTokenAuthentication
from atlas.api.csv_twin import SourceCSVRenderer, csv_twin_response
from atlas.api.renderers import FastJSONRenderer
from atlas.change_log import LARGEST_RUN_ID, parse_run_id, run_counts
from atlas.export.filename import export_filename
from atlas.filters import (
    DIFFICULTY_CHOICES,
    DIFFICULTY_STATUS_CHOICES,
    SORT_CHOICES,
    SORT_KEYS,
    SourceFilterSet,
)
from atlas.jsonio import json_values
from atlas.models import Refresh, RefreshRun, Source, SourceChange
from atlas.pagination import CatalogPagination
from atlas.permissions import IsCurator
from atlas.rules import labels, timestamps
from atlas.rules.display_state import shown
from atlas.rules.solve_rates import ROLES as SOLVE_RATE_ROLES
from atlas.rules.solve_rates import solve_rate_columns
from atlas.rules.sync_words import outcome_words
from atlas.rules.vocabularies import (
    UNCLASSIFIED,
    Applicability,
    ChangeKind,
    GradingTracking,
    MeasurementStatus,
    Quality,
    SourceKind,
    SourceStatus,
    SourceType,
    Turns,
)
from atlas.selectors import refresh_state, source_detail
from atlas.services.refresh import page_open_refresh, queue_refresh, run_refresh
from atlas.web.source_links import RowLinks


# -- sources ---------------------------------------------------------------------------------------
class OpenVerifierIssueSerializer(serializers.Serializer):
    """An open defect as catalog rows list it; contributed by reviews into the
    ``open_issues`` display column."""

    issue_url = serializers.CharField()
    review_id = serializers.CharField()
    status = serializers.CharField()
    created_at = serializers.DateTimeField()


# -- the API row: one list of fields, each with its declaration and where its value comes from -----
# Most fields are read as they are: a ROW_COLUMNS value (Column), a payload key (Payload) or a
# solve_rate_columns() value (Rate). The few that need shaping are functions of (values, payload,
# links, rates): the row's ROW_COLUMNS values, its payload, the response's RowLinks and its
# solve_rate_columns(). The serializer below declares the fields (OpenAPI, the browsable API) and
# row_of_values() builds the rows, both from ROW.
Value = Callable[[Mapping[str, Any], Mapping[str, Any], RowLinks, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Column:
    name: str


@dataclass(frozen=True)
class Payload:
    key: str


@dataclass(frozen=True)
class Rate:
    name: str


@dataclass(frozen=True)
class RowField:
    name: str
    declared: serializers.Field
    value: Column | Payload | Rate | Value


def _shown(name: str) -> Value:
    """A review revision: the curated one when the row's review is curated, else the payload's."""
    return lambda values, payload, links, rates: shown(name, payload=payload, curated=values)


def _solve_rates(role: str) -> tuple[RowField, ...]:
    title = role.title()
    return (
        RowField(
            f"difficulty_{role}_solved",
            serializers.IntegerField(
                allow_null=True,
                help_text=f"The {title} model's solved tasks, under `difficulty_status`; null "
                "without a difficulty summary or that model.",
            ),
            Rate(f"difficulty_{role}_solved"),
        ),
        RowField(
            f"difficulty_{role}_verified",
            serializers.IntegerField(
                allow_null=True, help_text=f"The {title} model's tasks with a verifier result."
            ),
            Rate(f"difficulty_{role}_verified"),
        ),
        RowField(
            f"difficulty_{role}_rate",
            serializers.FloatField(
                allow_null=True,
                help_text=f"The {title} model's solve rate (0–1): the report's, else solved / "
                "verified; null when nothing was verified.",
            ),
            Rate(f"difficulty_{role}_rate"),
        ),
    )


def _review_page(
    values: Mapping[str, Any], payload: Mapping[str, Any], links: RowLinks, rates: Mapping[str, Any]
) -> str | None:
    review_id = values["display_review_id"]
    return links.link("review-page", review_id) if review_id else None


def _quality_label(
    values: Mapping[str, Any], payload: Mapping[str, Any], links: RowLinks, rates: Mapping[str, Any]
) -> str:
    return labels.quality_label(
        effective_quality=values["effective_quality"],
        review_stale=values["review_stale"],
        review_id=values["display_review_id"],
    )


_CHAR = serializers.CharField

# The order is the rows' key order and the CSV twin's column order (``?format=csv``).
ROW: tuple[RowField, ...] = (
    RowField("id", _CHAR(), Column("id")),
    RowField(
        "url",
        serializers.URLField(help_text="This row in the API."),
        lambda values, payload, links, rates: links.link("api-source", values["id"]),
    ),
    RowField(
        "source_page_url",
        serializers.URLField(help_text="The source's page."),
        lambda values, payload, links, rates: links.link("source-page", values["id"]),
    ),
    RowField(
        "review_page_url",
        serializers.URLField(
            allow_null=True,
            help_text="The review of this row: the page of the published review its quality "
            "comes from (`review_id`); null when it has none.",
        ),
        _review_page,
    ),
    RowField("name", _CHAR(allow_null=True), Payload("name")),
    RowField("display_name", _CHAR(), Payload("display_name")),
    RowField("origin", _CHAR(), Payload("origin")),
    RowField("family", _CHAR(), Payload("family")),
    RowField("tags", serializers.ListField(child=_CHAR()), Payload("tags")),
    RowField("task_count", serializers.IntegerField(allow_null=True), Payload("task_count")),
    RowField("notes", _CHAR(), Payload("notes")),
    RowField("dataset_id", _CHAR(allow_null=True), Payload("dataset_id")),
    RowField("dataset_revision", _CHAR(allow_null=True), Payload("dataset_revision")),
    # The payload's `url` is the dataset's; the row's own `url` is its place in the API.
    RowField(
        "dataset_url",
        _CHAR(allow_null=True, help_text="The pinned dataset (e.g. the Hugging Face revision)."),
        Payload("url"),
    ),
    RowField("canonical_source", _CHAR(allow_null=True), Payload("canonical_source")),
    RowField("canonical_url", _CHAR(allow_null=True), Payload("canonical_url")),
    RowField("verifier_name", _CHAR(allow_null=True), Payload("verifier_name")),
    RowField("verifier_revision", _CHAR(allow_null=True), Payload("verifier_revision")),
    RowField("verifier_url", _CHAR(allow_null=True), Payload("verifier_url")),
    RowField(
        "type",
        serializers.ChoiceField(
            choices=[*SourceType.values, UNCLASSIFIED],
            help_text="Filter with the same value: `?type=RLVR`; `?type=unknown` for the empty "
            "one.",
        ),
        Payload("type"),
    ),
    RowField(
        "type_label",
        _CHAR(),
        lambda values, payload, links, rates: labels.type_label(payload.get("type") or ""),
    ),
    RowField(
        "turns", serializers.ChoiceField(choices=[*Turns.values, UNCLASSIFIED]), Payload("turns")
    ),
    RowField(
        "turns_label",
        _CHAR(),
        lambda values, payload, links, rates: payload.get("turns") or "Unknown",
    ),
    RowField("is_benchmark", serializers.BooleanField(), Payload("is_benchmark")),
    RowField("kind", serializers.ChoiceField(choices=SourceKind.values), Payload("kind")),
    RowField("status", serializers.ChoiceField(choices=SourceStatus.values), Payload("status")),
    RowField("pipeline", serializers.JSONField(allow_null=True), Payload("pipeline")),
    RowField(
        "review_url",
        _CHAR(
            allow_null=True,
            help_text="Not the review of this row (that is `review_page_url`): the evidence link "
            "an authored assessment in the source's definition names (`review.evidence_url`), "
            "kept as the catalog artifact has it; null when the definition names none, as for "
            "every packaged source.",
        ),
        Payload("review_url"),
    ),
    RowField(
        "quality",
        serializers.ChoiceField(
            choices=Quality.values, allow_null=True, help_text="Effective quality."
        ),
        Column("effective_quality"),
    ),
    RowField(
        "quality_label",
        _CHAR(help_text="Good, Some issues, Bad, Needs re-review, Unrated or Unreviewed."),
        _quality_label,
    ),
    RowField(
        "example_review",
        serializers.BooleanField(
            help_text="The current review is a labelled example, not a real judgment."
        ),
        Column("display_review_is_example"),
    ),
    RowField(
        "difficulty",
        _CHAR(
            allow_null=True,
            help_text="Difficulty text, each arm under its own status (not a filter value: filter "
            "with `?difficulty_status=` or `?difficulty=`; the numbers are the "
            "`difficulty_<role>_*` columns).",
        ),
        Column("difficulty_text"),
    ),
    RowField(
        "difficulty_status",
        serializers.ChoiceField(
            choices=MeasurementStatus.values,
            allow_null=True,
            help_text="Status of the difficulty summary; filter with the same value: "
            "`?difficulty_status=historical` (`unknown` for null).",
        ),
        Column("difficulty_status"),
    ),
    *(field for role in SOLVE_RATE_ROLES for field in _solve_rates(role)),
    RowField(
        "difficulty_summary", serializers.JSONField(allow_null=True), Column("difficulty_summary")
    ),
    RowField(
        "review_applicability",
        serializers.ChoiceField(choices=Applicability.values),
        Column("review_applicability"),
    ),
    RowField("review_stale", serializers.BooleanField(), Column("review_stale")),
    RowField("verifier_issues", OpenVerifierIssueSerializer(many=True), Column("open_issues")),
    RowField(
        "grading_tracking",
        serializers.ChoiceField(choices=GradingTracking.values),
        Column("grading_tracking"),
    ),
    RowField("review_grading_revision", _CHAR(allow_null=True), Column("review_grading_revision")),
    RowField("review_id", _CHAR(allow_null=True), Column("display_review_id")),
    RowField("review_date", _CHAR(allow_null=True), Column("display_review_date_text")),
    RowField("review_source_revision", _CHAR(allow_null=True), _shown("review_source_revision")),
    RowField(
        "review_verifier_revision", _CHAR(allow_null=True), _shown("review_verifier_revision")
    ),
    RowField("traces", serializers.IntegerField(allow_null=True), Column("display_traces")),
    RowField("active", serializers.BooleanField(), Column("active")),
)
ROW_FIELDS = tuple(field.name for field in ROW)


def _reader(keys: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of ``keys`` of a mapping, as a tuple (itemgetter of one key returns the value)."""
    if len(keys) == 1:
        getter = operator.itemgetter(keys[0])
        return lambda mapping: (getter(mapping),)
    return operator.itemgetter(*keys) if keys else lambda mapping: ()


# A row is gathered by kind, (columns…, payload values…, rates…, shaped values…), each kind in
# ROW's order, then arranged in ROW's order: the plain reads are one C call for the whole row, not
# one Python call per field.
_KINDS: dict[type, int] = {Column: 0, Payload: 1, Rate: 2}  # a function (shaped): last
_GATHERED = sorted(ROW, key=lambda field: _KINDS.get(type(field.value), len(_KINDS)))
_COLUMNS_READ = tuple(f.value.name for f in _GATHERED if isinstance(f.value, Column))
_PAYLOAD_READ = tuple(f.value.key for f in _GATHERED if isinstance(f.value, Payload))
_RATES_READ = tuple(f.value.name for f in _GATHERED if isinstance(f.value, Rate))
_SHAPED = tuple(f.value for f in _GATHERED if callable(f.value))
_read_columns = _reader(_COLUMNS_READ)
_read_rates = _reader(_RATES_READ)
_arrange = operator.itemgetter(*(_GATHERED.index(field) for field in ROW))


class _SourceRowSerializer(serializers.Serializer):
    def to_representation(self, instance: tuple[Any, ...] | Source) -> dict[str, Any]:
        # A list's rows are built by rows_of(); this serialises a single row.
        return _row_of(instance, request=self.context.get("request"), links=None)


# The fields of ROW, declared as DRF declares a serializer's fields (class attributes).
SourceRowSerializer = type(
    "SourceRowSerializer",
    (_SourceRowSerializer,),
    {
        "__module__": __name__,
        "__doc__": "The exported payload with the display state applied, plus the row's own "
        "links; ``ROW`` declares its fields.",
        **{field.name: field.declared for field in ROW},
    },
)


def rows_of(
    *, items: Iterable[tuple[Any, ...] | Source], request: Request | None
) -> list[dict[str, Any]]:
    """API rows of a list, with the list's one ``RowLinks``."""
    links = RowLinks(request=request)
    return [_row_of(item, request=request, links=links) for item in items]


def _row_of(
    item: tuple[Any, ...] | Source, *, request: Request | None, links: RowLinks | None
) -> dict[str, Any]:
    """A row of list_values() (its JSON as text) or a loaded source, as an API row."""
    values = decoded(item) if isinstance(item, tuple) else source_values(item)
    return row_of_values(values, request=request, links=links)


# A row's own keys, and the payload's `url` (shown as `dataset_url`): the payload keys not repeated.
_ROW_KEYS = frozenset(ROW_FIELDS)
# The columns a row is built from: a list reads only these as plain values (not the search text,
# the sort keys or the other display columns, and no model instance per row).
# The curated columns are the two revisions _shown() reads and the review ID that decides whether
# they are shown; the other curated values reach a row through their display columns.
ROW_COLUMNS = (
    "id", "payload", "review_id", "review_source_revision", "review_verifier_revision",
    "effective_quality", "review_stale", "display_review_id", "display_review_is_example",
    "difficulty_text", "difficulty_status", "difficulty_summary", "review_applicability",
    "open_issues", "grading_tracking", "review_grading_revision", "display_review_date_text",
    "display_traces", "active",
)  # fmt: skip


# JSON columns a list reads as text and parses itself (json_values.loads_stored): parsing is the
# largest part of a 500-row list, and Django's JSONField parses with the json module.
JSON_COLUMNS = ("payload", "open_issues", "difficulty_summary")


# A list reads the plain columns, then the JSON ones as text (``<name>_text``), as tuples: a
# row's mapping is built by decoded() in one step, not by the ORM and then again to parse.
_PLAIN_COLUMNS = tuple(name for name in ROW_COLUMNS if name not in JSON_COLUMNS)
_JSON_TEXTS = tuple(f"{name}_text" for name in JSON_COLUMNS)


def list_values(queryset: QuerySet[Source]) -> QuerySet:
    """The rows of a list: tuples of the plain ``ROW_COLUMNS``, then the JSON ones as text."""
    texts = {
        text: Cast(name, output_field=TextField())
        for name, text in zip(JSON_COLUMNS, _JSON_TEXTS, strict=True)
    }
    return queryset.annotate(**texts).values_list(*_PLAIN_COLUMNS, *_JSON_TEXTS)


def decoded(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of list_values() as the ``ROW_COLUMNS`` mapping rows are built from, its JSON
    parsed."""
    values = dict(zip(_PLAIN_COLUMNS, row, strict=False))  # the JSON texts follow
    for name, text in zip(JSON_COLUMNS, row[len(_PLAIN_COLUMNS) :], strict=True):
        values[name] = None if text is None else json_values.loads_stored(text)
    return values


def _absolute(request: Request | None, path: str) -> str:
    return request.build_absolute_uri(path) if request is not None else path


def source_values(source: Source) -> dict[str, Any]:
    """A loaded source as the row of ``.values(*ROW_COLUMNS)`` a list reads."""
    return {name: getattr(source, name) for name in ROW_COLUMNS}


def source_row(source: Source, *, request: Request | None = None) -> dict[str, Any]:
    return row_of_values(source_values(source), request=request)


def row_of_values(
    values: Mapping[str, Any], *, request: Request | None = None, links: RowLinks | None = None
) -> dict[str, Any]:
    """The API row of one source from its ``ROW_COLUMNS`` values (``links``: the response's, for
    a list): each field of ``ROW`` in order, then the payload's undocumented keys."""
    links = links if links is not None else RowLinks(request=request)
    payload = values["payload"] or {}
    rates = solve_rate_columns(values["difficulty_summary"])
    gathered = (
        *_read_columns(values),
        *map(payload.get, _PAYLOAD_READ),
        *_read_rates(rates),
        *[value(values, payload, links, rates) for value in _SHAPED],
    )
    row = dict(zip(ROW_FIELDS, _arrange(gathered), strict=True))
    # Payload keys beyond the documented ones (grading_*) follow, in their stored order. Checked
    # without building a set of the keys per row (half the cost).
    if not _ROW_KEYS.issuperset(payload):
        row.update((key, value) for key, value in payload.items() if key not in _ROW_KEYS)
    return row


class StrictQueryMixin:
    """Refuse query parameters the endpoint does not read, naming them (a misspelt filter must
    not silently return every row)."""

    allowed_parameters: tuple[str, ...] = ()

    def check_query_parameters(self, request: Request) -> None:
        unknown = sorted(set(request.query_params) - set(self.allowed_parameters))
        if unknown:
            raise ValidationError(
                {
                    name: [
                        "Unknown query parameter. Known: "
                        + ", ".join(sorted(self.allowed_parameters))
                        + "."
                    ]
                    for name in unknown
                }
            )


# What a boolean query parameter takes, everywhere.
BOOLEAN_VALUES = ["true", "false", "1", "0"]
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
    # cost a quarter of a millisecond, a sixth of the fixed work of a list.
    queryset = list_values(Source.objects.active())

    def get_queryset(self):
        return self.validated_filterset().qs

    def validated_filterset(self, *, checked_by_rows: bool = False) -> SourceFilterSet:
        filterset = SourceFilterSet(
            self.request.query_params,
            super().get_queryset(),
            checked_by_rows=checked_by_rows,
        )
        if not filterset.is_valid():
            # All of the refusals, the origin's and family's included.
            filterset = filterset.with_values_checked()
            filterset.is_valid()
            raise ValidationError(filterset.errors)
        self.filterset = filterset
        return filterset

    def refuse_unchecked_values(self) -> None:
        """An empty page may name an origin or family no source has: checked now."""
        refused = self.filterset.refused_values()
        if refused:
            raise ValidationError(refused)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # A page with rows proves its origin and family exist: no vocabulary read for them.
        rows = self.validated_filterset(checked_by_rows=True).qs
        try:
            page = cast(CatalogPagination, self.paginator).paginate_queryset(
                rows, request, view=self
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


# -- refresh status and the curator refresh --------------------------------------------------------
class RefreshSerializer(serializers.ModelSerializer):
    class Meta:
        model = Refresh
        fields = [
            "origin",
            "revision",
            "revised_at",
            "checked_at",
            "synced_at",
            "error",
            "row_count",
        ]


class RefreshRunSerializer(serializers.ModelSerializer):
    summary = serializers.SerializerMethodField(
        help_text="What the run changed, in words: one “<origin>: <n> added, <n> changed…” or "
        "“<origin>: unchanged” per origin."
    )

    class Meta:
        model = RefreshRun
        fields = [
            "id", "started_at", "finished_at", "trigger", "forced", "outcome", "error", "summary",
        ]  # fmt: skip

    def get_summary(self, run: RefreshRun) -> str | None:
        if run.outcome == RefreshRun.Outcome.FAILED:
            return None
        return outcome_words(
            results=run.results,
            retired_origins=run.retired_origins,
            counts=run_counts(run_id=run.id),
        )


class RefreshListView(APIView):
    @extend_schema(
        summary="Sync status per origin and the latest refresh run",
        responses=inline_serializer(
            "RefreshStatus",
            {
                "results": RefreshSerializer(many=True),
                "last_run": RefreshRunSerializer(allow_null=True),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        state = refresh_state()
        last_run = state["last_run"]
        return Response(
            {
                "results": RefreshSerializer(state["refreshes"], many=True).data,
                "last_run": None if last_run is None else RefreshRunSerializer(last_run).data,
            }
        )


def _flag(request: Request, name: str) -> bool:
    """A boolean query parameter: true/false or 1/0 (absent is false)."""
    raw = request.query_params.get(name, "").strip().lower()
    if raw in ("true", "1"):
        return True
    if raw in ("", "false", "0"):
        return False
    raise ValidationError({name: [f"Expected one of: {', '.join(BOOLEAN_VALUES)}."]})


class RefreshView(APIView):
    permission_classes = [IsCurator]

    @extend_schema(
        summary="Synchronise the catalog with its artifact (curators)",
        request=None,
        parameters=[
            OpenApiParameter("force", str, enum=BOOLEAN_VALUES, description="Rewrite all."),
            OpenApiParameter(
                "background",
                str,
                enum=BOOLEAN_VALUES,
                description="Page-open sync as a background task (browser sessions, not forced).",
            ),
        ],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="Sync result or busy object."),
            202: OpenApiResponse(OpenApiTypes.OBJECT, description="Queued for a worker."),
            403: OpenApiTypes.OBJECT,
            422: OpenApiResponse(OpenApiTypes.OBJECT, description="Invalid catalog artifact."),
        },
    )
    def post(self, request: Request) -> Response:
        force = _flag(request, "force")
        background = _flag(request, "background")
        by_token = isinstance(request.successful_authenticator, LockingTokenAuthentication)
        if by_token:
            # Scripts get the result (or the busy object) in the response.
            outcome = run_refresh(force=force, trigger="api", user_id=request.user.pk)
        elif force:
            # The Refresh button: a background task the page polls, never a long request.
            outcome = queue_refresh(force=True, trigger="button", user_id=request.user.pk)
        elif background:
            outcome = page_open_refresh(user_id=request.user.pk)
        else:
            outcome = run_refresh(force=False, trigger="page_open", user_id=request.user.pk)
        return Response(outcome.body, status=outcome.http_status)


# -- catalog history ---------------------------------------------------------------------------
class SourceChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField(
        allow_null=True,
        help_text="The sync run (one catalog revision) that did it; null for a curator's action.",
    )
    catalog_revision = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField(help_text="When it happened (a sync's entries: its start).")
    source_id = serializers.CharField()
    source_url = serializers.URLField(help_text="The source in the API.")
    source_page_url = serializers.URLField()
    origin = serializers.CharField()
    display_name = serializers.CharField()
    kind = serializers.ChoiceField(choices=ChangeKind.values)
    # A declared field named "fields": DRF's metaclass moves declared fields out of the class
    # attributes, so it does not shadow Serializer.fields.
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(),
        help_text=(
            "What changed, {name: [old, new]}: payload fields of a sync's changed or returned "
            "source; for a curator's action the displayed values it changed (quality, "
            "difficulty, open_issues, review)."
        ),
    )
    actor = serializers.CharField(help_text='The curator\'s username ("" when not recorded).')
    review_id = serializers.CharField(
        allow_null=True, help_text="The review collection a curator's action concerns."
    )
    review_page_url = serializers.URLField(allow_null=True)
    issue_url = serializers.CharField(
        allow_null=True, help_text="The GitHub issue of a defect confirmation or resolution."
    )
    note = serializers.CharField()

    def to_representation(self, change: SourceChange) -> dict[str, Any]:
        request = self.context.get("request")
        return {
            "id": change.id,
            "run": change.run_id,
            "catalog_revision": change.run.catalog_revision if change.run is not None else None,
            "at": timestamps.format_utc(change.at),
            "source_id": change.source_id,
            "source_url": _absolute(
                request, reverse("api-source", kwargs={"source_id": change.source_id})
            ),
            "source_page_url": _absolute(
                request, reverse("source-page", kwargs={"source_id": change.source_id})
            ),
            "origin": change.origin,
            "display_name": change.display_name,
            "kind": change.kind,
            "fields": change.fields or {},
            "actor": change.actor,
            "review_id": change.review_id,
            "review_page_url": _absolute(
                request, labels.review_page_url(review_id=change.review_id)
            )
            if change.review_id
            else None,
            "issue_url": change.issue_url,
            "note": change.note,
        }


class ChangeListView(StrictQueryMixin, ListAPIView):
    """The catalog history, newest first (the data of ``/changes/``): what each sync changed, per
    source, and each curator's action."""

    serializer_class = SourceChangeSerializer
    pagination_class = CatalogPagination
    allowed_parameters = ("source", "run", "kind", "page", "page_size", "format")

    def get_queryset(self):
        query = self.request.query_params
        changes = SourceChange.objects.select_related("run").order_by("-at", "source_id", "-id")
        errors = {}
        if query.get("source"):
            changes = changes.filter(source_id=query["source"])
        if (query.get("run") or "").strip():
            run_id = parse_run_id(query["run"])
            if run_id is not None:
                changes = changes.filter(run_id=run_id)
            else:
                errors["run"] = ["A run is a sync run id (a positive 64-bit integer)."]
        kind = (query.get("kind") or "").strip().lower()
        if kind:
            if kind in ChangeKind.values:
                changes = changes.filter(kind=kind)
            else:
                errors["kind"] = [f"Expected one of: {', '.join(ChangeKind.values)}."]
        if errors:
            raise ValidationError(errors)
        return changes

    @extend_schema(
        summary="Catalog history: what each sync changed, per source, and curators' actions",
        parameters=[
            OpenApiParameter("source", str, description="One source ID."),
            OpenApiParameter(
                "run",
                {"type": "integer", "minimum": 1, "maximum": LARGEST_RUN_ID},
                description="One sync run (catalog revision).",
            ),
            OpenApiParameter("kind", str, enum=ChangeKind.values),
        ],
        responses={200: SourceChangeSerializer(many=True), 400: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        self.check_query_parameters(request)
        return super().get(request, *args, **kwargs)
