"""POST /api/reviews/publications/ and GET /api/reviews/publications/<id>/."""

import io
import tarfile
import zipfile

import pytest
from django.contrib.auth.models import Permission, User
from django.test import TestCase
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from reviews.models import Review, ReviewPublication
from reviews.services.publication import CONFLICT_MESSAGE
from tests.reviews.builders import (
    SOURCE_ID,
    build_run,
    database_state,
    make_row,
    publish,
    source_row,
    sync_rows,
)

pytestmark = pytest.mark.django_db

URL = "/api/reviews/publications/"


@pytest.fixture
def source(write_catalog):
    sync_rows(write_catalog, make_row(SOURCE_ID))
    return source_row()


def client_for(*, permitted: bool, name: str | None = None) -> APIClient:
    user, _ = User.objects.get_or_create(username=name or f"curator-{permitted}")
    if permitted:
        user.user_permissions.add(Permission.objects.get(codename="publish_review"))
    token, _ = Token.objects.get_or_create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def tar_gz_of(run_dir, extra=()) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for path in sorted(run_dir.rglob("*")):
            if path.is_file():
                bundle.add(path, arcname=path.relative_to(run_dir).as_posix())
        for info, data in extra:
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    buffer.name = "run.tar.gz"
    return buffer


def zip_of(run_dir) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for path in sorted(run_dir.rglob("*")):
            if path.is_file():
                bundle.write(path, arcname=path.relative_to(run_dir).as_posix())
    buffer.seek(0)
    buffer.name = "run.zip"
    return buffer


