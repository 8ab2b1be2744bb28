"""Guarded edits of a source's curated columns (admin). Publication and defect handling have their
own services; every path keeps the open-defect invariant (defects.md §5.2)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from atlas.models import Source
from atlas.services.display import refresh_display_state


def edit_curated_columns(*, source_id: str, quality: str | None, difficulty: str | None) -> Source:
    """Validate against the open-defect rules, then write both columns and the display state."""
    from reviews.defects import check_curated_edit

    with transaction.atomic():
        source = Source.objects.select_for_update().get(id=source_id)
        check_curated_edit(source_id=source_id, quality=quality, difficulty=difficulty)
        changes: dict[str, Any] = {"quality": quality or None, "difficulty": difficulty or None}
        Source.objects.filter(id=source.id).update(**changes)
        refresh_display_state(source_ids=[source.id])
    source.refresh_from_db()
    return source
