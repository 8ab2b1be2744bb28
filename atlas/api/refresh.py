"""``/api/refreshes/`` (the sync state per origin and the last run) and ``/api/refresh/`` (a
curator's sync)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from atlas.api.authentication import LockingTokenAuthentication
from atlas.api.query_parameters import BOOLEAN_VALUES, flag
from atlas.change_log import run_counts
from atlas.models import Refresh, RefreshRun
from atlas.permissions import IsCurator
from atlas.rules.sync_words import outcome_words
from atlas.selectors import refresh_state
from atlas.services.refresh import page_open_refresh, queue_refresh, run_refresh


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
        force = flag(request, "force")
        background = flag(request, "background")
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
