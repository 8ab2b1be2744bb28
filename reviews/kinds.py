"""Kind detection of a review collection from its content."""

from __future__ import annotations

from typing import Any

from django.db.models import BooleanField, F, Func

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


class HasPoolRole(Func):
    """True when a stored collection has a review with ``attributes.review_pool_role`` = role
    (``pool_role`` in SQL, for choosing a source's confirming defect collections)."""

    output_field = BooleanField()

    def __init__(self, role: str) -> None:
        if role not in POOL_ROLES:
            raise ValueError(f"Unknown pool role: {role}")
        self.role = role
        super().__init__(F("collection"))

    def as_postgresql(self, compiler, connection, **extra):
        collection, params = compiler.compile(self.source_expressions[0])
        sql = (
            f"jsonb_path_exists({collection}, "
            "'$.reviews[*].attributes.review_pool_role ? (@ == $r)', "
            "jsonb_build_object('r', %s::text))"
        )
        return sql, (*params, self.role)

    def as_sql(self, compiler, connection, **extra):
        collection, params = compiler.compile(self.source_expressions[0])
        sql = (
            f"EXISTS (SELECT 1 FROM json_each({collection}, '$.reviews') "
            "WHERE json_extract(value, '$.attributes.review_pool_role') = %s)"
        )
        return sql, (*params, self.role)
