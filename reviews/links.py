"""URLs of review pages, artifact pages and artifact downloads, reversed from the route names
(``reverse`` quotes ids and paths)."""

from __future__ import annotations

from django.urls import reverse


def review_page_url(review_id: str) -> str:
    return reverse("review-page", kwargs={"review_id": review_id})


def artifact_page_url(review_id: str, path: str) -> str:
    return reverse("review-artifact-page", kwargs={"review_id": review_id, "path": path})


def artifact_api_url(review_id: str, path: str) -> str:
    return reverse("api-review-artifact", kwargs={"review_id": review_id, "path": path})
