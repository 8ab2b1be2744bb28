"""Reads of the catalog history (``catalog_source_changes``): a timeline, newest first, of the sync
revisions that changed something (each with its changes) and of curators' actions (each one
entry), one revision with all its changes, and one source's own history. Selectors page in SQL;
the view models below are built from what they loaded, without queries."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, QuerySet, Value, Window
from django.db.models.functions import RowNumber
from django.urls import reverse

from atlas.models import RefreshRun, SourceChange
from atlas.rules.labels import (
    MEASUREMENT_LABELS,
    QUALITY_LABELS,
    UNREVIEWED,
    is_web_link,
    review_page_url,
)
from atlas.rules.vocabularies import SYNC_CHANGE_KINDS, ChangeKind, MeasurementStatus

RUNS_PER_PAGE = 20
CHANGES_PER_RUN = 50
SOURCE_HISTORY_LIMIT = 100
KIND_LABELS = dict(ChangeKind.choices)
# Run ids are 64-bit keys: a longer number names no run, and SQLite cannot even bind it.
LARGEST_RUN_ID = 2**63 - 1
SHORT_REVIEW_ID = 12


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
    # A curator action's displayed value ("Rating"); None for a payload field, shown as code.
    label: str | None = None
    # Whether the new value is a promotion ("better"), a demotion ("worse") or neither ("").
    direction: str = ""


@dataclass(frozen=True)
class ChangeLine:
    source_id: str
    display_name: str
    origin: str
    kind: str
    kind_label: str
    fields: list[FieldChange]
    source_url: str
    run_id: int | None
    at: dt.datetime
    revision: str | None
    actor: str = ""
    review_id: str | None = None
    review_url: str | None = None
    issue_url: str | None = None
    note: str = ""
    change_id: int = 0

    @property
    def is_curation(self) -> bool:
        return self.run_id is None

    @property
    def issue_href(self) -> str | None:
        return self.issue_url if is_web_link(self.issue_url) else None

    @property
    def review_short(self) -> str:
        return (self.review_id or "")[:SHORT_REVIEW_ID]

    @property
    def summary(self) -> str:
        """One line: what changed, for the feed and link titles."""
        parts = [f"{f.label or f.name}: {f.old} → {f.new}" for f in self.fields]
        return "; ".join(parts)


@dataclass(frozen=True)
class RevisionEntry:
    """One sync run that changed the catalog, with counts per kind and its first changes."""

    run: RefreshRun
    counts: dict[str, int]
    total: int
    lines: list[ChangeLine]

    is_curation = False

    @property
    def at(self) -> dt.datetime:
        return self.run.started_at

    @property
    def summary(self) -> str:
        parts = [f"{self.counts[kind]:,} {KIND_LABELS[kind].lower()}" for kind in self.counts]
        return ", ".join(parts) or "no source changes"

    @property
    def url(self) -> str:
        return reverse("changes") + f"?run={self.run.id}"


@dataclass(frozen=True)
class CurationEntry:
    """One curator's action in the timeline."""

    line: ChangeLine

    is_curation = True

    @property
    def at(self) -> dt.datetime:
        return self.line.at

    @property
    def url(self) -> str:
        return self.line.review_url or self.line.source_url


TimelineEntry = RevisionEntry | CurationEntry


def value_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value or "“”"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _review_text(value: Any) -> str:
    return str(value)[:SHORT_REVIEW_ID] if value else "none"


# How a curator action's recorded values read (atlas.services.changes.CURATED_DISPLAY).
CURATED_FIELD_TEXT = {
    "quality": ("Rating", lambda value: QUALITY_LABELS.get(value, UNREVIEWED)),
    "difficulty": (
        "Difficulty",
        lambda value: MEASUREMENT_LABELS.get(value, "Not measured") if value else "Not measured",
    ),
    "open_issues": ("Open verifier defects", lambda value: str(value or 0)),
    "review": ("Current review", _review_text),
}
CURATED_FIELD_ORDER = tuple(CURATED_FIELD_TEXT)
QUALITY_RANK = {"bad": 1, "some_issues": 2, "good": 3}


def _direction(name: str, old: Any, new: Any) -> str:
    """A demotion reads as one: a lower or hidden rating, a lost current difficulty, more open
    defects are "worse"; their opposites "better"; a first rating or a new review neither."""
    if name == "quality":
        before, after = QUALITY_RANK.get(old), QUALITY_RANK.get(new)
        if before is None:
            return ""
        if after is None:
            return "worse"
        return "better" if after > before else "worse" if after < before else ""
    if name == "difficulty":
        current = MeasurementStatus.CURRENT
        if old == current and new != current:
            return "worse"
        return "better" if new == current and old != current else ""
    if name == "open_issues":
        before, after = old or 0, new or 0
        return "worse" if after > before else "better" if after < before else ""
    return ""


