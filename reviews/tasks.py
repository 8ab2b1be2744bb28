"""Celery tasks of the reviews app: thin wrappers (ids in, one service call)."""

from celery import shared_task
from celery.signals import worker_ready

from reviews.publication_jobs import (
    clean_scratch,
    expire_stale_publications,
    import_uploaded_publication,
)


@shared_task(name="reviews.tasks.import_publication")
def import_publication(publication_id: str) -> str:
    return import_uploaded_publication(publication_id=str(publication_id))


@shared_task(name="reviews.tasks.expire_stale_publications")
def expire_publications() -> list[str]:
    return expire_stale_publications()


@worker_ready.connect
def _on_worker_start(**kwargs) -> None:
    # A worker killed mid-import leaves its scratch behind and its job running: clean both.
    clean_scratch()
    expire_stale_publications()
