"""The one sync service: validate the whole artifact, then reconcile the saved inventory with it in
one transaction under the catalog-refresh lock."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from atlas import bulk_writes
from atlas.catalog_artifact import CatalogInvalid, OriginSnapshot, ValidatedCatalog, load_catalog
from atlas.display_state import CURATED_FIELDS, DISPLAY_COLUMNS, SourceSnapshot
from atlas.gc_pause import collector_paused
from atlas.locks import catalog_refresh_lock
from atlas.models import Refresh, RefreshRun, Source
from atlas.services.changes import ChangeRecorder
from atlas.services.display import display_states, refresh_display_state

logger = logging.getLogger(__name__)
BATCH_SIZE = 1000
BUSY_MESSAGE = "Another visitor is refreshing the catalog. Your saved data remains available."
BUSY_RESULT = {"busy": True, "message": BUSY_MESSAGE}
UPSERT_FIELDS = ["origin", "payload", "active", *DISPLAY_COLUMNS]


class SyncRejected(Exception):
    """The artifact is invalid; the message says what is wrong. A failed run was recorded."""

    def __init__(self, message: str, run_id: int) -> None:
        super().__init__(message)
        self.run_id = run_id


def sync_catalog(
    *,
    catalog_path: Path,
    force: bool,
    trigger: str,
    user_id: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run one sync and return the result payload, or the busy object when another sync holds
    the lock.
    ``progress`` receives one line per origin as the sync goes (the command prints them)."""
    started_at = timezone.now()
    # A 100,000-row artifact is millions of live objects: see atlas.gc_pause.
    with collector_paused():
        try:
            catalog = load_catalog(Path(catalog_path))
        except CatalogInvalid as exc:
            run = _record_failure(started_at, trigger, force, user_id, str(exc), revision=None)
            raise SyncRejected(str(exc), run.id) from exc
        return _synced(catalog, force, trigger, user_id, started_at, progress)


def _synced(
    catalog: ValidatedCatalog,
    force: bool,
    trigger: str,
    user_id: int | None,
    started_at: Any,
    progress: Callable[[str], None] | None,
) -> dict[str, Any]:
    try:
        with transaction.atomic(), catalog_refresh_lock() as acquired:
            if not acquired:
                return dict(BUSY_RESULT)
            result, rows_written = _reconcile(
                catalog, force, trigger, user_id, started_at, progress
            )
    except Exception as exc:
        # Driver messages can carry SQL and paths; the run history is public, so it names only
        # the kind of failure and the log keeps the rest.
        logger.exception("Catalog sync failed")
        _record_failure(
            started_at,
            trigger,
            force,
            user_id,
            f"Sync failed: {type(exc).__name__}",
            catalog.revision,
        )
        raise
    if rows_written and connection.vendor == "postgresql":
        bulk_writes.vacuum_analyze(model=Source)
    return result


def _record_failure(started_at, trigger, force, user_id, message, revision) -> RefreshRun:
    with transaction.atomic():
        return RefreshRun.objects.create(
            started_at=started_at,
            finished_at=timezone.now(),
            trigger=trigger,
            forced=force,
            user_id=user_id,
            outcome=RefreshRun.Outcome.FAILED,
            catalog_revision=revision,
            error=message,
        )


def _reconcile(
    catalog: ValidatedCatalog,
    force: bool,
    trigger: str,
    user_id: int | None,
    started_at,
    progress: Callable[[str], None] | None,
) -> tuple[dict[str, Any], int]:
    report = progress or (lambda line: None)
    now = timezone.now()
    previous = dict(Refresh.objects.values_list("origin", "revision"))
    results = []
    rows_written = 0
    touched_ids: set[str] = set()
    history = ChangeRecorder()  # the catalog history (atlas.services.changes)
    for snapshot in catalog.snapshots:
        changed = force or previous.get(snapshot.origin) != snapshot.revision
        if changed:
            written, retired_ids = _rewrite_origin(snapshot, history, force)
            report(
                f"{snapshot.origin}: {len(snapshot.rows)} rows, {written} written, "
                f"{len(retired_ids)} retired"
            )
            rows_written += written
            touched_ids.update(retired_ids)
            Refresh.objects.update_or_create(
                origin=snapshot.origin,
                defaults={
                    "revision": snapshot.revision,
                    "revised_at": snapshot.revised_at,
                    "checked_at": now,
                    "synced_at": now,
                    "row_count": len(snapshot.rows),
                    "error": None,
                },
            )
        else:
            Refresh.objects.filter(origin=snapshot.origin).update(checked_at=now, error=None)
            report(f"{snapshot.origin}: unchanged")
        results.append(
            {"origin": snapshot.origin, "revision": snapshot.revision, "changed": changed}
        )

    present = {snapshot.origin for snapshot in catalog.snapshots}
    # An origin is retired once: when it still has active rows or a refresh row.
    known = set(
        Source.objects.filter(active=True).values_list("origin", flat=True).distinct()
    ) | set(previous)
    retired_origins = sorted(known - present)
    if retired_origins:
        retired = list(
            Source.objects.filter(origin__in=retired_origins, active=True).values_list(
                "id", flat=True
            )
        )
        for start in range(0, len(retired), BATCH_SIZE):
            Source.objects.filter(id__among=retired[start : start + BATCH_SIZE]).update(
                active=False
            )
        touched_ids.update(retired)
        history.retire(source_ids=retired)
        Refresh.objects.filter(origin__in=retired_origins).delete()
    if force:
        # Rows of the artifact were recomputed above; a forced sync re-applies the display rules
        # to every other (retired) source too.
        touched_ids.update(Source.objects.filter(active=False).values_list("id", flat=True))
    if touched_ids:
        rows_written += refresh_display_state(source_ids=sorted(touched_ids))

    any_changed = any(item["changed"] for item in results) or bool(retired_origins)
    run = RefreshRun.objects.create(
        started_at=started_at,
        finished_at=timezone.now(),
        trigger=trigger,
        forced=force,
        user_id=user_id,
        outcome=RefreshRun.Outcome.SYNCED if any_changed else RefreshRun.Outcome.UNCHANGED,
        catalog_revision=catalog.revision,
        results=results,
        retired_origins=retired_origins,
        rows_written=rows_written,
    )
    history.save(run_id=run.id)
    result = {
        "busy": False,
        "revision": catalog.revision,
        "results": results,
        "retired_origins": retired_origins,
        "run": run.id,
    }
    return result, rows_written


