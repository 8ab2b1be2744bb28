"""The review page's difficulty runs (/reviews/<id>/difficulty/runs/<n>/): what a run loads when it
opens, and the page a link opens without scripts."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from difficulty.review_sections import run_details
from difficulty.selectors import stored_report
from reviews.links import is_review_id, review_page_url
from reviews.pages.views import not_found_page, page_or_fragment

RUN_NOT_FOUND = "Difficulty run not found"


def difficulty_run(request: HttpRequest, review_id: str, number: int) -> HttpResponse:
    """One model's run settings and attempts with their evidence viewers."""
    stored = stored_report(review_id=review_id)
    run = None if stored is None else run_details(stored=stored, number=number)
    if stored is None or run is None:
        return not_found_page(
            request,
            title=RUN_NOT_FOUND,
            message="This review has no such difficulty run.",
            back_url=review_page_url(review_id) if is_review_id(review_id) else None,
        )
    context = {"review": stored.review, "source": stored.review.source, "run": run}
    return page_or_fragment(
        request,
        page="difficulty/run.html",
        fragment="difficulty/_run_details.html",
        context=context,
    )
