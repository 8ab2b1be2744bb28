"""POST /api/refresh/ and the no-JS refresh form."""

from contextlib import contextmanager

import pytest
from celery.result import AsyncResult
from django.contrib.messages import get_messages
from django.db import connection, connections, transaction
from django.test import Client
from rest_framework.authtoken.models import Token

from atlas import tasks
from atlas.db.locks import ADVISORY_KEY, catalog_refresh_lock
from atlas.models import RefreshRun, Source
from atlas.permissions import REFRESH_REFUSED
from tests.atlas.test_catalog_helpers import make_curator, make_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def artifact(settings, write_catalog):
    settings.ATLAS_CATALOG_PATH = write_catalog(
        [make_row("MarinSkyRL:a"), make_row("Task Trove:b", tags=["agentic"])]
    )
    return settings.ATLAS_CATALOG_PATH


@pytest.fixture
def curator_client(artifact):
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_curator())
    client.get("/")  # the curator form sets the CSRF cookie
    return client


def csrf(client) -> dict[str, str]:
    return {"HTTP_X_CSRFTOKEN": client.cookies["csrftoken"].value}


def test_anonymous_must_sign_in_and_plain_staff_are_forbidden(client, artifact):
    anonymous = client.post("/api/refresh/?force=true")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == "Token"
    client.force_login(make_curator("staff", permitted=False))
    refused = client.post("/api/refresh/?force=true")
    assert refused.status_code == 403
    assert refused.json() == {"detail": REFRESH_REFUSED}
    assert not RefreshRun.objects.exists()


def test_session_requires_the_csrf_token(curator_client):
    assert curator_client.post("/api/refresh/?force=true").status_code == 403
    assert not RefreshRun.objects.exists()


def test_forced_button_sync_answers_the_result(curator_client):
    response = curator_client.post("/api/refresh/?force=true", **csrf(curator_client))
    body = response.json()
    assert response.status_code == 200 and body["busy"] is False
    assert [item["origin"] for item in body["results"]] == ["MarinSkyRL", "Task Trove"]
    run = RefreshRun.objects.get(id=body["run"])
    assert run.trigger == "button" and run.forced is True and run.user.username == "curator"


def test_the_answer_says_what_changed_in_words(curator_client, settings, write_catalog):
    first = curator_client.post("/api/refresh/?force=true", **csrf(curator_client)).json()
    assert first["summary"] == (
        "MarinSkyRL: 1 added  ·  Task Trove: 1 added  ·  Packaged task-curation catalog loaded."
    )
    settings.ATLAS_CATALOG_PATH = write_catalog(
        [
            make_row("MarinSkyRL:a", display_name="Renamed"),
            make_row("MarinSkyRL:c"),
            make_row("Task Trove:b", tags=["agentic"]),
        ]
    )
    body = curator_client.post("/api/refresh/?force=true", **csrf(curator_client)).json()
    words = (
        "MarinSkyRL: 1 added, 1 changed  ·  Task Trove: unchanged  ·  "
        "Packaged task-curation catalog loaded."
    )
    assert body["summary"] == words
    # The refresh state the page polls after a queued sync says the same.
    state = curator_client.get("/api/refreshes/").json()
    assert state["last_run"]["summary"] == words
    # An origin that left the catalog is named with what that did.
    settings.ATLAS_CATALOG_PATH = write_catalog([make_row("MarinSkyRL:a", display_name="Renamed")])
    body = curator_client.post("/api/refresh/?force=true", **csrf(curator_client)).json()
    assert body["summary"] == (
        "MarinSkyRL: 1 retired  ·  Task Trove: 1 retired (no longer in the packaged catalog)  ·  "
        "Packaged task-curation catalog loaded."
    )
    # A forced sync that changes nothing says so.
    body = curator_client.post("/api/refresh/?force=true", **csrf(curator_client)).json()
    assert body["summary"] == "MarinSkyRL: unchanged  ·  Packaged task-curation catalog loaded."


def test_page_open_background_sync_runs_eagerly_without_a_broker(curator_client):
    response = curator_client.post("/api/refresh/?force=false&background=1", **csrf(curator_client))
    assert response.status_code == 200 and response.json()["busy"] is False
    run = RefreshRun.objects.get()
    assert run.trigger == "page_open" and run.forced is False
    assert Source.objects.count() == 2


def test_page_open_with_a_broker_is_queued(curator_client, monkeypatch):
    queued = []

    def apply_async(*, kwargs, retry):
        queued.append(kwargs)
        return AsyncResult("queued-task-id")

    monkeypatch.setattr(tasks.sync_catalog, "apply_async", apply_async)
    response = curator_client.post("/api/refresh/?background=1", **csrf(curator_client))
    assert response.status_code == 202 and response.json() == {"queued": True}
    user_id = Source._meta.apps.get_model("auth", "User").objects.get(username="curator").pk
    assert queued == [{"force": False, "trigger": "page_open", "user_id": user_id}]
    assert not RefreshRun.objects.exists()


def test_token_callers_run_synchronously_with_trigger_api(artifact):
    user = make_curator("robot")
    token = Token.objects.create(user=user)
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/api/refresh/?force=false&background=1", HTTP_AUTHORIZATION=f"Token {token.key}"
    )
    assert response.status_code == 200
    assert RefreshRun.objects.get().trigger == "api"


