"""Concurrent syncs with real connections.

PostgreSQL: two threads, two connections, the advisory transaction lock. SQLite: the file lock
from two threads. Both use committed transactions (``transactional_db``), like production.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, connections

import atlas.services.sync as sync_module
from atlas.models import Refresh, RefreshRun, Source
from atlas.services.sync import sync_catalog
from tests.conftest import make_row

# pg_locks lists the whole cluster; count only this test database's advisory locks.
ADVISORY_LOCKS = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)

BUSY = {
    "busy": True,
    "message": "Another visitor is refreshing the catalog. Your saved data remains available.",
}
ON_POSTGRES = settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
sqlite_only = pytest.mark.skipif(ON_POSTGRES, reason="the SQLite file lock path")
WAIT = 30  # seconds; generous so a slow CI box does not flake, never reached when correct


def run_in_thread(target, results: dict[str, Any], key: str) -> threading.Thread:
    def body():
        try:
            results[key] = target()
        except BaseException as exc:  # reported by the main thread
            results[key] = exc
        finally:
            connections.close_all()  # this thread's own connection

    thread = threading.Thread(target=body, name=key, daemon=True)
    thread.start()
    return thread


def paused_sync(monkeypatch, first_origin_done: threading.Event, release: threading.Event):
    """Make the next sync pause after rewriting its first origin, inside its transaction."""
    real = sync_module._rewrite_origin
    paused = {"done": False}

    def rewrite(snapshot, *args):
        outcome = real(snapshot, *args)
        if not paused["done"]:
            paused["done"] = True
            first_origin_done.set()
            assert release.wait(WAIT), "the test never released the paused sync"
        return outcome

    monkeypatch.setattr(sync_module, "_rewrite_origin", rewrite)


def two_origin_rows(count: int) -> list[dict[str, Any]]:
    return [
        make_row("MarinSkyRL:a", task_count=count),
        make_row("MarinSkyRL:b", task_count=count),
        make_row("Task Trove:t", tags=["agentic", "multi-turn"], task_count=count),
    ]


def inventory() -> list[tuple]:
    return list(Source.objects.order_by("id").values_list("id", "origin", "active", "task_count"))


def contended_sync(monkeypatch, write_catalog, *, check_while_held) -> dict[str, Any]:
    """Sync A pauses mid-way holding the lock; sync B runs meanwhile. Returns both results."""
    first = write_catalog(two_origin_rows(1))
    sync_catalog(catalog_path=first, force=False, trigger="command")
    runs_before = RefreshRun.objects.count()
    second = write_catalog(two_origin_rows(2))

    holding, release = threading.Event(), threading.Event()
    paused_sync(monkeypatch, holding, release)
    results: dict[str, Any] = {}
    holder = run_in_thread(
        lambda: sync_catalog(catalog_path=second, force=False, trigger="task"), results, "holder"
    )
    try:
        assert holding.wait(WAIT), f"sync A never reached its pause: {results}"
        contender = run_in_thread(
            lambda: sync_catalog(catalog_path=second, force=True, trigger="button"),
            results,
            "contender",
        )
        contender.join(WAIT)
        assert not contender.is_alive(), "the busy answer must be immediate, not wait for the lock"
        check_while_held()
    finally:
        release.set()
        holder.join(WAIT)
    assert not holder.is_alive()
    results["runs_before"] = runs_before
    return results


@pytest.mark.postgres_only
@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_syncs_on_postgres(monkeypatch, write_catalog):
    seen_while_held: dict[str, Any] = {}

    def check_while_held():
        # Another connection sees the previous inventory: A's written origin is not visible.
        seen_while_held["rows"] = inventory()
        seen_while_held["refreshes"] = sorted(Refresh.objects.values_list("origin", "row_count"))
        with connection.cursor() as cursor:
            cursor.execute(ADVISORY_LOCKS + " AND granted")
            seen_while_held["advisory_locks"] = cursor.fetchone()[0]

    results = contended_sync(monkeypatch, write_catalog, check_while_held=check_while_held)
    assert results["contender"] == BUSY
    assert seen_while_held["advisory_locks"] == 1
    assert seen_while_held["rows"] == [
        ("MarinSkyRL:a", "MarinSkyRL", True, 1),
        ("MarinSkyRL:b", "MarinSkyRL", True, 1),
        ("Task Trove:t", "Task Trove", True, 1),
    ]
    holder = results["holder"]
    assert isinstance(holder, dict) and holder["busy"] is False, holder
    assert [r["changed"] for r in holder["results"]] == [True, True]
    assert [row[3] for row in inventory()] == [2, 2, 2]
    # The busy attempt recorded no run; the holder recorded one.
    assert RefreshRun.objects.count() == results["runs_before"] + 1
    assert RefreshRun.objects.order_by("-id").first().trigger == "task"
    # The lock was released with the transaction.
    with connection.cursor() as cursor:
        cursor.execute(ADVISORY_LOCKS)
        assert cursor.fetchone()[0] == 0


@pytest.mark.postgres_only
@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_lock_held_by_another_connection_makes_sync_busy_at_once(write_catalog):
    from atlas.db.locks import ADVISORY_KEY

    path = write_catalog([make_row("MarinSkyRL:a")])
    holding, release = threading.Event(), threading.Event()
    results: dict[str, Any] = {}

    def hold():
        from django.db import transaction

        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [ADVISORY_KEY])
            acquired = cursor.fetchone()[0]
            holding.set()
            release.wait(WAIT)
            return acquired

    holder = run_in_thread(hold, results, "holder")
    try:
        assert holding.wait(WAIT)
        assert sync_catalog(catalog_path=path, force=False, trigger="api") == BUSY
        assert Source.objects.count() == 0 and RefreshRun.objects.count() == 0
    finally:
        release.set()
        holder.join(WAIT)
    assert results["holder"] is True
    result = sync_catalog(catalog_path=path, force=False, trigger="api")
    assert result["busy"] is False and Source.objects.count() == 1


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_syncs_on_sqlite_use_the_file_lock(monkeypatch, write_catalog):
    results = contended_sync(monkeypatch, write_catalog, check_while_held=lambda: None)
    assert results["contender"] == BUSY
    holder = results["holder"]
    assert isinstance(holder, dict) and holder["busy"] is False, holder
    assert [row[3] for row in inventory()] == [2, 2, 2]
    assert RefreshRun.objects.count() == results["runs_before"] + 1


@pytest.mark.django_db(transaction=True)
def test_interrupted_sync_leaves_the_previous_inventory_committed(monkeypatch, write_catalog):
    """Runs on both databases with real commits: a failure after the first origin was rewritten
    rolls the whole sync back; only the failed run record is committed."""
    sync_catalog(catalog_path=write_catalog(two_origin_rows(1)), force=False, trigger="command")
    Source.objects.filter(id="MarinSkyRL:a").update(quality="good", traces=4)
    rows_before = list(Source.objects.order_by("id").values())
    refreshes_before = list(Refresh.objects.order_by("origin").values())
    runs_before = RefreshRun.objects.count()

    real = sync_module._rewrite_origin

    def fail_on_second_origin(snapshot, *args):
        if snapshot.origin == "Task Trove":
            raise RuntimeError("worker lost")
        return real(snapshot, *args)

    monkeypatch.setattr(sync_module, "_rewrite_origin", fail_on_second_origin)
    changed = [*two_origin_rows(5), make_row("MarinSkyRL:new")]
    with pytest.raises(RuntimeError, match="worker lost"):
        sync_catalog(catalog_path=write_catalog(changed), force=True, trigger="schedule")

    assert list(Source.objects.order_by("id").values()) == rows_before
    assert list(Refresh.objects.order_by("origin").values()) == refreshes_before
    assert RefreshRun.objects.count() == runs_before + 1
    failed = RefreshRun.objects.order_by("-id").first()
    assert (failed.outcome, failed.error, failed.trigger) == (
        "failed",
        "Sync failed: RuntimeError",
        "schedule",
    )

    # The lock was released by the rollback: the next sync proceeds.
    monkeypatch.setattr(sync_module, "_rewrite_origin", real)
    result = sync_catalog(catalog_path=write_catalog(changed), force=False, trigger="command")
    assert result["busy"] is False
    assert Source.objects.get(id="MarinSkyRL:a").quality == "good"
    assert Source.objects.filter(active=True).count() == 4


@pytest.mark.django_db
def test_bulk_write_path_stores_the_same_columns_as_the_orm(write_catalog):
    """The sync's batched upsert (COPY on PostgreSQL, bulk_create on SQLite) stores JSON, dates and
    display columns exactly as the ORM-based display-state refresh would."""
    from atlas.rules.display_state import DISPLAY_COLUMNS
    from atlas.services.display import refresh_display_state

    reviewed = make_row(
        "MarinSkyRL:reviewed",
        display_name="Zürich ✓ “quoted” \\ back\tslash",
        quality="good",
        review_url="https://example.org/r",
        review_date="2026-01-02T01:04:05Z",
        review_source_revision="a" * 40,
        review_verifier_revision="b" * 64,
        pipeline={"name": "p", "version": "2", "source": None, "revision": None, "files": ["*"]},
        task_count=None,
    )
    rows = [reviewed, *(make_row(f"MarinSkyRL:{i:04d}", task_count=i) for i in range(2500))]
    sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    stored = Source.objects.get(id="MarinSkyRL:reviewed")
    assert stored.payload == reviewed
    assert stored.quality is None and stored.traces is None  # curated columns untouched
    assert stored.effective_quality == "good" and stored.review_applicability == "current"
    assert stored.display_review_date.isoformat() == "2026-01-02T01:04:05+00:00"
    assert stored.display_name == reviewed["display_name"] and stored.task_count is None

    columns = ["id", "payload", *DISPLAY_COLUMNS]
    before = list(Source.objects.order_by("id").values(*columns))
    assert len(before) == 2501
    refresh_display_state()  # recompute everything through the ORM
    assert list(Source.objects.order_by("id").values(*columns)) == before


@pytest.mark.django_db(transaction=True)
def test_display_recompute_outside_a_transaction(write_catalog):
    """Under autocommit (a live server, a management command) the staged update still runs: the
    staging table must outlive the statement that created it."""
    from atlas.services.display import refresh_display_state

    rows = [make_row(f"MarinSkyRL:{i:04d}", task_count=i) for i in range(3)]
    sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    assert not connection.in_atomic_block
    Source.objects.filter(id="MarinSkyRL:0001").update(display_name="stale")
    refresh_display_state(source_ids=["MarinSkyRL:0001"])
    assert Source.objects.get(id="MarinSkyRL:0001").display_name != "stale"


@pytest.mark.django_db
def test_one_transaction_stages_two_sets_of_columns(write_catalog):
    """A curated edit, then a sync that retires, in one transaction: the second staged update
    carries a column (``active``) the first one's did not."""
    from django.db import transaction

    from atlas.services.curation import edit_curated_quality

    rows = [make_row(f"MarinSkyRL:{i:04d}") for i in range(3)]
    sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    with transaction.atomic():
        edit_curated_quality(source_id="MarinSkyRL:0000", quality="good")
        sync_catalog(catalog_path=write_catalog(rows[:2]), force=False, trigger="command")
    assert Source.objects.get(id="MarinSkyRL:0000").effective_quality == "good"
    assert list(Source.objects.filter(active=False).values_list("id", flat=True)) == [
        "MarinSkyRL:0002"
    ]


