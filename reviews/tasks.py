"""Celery tasks of the reviews app: thin wrappers (ids in, one service call)."""

from celery import shared_task

from reviews.publication import import_uploaded_publication


@shared_task(name="reviews.tasks.import_publication")
def import_publication(publication_id: str) -> str:
    return import_uploaded_publication(publication_id=str(publication_id))
