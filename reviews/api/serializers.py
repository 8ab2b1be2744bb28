"""Serializers of the reviews API: publication jobs, review reads and verifier issues."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from atlas.api.row_fields import OpenVerifierIssueSerializer
from reviews.links import artifact_api_url, artifact_page_url, review_page_url
from reviews.models import ReviewPublication, VerifierIssue
from reviews.services.archives import ArchiveRejected, archive_format


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


class ArtifactIndexSerializer(serializers.Serializer):
    """One artifact of a review's index, with where to read it (the review is the root's)."""

    path = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    url = serializers.SerializerMethodField(help_text="The stored text (`text/plain`).")
    page_url = serializers.SerializerMethodField(help_text="The artifact's page on the site.")

    def get_url(self, entry) -> str:
        return _absolute(self, artifact_api_url(self._review_id(), entry.path))

    def get_page_url(self, entry) -> str:
        return _absolute(self, artifact_page_url(self._review_id(), entry.path))

    def _review_id(self) -> str:
        collection = self.root.instance
        if collection is None:  # the serializer only ever describes a stored collection
            raise ValueError("artifact URLs need the stored collection they belong to")
        return collection.review.id


def _absolute(serializer: serializers.Serializer, path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request is not None else path


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


class SourcePoolEntrySerializer(serializers.Serializer):
    """One collection of a source's review pool (``GET /api/reviews/?source=``)."""

    id = serializers.CharField()
    source_id = serializers.CharField()
    kind = serializers.CharField()
    updated_at = serializers.DateTimeField(allow_null=True)
    published_at = serializers.DateTimeField()
    review_count = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    review_page_url = serializers.SerializerMethodField()

    def get_url(self, review) -> str:
        return self._absolute(reverse("api-review", kwargs={"review_id": review.id}))

    def get_review_page_url(self, review) -> str:
        return self._absolute(review_page_url(review.id))

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class ReviewSourceSerializer(serializers.Serializer):
    id = serializers.CharField()
    active = serializers.BooleanField()
    current_review_id = serializers.CharField(source="review_id", allow_null=True)
    quality = serializers.CharField(source="effective_quality", allow_null=True)
    review_applicability = serializers.CharField(allow_null=True)


class IdentityDifferenceSerializer(serializers.Serializer):
    """A pin the review's executed identity differs from, and how to make the review current."""

    pin = serializers.CharField()
    pinned = serializers.CharField(allow_null=True)
    executed = serializers.CharField(allow_null=True)
    attest = serializers.CharField()


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
    # Empty when the review's executed identity matches the source's pins (reviews.identity).
    identity_differences = IdentityDifferenceSerializer(many=True)
    # The metaclass moves declared fields to _declared_fields; the stubs read this as
    # overriding Field.source (the attribute path), which it never does at runtime.
    source = ReviewSourceSerializer()  # type: ignore[assignment]


class VerifierIssueSerializer(serializers.ModelSerializer):
    source_id = serializers.CharField(read_only=True)
    review_id = serializers.CharField(read_only=True)
    resolution_review_id = serializers.CharField(read_only=True, allow_null=True)
    reproduction_review_ids = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="Every published reproduction of the defect: the confirming collection "
        "(`review_id`) first, then those added while it was open.",
    )

    class Meta:
        model = VerifierIssue
        fields = [
            "id", "source_id", "issue_url", "review_id", "reproduction_review_ids", "status",
            "resolution_review_id", "created_at", "updated_at",
        ]  # fmt: skip


def issue_as_json(issue: VerifierIssue) -> dict:
    """The row as the command prints it and the API answers it."""
    return dict(VerifierIssueSerializer(issue).data)


class ConfirmRequestSerializer(serializers.Serializer):
    source_id = serializers.CharField()
    issue_url = serializers.CharField()
    review_id = serializers.CharField()


class ResolveRequestSerializer(serializers.Serializer):
    resolution_review_id = serializers.CharField()