@pytest.mark.postgres_only
@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db
def test_a_changed_revision_rewrites_only_the_rows_that_differ(write_catalog):
    """The rows whose stored payload equals the incoming one are judged equal in SQL and skipped
    unread (a marker written behind the sync's back survives); a changed, a new and a returning
    row are written and recorded; a forced sync recomputes every row."""
    from atlas.models import SourceChange

    rows = [make_row(f"MarinSkyRL:{i:02d}", task_count=i) for i in range(6)]
    sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    sync_catalog(catalog_path=write_catalog(rows[:5]), force=False, trigger="command")  # 05 leaves
    Source.objects.filter(id="MarinSkyRL:00").update(display_name="marker")
    changed = [{**rows[1], "task_count": 99}, *rows[2:], make_row("MarinSkyRL:new")]
    result = sync_catalog(catalog_path=write_catalog([rows[0], *changed]), force=False,
                          trigger="command")  # fmt: skip
    run = RefreshRun.objects.get(id=result["run"])
    assert run.rows_written == 3  # 01 changed, 05 returned, new added
    recorded = dict(SourceChange.objects.filter(run=run).values_list("source_id", "kind"))
    assert recorded == {"MarinSkyRL:01": "changed", "MarinSkyRL:05": "returned",
                        "MarinSkyRL:new": "added"}  # fmt: skip
    assert Source.objects.get(id="MarinSkyRL:01").task_count == 99
    assert Source.objects.get(id="MarinSkyRL:00").display_name == "marker"
    sync_catalog(catalog_path=write_catalog([rows[0], *changed]), force=True, trigger="command")
    assert Source.objects.get(id="MarinSkyRL:00").display_name != "marker"


