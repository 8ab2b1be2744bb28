"""The heading of a review page: what *this* collection says, never what the source shows now.

A review page is a permanent link to one collection, so its heading must not change when another
collection of the source is published: it shows the source's name, this collection's own rating
(derived from its content, for rating collections), its own date and its own issue count, and says
when the collection is a labelled example.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from atlas.rules.labels import EXAMPLE_NOTICE, QUALITY_LABELS
from reviews.example_label import is_example_collection
from reviews.labels import count_label
from reviews.rating import derive_rating
from reviews.vocabularies import ReviewKind

KIND_CHIPS: dict[str, str] = {
    ReviewKind.SUPPLEMENTAL: "Supplemental evidence · no rating",
    ReviewKind.IMPORTED: "Imported audit · no rating",
}
EXAMPLE_EXPLANATION = (
    "This collection was made to demonstrate the Atlas (make demo): its tasks are made up, its "
    "solver and judges are a scripted chat server, and its rating says nothing about the source "
    "— only the native verifier runs are real."
)


@dataclass(frozen=True)
class ReviewHeading:
    name: str
    rating_label: str
    rating_class: str
    reviewed_at: dt.datetime | None
    issue_count: int
    is_example: bool

    @property
    def issue_label(self) -> str:
        """This collection's own count, said as such: the issue panel below also lists the
        findings of the source's supplemental collections."""
        if not self.issue_count:
            return "No issues in this collection"
        return f"{count_label(self.issue_count, 'issue')} in this collection"

    @property
    def example_notice(self) -> str:
        return EXAMPLE_NOTICE

    @property
    def example_explanation(self) -> str:
        return EXAMPLE_EXPLANATION


def own_rating(*, collection: dict[str, Any], kind: str) -> tuple[str, str]:
    """(label, chip class) of the collection itself: its derived rating, or what kind it is."""
    if kind != ReviewKind.RATING:
        return KIND_CHIPS.get(kind, "No rating"), "quality-unknown"
    try:
        rating = derive_rating(collection)
    except (KeyError, TypeError, AttributeError):
        rating = None
    if rating is None:
        return "Unrated", "quality-unknown"
    return QUALITY_LABELS[rating], f"quality-{rating}"


def issue_count(collection: dict[str, Any]) -> int:
    return sum(
        1
        for review in collection.get("reviews") or []
        if isinstance(review, dict)
        for finding in review.get("findings") or []
        if isinstance(finding, dict) and finding.get("kind") == "issue"
    )


def review_heading(
    *, collection: dict[str, Any], kind: str, display_name: str, updated_at: dt.datetime | None
) -> ReviewHeading:
    label, css_class = own_rating(collection=collection, kind=kind)
    return ReviewHeading(
        name=display_name,
        rating_label=label,
        rating_class=css_class,
        reviewed_at=updated_at,
        issue_count=issue_count(collection),
        is_example=is_example_collection(collection),
    )
