"""The parts around the application going down, against real servers: gunicorn with a broker
that is not there, and with its PostgreSQL behind a TCP relay the test cuts (a database restart,
as the server sees one). Every answer is a 503 with Retry-After and a reason, or the right
answer; never a 500, and no job is left queued that no broker holds."""

from __future__ import annotations

import contextlib
import io
import os
import select
import socket
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.db import connection
from rest_framework.authtoken.models import Token

from atlas.models import Source
from atlas.web.unavailable import BROKER_DOWN, DATABASE_DOWN
from reviews.models import ReviewPublication
from tests.reviews.builders import SOURCE_ID, build_run

pytestmark = [
    pytest.mark.postgres_only,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url(*, port: int | None = None) -> str:
    database = settings.DATABASES["default"]
    return (
        f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:"
        f"{port or database['PORT'] or 5432}/{connection.settings_dict['NAME']}"
    )


class Relay:
    """A TCP relay to PostgreSQL the test can cut: ``down()`` drops every connection and refuses
    new ones (the database restarting), ``up()`` accepts again."""

    def __init__(self) -> None:
        database = settings.DATABASES["default"]
        self.target = (database["HOST"] or "127.0.0.1", int(database["PORT"] or 5432))
        self.port = free_port()
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.listener: socket.socket | None = None
        self.lock = threading.Lock()
        # Bytes that, the next time the server sends them, drop that connection instead (a
        # restart in the middle of a request, after Django's health check passed).
        self.trap: bytes | None = None

    def up(self) -> None:
        listener = socket.create_server(("127.0.0.1", self.port), reuse_port=False)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        if self.listener is not None:
            listener, self.listener = self.listener, None
            with contextlib.suppress(OSError):  # shutdown wakes the thread blocked in accept()
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        self.drop()

    def drop(self) -> None:
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for end in pair:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if self.listener is not listener:
                client.close()
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.pairs.append((client, upstream))
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                ready, _, _ = select.select([a, b], [], [], 1)
                for end in ready:
                    data = end.recv(65536)
                    if not data:
                        return
                    if end is a and self.trap is not None and self.trap in data:
                        self.trap = None
                        a.shutdown(socket.SHUT_RDWR)
                        b.close()
                        return
                    (b if end is a else a).sendall(data)
        except (OSError, ValueError):
            return


def serve(environment: dict[str, str]) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "CONN_MAX_AGE": "600",
        **environment,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind",
         f"127.0.0.1:{port}", "--workers", "1", "--timeout", "60"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(url + "/api/", timeout=10)
                break
            except requests.RequestException:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError("the server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def catalog(write_catalog, settings):
    from atlas.services.sync import sync_catalog
    from tests.conftest import make_row

    path = write_catalog([make_row(SOURCE_ID), make_row("MarinSkyRL:other")])
    sync_catalog(catalog_path=path, force=False, trigger="command")
    return path


@pytest.fixture
def curator() -> tuple[User, str]:
    user = User.objects.create_user("curator", password="right-password-1", is_staff=True)
    for codename in ("refresh_catalog", "publish_review"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return user, Token.objects.create(user=user).key


def run_archive(tmp_path: Path) -> bytes:
    run_dir = build_run(tmp_path)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(run_dir, arcname=".")
    return buffer.getvalue()


def assert_unavailable(answer: requests.Response, reason: str) -> None:
    assert answer.status_code == 503, answer.text[:300]
    assert int(answer.headers["Retry-After"]) > 0
    assert reason in answer.text


def signed_in(url: str) -> requests.Session:
    session = requests.Session()
    session.get(url + "/accounts/login/")
    session.post(
        url + "/accounts/login/",
        {"username": "curator", "password": "right-password-1",
         "csrfmiddlewaretoken": session.cookies["csrftoken"]},
    )  # fmt: skip
    assert "sessionid" in session.cookies
    return session


def test_with_the_broker_down_uploads_and_refresh_answer_503(catalog, curator, tmp_path):
    _, token = curator
    closed = free_port()  # nothing listens there
    environment = {
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{closed}/3",
        "ATLAS_CATALOG_PATH": str(catalog),
    }
    for url in serve(environment):
        upload = requests.post(
            url + "/api/reviews/publications/",
            headers={"Authorization": f"Token {token}"},
            data={"atlas_id": SOURCE_ID, "type": "review"},
            files={"archive": ("run.tar.gz", run_archive(tmp_path))},
            timeout=30,
        )
        assert_unavailable(upload, BROKER_DOWN)
        # The job was stored, then failed with the reason: nothing waits for a broker.
        job = ReviewPublication.objects.get()
        assert job.status == ReviewPublication.Status.FAILED and job.error == BROKER_DOWN
        assert bytes(job.archive) == b""

        session = signed_in(url)
        csrf = {"X-CSRFToken": session.cookies["csrftoken"]}
        refresh = session.post(url + "/api/refresh/?force=true", headers=csrf, timeout=30)
        assert_unavailable(refresh, BROKER_DOWN)
        page_open = session.post(url + "/api/refresh/?background=true", headers=csrf, timeout=30)
        assert page_open.status_code in (200, 503)  # skipped when unchanged, else the same 503
        button = session.post(
            url + "/", {"refresh": "force", "csrfmiddlewaretoken": session.cookies["csrftoken"]},
            timeout=30,
        )  # fmt: skip
        assert_unavailable(button, "broker")
        # Reads do not need the broker.
        assert requests.get(url + "/api/sources/", timeout=10).status_code == 200


def test_a_database_restart_answers_503_then_recovers(catalog):
    relay = Relay()
    relay.up()
    environment = {"DATABASE_URL": database_url(port=relay.port)}
    paths = ["/", "/api/sources/", f"/api/sources/{SOURCE_ID}/", "/healthz", "/changes/"]
    try:
        for url in serve(environment):
            for path in paths:
                assert requests.get(url + path, timeout=10).status_code == 200, path
            relay.down()
            for path in paths:
                assert_unavailable(requests.get(url + path, timeout=30), DATABASE_DOWN)
            relay.up()
            # Back up: the persistent connection the restart closed is replaced.
            for path in paths:
                assert requests.get(url + path, timeout=10).status_code == 200, path
            # Dropped in the middle of a read: the read runs again on a new connection.
            for path in ["/api/sources/", "/"]:
                relay.trap = b"catalog_sources"
                assert requests.get(url + path, timeout=10).status_code == 200, path
                assert relay.trap is None  # the connection was dropped mid-request
            # Connections dropped between requests (a restart that is over): no 500 either.
            for _ in range(3):
                relay.drop()
                answers = [requests.get(url + path, timeout=10).status_code for path in paths]
                assert answers == [200] * len(paths)
    finally:
        relay.down()
    assert Source.objects.count() == 2


def test_the_csv_export_and_a_forced_sync_answer_503_when_the_database_is_cut(catalog, curator):
    """``/export.csv`` reads its first rows inside the view, and a forced sync's own COPY meets
    the driver's error: a cut database is a 503 with Retry-After for both, never a 500."""
    _, token = curator
    relay = Relay()
    relay.up()
    environment = {
        "DATABASE_URL": database_url(port=relay.port),
        "ATLAS_CATALOG_PATH": str(catalog),
    }
    before = sorted(Source.objects.values_list("id", "payload", "active", "quality"))
    try:
        for url in serve(environment):
            exported = requests.get(url + "/export.csv", timeout=10)
            assert exported.status_code == 200 and len(exported.text.splitlines()) == 3
            relay.down()
            assert_unavailable(requests.get(url + "/export.csv", timeout=30), DATABASE_DOWN)
            relay.up()
            # Cut as the export's COPY is sent: the read runs again on a new connection.
            relay.trap = b"COPY"
            again = requests.get(url + "/export.csv", timeout=10)
            assert relay.trap is None
            assert (again.status_code, again.text) == (200, exported.text)
            # Cut in the middle of a forced sync run in the request (a script's token).
            relay.trap = b"catalog_sources"
            forced = requests.post(
                url + "/api/refresh/?force=true",
                headers={"Authorization": f"Token {token}"},
                timeout=30,
            )
            assert relay.trap is None, (forced.status_code, forced.text[:300])
            assert_unavailable(forced, DATABASE_DOWN)
    finally:
        relay.down()
    assert sorted(Source.objects.values_list("id", "payload", "active", "quality")) == before
