"""Evidence intake: how files of a run directory become stored artifacts, for review and
difficulty publication alike — the one home of the artifact size limit, the check against the
artifacts a review already holds and the bulk write of new ones. Path safety and the text and size
rules themselves live in ``reviews.production.format.run_files`` (no Django, shared with
``make_review``); they are re-exported here so publication code imports one module.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import connection
from django.utils import timezone

from atlas.db import bulk_writes
from reviews.models import Review, ReviewArtifact
from reviews.production.format.run_files import (
    DEFAULT_MAX_ARTIFACT_BYTES,
    ArtifactFile,
    RunDirectory,
    artifact_file,
    as_text,
    conflicting,
    normalized_relative,
    not_text,
    read_limited,
    text_artifact,
    too_large,
)

__all__ = [
    "ArtifactFile", "RunDirectory", "artifact_file", "as_text", "check_against_stored",
    "max_artifact_bytes", "normalized_relative", "not_text", "read_limited",
    "store_new_artifacts", "text_artifact", "too_large",
]  # fmt: skip

ARTIFACT_BATCH_SIZE = 500


def max_artifact_bytes() -> int:
    return int(getattr(settings, "ATLAS_MAX_ARTIFACT_BYTES", DEFAULT_MAX_ARTIFACT_BYTES))


# --- existing artifacts and writes ---------------------------------------------------------------


def check_against_stored(
    *,
    review_id: str,
    files: Iterable[ArtifactFile],
    replaceable: frozenset[str] = frozenset(),
    error: type[Exception],
) -> None:
    """A stored artifact is immutable: the same path must hold the same bytes (except the
    ``replaceable`` paths, which their publisher archives first)."""
    stored = dict(ReviewArtifact.objects.filter(review_id=review_id).values_list("path", "sha256"))
    if not stored:
        return
    for file in files:
        if file.path not in replaceable and stored.get(file.path, file.sha256) != file.sha256:
            raise error(conflicting(path=file.path))


def store_new_artifacts(*, review: Review, files: Iterable[ArtifactFile]) -> int:
    """Insert the artifacts the review does not hold yet; returns how many were written."""
    existing = set(ReviewArtifact.objects.filter(review=review).values_list("path", flat=True))
    new = [file for file in files if file.path not in existing]
    if connection.vendor == "postgresql":
        # COPY: a 10,000-file import binds no per-row parameters.
        now = timezone.now()
        bulk_writes.copy_insert(
            model=ReviewArtifact,
            names=["review", "path", "content", "sha256", "size", "created_at"],
            records=(
                {"review": review.id, "path": file.path, "content": file.content,
                 "sha256": file.sha256, "size": file.size, "created_at": now}
                for file in new
            ),
        )  # fmt: skip
        return len(new)
    ReviewArtifact.objects.bulk_create(
        [
            ReviewArtifact(
                review_id=review.id,
                path=file.path,
                content=file.content,
                sha256=file.sha256,
                size=file.size,
            )
            for file in new
        ],
        batch_size=ARTIFACT_BATCH_SIZE,
    )
    return len(new)