def post(client, archive, **fields):
    """The upload, with the import scheduled on commit run as it would after a real commit (the
    test's own transaction never commits)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return client.post(
            URL, {"atlas_id": SOURCE_ID, "archive": archive, **fields}, format="multipart"
        )


@pytest.mark.parametrize("pack", [tar_gz_of, zip_of], ids=["tar.gz", "zip"])
def test_upload_is_imported_and_its_state_readable(source, tmp_path, pack):
    publisher = client_for(permitted=True)
    response = post(publisher, pack(build_run(tmp_path)))
    assert response.status_code == 202
    body = response.json()
    assert set(body) == {"id", "status", "url"}
    assert body["status"] == "queued"  # answered before the import that runs after the commit
    assert body["url"] == f"http://testserver{URL}{body['id']}/"

    state = publisher.get(f"{URL}{body['id']}/").json()
    assert state["status"] == "published" and state["error"] is None
    assert state["atlas_id"] == SOURCE_ID
    assert state["result"]["quality"] == "good"
    assert source_row().review_id == state["result"]["review_id"]
    publication = ReviewPublication.objects.get(id=body["id"])
    assert publication.created_by.username == "curator-True"


def test_anonymous_upload_is_401(source, tmp_path):
    response = post(APIClient(), tar_gz_of(build_run(tmp_path)))
    assert response.status_code == 401
    assert not ReviewPublication.objects.exists()


def test_upload_without_permission_is_403(source, tmp_path):
    response = post(client_for(permitted=False), tar_gz_of(build_run(tmp_path)))
    assert response.status_code == 403
    assert not ReviewPublication.objects.exists()


def test_session_login_is_not_enough(source, tmp_path):
    user = User.objects.create_superuser("admin", email=None, password=None)
    client = APIClient()
    client.force_login(user)
    assert post(client, tar_gz_of(build_run(tmp_path))).status_code == 401


def test_oversized_upload_is_413(source, tmp_path, settings):
    settings.ATLAS_MAX_PUBLICATION_BYTES = 1024
    response = post(client_for(permitted=True), tar_gz_of(build_run(tmp_path)))
    assert response.status_code == 413
    assert not ReviewPublication.objects.exists()


def test_unsafe_archive_fails_the_job_and_changes_nothing(source, tmp_path):
    link = tarfile.TarInfo("evidence.json")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    before = database_state()
    response = post(client_for(permitted=True), tar_gz_of(build_run(tmp_path), extra=[(link, b"")]))
    assert response.status_code == 202
    state = client_for(permitted=True).get(response.json()["url"]).json()
    assert state["status"] == "failed"
    assert state["error"] == "Publication archive contains an unsafe path: evidence.json"
    after = database_state()
    assert after.pop("publications") == before.pop("publications") + 1
    assert after == before


def test_validation_failure_is_reported_on_the_job(source, tmp_path):
    run_dir = build_run(tmp_path)
    (run_dir / "coalescer/parsed.json").write_text("{}\n")
    response = post(client_for(permitted=True), tar_gz_of(run_dir))
    state = client_for(permitted=True).get(response.json()["url"]).json()
    assert state["status"] == "failed"
    assert state["error"] == "Review evidence path/hash mismatch: coalescer/parsed.json"
    assert not Review.objects.exists()


def test_stale_expected_review_id_fails_but_archives(source, tmp_path):
    import datetime as dt

    current = publish(build_run(tmp_path, "current"))
    newer = build_run(
        tmp_path,
        "newer",
        started_at=dt.datetime(2025, 6, 1, tzinfo=dt.UTC),
        source_verdict="conditional",
    )
    response = post(client_for(permitted=True), tar_gz_of(newer), expected_review_id="0" * 64)
    state = client_for(permitted=True).get(response.json()["url"]).json()
    assert state["status"] == "failed" and state["error"] == CONFLICT_MESSAGE
    assert Review.objects.count() == 2
    assert source_row().review_id == current["review_id"]


def test_wrong_archive_type_is_400(source, tmp_path):
    archive = io.BytesIO(b"plain")
    archive.name = "run.txt"
    response = post(client_for(permitted=True), archive)
    assert response.status_code == 400
    assert "archive" in response.json()


def test_difficulty_type_goes_to_the_difficulty_publisher(source, tmp_path, monkeypatch):
    calls = []

    def fake_publish(*, run_dir, atlas_id, user):
        calls.append((atlas_id, user.username, (run_dir / "quality-reviews.json").exists()))
        return {"atlas_id": atlas_id, "kind": "difficulty"}

    monkeypatch.setattr("difficulty.publication.publish_difficulty_run", fake_publish)
    response = post(client_for(permitted=True), tar_gz_of(build_run(tmp_path)), type="difficulty")
    state = client_for(permitted=True).get(response.json()["url"]).json()
    assert state["status"] == "published" and state["result"]["kind"] == "difficulty"
    assert calls == [(SOURCE_ID, "curator-True", True)]


def test_unknown_publication_is_404(db):
    answer = client_for(permitted=True).get(f"{URL}00000000-0000-0000-0000-000000000000/")
    assert answer.status_code == 404


def test_job_state_is_for_its_publisher_and_staff(source, tmp_path):
    response = post(client_for(permitted=True), tar_gz_of(build_run(tmp_path)))
    url = response.json()["url"]
    assert APIClient().get(url).status_code == 401  # anonymous: sign in first
    assert client_for(permitted=True, name="another-publisher").get(url).status_code == 404
    staff = User.objects.create_user("staff-member", is_staff=True)
    viewer = APIClient()
    viewer.force_authenticate(staff)
    assert viewer.get(url).json()["status"] == "published"


def test_a_redelivered_import_does_nothing(source, tmp_path):
    from reviews.tasks import import_publication

    response = post(client_for(permitted=True), tar_gz_of(build_run(tmp_path)))
    publication = ReviewPublication.objects.get(id=response.json()["id"])
    assert import_publication(str(publication.id)) == "published"
    assert ReviewPublication.objects.get(id=publication.id).updated_at == publication.updated_at


@pytest.mark.django_db(transaction=True)
def test_publish_review_remote_uploads_and_writes_the_result(
    write_catalog, tmp_path, live_server, monkeypatch
):
    import json

    from django.core.management import call_command

    sync_rows(write_catalog, make_row(SOURCE_ID))
    user = User.objects.create_user("remote")
    user.user_permissions.add(Permission.objects.get(codename="publish_review"))
    monkeypatch.setenv("ATLAS_API_TOKEN", Token.objects.create(user=user).key)
    run_dir = build_run(tmp_path)
    call_command(
        "publish_review",
        "--run-dir",
        str(run_dir),
        "--atlas-id",
        SOURCE_ID,
        "--remote",
        live_server.url,
    )
    result = json.loads((run_dir / "atlas-publication.json").read_text())
    assert result["quality"] == "good" and source_row().review_id == result["review_id"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_upload_is_imported_by_a_celery_worker_when_a_broker_is_set(write_catalog, tmp_path):
    """With a broker the view only queues the job; a separate worker thread imports it."""
    import threading

    redis = pytest.importorskip("redis")
    from celery.contrib.testing.worker import start_worker
    from celery.signals import task_postrun

    from config.celery import app

    broker = "redis://127.0.0.1:6379/12"
    try:
        redis.Redis.from_url(broker).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    sync_rows(write_catalog, make_row(SOURCE_ID))
    previous = {key: app.conf[key] for key in ("broker_url", "task_always_eager", "result_backend")}
    app.conf.update(broker_url=broker, task_always_eager=False, result_backend=None)
    _drop_broker_connections(app)
    # The test waits for the worker's task to end instead of polling the job: on SQLite the
    # test database is shared in memory, where a read beside the worker's write makes the write
    # fail at once ("database table is locked"; SQLite retries only file locks).
    finished = threading.Event()

    def ended(**_: object) -> None:
        finished.set()

    task_postrun.connect(ended, weak=False)
    try:
        with start_worker(app, perform_ping_check=False, pool="solo", loglevel="WARNING"):
            response = post(client_for(permitted=True), tar_gz_of(build_run(tmp_path)))
            assert response.status_code == 202 and response.json()["status"] in {
                "queued",
                "running",
            }
            assert finished.wait(timeout=60), "the worker did not finish the import"
    finally:
        task_postrun.disconnect(ended)
        app.conf.update(previous)
        _drop_broker_connections(app)
    state = client_for(permitted=True).get(response.json()["url"]).json()
    assert state["status"] == "published", state
    assert source_row().review_id == state["result"]["review_id"]


def _drop_broker_connections(app) -> None:
    """Forget the cached pools so the next send looks them up for the current broker URL (kombu
    keeps one pool per URL; closing them would break later users of the in-memory broker)."""
    app._pool = None
    app.amqp._producer_pool = None
