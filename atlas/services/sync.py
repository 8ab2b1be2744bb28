"""The one sync service: validate the whole artifact, then reconcile the saved inventory with it in
one transaction under the catalog-refresh lock."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from django.db import connection, transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone

from atlas.artifact.catalog_artifact import (
    CatalogInvalid,
    OriginSnapshot,
    ValidatedCatalog,
    load_catalog,
)
from atlas.db import bulk_writes
from atlas.db.gc_pause import collector_paused
from atlas.db.locks import catalog_refresh_lock
from atlas.jsonio import json_values
from atlas.models import Refresh, RefreshRun, Source
from atlas.rules.display_state import CURATED_FIELDS, DISPLAY_COLUMNS, SourceSnapshot
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
    # A 100,000-row artifact is millions of live objects: see atlas.db.gc_pause.
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
            result, rows_written, rows_before = _reconcile(
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
        # Statistics after every write (without them the catalog's main query was three times
        # slower). A VACUUM too when the sync rewrote at least half the inventory, a first sync
        # above all: it sets the visibility map (counts from an index alone) and the rows' hint
        # bits once, where left to autovacuum and readers they slowed the next syncs running
        # beside it. Autovacuum keeps up with smaller changes; a VACUUM after a 10 %-changed
        # sync of 100,000 rows cost as much as writing those rows.
        bulk_writes.vacuum_analyze(model=Source, vacuum=rows_written * 2 >= rows_before)
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
) -> tuple[dict[str, Any], int, int]:
    """The result payload, the rows written and the number of sources stored before the sync."""
    report = progress or (lambda line: None)
    now = timezone.now()
    previous = dict(Refresh.objects.values_list("origin", "revision"))
    results = []
    rows_written = 0
    touched_ids: set[str] = set()
    history = ChangeRecorder()  # the catalog history (atlas.services.changes)
    stored: set[str] | None = None  # the stored ids, read once, when the first origin changed
    # Retired at the end, flag and display state in one write; a source listed under a later
    # origin leaves this set when it is written there.
    retiring: set[str] = set()
    for snapshot in catalog.snapshots:
        changed = force or previous.get(snapshot.origin) != snapshot.revision
        if changed:
            if stored is None:
                stored = _stored_rows()
            written, retired_ids = _rewrite_origin(snapshot, history, force, stored, retiring)
            report(
                f"{snapshot.origin}: {len(snapshot.ids)} rows, {written} written, "
                f"{len(retired_ids)} retired"
            )
            rows_written += written
            Refresh.objects.update_or_create(
                origin=snapshot.origin,
                defaults={
                    "revision": snapshot.revision,
                    "revised_at": snapshot.revised_at,
                    "checked_at": now,
                    "synced_at": now,
                    "row_count": len(snapshot.ids),
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
    known = set(Source.objects.active().values_list("origin", flat=True).distinct()) | set(previous)
    retired_origins = sorted(known - present)
    if retired_origins:
        retired = list(
            Source.objects.active().filter(origin__in=retired_origins).values_list("id", flat=True)
        )
        retiring.update(retired)
        history.retire(source_ids=retired)
        Refresh.objects.filter(origin__in=retired_origins).delete()
    if force:
        # Rows of the artifact were recomputed above; a forced sync re-applies the display rules
        # to every other (retired) source too.
        touched_ids.update(Source.objects.filter(active=False).values_list("id", flat=True))
    if retiring:
        rows_written += refresh_display_state(source_ids=sorted(retiring), retire=True)
    touched_ids -= retiring
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
    history.save(run_id=run.id, at=run.started_at)
    result = {
        "busy": False,
        "revision": catalog.revision,
        "results": results,
        "retired_origins": retired_origins,
        "run": run.id,
    }
    return result, rows_written, len(stored or ())


def _rewrite_origin(
    snapshot: OriginSnapshot,
    history: ChangeRecorder,
    force: bool,
    stored: set[str],
    retiring: set[str],
) -> tuple[int, list[str]]:
    """Write the snapshot's rows and add this origin's rows missing from it to ``retiring`` (the
    sync retires them at its end); returns the rows written and the ids retired here.

    ``stored`` holds the ids the inventory held when the sync began. New rows are inserted; a
    stored row is compared with its stored payload: one active under this origin with an equal
    payload is left alone (its display state is current, because every writer of what that depends
    on recomputes it), unless the sync is forced, which recomputes the display state of every row
    (and writes the rows whose state changed); the others are rewritten. Reads and writes are
    batched, never one query per row.
    """
    snapshot_ids = set(snapshot.ids)
    with connection.cursor() as cursor:  # raw: the ORM took four times as long for 25,000 ids
        cursor.execute(
            f"SELECT id FROM {Source._meta.db_table} WHERE origin = %s AND active",
            [snapshot.origin],
        )
        active_here = [row[0] for row in cursor.fetchall()]
    missing = sorted(set(active_here) - snapshot_ids)
    history.retire(source_ids=missing)
    retiring.update(missing)
    retiring.difference_update(snapshot_ids)  # retired from an origin before, listed here now

    new: list[bytes] = []
    known: list[bytes] = []
    for source_id, part in zip(snapshot.ids, snapshot.parts, strict=True):
        (known if source_id in stored else new).append(part)
    written = _insert_new(new, snapshot.origin, history)
    written += _rewrite_stored(known, snapshot.origin, history, force=force)
    return written, missing


# An artifact row parsed, and the payload to write for it.
Parsed = tuple[dict[str, Any], Any]


def _stored_rows() -> set[str]:
    """Every stored source's id (raw rows: the ORM took twice as long for 100,000)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {Source._meta.db_table}")
        return {row[0] for row in cursor.fetchall()}


