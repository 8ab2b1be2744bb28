"""Publication jobs: an uploaded run-directory archive, queued for import by a worker.

``enqueue_publication`` is the one way to create a job (API and admin); the import runs after the
creating transaction commits. Each job type has an importer registered here — reviews registers
``review``; difficulty registers ``difficulty`` from its ``AppConfig.ready()`` (so this module never
imports the layer above). A worker holds a job under a lease: a job whose worker died is retried
once, then failed with a reason, instead of staying "running" forever. Scratch space lives in
``ATLAS_SCRATCH_DIR`` and is removed on success, on failure and when a worker starts.
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from atlas.web.unavailable import BrokerUnavailable, send_task
from reviews.models import ReviewPublication
from reviews.services.archives import ArchiveRejected, extract_archive
from reviews.services.publication import PublicationConflict, publish_run_directory
from reviews.services.validation import PublicationRejected

logger = logging.getLogger(__name__)

SCRATCH_PREFIX = "atlas-publication-"
MAX_ATTEMPTS = 2
LEASE_EXPIRED = (
    "The import worker stopped before finishing (its lease expired); upload the archive again"
)


@dataclass(frozen=True)
class Importer:
    publish: Callable[..., dict[str, Any]]  # publish(*, run_dir, publication) -> result
    refusals: tuple[type[Exception], ...]  # errors whose message is for the uploader


_importers: dict[str, Importer] = {}


def register_importer(*, type: str, importer: Importer) -> None:
    _importers[type] = importer


def _publish_review(*, run_dir: Path, publication: ReviewPublication) -> dict[str, Any]:
    return publish_run_directory(
        run_dir=run_dir,
        atlas_id=publication.atlas_id,
        user=publication.created_by,
        expected_review_id=publication.expected_review_id or None,
    )


register_importer(
    type=ReviewPublication.Type.REVIEW,
    importer=Importer(publish=_publish_review, refusals=(PublicationRejected,)),
)


def lease_seconds() -> int:
    return int(settings.ATLAS_PUBLICATION_LEASE_SECONDS)


def scratch_dir() -> Path:
    path = Path(settings.ATLAS_SCRATCH_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def enqueue_publication(
    *,
    atlas_id: str,
    type: str,
    archive_name: str,
    archive: bytes,
    expected_review_id: str | None,
    user: Any,
) -> ReviewPublication:
    """Store the upload and schedule its import once the job row is committed. With no broker to
    take it, the job is failed with the reason (no job stays queued that no broker holds) and
    ``BrokerUnavailable`` says why."""
    unsent: list[BrokerUnavailable] = []
    with transaction.atomic():
        publication = ReviewPublication.objects.create(
            atlas_id=atlas_id,
            type=type,
            archive_name=archive_name,
            archive=archive,
            expected_review_id=expected_review_id or None,
            created_by=user if getattr(user, "pk", None) else None,
        )
        job_id = str(publication.id)
        transaction.on_commit(lambda: _send_import(job_id, unsent=unsent))
    if unsent:
        ReviewPublication.objects.filter(id=job_id, status=ReviewPublication.Status.QUEUED).update(
            status=ReviewPublication.Status.FAILED,
            error=str(unsent[0]),
            archive=b"",
            updated_at=timezone.now(),
        )
        raise unsent[0]
    publication.refresh_from_db(fields=["status", "error", "result"])
    return publication


def _send_import(job_id: str, *, unsent: list[BrokerUnavailable]) -> None:
    try:
        send_task(import_publication, publication_id=job_id)
    except BrokerUnavailable as exc:
        unsent.append(exc)


def import_uploaded_publication(*, publication_id: str) -> str:
    """Import a stored upload (the worker's side); returns the final status. A job another live
    worker holds is left alone, so a redelivered task is harmless."""
    now = timezone.now()
    taken = ReviewPublication.objects.filter(
        id=publication_id, status=ReviewPublication.Status.QUEUED
    ).update(
        status=ReviewPublication.Status.RUNNING,
        updated_at=now,
        lease_expires_at=now + dt.timedelta(seconds=lease_seconds()),
        attempts=F("attempts") + 1,
    )
    publication = ReviewPublication.objects.get(id=publication_id)
    if not taken:
        return publication.status
    outcome: dict[str, Any] = {"status": ReviewPublication.Status.FAILED}
    importer = _importers.get(publication.type)
    refusals: tuple[type[Exception], ...] = (
        ArchiveRejected,
        *(importer.refusals if importer else ()),
    )
    with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX, dir=scratch_dir()) as scratch:
        archive = Path(scratch) / "upload"
        archive.write_bytes(bytes(publication.archive))
        try:
            if importer is None:
                raise ArchiveRejected(f"Unknown publication type: {publication.type}")
            run_dir = extract_archive(
                archive=archive, name=publication.archive_name, destination=Path(scratch) / "run"
            )
            result = importer.publish(run_dir=run_dir, publication=publication)
            outcome = {"status": ReviewPublication.Status.PUBLISHED, "result": result}
        except PublicationConflict as exc:
            outcome.update(error=str(exc), result=exc.result)
        except refusals as exc:
            outcome.update(error=str(exc))
        except Exception as exc:
            logger.exception("Publication import %s failed", publication_id)
            outcome.update(error=f"Publication import failed: {type(exc).__name__}")
    # The imported evidence now lives in review_artifacts; keep no second copy of the upload.
    ReviewPublication.objects.filter(id=publication_id).update(
        updated_at=timezone.now(), archive=b"", lease_expires_at=None, **outcome
    )
    return outcome["status"]


def expire_stale_publications(*, now: dt.datetime | None = None) -> list[str]:
    """Jobs whose worker died: retried while attempts remain, else failed with a reason; jobs
    queued a lease ago that no worker took: sent again. Returns the ids sent."""
    now = now or timezone.now()
    expired = ReviewPublication.objects.filter(
        status=ReviewPublication.Status.RUNNING, lease_expires_at__lt=now
    )
    requeued = [
        str(pk) for pk in expired.filter(attempts__lt=MAX_ATTEMPTS).values_list("id", flat=True)
    ]
    ReviewPublication.objects.filter(
        id__in=requeued, status=ReviewPublication.Status.RUNNING
    ).update(status=ReviewPublication.Status.QUEUED, lease_expires_at=None, updated_at=now)
    expired.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=ReviewPublication.Status.FAILED,
        error=LEASE_EXPIRED,
        archive=b"",
        lease_expires_at=None,
        updated_at=now,
    )
    # Queued a lease ago and never taken: the broker lost the message or was down when the sweep
    # requeued it. Sent again (a worker takes a job once, so a late duplicate is harmless).
    stranded = ReviewPublication.objects.filter(
        status=ReviewPublication.Status.QUEUED,
        updated_at__lt=now - dt.timedelta(seconds=lease_seconds()),
    )
    resent = [str(pk) for pk in stranded.values_list("id", flat=True)]
    ReviewPublication.objects.filter(id__in=resent).update(updated_at=now)
    for job_id in [*requeued, *resent]:
        _import_after_commit(job_id)
    return [*requeued, *resent]


def _import_after_commit(job_id: str) -> None:
    # A broker that is down leaves the job queued; the next sweep sends the queued jobs nobody
    # took (``expire_stale_publications``).
    transaction.on_commit(lambda: _send_import(job_id, unsent=[]))


def clean_scratch(*, older_than_seconds: int | None = None) -> int:
    """Remove leftover scratch directories (a worker killed mid-import leaves its own)."""
    limit = lease_seconds() if older_than_seconds is None else older_than_seconds
    removed = 0
    cutoff = time.time() - limit
    for path in scratch_dir().glob(SCRATCH_PREFIX + "*"):
        try:
            if path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed


# The Celery tasks live beside the services they wrap (ids in, one call) so scheduling a job needs
# no import of a module that imports this one; ``reviews.tasks`` exposes them to autodiscovery.
@shared_task(name="reviews.tasks.import_publication")
def import_publication(publication_id: str) -> str:
    return import_uploaded_publication(publication_id=str(publication_id))


@shared_task(name="reviews.tasks.expire_stale_publications")
def expire_publications() -> list[str]:
    return expire_stale_publications()
