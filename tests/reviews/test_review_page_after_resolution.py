"""After a resolved defect the review page never says "No issues" above an open-looking issue
panel: the historical finding is marked resolved with its resolution review, and the header's
count says it describes this collection."""

from __future__ import annotations

import re
from html import unescape

import pytest

from reviews.pages.review_page import review_page
from reviews.services.defects import confirm_verifier_issue
from tests.conftest import make_row
from tests.reviews.builders import DATA_REVISION, SOURCE_ID, build_run, publish, sync_rows
from tests.reviews.defect_walk import DEFECT_FINDING, ISSUE_URL, defect_run

pytestmark = pytest.mark.django_db


def page_text(html: str) -> str:
    html = re.sub(r"<(script|template)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def panel(html: str) -> str:
    start = html.index('id="technical-issues"')
    return html[html.rindex("<details", 0, start) : html.index("</details>", start)]


def test_the_resolution_review_page_marks_the_historical_finding_resolved(walked, client):
    html = client.get(f"/reviews/{walked['fix']}/").content.decode()
    issues = panel(html)
    assert 'class="panel alert"' not in issues  # nothing open-looking
    assert "Reported technical issues (1 · resolved)" in issues
    assert DEFECT_FINDING in issues and 'class="resolved-mark">Resolved<' in issues
    assert f'href="/reviews/{walked["fix"]}/"' in issues and f'href="{ISSUE_URL}"' in issues
    assert "1 of them comes from supplemental collections" in page_text(issues)
    header = page_text(html[: html.index('id="technical-issues"')])
    assert "No issues in this collection" in header
    # The defect review's card says the same.
    assert "Technical issues (1) · resolved" in html


def test_the_confirming_collection_page_counts_its_own_finding_as_resolved(walked, client):
    html = client.get(f"/reviews/{walked['defect']}/").content.decode()
    issues = panel(html)
    assert "Reported technical issues (1 · resolved)" in issues
    assert "come from supplemental collections" not in issues  # it is this collection's own
    assert "1 issue in this collection" in page_text(html[: html.index('id="technical-issues"')])


def test_while_the_defect_is_open_its_finding_is_not_resolved(write_catalog, tmp_path, client):
    sync_rows(write_catalog, make_row(SOURCE_ID, dataset_revision=DATA_REVISION))
    publish(build_run(tmp_path, "good"))
    defect = publish(defect_run(tmp_path))
    confirm_verifier_issue(source_id=SOURCE_ID, issue_url=ISSUE_URL, review_id=defect["review_id"])
    page = review_page(review_id=defect["review_id"])
    assert (page.issue_panel.unresolved, page.issue_panel.count_text) == (1, "1")
    issues = panel(client.get(f"/reviews/{defect['review_id']}/").content.decode())
    assert 'class="panel alert"' in issues and "resolved-mark" not in issues


def test_a_reproduction_not_used_for_the_confirmation_is_resolved_with_its_issue(
    walked, tmp_path, client
):
    """A second published reproduction of the same issue — never used to confirm it — reads as
    resolved with the issue on every later page, never as an open "High · verifier" finding."""
    other_root = tmp_path / "another"
    other_root.mkdir()
    other = publish(defect_run(other_root))["review_id"]
    assert other not in (walked["defect"], walked["fix"])
    for page_id in (walked["fix"], other):
        issues = panel(client.get(f"/reviews/{page_id}/").content.decode())
        assert 'class="panel alert"' not in issues, page_id
        assert DEFECT_FINDING in issues and 'class="resolved-mark">Resolved<' in issues
    page = review_page(review_id=walked["fix"])
    assert page.issue_panel.unresolved == 0
