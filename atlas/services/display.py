"""Recompute and store the display-state cache of sources."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import connection
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast

from atlas.contributions import gather_display_contexts
from atlas.db import bulk_writes
from atlas.jsonio import json_values
from atlas.models import DisplayVersion, Source
from atlas.rules.display_state import (
    CURATED_FIELDS,
    DISPLAY_COLUMNS,
    EMPTY_CONTEXT,
    SourceSnapshot,
    compute_display_state,
    display_of,
)

BATCH_SIZE = 1000


def snapshot_of(source: Source) -> SourceSnapshot:
    return SourceSnapshot(
        id=source.id,
        payload=source.payload or {},
        active=source.active,
        curated={name: getattr(source, name) for name in CURATED_FIELDS},
    )


def display_states(*, snapshots: list[SourceSnapshot]) -> dict[str, dict[str, Any]]:
    """The display columns of each snapshot: contexts gathered once for the batch (one query per
    kind of context, whatever the number of sources), then the pure rule per source."""
    contexts = gather_display_contexts(sources=snapshots)
    return {
        snapshot.id: compute_display_state(
            payload=snapshot.payload,  # read, never changed: no copy
            curated=snapshot.curated,
            active=snapshot.active,
            context=contexts.get(snapshot.id, EMPTY_CONTEXT),
        )
        for snapshot in snapshots
    }


def refresh_display_state(
    *, source_ids: Iterable[str] | None = None, only_changed: bool = False
) -> int:
    """Recompute the cache for the given sources (all sources when None); returns rows written.
    ``only_changed``: write only the sources whose recomputed state differs from the stored one
    (a forced sync re-applying the rules to sources it did not rewrite)."""
    # Rows as values with the payload as text, read by orjson: model instances and json.loads
    # were most of the client's time recomputing 50,000 sources.
    stored_columns = DISPLAY_COLUMNS if only_changed else ()
    queryset = Source.objects.order_by("id").values(
        "id", "active", *CURATED_FIELDS, *stored_columns, payload_text=Cast("payload", TextField())
    )
    if source_ids is not None:
        ids = list(dict.fromkeys(source_ids))
        if not ids:
            return 0
        batches = (ids[i : i + BATCH_SIZE] for i in range(0, len(ids), BATCH_SIZE))
        chunks: Iterator[list[dict[str, Any]]] = (
            list(queryset.filter(id__among=batch)) for batch in batches
        )
    else:
        chunks = _chunks_of_all(queryset)
    updated = 0
    for rows in chunks:
        snapshots = [
            SourceSnapshot(
                id=row["id"],
                payload=json_values.loads_stored(row["payload_text"]) or {},
                active=row["active"],
                curated={name: row[name] for name in CURATED_FIELDS},
            )
            for row in rows
        ]
        states = display_states(snapshots=snapshots)
        if only_changed:
            stored = {row["id"]: display_of(row) for row in rows}
            states = {
                key: state for key, state in states.items() if display_of(state) != stored[key]
            }
        store_display_states(states=states)
        updated += len(states)
    return updated


def store_display_states(*, states: dict[str, dict[str, Any]]) -> None:
    """Write computed display columns (and whatever else ``states`` carries, the same for every
    row): one set-based UPDATE on PostgreSQL (COPY + UPDATE … FROM), one parameterised UPDATE per
    row elsewhere (SQLite); and bump the display version."""
    if not states:
        return
    columns = list(next(iter(states.values())))
    bump_display_version()
    write = bulk_writes.update if connection.vendor == "postgresql" else bulk_writes.update_each
    write(
        model=Source,
        key="id",
        names=["id", *columns],
        records=({"id": source_id, **state} for source_id, state in states.items()),
    )


def bump_display_version() -> None:
    """What the catalog shows changes in this transaction: once it commits, nothing kept for the
    previous version is read again. Written in the transaction (not after it), so no reader sees
    the new version with the old rows; concurrent writers take turns on the row's lock."""
    version = secrets.randbits(62)
    if not DisplayVersion.objects.filter(pk=1).update(version=version):
        DisplayVersion.objects.update_or_create(pk=1, defaults={"version": version})


def _chunks_of_all(queryset: QuerySet[Source, dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    last_id = None
    while True:
        page = queryset if last_id is None else queryset.filter(id__gt=last_id)
        rows = list(page[:BATCH_SIZE])
        if not rows:
            return
        yield rows
        last_id = rows[-1]["id"]
