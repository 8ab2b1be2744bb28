"""The catalog-refresh lock: non-blocking and shared by every process."""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

LOCK_NAME = "rl-data-atlas/catalog-refresh"
# PostgreSQL advisory locks take a signed 64-bit key; derive it from the lock's name.
ADVISORY_KEY = int.from_bytes(hashlib.sha256(LOCK_NAME.encode()).digest()[:8], "big", signed=True)
OUTSIDE_TRANSACTION = "The catalog-refresh lock must be taken inside a transaction."


@contextmanager
def catalog_refresh_lock() -> Iterator[bool]:
    """Yield True when this caller holds the lock, False when another sync holds it.

    Must be entered inside the sync's transaction: on PostgreSQL the advisory lock is
    transaction-scoped and released at commit or rollback. On SQLite (one machine by nature) an
    exclusive, non-blocking file lock beside the database plays the same role. Entered outside
    one, it raises ``RuntimeError`` before taking anything, on both: in autocommit PostgreSQL
    would release the lock at the end of its own statement, and the caller would hold nothing.
    """
    if not connection.in_atomic_block:
        raise RuntimeError(OUTSIDE_TRANSACTION)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [ADVISORY_KEY])
            (acquired,) = cursor.fetchone()
        yield bool(acquired)
        return
    lock_dir = Path(settings.ATLAS_SYNC_LOCK_DIR)
    lock_dir.mkdir(parents=True, exist_ok=True)
    handle = os.open(lock_dir / "catalog-refresh.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)
