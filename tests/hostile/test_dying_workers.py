"""Work that dies half-way (kill -9): a sync leaves the inventory as it was and the lock free, an
import leaves a job that the lease sweep retries to completion. Real processes, committed
transactions, PostgreSQL (SQLite has one writer and no advisory locks to leak)."""

from __future__ import annotations

import datetime as dt
import io
import os
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from atlas.artifact.catalog_artifact import write_document
from atlas.models import RefreshRun, Source
from atlas.services.sync import sync_catalog
from reviews.models import ReviewPublication
from reviews.services.jobs import expire_stale_publications, import_uploaded_publication
from tests.conftest import make_row
from tests.hostile.conftest import fingerprint
from tests.reviews.builders import SOURCE_ID, build_run
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.postgres_only,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]
ROOT = Path(__file__).resolve().parents[2]
# The workers' sessions are named (libpq reads PGAPPNAME), so a test waits for its own only.
WORKER_SESSION = "atlas-test-dying-worker"


def child_environment() -> dict[str, str]:
    """The subprocess talks to this test's own database."""
    database = settings.DATABASES["default"]
    url = (
        f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:"
        f"{database['PORT'] or 5432}/{connection.settings_dict['NAME']}"
    )
    return {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "PGAPPNAME": WORKER_SESSION,
    }


def in_transaction_elsewhere() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND state = 'idle in transaction' OR "
            "(datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' "
            "AND xact_start IS NOT NULL)"
        )
        return cursor.fetchone()[0] > 0


def writing_elsewhere() -> bool:
    """Another session's transaction has written: PostgreSQL gives it a transaction id at its
    first write."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL"
        )
        return cursor.fetchone()[0] > 0


def worker_sessions() -> int:
    """The worker's sessions on this test's database."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = %s",
            [WORKER_SESSION],
        )
        return int(cursor.fetchone()[0])


def kill(child: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker, then wait until its database session is gone too. The server process
    of a killed client finishes the statement it was running before it finds the client gone;
    left running, it could outlive the test and keep the test database from being dropped at
    the end of the run."""
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    wait_until(lambda: worker_sessions() == 0, what="the killed worker's session gone")


def advisory_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())"
        )
        return int(cursor.fetchone()[0])


def test_a_sync_killed_mid_way_changes_nothing_and_frees_the_lock(tmp_path):
    small = tmp_path / "small.json"
    write_document(rows=[make_row(f"MarinSkyRL:s{n:05d}") for n in range(50)], output=small)
    sync_catalog(catalog_path=small, force=False, trigger="command")
    before = fingerprint()
    large = tmp_path / "large.json"
    write_document(
        rows=[make_row(f"MarinSkyRL:s{n:05d}", notes="changed") for n in range(30_000)],
        output=large,
    )
    child = subprocess.Popen(
        [sys.executable, "manage.py", "sync_catalog", "--catalog", str(large), "--force"],
        cwd=ROOT,
        env=child_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Inside the sync's transaction, lock held, and writing.
        wait_until(
            lambda: advisory_locks() > 0 and writing_elsewhere() and worker_sessions() > 0,
            what="the sync writing",
        )
    finally:
        kill(child)
    # The server rolls the dead connection's transaction back and releases its advisory lock.
    wait_until(
        lambda: advisory_locks() == 0 and not in_transaction_elsewhere(),
        what="the dead sync rolled back",
    )
    assert fingerprint() == before
    result = sync_catalog(catalog_path=large, force=False, trigger="command")
    assert result["busy"] is False
    assert Source.objects.filter(active=True).count() == 30_000
    assert RefreshRun.objects.order_by("-id").first().outcome == "synced"


def test_an_import_killed_mid_way_is_retried_by_the_lease_sweep(tmp_path, write_catalog):
    from tests.reviews.builders import make_row as review_row
    from tests.reviews.builders import sync_rows

    sync_rows(write_catalog, review_row(SOURCE_ID))
    run_dir = build_run(tmp_path)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        bundle.add(run_dir, arcname=".")
        # Bulk, so the import is still running when it is killed.
        for index in range(4000):
            data = (b'{"line": %d}\n' % index) * 50
            info = tarfile.TarInfo(
                f"tasks/0001/execution-001/solver/turn-{index:04d}/response.json"
            )
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    job = ReviewPublication.objects.create(
        atlas_id=SOURCE_ID, type="review", archive_name="run.tar.gz", archive=buffer.getvalue()
    )
    script = (
        "import django; django.setup(); "
        "from reviews.services.jobs import import_uploaded_publication as run; "
        f"run(publication_id='{job.id}')"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, env=child_environment(),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until(
            lambda: (
                ReviewPublication.objects.get(id=job.id).status == "running"
                and writing_elsewhere()
                and worker_sessions() > 0
            ),
            what="the import writing",
        )
    finally:
        kill(child)
    job.refresh_from_db()
    assert job.status == "running" and job.attempts == 1 and job.lease_expires_at is not None
    assert job.archive != b""  # the upload survives its dead worker
    # The lease runs out: the sweep requeues the job and a live worker finishes it.
    ReviewPublication.objects.filter(id=job.id).update(
        lease_expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert expire_stale_publications() == [str(job.id)]
    assert import_uploaded_publication(publication_id=str(job.id)) == "published"
    job.refresh_from_db()
    assert job.attempts == 2 and job.archive == b"" and job.error is None
