"""Reads of the catalog history (``catalog_source_changes``): the catalog revisions that changed
something, each with its changes, and one source's own history. Selectors page in SQL; the view
models below are built from what they loaded, without queries."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, F, Q, QuerySet, Window
from django.db.models.functions import RowNumber
from django.urls import reverse

from atlas.models import RefreshRun, SourceChange
from atlas.vocabularies import ChangeKind

RUNS_PER_PAGE = 20
CHANGES_PER_RUN = 50
SOURCE_HISTORY_LIMIT = 100
KIND_LABELS = dict(ChangeKind.choices)
# Run ids are 64-bit keys: a longer number names no run, and SQLite cannot even bind it.
LARGEST_RUN_ID = 2**63 - 1


def parse_run_id(text: str | None) -> int | None:
    """The sync run id a query value names (decimal digits, 1 to the largest key), else None."""
    value = (text or "").strip()
    if not (value.isascii() and value.isdecimal()) or len(value) > len(str(LARGEST_RUN_ID)):
        return None
    number = int(value)
    return number if 1 <= number <= LARGEST_RUN_ID else None


@dataclass(frozen=True)
class FieldChange:
    name: str
    old: str
    new: str


@dataclass(frozen=True)
class ChangeLine:
    source_id: str
    display_name: str
    origin: str
    kind: str
    kind_label: str
    fields: list[FieldChange]
    source_url: str
    run_id: int
    at: dt.datetime
    revision: str | None


@dataclass(frozen=True)
class RevisionEntry:
    """One sync run that changed the catalog, with counts per kind and its first changes."""

    run: RefreshRun
    counts: dict[str, int]
    total: int
    lines: list[ChangeLine]

    @property
    def summary(self) -> str:
        parts = [f"{self.counts[kind]:,} {KIND_LABELS[kind].lower()}" for kind in self.counts]
        return ", ".join(parts) or "no source changes"

    @property
    def url(self) -> str:
        return reverse("changes") + f"?run={self.run.id}"


def value_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value or "“”"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def change_line(change: SourceChange) -> ChangeLine:
    run = change.run
    return ChangeLine(
        source_id=change.source_id,
        display_name=change.display_name or change.source_id,
        origin=change.origin,
        kind=change.kind,
        kind_label=KIND_LABELS.get(change.kind, change.kind),
        fields=[
            FieldChange(name=name, old=value_text(pair[0]), new=value_text(pair[1]))
            for name, pair in sorted((change.fields or {}).items())
        ],
        source_url=reverse("source-page", kwargs={"source_id": change.source_id}),
        run_id=run.id,
        at=run.started_at,
        revision=run.catalog_revision,
    )


def changed_runs() -> QuerySet[RefreshRun]:
    """Sync runs that recorded at least one change, newest first, with their counts per kind."""
    return (
        RefreshRun.objects.filter(changes__isnull=False)
        .annotate(
            total=Count("changes"),
            **{
                f"n_{kind}": Count("changes", filter=Q(changes__kind=kind))
                for kind in ChangeKind.values
            },
        )
        .order_by("-started_at", "-id")
    )


def revision_entries(*, runs: list[RefreshRun], per_run: int) -> list[RevisionEntry]:
    """The given runs with their first ``per_run`` changes each (one query for all runs)."""
    if not runs:
        return []
    ids = [run.id for run in runs]
    changes = (
        SourceChange.objects.filter(run_id__in=ids)
        .select_related("run")
        .order_by("run_id", "kind", "source_id")
    )
    changes = changes.annotate(
        position=Window(
            expression=RowNumber(),
            partition_by=[F("run_id")],
            order_by=[F("kind").asc(), F("source_id").asc()],
        )
    ).filter(position__lte=per_run)
    by_run: dict[int, list[ChangeLine]] = {}
    for change in changes:
        by_run.setdefault(change.run_id, []).append(change_line(change))
    return [
        RevisionEntry(
            run=run,
            counts={
                kind: getattr(run, f"n_{kind}")
                for kind in ChangeKind.values
                if getattr(run, f"n_{kind}", 0)
            },
            total=getattr(run, "total", len(by_run.get(run.id, []))),
            lines=by_run.get(run.id, []),
        )
        for run in runs
    ]


def run_changes(*, run_id: int) -> QuerySet[SourceChange]:
    return (
        SourceChange.objects.filter(run_id=run_id)
        .select_related("run")
        .order_by("kind", "source_id")
    )


def source_history(*, source_id: str, limit: int = SOURCE_HISTORY_LIMIT) -> list[ChangeLine]:
    """One source's changes, newest first (one query)."""
    changes = (
        SourceChange.objects.filter(source_id=source_id)
        .select_related("run")
        .order_by("-run__started_at", "-run_id")[:limit]
    )
    return [change_line(change) for change in changes]
