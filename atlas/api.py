"""Catalog API: sources, refresh status and the curator refresh."""

from __future__ import annotations

from typing import Any

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
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from atlas.authentication import LockingTokenAuthentication
from atlas.display_state import CURATED_FIELDS, overlay
from atlas.filters import SourceFilterSet
from atlas.models import Refresh, RefreshRun, Source
from atlas.pagination import CatalogPagination
from atlas.permissions import IsCurator
from atlas.selectors import refresh_state, source_detail
from atlas.services.refresh import queue_refresh, run_refresh
from atlas.vocabularies import (
    UNCLASSIFIED,
    Applicability,
    GradingTracking,
    Quality,
    SourceKind,
    SourceStatus,
    SourceType,
    Turns,
)


# -- sources ---------------------------------------------------------------------------------------
class OpenVerifierIssueSerializer(serializers.Serializer):
    """An open defect as catalog rows list it; contributed by reviews into the
    ``open_issues`` display column."""

    issue_url = serializers.CharField()
    review_id = serializers.CharField()
    status = serializers.CharField()
    created_at = serializers.DateTimeField()


class SourceRowSerializer(serializers.Serializer):
    """The exported payload with the display state applied; every payload key is kept."""

    id = serializers.CharField()
    name = serializers.CharField(allow_null=True)
    display_name = serializers.CharField()
    origin = serializers.CharField()
    family = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    task_count = serializers.IntegerField(allow_null=True)
    notes = serializers.CharField()
    dataset_id = serializers.CharField(allow_null=True)
    dataset_revision = serializers.CharField(allow_null=True)
    url = serializers.CharField(allow_null=True)
    canonical_source = serializers.CharField(allow_null=True)
    canonical_url = serializers.CharField(allow_null=True)
    verifier_name = serializers.CharField(allow_null=True)
    verifier_revision = serializers.CharField(allow_null=True)
    verifier_url = serializers.CharField(allow_null=True)
    type = serializers.ChoiceField(choices=[*SourceType.values, UNCLASSIFIED])
    turns = serializers.ChoiceField(choices=[*Turns.values, UNCLASSIFIED])
    is_benchmark = serializers.BooleanField()
    kind = serializers.ChoiceField(choices=SourceKind.values)
    status = serializers.ChoiceField(choices=SourceStatus.values)
    pipeline = serializers.JSONField(allow_null=True)
    review_url = serializers.CharField(allow_null=True)
    quality = serializers.ChoiceField(
        choices=Quality.values, allow_null=True, help_text="Effective quality."
    )
    difficulty = serializers.CharField(allow_null=True, help_text="Difficulty summary text.")
    difficulty_summary = serializers.JSONField(allow_null=True)
    review_applicability = serializers.ChoiceField(choices=Applicability.values)
    review_stale = serializers.BooleanField()
    verifier_issues = OpenVerifierIssueSerializer(many=True)
    grading_tracking = serializers.ChoiceField(choices=GradingTracking.values)
    review_grading_revision = serializers.CharField(allow_null=True)
    review_id = serializers.CharField(allow_null=True)
    review_date = serializers.CharField(allow_null=True)
    review_source_revision = serializers.CharField(allow_null=True)
    review_verifier_revision = serializers.CharField(allow_null=True)
    traces = serializers.IntegerField(allow_null=True)
    active = serializers.BooleanField()

    def to_representation(self, instance: Source) -> dict[str, Any]:
        return source_row(instance)


def source_row(source: Source) -> dict[str, Any]:
    shown = overlay(
        payload=source.payload, curated={name: getattr(source, name) for name in CURATED_FIELDS}
    )
    return {
        **source.payload,
        "quality": source.effective_quality,
        "difficulty": source.difficulty_text,
        "difficulty_summary": source.difficulty_summary,
        "review_applicability": source.review_applicability,
        "review_stale": source.review_stale,
        "verifier_issues": source.open_issues,
        "grading_tracking": source.grading_tracking,
        "review_grading_revision": source.review_grading_revision,
        "review_id": source.display_review_id,
        "review_date": source.display_review_date_text,
        "review_source_revision": shown["review_source_revision"],
        "review_verifier_revision": shown["review_verifier_revision"],
        "traces": source.display_traces,
        "active": source.active,
    }


