"""The Celery task: one call into the sync service, in-process or queued."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

import pytest

import atlas.tasks as tasks
from atlas.models import Refresh, RefreshRun, Source
from config.celery import app as celery_app
from tests.conftest import make_row

BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")

ROWS = [
    make_row("MarinSkyRL:a"),
    make_row("MarinSkyRL:b", task_count=None),
    make_row("Task Trove:t", tags=["agentic", "multi-turn"]),
]


@pytest.fixture
def in_process():
    """Run tasks in-process (the no-broker shape), whatever CELERY_BROKER_URL says."""
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = saved


def test_task_is_registered_under_its_public_name():
    registered = celery_app.tasks["atlas.tasks.sync_catalog"]
    assert registered.name == tasks.sync_catalog.name == "atlas.tasks.sync_catalog"


@pytest.mark.django_db
def test_task_syncs_the_configured_artifact_with_its_flags(
    in_process, settings, write_catalog, django_user_model
):
    settings.ATLAS_CATALOG_PATH = write_catalog(ROWS)
    curator = django_user_model.objects.create_user("curator")
    asked = tasks.sync_catalog.delay(force=True, trigger="button", user_id=curator.pk).get()
    bare = tasks.sync_catalog.delay().get()

    runs = RefreshRun.objects.order_by("id").values_list(
        "id", "trigger", "forced", "user_id", "catalog_revision"
    )
    assert list(runs) == [
        (asked["run"], "button", True, curator.pk, asked["revision"]),
        (bare["run"], "task", False, None, asked["revision"]),
    ]
    assert sorted(Source.objects.values_list("id", flat=True)) == sorted(r["id"] for r in ROWS)


@pytest.mark.django_db
def test_in_process_task_syncs_and_is_idempotent(in_process, settings, write_catalog):
    settings.ATLAS_CATALOG_PATH = write_catalog(ROWS)
    first = tasks.sync_catalog.delay().get()
    assert first["busy"] is False
    assert [r["changed"] for r in first["results"]] == [True, True]
    state = list(Source.objects.order_by("id").values("id", "payload", "active", "task_count"))
    assert len(state) == 3

    second = tasks.sync_catalog.delay().get()
    assert [r["changed"] for r in second["results"]] == [False, False]
    assert (
        list(Source.objects.order_by("id").values("id", "payload", "active", "task_count")) == state
    )
    runs = RefreshRun.objects.order_by("id")
    assert [(r.trigger, r.outcome, r.rows_written) for r in runs] == [
        ("task", "synced", 3),
        ("task", "unchanged", 0),
    ]


@pytest.mark.django_db
def test_task_reports_an_invalid_artifact_instead_of_raising(in_process, settings, write_catalog):
    settings.ATLAS_CATALOG_PATH = write_catalog(ROWS, schema_version=2)
    result = tasks.sync_catalog.delay(trigger="schedule").get()
    run = RefreshRun.objects.get()
    assert result == {
        "busy": False,
        "error": "Unsupported catalog schema version: 2",
        "run": run.id,
    }
    assert (run.trigger, run.outcome) == ("schedule", "failed")
    assert Source.objects.count() == 0


# --- a real worker through Redis ---------------------------------------------------------------


def redis_db13(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/13", parts.query, parts.fragment))


@pytest.fixture
def broker_app():
    """The project's Celery app pointed at Redis db 13, dispatching through the broker."""
    url = redis_db13(BROKER_URL)
    keys = ("broker_url", "result_backend", "task_always_eager")
    saved = {key: celery_app.conf[key] for key in keys}
    celery_app.conf.update(broker_url=url, result_backend=url, task_always_eager=False)
    _forget_connections()
    celery_app.control.purge()
    try:
        yield celery_app
    finally:
        _forget_connections()
        celery_app.conf.update(saved)
        _forget_connections()


def _forget_connections():
    # kombu keeps one pool per broker URL process-wide; the app only drops its references so the
    # next call builds connections for the current URL.
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    if hasattr(celery_app._local, "backend"):
        del celery_app._local.backend


@pytest.mark.slow
@pytest.mark.skipif(not BROKER_URL, reason="CELERY_BROKER_URL is not set (no Redis broker)")
@pytest.mark.django_db(transaction=True)
def test_real_worker_syncs_through_the_broker_and_is_idempotent(
    broker_app, settings, write_catalog
):
    from celery.contrib.testing.worker import start_worker

    settings.ATLAS_CATALOG_PATH = write_catalog(ROWS)
    with start_worker(broker_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        first = tasks.sync_catalog.delay(force=False, trigger="task")
        assert first.id and not first.ready()  # really queued, not run in-process
        payload = first.get(timeout=60)
        assert payload["busy"] is False
        assert [(r["origin"], r["changed"]) for r in payload["results"]] == [
            ("MarinSkyRL", True),
            ("Task Trove", True),
        ]
        state = list(Source.objects.order_by("id").values("id", "origin", "active", "payload"))
        assert [row["id"] for row in state] == ["MarinSkyRL:a", "MarinSkyRL:b", "Task Trove:t"]
        assert dict(Refresh.objects.values_list("origin", "row_count")) == {
            "MarinSkyRL": 2,
            "Task Trove": 1,
        }

        again = tasks.sync_catalog.delay().get(timeout=60)
        assert again["revision"] == payload["revision"]
        assert [r["changed"] for r in again["results"]] == [False, False]
        assert (
            list(Source.objects.order_by("id").values("id", "origin", "active", "payload")) == state
        )

    runs = list(RefreshRun.objects.order_by("id").values_list("id", "trigger", "outcome"))
    assert runs == [(payload["run"], "task", "synced"), (again["run"], "task", "unchanged")]
