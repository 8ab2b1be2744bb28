"""Published review collections, their evidence artifacts, grading bindings, publication jobs and
confirmed verifier defects."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from atlas.models import Source
from reviews.vocabularies import IssueStatus, PublicationStatus, PublicationType, ReviewKind


class Review(models.Model):
    """One published collection. ``id`` is the SHA-256 of the exact quality-reviews.json bytes."""

    id = models.CharField(primary_key=True, max_length=64)
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="reviews")
    collection = models.JSONField()
    kind = models.TextField(choices=ReviewKind.choices)
    updated_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField()
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "catalog_reviews"
        ordering = ["-updated_at", "id"]
        permissions = [("publish_review", "Can publish review collections and difficulty reports")]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=ReviewKind.values), name="catalog_reviews_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(id__regex=r"^[0-9a-f]{64}$"), name="catalog_reviews_id_is_sha256"
            ),
        ]
        indexes = [models.Index(fields=["source", "updated_at"], name="catalog_reviews_pool")]

    def __str__(self) -> str:
        return f"{self.source_id} · {self.id[:12]}"


class ReviewArtifact(models.Model):
    """An evidence file of a published collection; immutable (difficulty.json excepted)."""

    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="artifacts")
    path = models.TextField()
    content = models.TextField()
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "review_artifacts"
        ordering = ["review", "path"]
        constraints = [
            models.UniqueConstraint(fields=["review", "path"], name="review_artifacts_unique_path"),
            models.CheckConstraint(condition=Q(size__gte=0), name="review_artifacts_size_nonneg"),
        ]

    def __str__(self) -> str:
        return f"{self.review_id[:12]}/{self.path}"


class GradingBinding(models.Model):
    """A proof that a review's executed grading applies to a source revision."""

    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="grading_bindings")
    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="grading_bindings")
    source_revision = models.TextField()
    captured_verifier_revision = models.TextField(null=True, blank=True)
    grading_revision = models.CharField(max_length=64)
    evidence_path = models.TextField()
    evidence_sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "catalog_grading_reviews"
        constraints = [
            models.UniqueConstraint(
                fields=["source", "review", "source_revision", "grading_revision"],
                name="catalog_grading_reviews_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.source_id} · {self.review_id[:12]} · {self.grading_revision[:12]}"


class ReviewPublication(models.Model):
    """An uploaded run-directory archive waiting for, or done with, its import by a worker."""

    Status = PublicationStatus
    Type = PublicationType

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    atlas_id = models.TextField()
    type = models.TextField(choices=Type.choices, default=Type.REVIEW)
    status = models.TextField(choices=Status.choices, default=Status.QUEUED)
    archive_name = models.TextField()
    archive = models.BinaryField()
    expected_review_id = models.TextField(null=True, blank=True)
    error = models.TextField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The worker holding a running job must finish before this moment (reviews.services.jobs).
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    attempts = models.IntegerField(default=0)

    class Meta:
        db_table = "review_publications"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=PublicationStatus.values),
                name="review_publications_status_valid",
            ),
            models.CheckConstraint(
                condition=~Q(status="failed") | Q(error__isnull=False),
                name="review_publications_failed_has_error",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.atlas_id} · {self.status}"


class VerifierIssueQuerySet(models.QuerySet["VerifierIssue"]):
    def open(self) -> "VerifierIssueQuerySet":
        """Issues not resolved yet (what caps a source's quality)."""
        return self.filter(status=IssueStatus.OPEN)

    def open_and_resolved(self) -> tuple[list["VerifierIssue"], list["VerifierIssue"]]:
        """The issues, read in one query, as the open ones and the resolved ones (each in the
        query's order): the source page and the review page show both."""
        issues: list[VerifierIssue] = list(self)
        open_issues = [issue for issue in issues if issue.status == IssueStatus.OPEN]
        return open_issues, [issue for issue in issues if issue.status != IssueStatus.OPEN]


class VerifierIssue(models.Model):
    """A confirmed verifier, task-import or judge-output defect of a source."""

    Status = IssueStatus
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="verifier_issues")
    issue_url = models.TextField()
    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="confirmed_issues")
    status = models.TextField(choices=Status.choices, default=Status.OPEN)
    resolution_review = models.ForeignKey(
        Review, null=True, blank=True, on_delete=models.PROTECT, related_name="resolved_issues"
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = VerifierIssueQuerySet.as_manager()

    class Meta:
        db_table = "catalog_verifier_issues"
        ordering = ["created_at", "id"]
        permissions = [("manage_verifier_issues", "Can confirm and resolve verifier defects")]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "issue_url"], name="catalog_verifier_issues_unique_url"
            ),
            models.CheckConstraint(
                condition=Q(status__in=IssueStatus.values),
                name="catalog_verifier_issues_status_valid",
            ),
            models.CheckConstraint(
                condition=(Q(status="open") & Q(resolution_review__isnull=True))
                | (
                    Q(status="resolved")
                    & Q(resolution_review__isnull=False)
                    & ~Q(resolution_review=F("review"))
                ),
                name="catalog_verifier_issues_resolution_consistent",
            ),
        ]
        indexes = [models.Index(fields=["source", "status"], name="catalog_vi_source_status")]

    def __str__(self) -> str:
        return f"{self.source_id} · {self.issue_url} · {self.status}"

    def reproduction_review_ids(self) -> list[str]:
        """Every published reproduction of the defect: the confirming collection first, then
        those added while it was open (``validate_fix`` re-runs the failing inputs of all)."""
        # .all(): in the model's order, and read from a prefetch when the caller made one.
        return [self.review_id, *(added.review_id for added in self.reproductions.all())]


class VerifierIssueReproduction(models.Model):
    """A further published reproduction of an open defect, added after it was confirmed (the
    confirming collection is the issue's own ``review``): another attempt that shows the same
    defect, found later — e.g. a saved answer the fix validation took for a wrong one."""

    issue = models.ForeignKey(VerifierIssue, on_delete=models.PROTECT, related_name="reproductions")
    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="+")
    added_at = models.DateTimeField()
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "catalog_verifier_issue_reproductions"
        ordering = ["added_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["issue", "review"], name="catalog_vi_reproductions_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.issue_id} · {self.review_id}"
