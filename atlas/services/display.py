"""Recompute and store the display-state cache of sources (catalog.md §9.2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from atlas.display_state import (
    CURATED_FIELDS,
    DISPLAY_COLUMNS,
    EMPTY_CONTEXT,
    DisplayContext,
    compute_display_state,
)
from atlas.models import Source

BATCH_SIZE = 1000


def gather_contexts(*, source_ids: Iterable[str]) -> dict[str, DisplayContext]:
    """Bulk-read what the display state needs besides the row: open defects, grading bindings and
    difficulty summaries. One query per kind of context, whatever the number of sources."""
    ids = list(source_ids)
    if not ids:
        return {}
    from atlas.display_context import contexts_for

    return contexts_for(source_ids=ids)


def display_columns_for(
    *, payload: dict[str, Any], curated: dict[str, Any], active: bool, context: DisplayContext
) -> dict[str, Any]:
    return compute_display_state(payload=payload, curated=curated, active=active, context=context)


def refresh_display_state(*, source_ids: Iterable[str] | None = None) -> int:
    """Recompute the cache for the given sources (all sources when None); returns rows updated."""
    queryset = Source.objects.order_by("id").only("id", "payload", "active", *CURATED_FIELDS)
    if source_ids is not None:
        ids = list(dict.fromkeys(source_ids))
        if not ids:
            return 0
        batches = (ids[i : i + BATCH_SIZE] for i in range(0, len(ids), BATCH_SIZE))
        chunks = (list(queryset.filter(id__in=batch)) for batch in batches)
    else:
        chunks = _chunks_of_all(queryset)
    updated = 0
    for rows in chunks:
        contexts = gather_contexts(source_ids=[row.id for row in rows])
        for row in rows:
            curated = {name: getattr(row, name) for name in CURATED_FIELDS}
            state = compute_display_state(
                payload=row.payload,
                curated=curated,
                active=row.active,
                context=contexts.get(row.id, EMPTY_CONTEXT),
            )
            for name, value in state.items():
                setattr(row, name, value)
        Source.objects.bulk_update(rows, DISPLAY_COLUMNS, batch_size=BATCH_SIZE)
        updated += len(rows)
    return updated


def _chunks_of_all(queryset):
    last_id = None
    while True:
        page = queryset if last_id is None else queryset.filter(id__gt=last_id)
        rows = list(page[:BATCH_SIZE])
        if not rows:
            return
        yield rows
        last_id = rows[-1].id
