"""Reads shared by the pages, the API and the CSV export."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Q, QuerySet, Subquery, Sum

from atlas.models import Refresh, RefreshRun, Source

EXCLUDED = "Excluded"
VOCABULARY_CACHE_SECONDS = 3600


def refresh_state() -> dict[str, Any]:
    refreshes = list(Refresh.objects.order_by("origin"))
    last_run = RefreshRun.objects.order_by("-started_at", "-id").first()
    return {"refreshes": refreshes, "last_run": last_run}


@dataclass(frozen=True)
class OriginCount:
    origin: str
    total: int
    excluded: int


@dataclass(frozen=True)
class CatalogVocabulary:
    """What the controls offer and the counts that ignore the view: one query per kind."""

    origins: tuple[OriginCount, ...]
    families: tuple[str, ...]
    has_unknown_family: bool

    @property
    def origin_names(self) -> list[str]:
        return [item.origin for item in self.origins]

    @property
    def active_total(self) -> int:
        return sum(item.total for item in self.origins)

    @property
    def excluded_total(self) -> int:
        return sum(item.excluded for item in self.origins)

    @property
    def available_total(self) -> int:
        return self.active_total - self.excluded_total


def catalog_vocabulary() -> CatalogVocabulary:
    origins = tuple(
        OriginCount(origin=row["origin"], total=row["total"], excluded=row["excluded"])
        for row in Source.objects.active()
        .order_by()
        .values("origin")
        .annotate(total=Count("pk"), excluded=Count("pk", filter=Q(status=EXCLUDED)))
        .order_by("origin")
    )
    distinct = set(Source.objects.active().order_by().values_list("family", flat=True).distinct())
    families = tuple(sorted((f for f in distinct if f), key=lambda f: (f.lower(), f)))
    return CatalogVocabulary(origins=origins, families=families, has_unknown_family="" in distinct)


def current_vocabulary() -> CatalogVocabulary:
    """The vocabulary, cached per sync.

    Origins, families, status and activity change only through a sync, and every sync that
    writes rows records its run in the same transaction; so the newest run (by id, with its start
    time against reused ids) names the inventory version, and one indexed lookup replaces two
    aggregates over every active source.
    """
    latest = RefreshRun.objects.order_by("-id").values_list("id", "started_at").first()
    if latest is None:  # no run recorded yet: nothing to key a cache on
        return catalog_vocabulary()
    run_id, started_at = latest
    key = f"atlas:vocabulary:{run_id}:{started_at.isoformat()}"
    vocabulary = cache.get(key)
    if vocabulary is None:
        vocabulary = catalog_vocabulary()
        cache.set(key, vocabulary, VOCABULARY_CACHE_SECONDS)
    return vocabulary


@dataclass(frozen=True)
class ViewTotals:
    matching: int
    task_total: int
    unknown_counts: int


def view_totals(*, matching: QuerySet[Source]) -> ViewTotals:
    """Matching rows, their known task counts and unknown dataset counts, across all pages."""
    totals = matching.order_by().aggregate(
        matching=Count("pk"),
        task_total=Sum("task_count"),
        unknown_counts=Count("pk", filter=Q(kind="Dataset", task_count__isnull=True)),
    )
    return ViewTotals(
        matching=totals["matching"],
        task_total=totals["task_total"] or 0,
        unknown_counts=totals["unknown_counts"],
    )


def source_detail(*, source_id: str) -> Source | None:
    """One source by ID, retired or not."""
    return Source.objects.filter(pk=source_id).first()


@dataclass(frozen=True)
class SyncStatus:
    has_refreshes: bool
    earliest_checked_at: dt.datetime | None
    last_run: RefreshRun | None

    @property
    def last_run_failed(self) -> bool:
        return self.last_run is not None and self.last_run.outcome == RefreshRun.Outcome.FAILED


def sync_status() -> SyncStatus:
    """The last run and the earliest check of any origin, in one query while a run is recorded
    (the earliest check as a subquery of it; ``checked_at`` is never null, so a check exists
    exactly when there are refreshes)."""
    earliest = Refresh.objects.order_by("checked_at").values("checked_at")[:1]
    last_run = (
        RefreshRun.objects.annotate(refreshes_checked_at=Subquery(earliest))
        .order_by("-started_at", "-id")
        .first()
    )
    if last_run is not None:
        earliest_checked_at = last_run.refreshes_checked_at
    else:
        earliest_checked_at = earliest.values_list("checked_at", flat=True).first()
    return SyncStatus(
        has_refreshes=earliest_checked_at is not None,
        earliest_checked_at=earliest_checked_at,
        last_run=last_run,
    )