def _rewrite_origin(
    snapshot: OriginSnapshot, history: ChangeRecorder, force: bool
) -> tuple[int, list[str]]:
    """Upsert the snapshot's rows and retire this origin's rows missing from it.

    Rows whose payload, activity and display state would not change are skipped, so a rewrite
    costs writes only for what differs; reads and writes are batched, never one query per row.
    """
    snapshot_ids = {row["id"] for row in snapshot.rows}
    active_here = list(
        Source.objects.filter(origin=snapshot.origin, active=True).values_list("id", flat=True)
    )
    missing = sorted(set(active_here) - snapshot_ids)
    history.retire(source_ids=missing)
    for start in range(0, len(missing), BATCH_SIZE):
        Source.objects.filter(id__among=missing[start : start + BATCH_SIZE]).update(active=False)

    upserts: list[dict[str, Any]] = []
    rows = snapshot.rows
    if active_here and not force and connection.vendor == "postgresql":
        rows = _possibly_changed(snapshot)
    for start in range(0, len(rows), BATCH_SIZE):
        batch = rows[start : start + BATCH_SIZE]
        ids = [row["id"] for row in batch]
        existing = {
            item["id"]: item
            # Row locks make curated writers (publication, defects) and this sync wait for each
            # other, so a display state is never computed from curated values a writer replaced.
            for item in Source.objects.select_for_update()
            .filter(id__among=ids)
            .values("id", "origin", "payload", "active", *CURATED_FIELDS, *DISPLAY_COLUMNS)
        }
        # The display state is computed before the new payload is written, so the contexts must
        # judge grading bindings against the incoming rows, not the stored ones.
        states = display_states(
            snapshots=[
                SourceSnapshot(
                    id=row["id"],
                    payload=row,
                    active=True,
                    curated={name: existing[row["id"]][name] for name in CURATED_FIELDS}
                    if row["id"] in existing
                    else {},
                    stored=row["id"] in existing,
                )
                for row in batch
            ]
        )
        for row in batch:
            stored = existing.get(row["id"])
            state = states[row["id"]]
            history.compare(stored=stored, row=row, origin=snapshot.origin)
            if stored and _unchanged(stored, row, snapshot.origin, state):
                continue
            upserts.append(
                {
                    "id": row["id"],
                    "origin": snapshot.origin,
                    "payload": row,
                    "active": True,
                    **state,
                }
            )
    if upserts:
        _upsert(upserts)
    return len(upserts), missing


def _possibly_changed(snapshot: OriginSnapshot) -> tuple[dict[str, Any], ...]:
    """The rows of the snapshot that are new, returning, moving origin or carrying another payload.

    The rest are skipped without reading them back: an unchanged active row's display state is
    current, because every writer of what it depends on (publication, defects, curated edits)
    recomputes it; a forced sync recomputes everything. Comparing in SQL (``jsonb`` equality)
    spares reading and decoding every stored payload, most of a 10 %-changed sync's time."""
    differing = set(
        bulk_writes.keys_where(
            model=Source,
            key="id",
            names=["id", "origin", "payload"],
            records=(
                {"id": row["id"], "origin": snapshot.origin, "payload": row}
                for row in snapshot.rows
            ),
            condition=(
                "target.id IS NULL OR NOT target.active OR target.origin <> staged.origin "
                "OR target.payload <> staged.payload"
            ),
        )
    )
    return tuple(row for row in snapshot.rows if row["id"] in differing)


def _upsert(records: list[dict[str, Any]]) -> None:
    """Insert new sources (curated columns null) or set ``origin``, ``payload``, ``active`` and the
    display columns of existing ones; curated columns are never written."""
    if connection.vendor == "postgresql":
        bulk_writes.upsert(model=Source, key="id", names=["id", *UPSERT_FIELDS], records=records)
        return
    Source.objects.bulk_create(
        [Source(**record) for record in records],
        batch_size=BATCH_SIZE,
        update_conflicts=True,
        unique_fields=["id"],
        update_fields=UPSERT_FIELDS,
    )


def _unchanged(
    stored: dict[str, Any], row: dict[str, Any], origin: str, state: dict[str, Any]
) -> bool:
    if not stored["active"] or stored["origin"] != origin or stored["payload"] != row:
        return False
    return all(stored[name] == value for name, value in state.items())
