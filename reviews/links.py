"""URLs of review pages, artifact pages and artifact downloads, reversed from the route names
(``reverse`` quotes ids and paths)."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.urls import reverse

# A review's id is the SHA-256 of its collection (the catalog_reviews_id_is_sha256 constraint); a
# link or query naming anything else names no review, and reversing it could fail or point
# elsewhere.
REVIEW_ID = re.compile(r"[0-9a-f]{64}")
# What a page, the API and the defect services say when an id or path names nothing stored.
REVIEW_NOT_FOUND = "Review not found"
ARTIFACT_NOT_FOUND = "Artifact not found"


def is_review_id(value: Any) -> bool:
    return isinstance(value, str) and REVIEW_ID.fullmatch(value) is not None


def review_page_url(review_id: str) -> str:
    return reverse("review-page", kwargs={"review_id": review_id})


def artifact_page_url(review_id: str, path: str) -> str:
    return reverse("review-artifact-page", kwargs={"review_id": review_id, "path": path})


def artifact_api_url(review_id: str, path: str) -> str:
    return reverse("api-review-artifact", kwargs={"review_id": review_id, "path": path})


def public_url_note() -> str | None:
    """What a command that prints links says when they use ``ATLAS_PUBLIC_URL``'s default, a
    guess the server's address may not match; None when the setting names it."""
    if getattr(settings, "ATLAS_PUBLIC_URL_SET", True):
        return None
    return (
        f"Links use ATLAS_PUBLIC_URL's default, {settings.ATLAS_PUBLIC_URL}: set ATLAS_PUBLIC_URL "
        "to the address the Atlas is served at (make run and make serve set it from HOST and "
        "PORT)"
    )
