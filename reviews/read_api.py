"""Public review reads (reviews.md §17.1–§17.2)."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseNotModified
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from atlas.api import OpenVerifierIssueSerializer
from reviews import selectors

MUTABLE_ARTIFACT = "difficulty.json"
IMMUTABLE_CACHE = "public, max-age=31536000, immutable"
REVALIDATE_CACHE = "public, no-cache"


class ArtifactIndexSerializer(serializers.Serializer):
    path = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()


class SupplementalReviewSerializer(serializers.Serializer):
    id = serializers.CharField()
    collection = serializers.JSONField()


class ResolvedIssueSerializer(serializers.Serializer):
    issue_url = serializers.CharField()
    review_id = serializers.CharField()
    resolution_review_id = serializers.CharField()
    updated_at = serializers.DateTimeField()


class PoolEntrySerializer(serializers.Serializer):
    id = serializers.CharField()
    updated_at = serializers.DateTimeField(allow_null=True)
    review_count = serializers.IntegerField()
    kind = serializers.CharField()


class ReviewSourceSerializer(serializers.Serializer):
    id = serializers.CharField()
    active = serializers.BooleanField()
    current_review_id = serializers.CharField(source="review_id", allow_null=True)
    quality = serializers.CharField(source="effective_quality", allow_null=True)
    review_applicability = serializers.CharField(allow_null=True)


class ReviewDetailSerializer(serializers.Serializer):
    id = serializers.CharField(source="review.id")
    source_id = serializers.CharField(source="review.source_id")
    kind = serializers.CharField(source="review.kind")
    collection = serializers.JSONField(source="review.collection")
    updated_at = serializers.DateTimeField(source="review.updated_at", allow_null=True)
    published_at = serializers.DateTimeField(source="review.published_at")
    artifacts = ArtifactIndexSerializer(many=True)
    supplemental_reviews = SupplementalReviewSerializer(source="supplemental", many=True)
    verifier_issues = OpenVerifierIssueSerializer(source="open_issues", many=True)
    resolved_verifier_issues = ResolvedIssueSerializer(source="resolved_issues", many=True)
    review_pool = PoolEntrySerializer(source="pool", many=True)
    source = ReviewSourceSerializer()


DETAIL_SCHEMA = inline_serializer("NotFound", fields={"detail": serializers.CharField()})


class FirstRendererNegotiation(BaseContentNegotiation):
    """Artifacts are plain text whatever the client accepts; errors are JSON."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ReviewDetailView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(
        summary="A published review collection with its pool, issues and artifact index",
        responses={200: ReviewDetailSerializer, 404: DETAIL_SCHEMA},
    )
    def get(self, request: Request, review_id: str) -> Response:
        bundle = selectors.review_bundle(review_id=review_id)
        if bundle is None:
            return Response({"detail": "Review not found"}, status=404)
        return Response(ReviewDetailSerializer(bundle).data)


class ReviewArtifactView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []
    renderer_classes = [JSONRenderer]
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        summary="The stored text of one artifact",
        responses={
            (200, "text/plain"): OpenApiTypes.STR,
            304: OpenApiResponse(description="Not modified (If-None-Match matched the ETag)"),
            404: DETAIL_SCHEMA,
        },
    )
    def get(self, request: Request, review_id: str, path: str) -> HttpResponse | Response:
        # Revalidation reads only the hash, so a 304 never loads the (possibly large) content.
        if request.headers.get("If-None-Match"):
            sha256 = selectors.artifact_sha256(review_id=review_id, path=path)
            if sha256 is not None and _etag_matches(request.headers["If-None-Match"], sha256):
                return _with_cache_headers(HttpResponseNotModified(), path=path, sha256=sha256)
        found = selectors.artifact(review_id=review_id, path=path)
        if found is None:
            return Response({"detail": "Artifact not found"}, status=404)
        response = HttpResponse(found.content, content_type="text/plain; charset=utf-8")
        return _with_cache_headers(response, path=path, sha256=found.sha256)


def _etag_matches(header: str, sha256: str) -> bool:
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or f'"{sha256}"' in tags


def _with_cache_headers(response: HttpResponse, *, path: str, sha256: str) -> HttpResponse:
    response["ETag"] = f'"{sha256}"'
    response["Cache-Control"] = REVALIDATE_CACHE if path == MUTABLE_ARTIFACT else IMMUTABLE_CACHE
    return response
