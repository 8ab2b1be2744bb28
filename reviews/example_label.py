"""The one rule that tells an example collection from a real judgment.

Example runs (``reviews.production.examples``, ``make demo``) start every review summary with the
notice below. A collection is an example when any of its reviews says so; the review page then shows
a banner and the catalog marks the quality chip. ``ExampleCollection`` is the same rule in SQL, for
the display-state contribution that runs over a batch of sources.
"""

from __future__ import annotations

from typing import Any

from django.db.models import BooleanField, F, Func

from atlas.rules.labels import EXAMPLE_NOTICE

__all__ = ["EXAMPLE_NOTICE", "ExampleCollection", "is_example_collection"]


def is_example_collection(collection: dict[str, Any] | None) -> bool:
    reviews = (collection or {}).get("reviews") or []
    return any(
        isinstance(item, dict) and str(item.get("summary") or "").startswith(EXAMPLE_NOTICE)
        for item in reviews
    )


class ExampleCollection(Func):
    """True when a stored collection is an example (``is_example_collection`` in SQL)."""

    output_field = BooleanField()

    def __init__(self) -> None:
        super().__init__(F("collection"))

    def as_postgresql(self, compiler, connection, **extra):
        collection, params = compiler.compile(self.source_expressions[0])
        sql = (
            f"jsonb_path_exists({collection}, '$.reviews[*].summary ? (@ starts with $n)', "
            "jsonb_build_object('n', %s::text))"
        )
        return sql, (*params, EXAMPLE_NOTICE)

    def as_sql(self, compiler, connection, **extra):
        collection, params = compiler.compile(self.source_expressions[0])
        sql = (
            f"EXISTS (SELECT 1 FROM json_each({collection}, '$.reviews') "
            "WHERE substr(json_extract(value, '$.summary'), 1, length(%s)) = %s)"
        )
        return sql, (*params, EXAMPLE_NOTICE, EXAMPLE_NOTICE)
