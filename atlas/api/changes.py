"""``/api/changes/``: the catalog history, newest first — what each sync changed, per source, and
each curator's action."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from atlas.api.query_parameters import StrictQueryMixin, refuse_repeated
from atlas.change_log import LARGEST_RUN_ID, parse_run_id
from atlas.models import SourceChange
from atlas.pagination import CatalogPagination
from atlas.rules import labels, timestamps
from atlas.rules.vocabularies import (
    ChangeKind,
)


def _absolute(request: Request | None, path: str) -> str:
    return request.build_absolute_uri(path) if request is not None else path


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
        refuse_repeated(self.request, self.allowed_parameters)
        errors = {}
        if query.get("source"):
            changes = changes.filter(source_id=query["source"])
        # Given is given: an empty run or kind is a value the schema does not allow, not absent.
        if "run" in query:
            run_id = parse_run_id(query["run"])
            if run_id is not None:
                changes = changes.filter(run_id=run_id)
            else:
                errors["run"] = ["A run is a sync run id (a positive 64-bit integer)."]
        kind = query.get("kind")
        if kind is not None:
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
