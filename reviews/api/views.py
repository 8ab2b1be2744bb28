"""The reviews API: publication jobs, public review reads
and verifier issues. Domain errors answer through the project's exception handler."""

from __future__ import annotations

import django_filters
from django.http import HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.generics import GenericAPIView, ListAPIView
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from atlas.api.authentication import LockingTokenAuthentication
from atlas.api.query_parameters import refuse_repeated
from atlas.pagination import exact_positive_int
from atlas.permissions import MANAGE_VERIFIER_ISSUES, PUBLISH_REVIEWS, permission_for_writes
from reviews import selectors
from reviews.api.serializers import (
    ConfirmRequestSerializer,
    PublicationStateSerializer,
    PublicationUploadSerializer,
    ResolveRequestSerializer,
    ReviewDetailSerializer,
    SourcePoolEntrySerializer,
    VerifierIssueSerializer,
    issue_as_json,
)
from reviews.links import ARTIFACT_NOT_FOUND, REVIEW_NOT_FOUND
from reviews.models import ReviewPublication, VerifierIssue
from reviews.services.archives import max_publication_bytes, too_large
from reviews.services.defects import confirm_verifier_issue, resolve_verifier_issue
from reviews.services.jobs import enqueue_publication, expire_stale_publications

CanPublishReviews = permission_for_writes(
    PUBLISH_REVIEWS, "Publishing needs the reviews.publish_review permission."
)


def _too_large() -> Response:
    return Response(
        {"detail": too_large()},
        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    )


class PublicationCreateView(GenericAPIView):
    """POST a .tar.gz or .zip of a review run directory; a worker imports it."""

    authentication_classes = [LockingTokenAuthentication]
    permission_classes = [CanPublishReviews]
    parser_classes = [MultiPartParser, FormParser]
    serializer_class = PublicationUploadSerializer

    @extend_schema(
        responses={
            202: OpenApiResponse(
                OpenApiTypes.OBJECT, description="Stored; a worker imports it (id, status, url)."
            ),
            413: OpenApiResponse(
                OpenApiTypes.OBJECT, description="The archive exceeds the publication limit."
            ),
        }
    )
    def post(self, request: Request) -> Response:
        # Refuse oversized bodies before the multipart parser spools them to disk.
        declared = request.META.get("CONTENT_LENGTH")
        if declared and declared.isdigit() and int(declared) > max_publication_bytes() + 64 * 1024:
            return _too_large()
        upload = self.get_serializer(data=request.data)
        upload.is_valid(raise_exception=True)
        archive = upload.validated_data["archive"]
        if archive.size > max_publication_bytes():
            return _too_large()
        publication = enqueue_publication(
            atlas_id=upload.validated_data["atlas_id"],
            type=upload.validated_data["type"],
            archive_name=archive.name,
            archive=archive.read(),
            expected_review_id=upload.validated_data.get("expected_review_id") or None,
            user=request.user,
        )
        url = request.build_absolute_uri(
            reverse("api-review-publication", kwargs={"publication_id": publication.id})
        )
        body = {"id": str(publication.id), "status": publication.status, "url": url}
        return Response(body, status=status.HTTP_202_ACCEPTED)


