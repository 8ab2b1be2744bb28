"""Celery tasks of the reviews app (found by autodiscovery). The publication tasks are defined
beside their service in ``reviews.services.jobs``."""

from celery.signals import worker_ready

from reviews.services.jobs import (
    clean_scratch,
    expire_publications,
    expire_stale_publications,
    import_publication,
)

__all__ = ["expire_publications", "import_publication"]


@worker_ready.connect
def _on_worker_start(**kwargs) -> None:
    # A worker killed mid-import leaves its scratch behind and its job running: clean both.
    clean_scratch()
    expire_stale_publications()
