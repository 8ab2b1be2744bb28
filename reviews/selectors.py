"""Reads of the review page, the artifact page and the review API.

``review_bundle`` loads everything a review page needs in a fixed number of queries; the review
page's view model (``reviews.pages.review_page``) shapes that bundle without touching the
database.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Case, F, Func, IntegerField, JSONField, Q, QuerySet, When
from django.db.models.functions import Coalesce

from atlas.models import Source
from reviews import page_sections
from reviews.identity import Difference, identity_differences
from reviews.kinds import pool_role
from reviews.models import Review, ReviewArtifact, VerifierIssue
from reviews.vocabularies import ReviewKind

ATTESTATION_PATH = re.compile(r"^publication/dataset-revision-attestation-[^/]+\.json$")
NATIVE_ATTESTATION_PATH = re.compile(r"^publication/native-revision-attestation-[^/]+\.json$")
_FAR_PAST = dt.datetime.min.replace(tzinfo=dt.UTC)


class ReviewCount(Func):
    """Number of entries in a collection's ``reviews`` array, counted by the database."""

    output_field = IntegerField()

    def __init__(self) -> None:
        super().__init__(F("collection"))

    def as_postgresql(self, compiler, connection, **extra):
        collection, params = compiler.compile(self.source_expressions[0])
        return f"jsonb_array_length(({collection}) -> 'reviews')", params

    def as_sql(self, compiler, connection, **extra):
        collection, params = compiler.compile(self.source_expressions[0])
        return f"json_array_length({collection}, '$.reviews')", params


@dataclass(frozen=True)
class ArtifactEntry:
    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class PoolEntry:
    id: str
    kind: str
    updated_at: dt.datetime | None
    review_count: int


@dataclass(frozen=True)
class ReviewBundle:
    review: Review
    source: Source
    supplemental: Sequence[Review]
    pool: list[PoolEntry]
    open_issues: list[VerifierIssue]
    resolved_issues: list[VerifierIssue]
    artifacts: list[ArtifactEntry]
    artifact_paths: dict[str, frozenset[str]]
    # Contents of the small artifacts the page reads: dataset- and native-revision attestations and
    # what the
    # registered page sections asked for (reviews.page_sections).
    contents: dict[str, str]

    @property
    def is_current(self) -> bool:
        return self.source.review_id == self.review.id

    @property
    def own_artifact_paths(self) -> frozenset[str]:
        return self.artifact_paths.get(self.review.id, frozenset())

    @property
    def identity_differences(self) -> tuple[Difference, ...]:
        """What a rating review executed that differs from its source's pins (page and API)."""
        if self.review.kind != ReviewKind.RATING:
            return ()
        return tuple(
            identity_differences(
                payload=self.source.payload,
                collection=self.review.collection,
                attestations=self.contents,
            )
        )


# --- loading -------------------------------------------------------------------------------------


def review_bundle(*, review_id: str) -> ReviewBundle | None:
    """The review with its source, pool, supplemental collections, verifier issues and artifact
    index (never artifact contents, except the small dataset-revision attestations): five queries
    at most."""
    review = Review.objects.select_related("source").filter(id=review_id).first()
    if review is None:
        return None
    # The pool needs only counts; only non-rating collections can carry a pool role (kind
    # detection), so only theirs are loaded.
    others = list(
        Review.objects.filter(source_id=review.source_id)
        .exclude(id=review.id)
        .annotate(
            review_count=Coalesce(ReviewCount(), 0),
            pool_collection=Case(
                When(~Q(kind=ReviewKind.RATING), then=F("collection")),
                default=None,
                output_field=JSONField(),
            ),
        )
        .only("id", "kind", "updated_at", "source_id")
    )
    for other in others:
        other.collection = other.pool_collection or {}
    supplemental = sorted(
        (other for other in others if _has_pool_role(other.collection)),
        key=lambda other: (other.updated_at is None, other.updated_at or _FAR_PAST, other.id),
    )
    pool = sorted(
        (
            PoolEntry(
                id=other.id,
                kind=other.kind,
                updated_at=other.updated_at,
                review_count=other.review_count,
            )
            for other in others
        ),
        key=lambda entry: (*newest_first(entry.updated_at), entry.id),
    )
    open_issues, resolved_issues = (
        VerifierIssue.objects.filter(source_id=review.source_id)
        .order_by("issue_url")
        .open_and_resolved()
    )
    indexed = ReviewArtifact.objects.filter(
        review_id__in=[review.id, *(other.id for other in supplemental)]
    ).order_by("path")
    rows = list(indexed.values_list("review_id", "path", "sha256", "size"))
    paths: dict[str, set[str]] = {}
    for owner, path, _, _ in rows:
        paths.setdefault(owner, set()).add(path)
    artifacts = [
        ArtifactEntry(path=path, sha256=sha, size=size)
        for owner, path, sha, size in rows
        if owner == review.id
    ]
    own = frozenset(entry.path for entry in artifacts)
    wanted = {
        path for path in own if ATTESTATION_PATH.match(path) or NATIVE_ATTESTATION_PATH.match(path)
    } | page_sections.wanted_paths(own)
    contents = (
        dict(
            ReviewArtifact.objects.filter(review_id=review.id, path__in=sorted(wanted))
            .order_by("path")
            .values_list("path", "content")
        )
        if wanted
        else {}
    )
    return ReviewBundle(
        review=review,
        source=review.source,
        supplemental=supplemental,
        pool=pool,
        open_issues=open_issues,
        resolved_issues=resolved_issues,
        artifacts=artifacts,
        artifact_paths={owner: frozenset(owned) for owner, owned in paths.items()},
        contents=contents,
    )


def source_pool(*, source_id: str) -> QuerySet[Any]:
    """Every published collection of a source, newest judgment first (undated last), then id;
    each counted by the database, never loaded (the API's pool list and the source page)."""
    return (
        Review.objects.filter(source_id=source_id)
        .annotate(review_count=Coalesce(ReviewCount(), 0))
        .only("id", "kind", "updated_at", "published_at", "source_id")
        .order_by(F("updated_at").desc(nulls_last=True), "id")
    )


def review_with_source(*, review_id: str) -> Review | None:
    return Review.objects.select_related("source").filter(id=review_id).first()


def artifact_index(*, review_id: str) -> list[ArtifactEntry]:
    """Path, digest and size of every artifact of a review, by path (never their contents)."""
    rows = (
        ReviewArtifact.objects.filter(review_id=review_id)
        .order_by("path")
        .values_list("path", "sha256", "size")
    )
    return [ArtifactEntry(path=path, sha256=sha, size=size) for path, sha, size in rows]


def artifact_sha256(*, review_id: str, path: str) -> str | None:
    return (
        ReviewArtifact.objects.filter(review_id=review_id, path=path)
        .values_list("sha256", flat=True)
        .first()
    )


def artifact(*, review_id: str, path: str) -> ReviewArtifact | None:
    return (
        ReviewArtifact.objects.filter(review_id=review_id, path=path)
        .only("path", "content", "sha256", "size", "review_id")
        .first()
    )


def _has_pool_role(collection: dict[str, Any]) -> bool:
    return any(
        pool_role(item) for item in collection.get("reviews") or [] if isinstance(item, dict)
    )


def newest_first(moment: dt.datetime | None) -> tuple[bool, float]:
    """Sort key part: newest first, undated last."""
    return (moment is None, -moment.timestamp() if moment else 0.0)
