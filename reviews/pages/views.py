"""Review page and artifact page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from atlas.web.views import REGION_HEADER
from reviews import selectors
from reviews.links import (
    ARTIFACT_NOT_FOUND,
    REVIEW_NOT_FOUND,
    artifact_api_url,
    artifact_page_url,
    is_review_id,
    review_page_url,
)
from reviews.pages.review_page import review_page as build_review_page
from reviews.pages.review_page import review_task as build_review_task
from reviews.pages.trace_viewers import render_artifact
from reviews.production.format.run_files import normalized_relative


def review_page(request: HttpRequest, review_id: str) -> HttpResponse:
    page = build_review_page(review_id=review_id)
    if page is None:
        return not_found_page(request, title=REVIEW_NOT_FOUND, message=REVIEW_NOT_FOUND)
    bundle = page.bundle
    return render(
        request,
        "reviews/review.html",
        {
            "page": page,
            "review": bundle.review,
            "source": bundle.source,
            "artifact_paths": bundle.own_artifact_paths,
        },
    )


# What review.js asks for (and checks in the answer) when a task or the evidence index opens.
FRAGMENT = "fragment"
TASK_NOT_FOUND = "Task not found"


def page_or_fragment(
    request: HttpRequest, *, page: str, fragment: str, context: dict[str, object]
) -> HttpResponse:
    """The whole page (what a link opens, with or without a script), or only the part the review
    page inserts when a section opens, marked as such."""
    partial = request.headers.get(REGION_HEADER) == FRAGMENT
    response = render(request, fragment if partial else page, context)
    if partial:
        response[REGION_HEADER] = FRAGMENT
    patch_vary_headers(response, [REGION_HEADER])
    return response


def review_task(request: HttpRequest, review_id: str, task_key: str) -> HttpResponse:
    """One task's native attempt, judgments and syntheses, with their evidence viewers."""
    found = build_review_task(review_id=review_id, key=task_key)
    if found is None:
        return not_found_page(
            request,
            title=TASK_NOT_FOUND,
            message="This task is not part of the saved review.",
            back_url=review_page_url(review_id) if is_review_id(review_id) else None,
        )
    bundle, group = found
    context = {"review": bundle.review, "source": bundle.source, "group": group}
    return page_or_fragment(
        request, page="reviews/task.html", fragment="reviews/_task_cards.html", context=context
    )


def saved_evidence(request: HttpRequest, review_id: str) -> HttpResponse:
    """Every artifact of a review, each a viewer that loads when opened."""
    review = selectors.review_with_source(review_id=review_id)
    if review is None:
        return not_found_page(request, title=REVIEW_NOT_FOUND, message=REVIEW_NOT_FOUND)
    context = {
        "review": review,
        "source": review.source,
        "artifacts": selectors.artifact_index(review_id=review.id),
    }
    return page_or_fragment(
        request, page="reviews/evidence.html", fragment="reviews/_evidence.html", context=context
    )


def artifact_page(request: HttpRequest, review_id: str, path: str) -> HttpResponse:
    review = selectors.review_with_source(review_id=review_id)
    if review is None:
        return not_found_page(request, title=REVIEW_NOT_FOUND, message=REVIEW_NOT_FOUND)
    found = selectors.artifact(review_id=review.id, path=path)
    if found is None:
        return not_found_page(
            request,
            title=ARTIFACT_NOT_FOUND,
            message="This artifact is not part of the saved review.",
            back_url=review_page_url(review.id),
        )
    return render(
        request,
        "reviews/artifact.html",
        {
            "review": review,
            "source": review.source,
            "artifact": found,
            "file_name": found.path.rsplit("/", 1)[-1],
            "download_url": artifact_api_url(review.id, found.path),
            "contents": render_artifact(path=found.path, content=found.content),
        },
    )


def legacy_review_link(request: HttpRequest) -> HttpResponse:
    """Reference links of the earlier applet, ``review.html?id=<review id>[&artifact=<path>]``,
    move permanently to the review page or the artifact page."""
    review_id = (request.GET.get("id") or "").strip()
    artifact = (request.GET.get("artifact") or "").strip().lstrip("/")
    # Anyone writes these links: only a review id and a stored artifact's (normalised) path can
    # name a page, anything else is no review rather than a redirect elsewhere or a 500.
    if not is_review_id(review_id) or (artifact and normalized_relative(artifact) != artifact):
        return not_found_page(request, title=REVIEW_NOT_FOUND, message=REVIEW_NOT_FOUND)
    target = artifact_page_url(review_id, artifact) if artifact else review_page_url(review_id)
    return HttpResponsePermanentRedirect(target)


def not_found_page(
    request: HttpRequest, *, title: str, message: str, back_url: str | None = None
) -> HttpResponse:
    context = {"title": title, "message": message, "back_url": back_url}
    return render(request, "reviews/not_found.html", context, status=404)
