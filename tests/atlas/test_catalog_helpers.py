"""Helpers shared by the catalog page, API and CSV tests (no tests of its own)."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from django.contrib.auth.models import Permission, User
from django.utils import timezone

from atlas.models import Source
from atlas.rules import timestamps
from atlas.services.display import bump_display_version
from atlas.services.sync import sync_catalog
from tests.conftest import make_row

__all__ = ["make_curator", "make_open_issue", "make_row", "seed", "set_state"]


def seed(write_catalog, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")


def set_state(source_id: str, **columns: Any) -> None:
    """Set display-state columns directly: the read path trusts the stored cache. Like every
    write of display columns, it bumps the display version (reads kept per version follow)."""
    assert Source.objects.filter(pk=source_id).update(**columns) == 1
    bump_display_version()


def make_curator(username: str = "curator", *, staff: bool = True, permitted: bool = True) -> User:
    user = User.objects.create_user(username=username, password="pw-for-tests-only", is_staff=staff)
    if permitted:
        user.user_permissions.add(Permission.objects.get(codename="refresh_catalog"))
    return user


def make_open_issue(
    source_id: str, issue_url: str, *, created_at: dt.datetime | None = None
) -> dict[str, Any]:
    """An open verifier issue as the reviews app contributes it to the display state: the catalog
    reads only its own columns (``open_issues``, ``open_issue_count``)."""
    source = Source.objects.get(pk=source_id)
    issue = {
        "issue_url": issue_url,
        "review_id": hashlib.sha256(f"{source_id}|{issue_url}".encode()).hexdigest(),
        "status": "open",
        "created_at": timestamps.format_utc(created_at or timezone.now()),
    }
    issues = sorted([*source.open_issues, issue], key=lambda item: item["created_at"])
    set_state(source_id, open_issues=issues, open_issue_count=len(issues))
    return issue
