"""Helpers shared by the catalog page, API and CSV tests (no tests of its own)."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from django.contrib.auth.models import Permission, User
from django.utils import timezone

from atlas.models import Source
from atlas.services.sync import sync_catalog
from tests.conftest import make_row

__all__ = ["make_curator", "make_open_issue", "make_row", "seed", "set_state"]


def seed(write_catalog, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")


def set_state(source_id: str, **columns: Any) -> None:
    """Set display-state columns directly: the read path trusts the stored cache."""
    assert Source.objects.filter(pk=source_id).update(**columns) == 1


def make_curator(username: str = "curator", *, staff: bool = True, permitted: bool = True) -> User:
    user = User.objects.create_user(username=username, password="pw-for-tests-only", is_staff=staff)
    if permitted:
        user.user_permissions.add(Permission.objects.get(codename="refresh_catalog"))
    return user


def make_open_issue(source_id: str, issue_url: str, *, created_at: dt.datetime | None = None):
    from reviews.models import Review, VerifierIssue

    review_id = hashlib.sha256(f"{source_id}|{issue_url}".encode()).hexdigest()
    review = Review.objects.create(
        id=review_id,
        source_id=source_id,
        collection={},
        kind="rating",
        published_at=timezone.now(),
    )
    now = created_at or timezone.now()
    return VerifierIssue.objects.create(
        source_id=source_id, issue_url=issue_url, review=review, created_at=now, updated_at=now
    )