def _insert_new(rows: list[bytes], origin: str, history: ChangeRecorder) -> int:
    """Insert sources no row of the inventory has. On PostgreSQL they stream straight into the
    table with ``COPY``: the server indexes the rows already sent while the next ones are computed
    (the two cores work at once; a staging table would make the server wait for the last row)."""
    if not rows:
        return 0
    records = _new_records(rows, origin, history)
    if connection.vendor == "postgresql":
        bulk_writes.copy_insert(model=Source, names=["id", *UPSERT_FIELDS], records=records)
    else:
        _upsert(list(records))
    return len(rows)


def _parsed(rows: list[bytes]) -> list[Parsed]:
    """The rows of a batch parsed (``OriginSnapshot.rows`` says why orjson reads them exactly).
    PostgreSQL is given the canonical bytes as the payload (no serialising the row again)."""
    if connection.vendor == "postgresql":
        return [(orjson.loads(part), bulk_writes.JsonText(part.decode("ascii"))) for part in rows]
    return [(row := orjson.loads(part), row) for part in rows]


def _new_records(
    rows: list[bytes], origin: str, history: ChangeRecorder
) -> Iterator[dict[str, Any]]:
    for start in range(0, len(rows), BATCH_SIZE):
        batch = _parsed(rows[start : start + BATCH_SIZE])
        # No query runs here (the records are consumed inside a COPY): a source not stored yet
        # has no context to gather (atlas.contributions.gather_display_contexts).
        states = display_states(
            snapshots=[
                SourceSnapshot(id=row["id"], payload=row, active=True, curated={}, stored=False)
                for row, _ in batch
            ]
        )
        for parsed in batch:
            history.compare(stored=None, row=parsed[0], origin=origin)
            yield _record(parsed, origin, states[parsed[0]["id"]])


def _record(parsed: Parsed, origin: str, state: dict[str, Any]) -> dict[str, Any]:
    row, payload = parsed
    return {"id": row["id"], "origin": origin, "payload": payload, "active": True, **state}


def _same_payload(stored: Any, row: dict[str, Any]) -> bool:
    """Whether a stored payload is the row: equal as JSON values, types included (Python's ``==``
    takes ``true`` for ``1`` and ``1.0`` for ``1``; orjson's bytes with sorted keys do not)."""
    return orjson.dumps(stored, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        row, option=orjson.OPT_SORT_KEYS
    )


def _differing(batch: list[Parsed], origin: str) -> list[Parsed]:
    """The rows of ``batch`` whose stored source is not active under ``origin`` with the row's
    payload."""
    stored = {
        source_id: (stored_origin, active, text)
        for source_id, stored_origin, active, text in Source.objects.filter(
            id__among=[row["id"] for row, _ in batch]
        ).values_list("id", "origin", "active", Cast("payload", TextField()))
    }
    differing = []
    for parsed in batch:
        known = stored.get(parsed[0]["id"])
        if not (
            known is not None
            and known[0] == origin
            and bool(known[1])
            and _same_payload(json_values.loads_stored(known[2]), parsed[0])
        ):
            differing.append(parsed)
    return differing


def _rewrite_stored(rows: list[bytes], origin: str, history: ChangeRecorder, *, force: bool) -> int:
    """Write the stored sources among ``rows`` that differ (a source missing after all is
    inserted): another payload, origin or activity. A row that carries its stored payload is left
    alone, or, in a forced sync, written only when its display state changed."""
    columns = ["id", "origin", "active", *CURATED_FIELDS, *DISPLAY_COLUMNS]
    upserts: list[dict[str, Any]] = []
    for start in range(0, len(rows), BATCH_SIZE):
        batch = _parsed(rows[start : start + BATCH_SIZE])
        if not force:
            # Compared unlocked first (only a sync writes payloads, and it holds the refresh
            # lock): the rows that carry their stored payload are neither locked nor read again.
            batch = _differing(batch, origin)
            if not batch:
                continue
        existing = {
            item["id"]: item
            # Row locks make curated writers (publication, defects) and this sync wait for each
            # other, so a display state is never computed from curated values a writer replaced.
            # The payloads as text, for orjson (json.loads of them was a tenth of a sync).
            for item in Source.objects.select_for_update()
            .filter(id__among=[row["id"] for row, _ in batch])
            .values(*columns, payload_text=Cast("payload", TextField()))
        }
        kept: list[tuple[Parsed, bool]] = []
        for parsed in batch:
            row = parsed[0]
            stored = existing.get(row["id"])
            if stored is not None:
                stored["payload"] = json_values.loads_stored(stored.pop("payload_text"))
            same = (
                stored is not None
                and stored["origin"] == origin
                and bool(stored["active"])
                and _same_payload(stored["payload"], row)
            )
            if force or not same:
                kept.append((parsed, same))
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
                for (row, _), _same in kept
            ]
        )
        for parsed, same in kept:
            row = parsed[0]
            stored, state = existing.get(row["id"]), states[row["id"]]
            if not same:
                history.compare(stored=stored, row=row, origin=origin)
            elif all(stored[name] == state[name] for name in state):  # type: ignore[index]
                continue
            upserts.append(_record(parsed, origin, state))
    if upserts:
        _upsert(upserts)
    return len(upserts)


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
