"""The catalog history written by every sync: per source, added, retired, returned, or which payload
fields changed from what to what.

The sync hands the recorder what it already holds for each batch (the stored rows it loaded, the
incoming rows, the ids it retires); the recorder compares them in memory and writes every change
of the run at the end in bulk (``COPY`` on PostgreSQL), so recording costs no query per source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from atlas.models import Source, SourceChange
from atlas.vocabularies import ChangeKind

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

    def save(self, *, run_id: int) -> int:
        """Write the collected changes for the run; returns how many."""
        records = list(self.records.values())
        if not records:
            return 0
        _name_retired(records)
        if connection.vendor == "postgresql":
            _copy(run_id, records)
        else:
            SourceChange.objects.bulk_create(
                [SourceChange(run_id=run_id, **record) for record in records],
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
        for source_id, origin, name in Source.objects.filter(id__in=list(batch)).values_list(
            "id", "origin", "display_name"
        ):
            batch[source_id].update(origin=origin, display_name=name)


def _copy(run_id: int, records: list[dict[str, Any]]) -> None:
    # orjson: the values come from validated rows (storable; a 100,000-row first sync spent a
    # second in the json module here).
    import orjson
    from psycopg import sql
    from psycopg.types.json import Jsonb

    columns = ["run_id", "source_id", "kind", "origin", "display_name", "fields"]
    statement = sql.SQL("COPY {table} ({columns}) FROM STDIN").format(
        table=sql.Identifier(SourceChange._meta.db_table),
        columns=sql.SQL(", ").join(sql.Identifier(name) for name in columns),
    )
    with connection.cursor() as wrapper, wrapper.cursor.copy(statement) as copy:
        for record in records:
            copy.write_row(
                [
                    run_id,
                    record["source_id"],
                    record["kind"],
                    record["origin"],
                    record["display_name"],
                    Jsonb(record["fields"], dumps=orjson.dumps),
                ]
            )
