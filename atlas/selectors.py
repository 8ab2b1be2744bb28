"""Reads shared by the pages, the API and the CSV export."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from django.core.cache import cache
from django.db import router
from django.db.models import Count, Q, QuerySet, Subquery, Sum

from atlas.models import DisplayVersion, Refresh, RefreshRun, Source

EXCLUDED = "Excluded"
# How long a kept read may serve its version at most: the version changes with every write of
# display columns; the limit only bounds a write that went around the services (raw SQL).
KEPT_SECONDS = 3600
T = TypeVar("T")


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


@dataclass(frozen=True)
class CatalogVersions:
    """What the catalog holds and shows, named, for reads kept per version (``kept``). ``run``:
    the inventory's version, the newest sync run by its id and start (against reused ids), None
    before any run; ``shown``: the display version, which every write of display columns
    changes, None before the first."""

    run: str | None
    shown: str | None


def shown_version(display: int | None) -> str | None:
    """``CatalogVersions.shown`` of a display version read (null before the first write)."""
    return None if display is None else str(display)


def _versions(
    run_id: int | None, started_at: dt.datetime | None, display: int | None
) -> CatalogVersions:
    run = None if run_id is None or started_at is None else f"{run_id}:{started_at.isoformat()}"
    return CatalogVersions(run=run, shown=shown_version(display))


def display_version() -> Subquery:
    """The display version as a subquery, for a statement that reads it beside its own rows."""
    return Subquery(DisplayVersion.objects.order_by("pk").values("version")[:1])


# The newest run first (its id breaks a tie of starts).
LAST_RUN_FIRST = ("-started_at", "-id")


@functools.cache
def _latest_versions() -> QuerySet:
    """The versions' statement, built once: each read takes a copy (``first()`` clones it) and
    only compiles it. Building it (resolving its names and the subquery) was a third of the read."""
    return (
        RefreshRun.objects.annotate(display_version=display_version())
        .order_by(*LAST_RUN_FIRST)
        .values_list("id", "started_at", "display_version")
    )


def catalog_versions() -> CatalogVersions:
    """The versions alone, for a read that shows no banner: one indexed lookup."""
    latest = _latest_versions().first()
    if latest is None:  # no run yet: the display version may be there all the same
        return _versions(
            None, None, DisplayVersion.objects.values_list("version", flat=True).first()
        )
    return _versions(*latest)


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
    """The vocabulary of the newest run (see ``vocabulary_at``), read with it."""
    return vocabulary_at(run=catalog_versions().run)


def vocabulary_at(*, run: str | None) -> CatalogVocabulary:
    """The vocabulary, kept per sync.

    Origins, families, status and activity change only through a sync, and every sync that
    writes rows records its run in the same transaction; so the newest run (``run``: its
    ``CatalogVersions.run``) names the inventory version, and one indexed lookup replaces two
    aggregates over every active source.
    """
    return kept(version=run, name="vocabulary", view={}, read=catalog_vocabulary)


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
    display_version: int | None = None

    @property
    def last_run_failed(self) -> bool:
        return self.last_run is not None and self.last_run.outcome == RefreshRun.Outcome.FAILED

    @property
    def versions(self) -> CatalogVersions:
        run = self.last_run
        if run is None:
            return _versions(None, None, None)
        return _versions(run.id, run.started_at, self.display_version)


# What the banner reads of the last run.
BANNER_RUN_FIELDS = ("id", "started_at", "outcome")


def _checks_first() -> QuerySet:
    """The origins' refreshes, earliest check first."""
    return Refresh.objects.order_by("checked_at")


@functools.cache
def _banner() -> QuerySet:
    """The banner's statement, built once (as ``_latest_versions``): built per request it was
    about 0.4 ms of the page's 0.9 ms read of the banner (10,000 sources). Values, not a model:
    the last run is made from the row by ``Model.from_db``, with what it does not read deferred,
    as ``only()`` leaves it."""
    earliest = _checks_first().values("checked_at")[:1]
    return (
        RefreshRun.objects.annotate(
            refreshes_checked_at=Subquery(earliest), display_version=display_version()
        )
        .order_by(*LAST_RUN_FIRST)
        .values_list(*BANNER_RUN_FIELDS, "refreshes_checked_at", "display_version")
    )


def sync_status() -> SyncStatus:
    """The last run, the earliest check of any origin and the display version, in one query while
    a run is recorded (the others as subqueries of it; ``checked_at`` is never null, so a check
    exists exactly when there are refreshes)."""
    # Only what the banner reads: the run's JSON columns are the larger part of decoding it.
    latest = _banner().first()
    if latest is None:
        checked_at = _checks_first().values_list("checked_at", flat=True).first()
        return SyncStatus(
            has_refreshes=checked_at is not None, earliest_checked_at=checked_at, last_run=None
        )
    *run_values, checked_at, version = latest
    last_run = RefreshRun.from_db(router.db_for_read(RefreshRun), BANNER_RUN_FIELDS, run_values)
    return SyncStatus(
        has_refreshes=checked_at is not None,
        earliest_checked_at=checked_at,
        last_run=last_run,
        display_version=version,
    )


def kept(*, version: str | None, name: str, view: Mapping[str, Any], read: Callable[[], T]) -> T:
    """``read()``, kept per catalog version and view: counts change only when what the catalog
    shows does (a sync, a publication, a defect, a curated edit, each bumping the version), so
    a view asked again is answered without reading the catalog again. ``view``: what the read
    depends on besides the version (its filters); without a version, read every time."""
    if version is None:
        return read()
    words = "&".join(f"{key}={view[key]}" for key in sorted(view) if view[key])
    digest = hashlib.blake2b(words.encode(), digest_size=16).hexdigest()
    key = f"atlas:{name}:{version}:{digest}"
    value = cache.get(key)
    if value is None:
        value = read()
        cache.set(key, value, KEPT_SECONDS)
    return value
