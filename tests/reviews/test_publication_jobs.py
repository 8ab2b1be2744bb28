"""Publication jobs (reviews.services.jobs): enqueued on commit, held under a lease, retried or
failed when their worker dies, scratch kept in one directory and cleaned."""

from __future__ import annotations

import datetime as dt
import io
import os
import tarfile
import time

import pytest
from django.test import TestCase
from django.utils import timezone

from reviews.models import ReviewPublication
from reviews.services.jobs import (
    LEASE_EXPIRED,
    SCRATCH_PREFIX,
    clean_scratch,
    enqueue_publication,
    expire_stale_publications,
)
from tests.reviews.builders import SOURCE_ID, build_run, make_row, source_row, sync_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def archive(write_catalog, tmp_path) -> bytes:
    sync_rows(write_catalog, make_row(SOURCE_ID))
    run_dir = build_run(tmp_path)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        bundle.add(run_dir, arcname=".")
    return buffer.getvalue()


@pytest.fixture(autouse=True)
def scratch(settings, tmp_path):
    settings.ATLAS_SCRATCH_DIR = tmp_path / "scratch"
    return settings.ATLAS_SCRATCH_DIR


def enqueue(archive: bytes) -> ReviewPublication:
    return enqueue_publication(
        atlas_id=SOURCE_ID,
        type="review",
        archive_name="run.tar.gz",
        archive=archive,
        expected_review_id=None,
        user=None,
    )


def test_the_import_waits_for_the_commit(archive):
    with TestCase.captureOnCommitCallbacks(execute=False) as callbacks:
        job = enqueue(archive)
    assert job.status == "queued" and len(callbacks) == 1
    callbacks[0]()
    job.refresh_from_db()
    assert job.status == "published" and job.archive == b"" and job.lease_expires_at is None
    assert job.attempts == 1 and source_row().review_id == job.result["review_id"]


def test_a_job_whose_worker_died_is_retried_once(archive):
    with TestCase.captureOnCommitCallbacks(execute=False):
        job = enqueue(archive)
    # A worker took the job and died: running, lease in the past, upload still stored.
    ReviewPublication.objects.filter(id=job.id).update(
        status="running", attempts=1, lease_expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert expire_stale_publications() == [str(job.id)]
    job.refresh_from_db()
    assert job.status == "published" and job.attempts == 2


def test_a_job_that_died_twice_fails_with_a_reason(archive):
    with TestCase.captureOnCommitCallbacks(execute=False):
        job = enqueue(archive)
    ReviewPublication.objects.filter(id=job.id).update(
        status="running", attempts=2, lease_expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    assert expire_stale_publications() == []
    job.refresh_from_db()
    assert (job.status, job.error, job.archive) == ("failed", LEASE_EXPIRED, b"")
    assert "/" not in job.error  # no server path in a public message


def test_a_live_lease_is_left_alone(archive):
    with TestCase.captureOnCommitCallbacks(execute=False):
        job = enqueue(archive)
    ReviewPublication.objects.filter(id=job.id).update(
        status="running", attempts=1, lease_expires_at=timezone.now() + dt.timedelta(minutes=5)
    )
    assert expire_stale_publications() == []
    job.refresh_from_db()
    assert job.status == "running"


def test_scratch_is_used_and_cleaned(archive, scratch):
    with TestCase.captureOnCommitCallbacks(execute=True):
        enqueue(archive)
    assert scratch.is_dir() and list(scratch.iterdir()) == []  # cleaned on success
    leftover = scratch / f"{SCRATCH_PREFIX}killed"
    (leftover / "run").mkdir(parents=True)
    fresh = scratch / f"{SCRATCH_PREFIX}running"
    fresh.mkdir()
    old = time.time() - 7200
    os.utime(leftover, (old, old))
    assert clean_scratch(older_than_seconds=3600) == 1
    assert not leftover.exists() and fresh.exists()


def test_a_queued_job_no_worker_took_is_sent_again(archive, settings):
    with TestCase.captureOnCommitCallbacks(execute=False):
        job = enqueue(archive)  # the broker lost it: nothing ever ran
    fresh = timezone.now()
    assert expire_stale_publications(now=fresh) == []  # queued moments ago: a worker may take it
    lease = dt.timedelta(seconds=settings.ATLAS_PUBLICATION_LEASE_SECONDS + 1)
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert expire_stale_publications(now=fresh + lease) == [str(job.id)]
    job.refresh_from_db()
    assert job.status == "published" and job.attempts == 1