class SourceListView(ListAPIView):
    """Active sources with the catalog page's filters, search and ordering."""

    serializer_class = SourceRowSerializer
    pagination_class = CatalogPagination

    def get_queryset(self):
        filterset = SourceFilterSet(self.request.query_params)
        if not filterset.is_valid():
            raise ValidationError(filterset.errors)
        return filterset.qs

    @extend_schema(
        summary="List active sources",
        parameters=[
            OpenApiParameter("q", str, description="Search text (case-insensitive substring)."),
            OpenApiParameter("origin", str, description="Origin name (a catalog tab)."),
            OpenApiParameter("type", str, enum=["rlvr", "agentic", "alignment", "unknown"]),
            OpenApiParameter("turns", str, enum=["single-turn", "multi-turn", "unknown"]),
            OpenApiParameter("family", str, description="A family, or `unknown`."),
            OpenApiParameter("benchmark", str, enum=["true", "false"]),
            OpenApiParameter("quality", str, enum=[*Quality.values, "unknown"]),
            OpenApiParameter(
                "difficulty",
                str,
                enum=["measured", "historical", "unmeasured", "0-25", "25-50", "50-75", "75-100"],
            ),
            OpenApiParameter("show_bad", str, enum=["1"], description="Include Bad rows."),
            OpenApiParameter("show_excluded", str, enum=["1"], description="Include Excluded."),
            OpenApiParameter(
                "sort",
                str,
                description="Sort key; `-` prefix for descending. Keys: name, origin, dataset, "
                "rows, turns, type, benchmark, family, difficulty, quality, review_date, status.",
            ),
        ],
        responses={200: SourceRowSerializer(many=True), 400: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class SourceDetailView(APIView):
    @extend_schema(
        summary="One source by ID (retired sources included)",
        responses={200: SourceRowSerializer, 404: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, source_id: str) -> Response:
        source = source_detail(source_id=source_id)
        if source is None:
            raise NotFound("Source not found")
        return Response(source_row(source))


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
    class Meta:
        model = RefreshRun
        fields = ["id", "started_at", "finished_at", "trigger", "forced", "outcome", "error"]


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


def _flag(request: Request, name: str, *, true: tuple[str, ...], false: tuple[str, ...]) -> bool:
    raw = request.query_params.get(name, "").strip().lower()
    if raw in true:
        return True
    if raw in false:
        return False
    raise ValidationError({name: [f"Expected one of: {', '.join(true + false[1:])}."]})


class RefreshView(APIView):
    permission_classes = [IsCurator]

    @extend_schema(
        summary="Synchronise the catalog with its artifact (curators)",
        request=None,
        parameters=[
            OpenApiParameter("force", str, enum=["true", "false"], description="Rewrite all."),
            OpenApiParameter(
                "background",
                str,
                enum=["1"],
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
        force = _flag(request, "force", true=("true",), false=("", "false"))
        background = _flag(request, "background", true=("1",), false=("", "0"))
        by_token = isinstance(request.successful_authenticator, LockingTokenAuthentication)
        if by_token:
            # Scripts get the result (or the busy object) in the response.
            outcome = run_refresh(force=force, trigger="api", user_id=request.user.pk)
        elif force or background:
            trigger = "button" if force else "page_open"
            outcome = queue_refresh(force=force, trigger=trigger, user_id=request.user.pk)
        else:
            outcome = run_refresh(force=False, trigger="page_open", user_id=request.user.pk)
        return Response(outcome.body, status=outcome.http_status)
