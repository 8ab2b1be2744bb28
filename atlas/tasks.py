"""Celery tasks of the catalog (found by autodiscovery). The sync task is defined beside the
refresh service that queues it, ``atlas.services.refresh``."""

from atlas.services.refresh import sync_task as sync_catalog

__all__ = ["sync_catalog"]
