"""Reads shared by the pages, the API and the CSV export."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Count, Min, Q, QuerySet, Sum
from django.utils.dateparse import parse_datetime

from atlas.models import Refresh, RefreshRun, Source

EXCLUDED = "Excluded"
VOCABULARY_CACHE_SECONDS = 3600


def refresh_state() -> dict[str, Any]:
    refreshes = list(Refresh.objects.order_by("origin"))
    last_run = RefreshRun.objects.order_by("-started_at", "-id").first()
    return {"refreshes": refreshes, "last_run": last_run}


def active_sources() -> QuerySet[Source]:
    return Source.objects.filter(active=True)


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
        for row in active_sources()
        .order_by()
        .values("origin")
        .annotate(total=Count("pk"), excluded=Count("pk", filter=Q(status=EXCLUDED)))
        .order_by("origin")
    )
    distinct = set(active_sources().order_by().values_list("family", flat=True).distinct())
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
    return vocabulary_of_version(newest_run=latest)


def vocabulary_of_version(*, newest_run: tuple[int, dt.datetime] | None) -> CatalogVocabulary:
    """The vocabulary of the inventory version the newest run names, from the cache if kept."""
    if newest_run is None:
        return catalog_vocabulary()
    run_id, started_at = newest_run
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
    summary = Refresh.objects.aggregate(rows=Count("pk"), earliest=Min("checked_at"))
    last_run = RefreshRun.objects.order_by("-started_at", "-id").first()
    return SyncStatus(
        has_refreshes=bool(summary["rows"]),
        earliest_checked_at=summary["earliest"],
        last_run=last_run,
    )


def _aware(value: dt.datetime | str | None) -> dt.datetime | None:
    """A timestamp from a raw column (SQLite hands them over as UTC text)."""
    if value is None:
        return None
    parsed = value if isinstance(value, dt.datetime) else parse_datetime(value)
    if parsed is None:
        raise ValueError(f"not a timestamp: {value!r}")
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)


@functools.cache
def _page_state_sql() -> str:
    runs, refreshes = RefreshRun._meta.db_table, Refresh._meta.db_table
    return (
        f"SELECT r.*, (SELECT id FROM {runs} ORDER BY id DESC LIMIT 1) AS newest_id, "
        f"(SELECT started_at FROM {runs} ORDER BY id DESC LIMIT 1) AS newest_started_at, "
        f"(SELECT COUNT(*) FROM {refreshes}) AS refresh_rows, "
        f"(SELECT MIN(checked_at) FROM {refreshes}) AS earliest_checked_at "
        f"FROM {runs} AS r ORDER BY r.started_at DESC, r.id DESC LIMIT 1"
    )


def page_state() -> tuple[CatalogVocabulary, SyncStatus]:
    """The catalog page's vocabulary and sync status from one statement: the last run, with the
    newest run's id and start (the vocabulary's cache key) and the refresh totals alongside.

    Written as SQL because it runs on every page view and the ORM spent longer building the
    three queries it replaces (or one with four subqueries) than the database spent answering.
    """
    last_run = next(iter(RefreshRun.objects.raw(_page_state_sql())), None)
    if last_run is None:  # no run recorded yet: nothing to key a cache on
        return catalog_vocabulary(), sync_status()
    extra = vars(last_run)  # the columns beyond the model's fields
    status = SyncStatus(
        has_refreshes=bool(extra["refresh_rows"]),
        earliest_checked_at=_aware(extra["earliest_checked_at"]),
        last_run=last_run,
    )
    newest_started_at = _aware(extra["newest_started_at"])
    assert newest_started_at is not None  # the run just read has a start
    newest_run = (extra["newest_id"], newest_started_at)
    return vocabulary_of_version(newest_run=newest_run), status


# -- a list's count and pages from statements the ORM compiled once -------------------------------
@dataclass(frozen=True)
class ListStatements:
    """The count and rows statements of one filtered list (rows without their LIMIT / OFFSET), the
    names of the row's values and the converters the ORM applies to them, as its compiler made
    them."""

    count_sql: str
    count_params: tuple[Any, ...]
    rows_sql: str
    rows_params: tuple[Any, ...]
    names: tuple[str, ...]
    # (position, converters, expression), as SQLCompiler.get_converters() gives them.
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]


_LIST_STATEMENTS: dict[Hashable, ListStatements] = {}
LIST_STATEMENTS_KEPT = 256


class ListedRows:
    """The rows of a filtered ``.values()`` list by pages: ``count()`` and ``rows[start:stop]``
    (lists of dicts, as the queryset slices to).

    The ORM's building and compiling of the count and rows queries cost several times the CPU of
    running them (a few milliseconds per API request). Their SQL is a function of the list's
    ``key`` alone, so the statements the ORM made for a key are kept and run again with only the
    LIMIT / OFFSET added, as the ORM adds them; the queryset is built only for a key not seen yet.
    """

    def __init__(self, *, key: Hashable, queryset: Callable[[], QuerySet]) -> None:
        # The vendor is part of the key: the SQL of a filter set differs between backends.
        self._key = (connection.vendor, key)
        self._build = queryset
        self._queryset: QuerySet | None = None
        self._statements = _LIST_STATEMENTS.get(self._key)

    @property
    def queryset(self) -> QuerySet:
        if self._queryset is None:
            self._queryset = self._build()
        return self._queryset

    def count(self) -> int:
        statements = self._statements
        if statements is None:
            return self._count_and_keep()
        with connection.cursor() as cursor:
            cursor.execute(statements.count_sql, statements.count_params)
            return cursor.fetchone()[0]

    def __getitem__(self, window: slice) -> list[dict[str, Any]]:
        statements = self._statements
        if statements is None:
            return list(self.queryset[window])
        limits = connection.ops.limit_offset_sql(window.start, window.stop)
        with connection.cursor() as cursor:
            cursor.execute(f"{statements.rows_sql} {limits}", statements.rows_params)
            rows = cursor.fetchall()
        names = statements.names
        if not statements.converters:
            return [dict(zip(names, row, strict=True)) for row in rows]
        values = []
        for row in rows:
            converted = list(row)
            for position, converters, expression in statements.converters:
                value = converted[position]
                for converter in converters:
                    value = converter(value, expression, connection)
                converted[position] = value
            values.append(dict(zip(names, converted, strict=True)))
        return values

    def _count_and_keep(self) -> int:
        """Count through the ORM, keeping the statement it ran and the compiled rows statement."""
        queryset = self.queryset
        ran: list[tuple[str, tuple[Any, ...]]] = []

        # Positional: the signature Django calls execute wrappers with.
        def keep(
            execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
        ) -> Any:
            ran.append((sql, tuple(params or ())))
            return execute(sql, params, many, context)

        with connection.execute_wrapper(keep):
            count = queryset.count()
        if len(ran) != 1:  # answered without a statement (a filter that matches nothing)
            return count
        query = queryset.query
        compiler = query.get_compiler(using=queryset.db)
        try:
            rows_sql, rows_params = compiler.as_sql()
        except EmptyResultSet:
            return count
        names = (
            tuple(query.selected)
            if query.selected
            else (*query.extra_select, *query.values_select, *query.annotation_select)
        )
        converters = compiler.get_converters([s[0] for s in compiler.select[: compiler.col_count]])
        statements = ListStatements(
            count_sql=ran[0][0],
            count_params=ran[0][1],
            rows_sql=rows_sql,
            rows_params=tuple(rows_params),
            names=names,
            converters=tuple(
                (position, tuple(functions), expression)
                for position, (functions, expression) in converters.items()
            ),
        )
        if len(_LIST_STATEMENTS) >= LIST_STATEMENTS_KEPT:  # many distinct searches
            _LIST_STATEMENTS.clear()
        _LIST_STATEMENTS[self._key] = statements
        # This list's rows already run from the kept statement, as every later one's will.
        self._statements = statements
        return count


def listed_rows(*, key: Hashable, queryset: Callable[[], QuerySet]) -> ListedRows:
    """A list's rows by pages; ``key`` must determine the SQL of ``queryset()`` completely."""
    return ListedRows(key=key, queryset=queryset)