def test_invalid_artifact_is_422_with_the_message(curator_client, settings, tmp_path):
    settings.ATLAS_CATALOG_PATH = tmp_path / "missing.json"
    response = curator_client.post("/api/refresh/?force=true", **csrf(curator_client))
    assert response.status_code == 422
    assert response.json() == {"detail": f"Catalog artifact not found: {tmp_path / 'missing.json'}"}
    response = curator_client.post("/api/refresh/?background=1", **csrf(curator_client))
    assert response.status_code == 422 and response.json()["detail"].startswith("Catalog artifact")


@contextmanager
def refresh_lock_held_elsewhere():
    """Hold the catalog-refresh lock as another process would (another session on PostgreSQL,
    another file descriptor on SQLite)."""
    if connection.vendor != "postgresql":
        with transaction.atomic(), catalog_refresh_lock() as held:
            assert held
            yield
        return
    other = connections.create_connection("default")
    try:
        other.set_autocommit(False)
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [ADVISORY_KEY])
        yield
    finally:
        other.rollback()
        other.close()


def test_busy_answer_is_200_and_writes_nothing(curator_client):
    with refresh_lock_held_elsewhere():
        response = curator_client.post("/api/refresh/?force=true", **csrf(curator_client))
    assert response.status_code == 200
    assert response.json() == {
        "busy": True,
        "message": "Another visitor is refreshing the catalog. Your saved data remains available.",
    }
    assert not RefreshRun.objects.exists() and not Source.objects.exists()


def test_bad_force_value_is_400(curator_client):
    response = curator_client.post("/api/refresh/?force=yes", **csrf(curator_client))
    assert response.status_code == 400 and "force" in response.json()


# -- without JavaScript ----------------------------------------------------------------------
def test_form_refresh_redirects_303_with_a_one_time_message(curator_client):
    token = curator_client.cookies["csrftoken"].value
    response = curator_client.post(
        "/?origin=MarinSkyRL&sort=-rows", {"refresh": "force", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 303
    assert response["Location"] == "/?origin=MarinSkyRL&sort=-rows"
    page = curator_client.get(response["Location"]).content.decode()
    # What changed, in words: the first sync added one source per origin.
    expected = (
        "MarinSkyRL: 1 added  ·  Task Trove: 1 added  ·  Packaged task-curation catalog loaded."
    )
    assert expected in page
    assert expected not in curator_client.get("/").content.decode()
    assert RefreshRun.objects.get().trigger == "button"


def test_form_refresh_shows_a_failure_as_a_warning(curator_client, settings, tmp_path):
    settings.ATLAS_CATALOG_PATH = tmp_path / "gone.json"
    token = curator_client.cookies["csrftoken"].value
    response = curator_client.post("/", {"refresh": "force", "csrfmiddlewaretoken": token})
    messages = [str(m) for m in get_messages(response.wsgi_request)]
    assert messages == [
        f"Catalog artifact not found: {tmp_path / 'gone.json'}. "
        "Keeping the last successful snapshot."
    ]


def test_form_refresh_needs_csrf_and_a_curator(artifact, curator_client):
    assert curator_client.post("/", {"refresh": "force"}).status_code == 403
    anonymous = Client(enforce_csrf_checks=True)
    anonymous.get("/")
    assert anonymous.post("/", {"refresh": "force"}).status_code == 403
    staff = Client()
    staff.force_login(make_curator("staff", permitted=False))
    assert staff.post("/", {"refresh": "force"}).status_code == 403
    assert not RefreshRun.objects.exists()


def test_public_page_never_syncs(client, artifact):
    client.get("/")
    client.get("/export.csv")
    client.get("/api/sources/")
    assert not RefreshRun.objects.exists()


def page_open(client) -> dict:
    response = client.post("/api/refresh/?force=false&background=1", **csrf(client))
    assert response.status_code == 200
    return response.json()


def test_opening_pages_does_not_write_a_sync_run_each_time(curator_client, settings, write_catalog):
    first = page_open(curator_client)
    assert "skipped" not in first and RefreshRun.objects.count() == 1
    again = page_open(curator_client)
    assert again["skipped"] is True and again["results"][0]["changed"] is False
    assert RefreshRun.objects.count() == 1
    # Past the interval, an unchanged artifact is still skipped (its hash is the same).
    settings.ATLAS_PAGE_OPEN_SYNC_SECONDS = 0
    assert (
        page_open(curator_client)["reason"]
        == "The packaged catalog is unchanged since the last check."
    )
    assert RefreshRun.objects.count() == 1
    # A changed artifact is synchronised.
    settings.ATLAS_CATALOG_PATH = write_catalog([make_row("MarinSkyRL:a", task_count=9)])
    changed = page_open(curator_client)
    assert "skipped" not in changed and RefreshRun.objects.count() == 2
    # So is one after another sync changed the saved inventory (the hash alone no longer tells).
    curator_client.post("/api/refresh/?force=true", **csrf(curator_client))
    assert RefreshRun.objects.count() == 3
    assert "skipped" not in page_open(curator_client)
    assert RefreshRun.objects.count() == 4


@pytest.mark.parametrize(("force", "background"), [("1", "0"), ("TRUE", "false")])
def test_refresh_flags_take_true_false_and_1_0(curator_client, force, background):
    response = curator_client.post(
        f"/api/refresh/?force={force}&background={background}", **csrf(curator_client)
    )
    assert response.status_code == 200
    assert RefreshRun.objects.get().forced is True


def test_a_refresh_flag_refuses_other_words(curator_client):
    response = curator_client.post("/api/refresh/?force=yes", **csrf(curator_client))
    assert response.status_code == 400
    assert response.json() == {"force": ["Expected one of: true, false, 1, 0."]}
    assert not RefreshRun.objects.exists()