def _field_changes(change: SourceChange) -> list[FieldChange]:
    fields = change.fields or {}
    if change.run_id is not None:
        return [
            FieldChange(name=name, old=value_text(pair[0]), new=value_text(pair[1]))
            for name, pair in sorted(fields.items())
        ]
    names = [n for n in CURATED_FIELD_ORDER if n in fields]
    names += sorted(n for n in fields if n not in CURATED_FIELD_TEXT)
    lines = []
    for name in names:
        old, new = fields[name]
        label, text = CURATED_FIELD_TEXT.get(name, (name, value_text))
        lines.append(
            FieldChange(
                name=name,
                old=text(old),
                new=text(new),
                label=label,
                direction=_direction(name, old, new),
            )
        )
    return lines


def change_line(change: SourceChange) -> ChangeLine:
    """The view model of one loaded history row (its run loaded with it when it has one)."""
    run = change.run if change.run_id is not None else None
    return ChangeLine(
        source_id=change.source_id,
        display_name=change.display_name or change.source_id,
        origin=change.origin,
        kind=change.kind,
        kind_label=KIND_LABELS.get(change.kind, change.kind),
        fields=_field_changes(change),
        source_url=reverse("source-page", kwargs={"source_id": change.source_id}),
        run_id=change.run_id,
        at=change.at,
        revision=run.catalog_revision if run is not None else None,
        actor=change.actor,
        review_id=change.review_id,
        review_url=review_page_url(review_id=change.review_id) if change.review_id else None,
        issue_url=change.issue_url,
        note=change.note,
        change_id=change.id,
    )


def changed_runs() -> QuerySet[RefreshRun]:
    """Sync runs that recorded at least one change, newest first, with their counts per kind."""
    return (
        RefreshRun.objects.filter(changes__isnull=False)
        .annotate(
            total=Count("changes"),
            **{
                f"n_{kind}": Count("changes", filter=Q(changes__kind=kind))
                for kind in SYNC_CHANGE_KINDS
            },
        )
        .order_by("-started_at", "-id")
    )


def curation_changes() -> QuerySet[SourceChange]:
    """Curators' actions, newest first."""
    return SourceChange.objects.filter(run__isnull=True).order_by("-at", "-id")


def timeline_count() -> int:
    """Entries of the timeline: sync runs that changed something plus curators' actions."""
    runs = RefreshRun.objects.filter(Exists(SourceChange.objects.filter(run_id=OuterRef("pk"))))
    return runs.count() + curation_changes().count()


def timeline(*, offset: int, size: int, per_run: int) -> list[TimelineEntry]:
    """One page of the timeline, newest first: three queries (the page's keys, its runs with
    their first ``per_run`` changes, its curators' actions)."""
    if size <= 0:
        return []
    nothing = Value(None, output_field=IntegerField())
    runs = (
        RefreshRun.objects.filter(Exists(SourceChange.objects.filter(run_id=OuterRef("pk"))))
        .annotate(when=F("started_at"), run_key=F("id"), change_key=nothing)
        .values("when", "run_key", "change_key")
        .order_by()
    )
    actions = (
        SourceChange.objects.filter(run__isnull=True)
        .annotate(when=F("at"), run_key=nothing, change_key=F("id"))
        .values("when", "run_key", "change_key")
        .order_by()
    )
    keys = list(
        runs.union(actions, all=True).order_by("-when", "-run_key", "-change_key")[
            offset : offset + size
        ]
    )
    run_ids = [key["run_key"] for key in keys if key["run_key"] is not None]
    change_ids = [key["change_key"] for key in keys if key["change_key"] is not None]
    loaded_runs = list(changed_runs().filter(id__in=run_ids)) if run_ids else []
    revisions = {
        entry.run.id: entry for entry in revision_entries(runs=loaded_runs, per_run=per_run)
    }
    lines = (
        {
            change.id: change_line(change)
            for change in SourceChange.objects.filter(id__in=change_ids)
        }
        if change_ids
        else {}
    )
    entries: list[TimelineEntry] = []
    for key in keys:
        if key["run_key"] is not None:
            entries.append(revisions[key["run_key"]])
        else:
            entries.append(CurationEntry(line=lines[key["change_key"]]))
    return entries


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
    by_run: dict[int | None, list[ChangeLine]] = {}
    for change in changes:
        by_run.setdefault(change.run_id, []).append(change_line(change))
    return [
        RevisionEntry(
            run=run,
            counts={
                kind: getattr(run, f"n_{kind}")
                for kind in SYNC_CHANGE_KINDS
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


def run_counts(*, run_id: int | None) -> dict[str, dict[str, int]]:
    """``{origin: {kind: count}}`` of one sync run's history entries."""
    if run_id is None:
        return {}
    counts: dict[str, dict[str, int]] = {}
    rows = (
        SourceChange.objects.filter(run_id=run_id, kind__in=SYNC_CHANGE_KINDS)
        .order_by()
        .values("origin", "kind")
        .annotate(count=Count("*"))
    )
    for row in rows:
        counts.setdefault(row["origin"], {})[row["kind"]] = row["count"]
    return counts


def source_history(*, source_id: str, limit: int = SOURCE_HISTORY_LIMIT) -> list[ChangeLine]:
    """One source's history, syncs and curators' actions, newest first (one query)."""
    changes = (
        SourceChange.objects.filter(source_id=source_id)
        .select_related("run")
        .order_by("-at", "-id")[:limit]
    )
    return [change_line(change) for change in changes]
