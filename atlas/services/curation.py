"""Guarded edits of a source's curated quality (admin). Publication and defect handling have their
own services; the rules of the upper apps (an open defect caps Good) refuse an edit through the
curated edit guards of ``atlas.contributions``."""

from __future__ import annotations

from django.db import transaction

from atlas.contributions import check_curated_edit
from atlas.models import Source
from atlas.services.display import refresh_display_state


def edit_curated_quality(*, source_id: str, quality: str | None) -> Source:
    """Validate against every registered guard, then write the column and the display state.
    Raises ``CuratedEditRefused`` with the curator's message."""
    with transaction.atomic():
        source = Source.objects.select_for_update().get(id=source_id)
        check_curated_edit(source_id=source_id, quality=quality or None)
        Source.objects.filter(id=source.id).update(quality=quality or None)
        refresh_display_state(source_ids=[source.id])
    source.refresh_from_db()
    return source
