"""The one writer of the catalog history (``catalog_source_changes``).

Every sync records per source what it added, retired, brought back, or which payload fields changed
from what to what: the sync hands the recorder what it already holds for each batch (the stored
rows it loaded, the incoming rows, the ids it retires); the recorder compares them in memory and
writes every change of the run at the end in bulk (``COPY`` on PostgreSQL), so recording costs no
query per source.

Every curator action records one entry too (``record_curation``): the upper apps' publication and
defect services call it inside their own transaction, with the source's display state from
before their write (``curation_state``), and the entry keeps which of the displayed values it
changed — the rating, the difficulty, the open defects, the current review.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.utils import timezone

from atlas.models import Source, SourceChange
from atlas.rules.vocabularies import CURATION_KINDS, ChangeKind

BATCH_SIZE = 1000
# Fields recorded as "changed" without their values (large, and shown elsewhere in full).
BULKY_FIELDS = frozenset({"grading_manifest"})
BULKY_MARK = "(changed)"


@dataclass
class ChangeRecorder:
    """Collects one sync's changes; ``save(run_id=…)`` writes them."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def compare(
        self, *, stored: Mapping[str, Any] | None, row: Mapping[str, Any], origin: str
    ) -> None:
        """One incoming row against the stored source (None when the ID is new)."""
        source_id = row["id"]
        name = row.get("display_name") or ""
        if stored is None:
            self._add(source_id, ChangeKind.ADDED, origin, name, {})
            return
        fields = field_changes(old=stored.get("payload") or {}, new=row)
        retired_here = self.records.get(source_id, {}).get("kind") == ChangeKind.RETIRED
        if retired_here:
            # Retired from its old origin earlier in this sync, now listed under another.
            self._add(source_id, ChangeKind.CHANGED, origin, name, fields)
        elif not stored.get("active", True):
            self._add(source_id, ChangeKind.RETURNED, origin, name, fields)
        elif fields:
            self._add(source_id, ChangeKind.CHANGED, origin, name, fields)

    def retire(self, *, source_ids: Iterable[str]) -> None:
        """Sources leaving the catalog; their origin and name are read in bulk when saved."""
        for source_id in source_ids:
            self._add(source_id, ChangeKind.RETIRED, "", "", {})

    def _add(
        self, source_id: str, kind: str, origin: str, name: str | None, fields: dict[str, Any]
    ) -> None:
        self.records[source_id] = {
            "source_id": source_id,
            "kind": str(kind),
            "origin": origin,
            "display_name": name or "",
            "fields": fields,
        }

    def save(self, *, run_id: int, at: dt.datetime) -> int:
        """Write the collected changes for the run that started ``at``; returns how many."""
        records = list(self.records.values())
        if not records:
            return 0
        _name_retired(records)
        if connection.vendor == "postgresql":
            _copy(run_id, at, records)
        else:
            SourceChange.objects.bulk_create(
                [SourceChange(run_id=run_id, at=at, **record) for record in records],
                batch_size=BATCH_SIZE,
            )
        return len(records)


def field_changes(*, old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list[Any]]:
    """``{name: [old, new]}`` for every top-level payload field whose value differs."""
    changes = {}
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        changes[name] = [BULKY_MARK, BULKY_MARK] if name in BULKY_FIELDS else [before, after]
    return changes


def _name_retired(records: list[dict[str, Any]]) -> None:
    retired = [r for r in records if r["kind"] == ChangeKind.RETIRED and not r["origin"]]
    for start in range(0, len(retired), BATCH_SIZE):
        batch = {r["source_id"]: r for r in retired[start : start + BATCH_SIZE]}
        for source_id, origin, name in Source.objects.filter(id__among=list(batch)).values_list(
            "id", "origin", "display_name"
        ):
            batch[source_id].update(origin=origin, display_name=name)


def _copy(run_id: int, at: dt.datetime, records: list[dict[str, Any]]) -> None:
    # orjson: the values come from validated rows (storable; a 100,000-row first sync spent a
    # second in the json module here).
    import orjson
    from psycopg import sql
    from psycopg.types.json import Jsonb

    columns = ["run_id", "at", "source_id", "kind", "origin", "display_name", "fields"]
    statement = sql.SQL("COPY {table} ({columns}) FROM STDIN").format(
        table=sql.Identifier(SourceChange._meta.db_table),
        columns=sql.SQL(", ").join(sql.Identifier(name) for name in columns),
    )
    with connection.cursor() as wrapper, wrapper.cursor.copy(statement) as copy:
        for record in records:
            copy.write_row(
                [
                    run_id,
                    at,
                    record["source_id"],
                    record["kind"],
                    record["origin"],
                    record["display_name"],
                    Jsonb(record["fields"], dumps=orjson.dumps),
                ]
            )


# --- curator actions ---------------------------------------------------------------------------

# The displayed values a curator's action can change, by the name the history records them under
# (the catalog_sources display-state column each is read from).
CURATED_DISPLAY = {
    "quality": "effective_quality",
    "difficulty": "difficulty_status",
    "open_issues": "open_issue_count",
    "review": "display_review_id",
}


def curation_state(*, source_id: str) -> dict[str, Any]:
    """The displayed values of a source a curator's action may change (empty when unknown); read
    it before the action writes, hand it to ``record_curation`` after."""
    row = Source.objects.filter(id=source_id).values(*CURATED_DISPLAY.values()).first() or {}
    return {name: row.get(column) for name, column in CURATED_DISPLAY.items()}


def record_curation(
    *,
    kind: str,
    source_id: str,
    before: Mapping[str, Any],
    user: Any = None,
    actor: str = "",
    review_id: str | None = None,
    issue_url: str | None = None,
    note: str = "",
    only_if_changed: bool = False,
) -> SourceChange | None:
    """One history entry for a curator's action on ``source_id``, with the displayed values it
    changed since ``before``. Call it inside the action's transaction, after its display state was
    recomputed. Who acted: ``user``'s name, else ``actor`` (a command line's operating-system user
    or ``--curator``). ``only_if_changed``: an action that repeated an earlier one (an identical
    re-publication) records nothing when it changed nothing."""
    if kind not in CURATION_KINDS:
        raise ValueError(f"Not a curator action: {kind}")
    source = (
        Source.objects.filter(id=source_id)
        .values("origin", "display_name", *CURATED_DISPLAY.values())
        .first()
    )
    if source is None:
        raise ValueError(f"Source not found: {source_id}")
    after = {name: source[column] for name, column in CURATED_DISPLAY.items()}
    fields = {
        name: [before.get(name), after[name]]
        for name in CURATED_DISPLAY
        if before.get(name) != after[name]
    }
    if only_if_changed and not fields:
        return None
    return SourceChange.objects.create(
        run=None,
        source_id=source_id,
        kind=kind,
        at=timezone.now(),
        origin=source["origin"],
        display_name=source["display_name"] or "",
        fields=fields,
        actor=getattr(user, "username", "") if getattr(user, "pk", None) else actor,
        review_id=review_id,
        issue_url=issue_url,
        note=note,
    )
