"""Kind detection of a review collection from its content."""

from __future__ import annotations

from typing import Any

from reviews.vocabularies import ReviewKind

POOL_ROLES = frozenset({"verifier_defect", "verifier_revision_attestation"})


def pool_role(review: dict[str, Any]) -> str | None:
    attributes = review.get("attributes")
    role = attributes.get("review_pool_role") if isinstance(attributes, dict) else None
    return role if role in POOL_ROLES else None


def detect_kind(collection: dict[str, Any]) -> str:
    if collection.get("source_mappings"):
        return ReviewKind.IMPORTED
    if any(pool_role(review) for review in collection.get("reviews", [])):
        return ReviewKind.SUPPLEMENTAL
    return ReviewKind.RATING
