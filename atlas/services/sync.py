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
from atlas.rules.display_state import CURATED_FIELDS, DISPLAY_COLUMNS, SourceSnapshot, display_of
from atlas.services.changes import ChangeRecorder
from atlas.services.display import bump_display_version, display_states, refresh_display_state

logger = logging.getLogger(__name__)
BATCH_SIZE = 1000
# Stored rows are checked in larger batches: the display contexts cost a few queries per batch
# whatever its size (a forced sync of 20,000 rows spent a tenth of its time on them at 1,000).
STORED_BATCH_SIZE = 2500
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
            result, rows_written, rows_retired, rows_before = _reconcile(
                catalog, force, trigger, user_id, started_at, progress
            )
            # Decided before the commit: the server's count of changes does not hold this
            # transaction's yet, so they are not counted twice.
            analyze = (
                rows_written > 0
                and connection.vendor == "postgresql"
                and _needs_analyze(rows_written, rows_before)
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
    if analyze:
        # A VACUUM too when the sync rewrote at least half the inventory, a first sync above
        # all: it sets the visibility map (counts from an index alone) and the rows' hint bits
        # once, where left to autovacuum and readers they slowed the next syncs running beside
        # it. Autovacuum keeps up with smaller changes; a VACUUM after a 10 %-changed sync of
        # 100,000 rows cost as much as writing those rows. Retired rows do not count towards it:
        # the catalog's counts read active rows, and autovacuum clears the retired ones (at
        # 100,000 sources the VACUUM was a third of retiring half of them).
        # A sync that only retired changed one column: only its statistics are read again.
        rewritten = rows_written - rows_retired
        bulk_writes.vacuum_analyze(
            model=Source,
            vacuum=rewritten * 2 >= rows_before,
            fields=() if rewritten else ["active"],
        )
    return result


def _needs_analyze(rows_written: int, rows_before: int) -> bool:
    """Whether the sync refreshes the planner's statistics (without them after a first sync the
    catalog's main query was three times slower): when the rows changed since the table's last
    ANALYZE, this sync's included, pass the share at which autovacuum would analyze it by itself
    (by default 50 rows + 10 % of the table). The sync applies that rule itself, so it holds with
    autovacuum off too, and small syncs add up until one analyzes: statistics are never staler
    than the server's policy allows. The ANALYZE was an eighth of a 10 %-changed sync."""
    counts = bulk_writes.unanalyzed_rows(model=Source, rows=rows_before, writing=rows_written)
    return counts is None or counts[0] > counts[1]


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
) -> tuple[dict[str, Any], int, int, int]:
    """The result payload, the rows written (all), of them the rows retired, and the number of
    sources stored before the sync."""
    report = progress or (lambda line: None)
    now = timezone.now()
    previous = dict(Refresh.objects.values_list("origin", "revision"))
    results = []
    rows_written = 0
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
    rows_retired = _retire(sorted(retiring)) if retiring else 0
    rows_written += rows_retired
    if force:
        # Rows of the artifact were recomputed above; a forced sync re-applies the display rules
        # to every inactive source too (those just retired included), writing the changed ones.
        inactive = Source.objects.filter(active=False).values_list("id", flat=True)
        rows_written += refresh_display_state(source_ids=list(inactive), only_changed=True)

    any_changed = any(item["changed"] for item in results) or bool(retired_origins)
    if rows_written:
        bump_display_version()  # the rows this sync wrote carry their display columns
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
    return result, rows_written, rows_retired, len(stored or ())


def _retire(source_ids: list[str]) -> int:
    """Take sources out of the catalog: their flag, in one set-based statement, and nothing else.
    Their display state stays as stored: it does not depend on activity, and every writer of what
    it does depend on recomputes it. (Written with the display state, each retired row was one
    more COPY row, a join and its display columns: twice a bare UPDATE of the flag.)"""
    return Source.objects.filter(id__among=source_ids).update(active=False)


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
    known: list[tuple[str, bytes]] = []
    for source_id, part in zip(snapshot.ids, snapshot.parts, strict=True):
        if source_id in stored:
            known.append((source_id, part))
        else:
            new.append(part)
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
    takes ``true`` for ``1`` and ``1.0`` for ``1``; orjson's bytes with sorted keys do not). Values
    Python finds unequal differ whatever their types: most changed rows end there."""
    return stored == row and orjson.dumps(stored, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        row, option=orjson.OPT_SORT_KEYS
    )


STREAM_ROWS = 100  # rows per chunk of a streamed comparison read


def _stored_payloads(ids: list[str]) -> Iterator[tuple[str, str, bool, str]]:
    """Id, origin, active and payload text of the stored sources among ``ids``, in no particular
    order. On PostgreSQL one query streams them (``Cursor.stream``): the server renders the next
    payloads while this process compares the last ones (the two cores work at once; batched reads
    made each side wait for the other)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as wrapper:
            yield from wrapper.cursor.stream(
                f"SELECT id, origin, active, payload::text FROM {Source._meta.db_table} "
                "WHERE id = ANY(%s)",
                [ids],
                size=STREAM_ROWS,
            )
        return
    for start in range(0, len(ids), BATCH_SIZE):
        yield from Source.objects.filter(id__among=ids[start : start + BATCH_SIZE]).values_list(
            "id", "origin", "active", Cast("payload", TextField())
        )


