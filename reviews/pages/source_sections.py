"""What reviews draw on the source page (through ``atlas.contributions``): the source's confirmed
verifier defects, open and resolved, the sampled tasks of its current review
(``reviews.pages.task_preview``, three queries) and its review pool. The issues and the pool take
one query each, whatever the size of the pool (collections are counted and classified by the
database, never loaded)."""

from __future__ import annotations

from typing import Any

from atlas.contributions import SourceSection
from atlas.models import Source
from reviews.example_label import ExampleCollection
from reviews.links import review_page_url
from reviews.models import VerifierIssue
from reviews.pages.task_preview import sampled_tasks
from reviews.selectors import source_pool


def verifier_issues(*, source: Source) -> dict[str, Any] | None:
    open_issues, resolved_issues = (
        VerifierIssue.objects.filter(source_id=source.id)
        .order_by("created_at", "id")
        .open_and_resolved()
    )
    return {"open": open_issues, "resolved": resolved_issues}


def review_pool(*, source: Source) -> dict[str, Any] | None:
    collections = list(source_pool(source_id=source.id).annotate(example=ExampleCollection()))
    return {
        "current_id": source.review_id,
        "collections": [
            {
                "id": review.id,
                "url": review_page_url(review.id),
                "kind": review.get_kind_display(),
                "updated_at": review.updated_at,
                "published_at": review.published_at,
                "review_count": review.review_count,
                "example": review.example,
                "current": review.id == source.review_id,
            }
            for review in collections
        ],
    }


SECTIONS = (
    SourceSection(
        name="reviews.verifier_issues",
        template="reviews/_source_issues.html",
        build=verifier_issues,
    ),
    SourceSection(
        name="reviews.sampled_tasks", template="reviews/_source_tasks.html", build=sampled_tasks
    ),
    SourceSection(
        name="reviews.review_pool", template="reviews/_source_pool.html", build=review_pool
    ),
)
