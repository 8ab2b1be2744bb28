"""Publication endpoints (reviews.md §4.2): upload a run-directory archive, read the job's state."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from rest_framework import serializers, status
from rest_framework.authentication import TokenAuthentication
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from reviews.archives import ArchiveRejected, archive_format, max_publication_bytes
from reviews.models import ReviewPublication
from reviews.publication_jobs import enqueue_publication


class CanPublishReviews(BasePermission):
    message = "Publishing needs the reviews.publish_review permission."

    def has_permission(self, request: Request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm("reviews.publish_review"))


class PublicationUploadSerializer(serializers.Serializer):
    atlas_id = serializers.CharField()
    archive = serializers.FileField()
    expected_review_id = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    type = serializers.ChoiceField(
        choices=ReviewPublication.Type.choices, default=ReviewPublication.Type.REVIEW
    )

    def validate_archive(self, archive):
        try:
            archive_format(archive.name)
        except ArchiveRejected as exc:
            raise serializers.ValidationError(str(exc)) from exc
        return archive


class PublicationStateSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReviewPublication
        fields = ["id", "atlas_id", "status", "error", "result"]


class PublicationAcceptedSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField()
    url = serializers.URLField()


def _too_large() -> Response:
    return Response(
        {"detail": f"Publication archive exceeds {max_publication_bytes()} bytes"},
        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    )


class PublicationCreateView(GenericAPIView):
    """POST a .tar.gz or .zip of a review run directory; a worker imports it."""

    authentication_classes = [TokenAuthentication]
    permission_classes = [CanPublishReviews]
    parser_classes = [MultiPartParser, FormParser]
    serializer_class = PublicationUploadSerializer

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
    """The state of one publication job."""

    permission_classes = [CanPublishReviews]
    serializer_class = PublicationStateSerializer
    queryset = ReviewPublication.objects.defer("archive")

    def get(self, request: Request, publication_id) -> Response:
        publication = get_object_or_404(self.get_queryset(), id=publication_id)
        return Response(self.get_serializer(publication).data)