def _differing(pairs: list[tuple[str, bytes]], origin: str) -> set[str]:
    """The ids among ``pairs`` (id, canonical bytes) whose stored source is not active under
    ``origin`` with the row's payload (or is missing). Read unlocked: only a sync writes payloads,
    and it holds the refresh lock."""
    incoming = dict(pairs)
    differing: set[str] = set()
    for source_id, stored_origin, active, text in _stored_payloads(list(incoming)):
        part = incoming.pop(source_id)
        if not (
            stored_origin == origin
            and active
            and _same_payload(json_values.loads_stored(text), orjson.loads(part))
        ):
            differing.add(source_id)
    differing.update(incoming)  # not stored after all
    return differing


def _rewrite_stored(
    rows: list[tuple[str, bytes]], origin: str, history: ChangeRecorder, *, force: bool
) -> int:
    """Write the stored sources among ``rows`` (id, canonical bytes) that differ (a source missing
    after all is inserted): another payload, origin or activity. A row that carries its stored
    payload is left alone, or, in a forced sync, written only when its display state changed.

    Every stored payload is compared first, unlocked (``_differing``); then only the rows to write
    (a forced sync: all) are parsed, locked and read again, the payloads of differing rows alone
    (for the history)."""
    differing = _differing(rows, origin)
    if not force:
        rows = [pair for pair in rows if pair[0] in differing]
    upserts: list[dict[str, Any]] = []
    for start in range(0, len(rows), STORED_BATCH_SIZE):
        batch = _parsed([part for _, part in rows[start : start + STORED_BATCH_SIZE]])
        ids = [row["id"] for row, _ in batch]
        existing = _locked(ids)
        payloads = _payloads([source_id for source_id in ids if source_id in differing])
        kept: list[tuple[Parsed, dict[str, Any] | None, bool]] = []
        for parsed in batch:
            source_id = parsed[0]["id"]
            stored = existing.get(source_id)
            same = source_id not in differing
            if stored is not None and not same:
                stored["payload"] = payloads.get(source_id)
            kept.append((parsed, stored, same and stored is not None))
        upserts.extend(_written(kept, existing, origin, history))
    if upserts:
        _upsert(upserts)
    return len(upserts)


def _payloads(ids: list[str]) -> dict[str, Any]:
    """The stored payloads of ``ids``, parsed (read as text, for orjson: json.loads of them was a
    tenth of a sync)."""
    if not ids:
        return {}
    return {
        source_id: json_values.loads_stored(text)
        for source_id, text in Source.objects.filter(id__among=ids).values_list(
            "id", Cast("payload", TextField())
        )
    }


def _locked(ids: list[str]) -> dict[str, dict[str, Any]]:
    """The stored sources of ``ids``, locked, with their curated and display columns. Row locks
    make curated writers (publication, defects) and this sync wait for each other, so a display
    state is never computed from curated values a writer replaced."""
    columns = ["id", "origin", "active", *CURATED_FIELDS, *DISPLAY_COLUMNS]
    return {
        item["id"]: item
        for item in Source.objects.select_for_update().filter(id__among=ids).values(*columns)
    }


def _written(
    kept: list[tuple[Parsed, dict[str, Any] | None, bool]],
    existing: dict[str, dict[str, Any]],
    origin: str,
    history: ChangeRecorder,
) -> list[dict[str, Any]]:
    """The records to write for ``kept`` (parsed row, locked stored source, whether it carries the
    row's payload): a differing row always, with its history; a same one only when its display
    state changed."""
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
            for (row, _), _stored, _same in kept
        ]
    )
    records = []
    for parsed, stored, same in kept:
        row = parsed[0]
        state = states[row["id"]]
        if not same:
            history.compare(stored=stored, row=row, origin=origin)
        elif display_of(stored) == display_of(state):  # type: ignore[arg-type]
            continue
        records.append(_record(parsed, origin, state))
    return records


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