class PublicationDetailView(GenericAPIView):
    """The state of one publication job, for its publisher and staff only (an id is not a
    secret); anyone else gets the same 404 as for an unknown job."""

    # Token first: an anonymous reader is told to authenticate (401), not refused (403).
    authentication_classes = [LockingTokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    serializer_class = PublicationStateSerializer

    def get_queryset(self):
        jobs = ReviewPublication.objects.defer("archive")
        user = self.request.user
        return jobs if user.is_staff else jobs.filter(created_by=user)

    def get(self, request: Request, publication_id) -> Response:
        expire_stale_publications()  # a reader never sees a dead worker's job as "running"
        publication = get_object_or_404(self.get_queryset(), id=publication_id)
        return Response(self.get_serializer(publication).data)


MUTABLE_ARTIFACT = "difficulty.json"


IMMUTABLE_CACHE = "public, max-age=31536000, immutable"


REVALIDATE_CACHE = "public, no-cache"


DETAIL_SCHEMA = inline_serializer("NotFound", fields={"detail": serializers.CharField()})


class FirstRendererNegotiation(BaseContentNegotiation):
    """Artifacts are plain text whatever the client accepts; errors are JSON."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ListPagination(PageNumberPagination):
    """The reviews API's lists (a source's pool, verifier issues). ``page`` and ``page_size`` are
    read strictly, as the catalog API reads them: a value that is not a positive integer (empty,
    given twice, ``page_size`` over 500) is a 400 naming it, never quietly the default."""

    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 500

    def paginate_queryset(self, queryset, request, view=None):
        refuse_repeated(request, ("page", "page_size"))
        errors: dict[str, list[str]] = {}
        query = request.query_params
        if "page" in query and exact_positive_int(query["page"]) is None:
            errors["page"] = ["A page number is a positive integer."]
        size = exact_positive_int(query["page_size"]) if "page_size" in query else None
        if "page_size" in query and (size is None or size > self.max_page_size):
            errors["page_size"] = [f"page_size is an integer from 1 to {self.max_page_size}."]
        if errors:
            raise serializers.ValidationError(errors)
        return super().paginate_queryset(queryset, request, view)

    def get_schema_operation_parameters(self, view):
        bounds = {"page": {"minimum": 1}, "page_size": {"minimum": 1, "maximum": 500}}
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"] = {**parameter["schema"], **bounds.get(parameter["name"], {})}
        return parameters


class SourcePoolView(ListAPIView):
    """A source's review pool: every published collection of it, current or not, newest judgment
    first — what the curators' tools read to synthesise a source."""

    permission_classes = [AllowAny]
    authentication_classes: list = []
    serializer_class = SourcePoolEntrySerializer
    pagination_class = ListPagination

    def get_queryset(self):
        # Any value names a source (an unknown one has an empty pool); none is a 400.
        if "source" not in self.request.query_params:
            raise serializers.ValidationError({"source": ["This field is required."]})
        refuse_repeated(self.request, ("source",))
        return selectors.source_pool(source_id=self.request.query_params["source"])

    @extend_schema(
        summary="A source's review pool: its published collections",
        parameters=[
            OpenApiParameter("source", str, required=True, description="The Atlas source ID.")
        ],
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)


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
            return Response({"detail": REVIEW_NOT_FOUND}, status=404)
        return Response(ReviewDetailSerializer(bundle, context={"request": request}).data)


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
            return Response({"detail": ARTIFACT_NOT_FOUND}, status=404)
        response = HttpResponse(found.content, content_type="text/plain; charset=utf-8")
        return _with_cache_headers(response, path=path, sha256=found.sha256)


def _etag_matches(header: str, sha256: str) -> bool:
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or f'"{sha256}"' in tags


def _with_cache_headers(response: HttpResponse, *, path: str, sha256: str) -> HttpResponse:
    response["ETag"] = f'"{sha256}"'
    response["Cache-Control"] = REVALIDATE_CACHE if path == MUTABLE_ARTIFACT else IMMUTABLE_CACHE
    return response


CanManageVerifierIssues = permission_for_writes(
    MANAGE_VERIFIER_ISSUES, "Confirming and resolving defects needs reviews.manage_verifier_issues."
)


class VerifierIssueFilter(django_filters.FilterSet):
    source = django_filters.CharFilter(field_name="source_id")
    status = django_filters.ChoiceFilter(choices=VerifierIssue.Status.choices)

    class Meta:
        model = VerifierIssue
        fields = ["source", "status"]


class VerifierIssueViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    queryset = VerifierIssue.objects.order_by("created_at", "id").prefetch_related("reproductions")
    serializer_class = VerifierIssueSerializer
    filterset_class = VerifierIssueFilter
    filter_backends = [DjangoFilterBackend]
    pagination_class = ListPagination
    permission_classes = [CanManageVerifierIssues]

    def list(self, request, *args, **kwargs):
        # Strict as the other lists: an empty status or a value given twice is a 400, never
        # quietly no filter or the last value.
        refuse_repeated(request, ("source", "status"))
        if request.query_params.get("status") == "":
            choices = ", ".join(VerifierIssue.Status.values)
            raise serializers.ValidationError({"status": [f"Expected one of: {choices}."]})
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=ConfirmRequestSerializer,
        responses={201: VerifierIssueSerializer, 200: VerifierIssueSerializer},
        description="Confirm a defect (201), or add a further published reproduction to the open "
        "defect recorded under the same issue (200).",
    )
    def create(self, request):
        body = ConfirmRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        issue = confirm_verifier_issue(**body.validated_data, user=request.user)
        # A further reproduction of an open defect adds to the row; a confirmation creates it.
        added = issue.review_id != body.validated_data["review_id"]
        code = status.HTTP_200_OK if added else status.HTTP_201_CREATED
        return Response(issue_as_json(issue), status=code)

    @extend_schema(request=ResolveRequestSerializer, responses={200: VerifierIssueSerializer})
    @action(detail=True, methods=["post"])
    def resolve(self, request, pk=None):
        body = ResolveRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        issue_id = self.get_object().pk  # 404 for unknown or malformed ids
        issue = resolve_verifier_issue(
            issue_id=issue_id,
            resolution_review_id=body.validated_data["resolution_review_id"],
            user=request.user,
        )
        return Response(issue_as_json(issue))