@pytest.mark.postgres_only
@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db
def test_a_sync_that_wrote_rows_leaves_planner_statistics(write_catalog):
    """Inside a caller's transaction VACUUM cannot run; the statistics are still refreshed."""
    rows = [make_row(f"MarinSkyRL:{i:03d}") for i in range(120)]
    sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'catalog_sources'")
        assert cursor.fetchone()[0] == 120


def analyzes(sync) -> bool:
    """Whether running ``sync()`` issued an ANALYZE of the catalog's table."""
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        sync()
    return any("ANALYZE" in query["sql"] for query in captured.captured_queries)


def resync(write_catalog, rows: list[dict[str, Any]]) -> bool:
    """Sync ``rows``; whether that analyzed the catalog's table."""
    return analyzes(
        lambda: sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    )


def renumbered(rows: list[dict[str, Any]], count: int, base: int) -> list[dict[str, Any]]:
    """``rows`` with the task count of the first ``count`` changed."""
    return [{**row, "task_count": base + i} if i < count else row for i, row in enumerate(rows)]


@pytest.mark.postgres_only
@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db
def test_statistics_are_refreshed_once_autovacuum_would(write_catalog):
    """A sync analyzes once the rows changed since the last ANALYZE pass autovacuum's share
    (50 + 10 % by default): a first sync does, a sync changing a few rows of 300 does not (it
    still writes them), one changing them all does."""
    rows = [make_row(f"MarinSkyRL:{i:03d}", task_count=i) for i in range(300)]
    assert resync(write_catalog, rows)
    assert not resync(write_catalog, renumbered(rows, 3, 1000))
    assert Source.objects.get(id="MarinSkyRL:000").task_count == 1000
    assert resync(write_catalog, renumbered(rows, 300, 2000))


@pytest.mark.postgres_only
@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_small_writes_add_up_to_an_analyze(write_catalog):
    """Changes the sync did not analyze after count towards the next one: the server's count of
    changes since the last ANALYZE (committed ones, flushed here) is added to the sync's rows."""
    rows = [make_row(f"MarinSkyRL:{i:03d}", task_count=i) for i in range(300)]
    assert resync(write_catalog, rows)
    assert not resync(write_catalog, renumbered(rows, 3, 1000))
    with connection.cursor() as cursor:
        # 300 rows, committed
        cursor.execute("UPDATE catalog_sources SET search_text = 'elsewhere'")
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT 1")  # the flush happens once the server waits for this
    assert resync(write_catalog, renumbered(rows, 3, 2000))


def statements(sync) -> list[str]:
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        sync()
    return [query["sql"] for query in captured.captured_queries]


@pytest.mark.postgres_only
@pytest.mark.skipif(not ON_POSTGRES, reason="needs PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_retiring_half_analyzes_without_a_vacuum(write_catalog):
    """A sync that rewrote half the inventory vacuums (a first one does); one that retired half
    analyzes the one column it changed, and leaves its dead rows to autovacuum."""
    rows = [make_row(f"MarinSkyRL:{i:03d}", task_count=i) for i in range(300)]

    def sync(part):
        return lambda: sync_catalog(
            catalog_path=write_catalog(part), force=False, trigger="command"
        )

    first = statements(sync(rows))
    assert any(sql.startswith("VACUUM (ANALYZE)") for sql in first)
    retiring = statements(sync(rows[::2]))
    assert 'ANALYZE "catalog_sources" ("active")' in retiring  # the one column it changed
    assert not any("VACUUM" in sql for sql in retiring)
    assert Source.objects.filter(active=True).count() == 150
