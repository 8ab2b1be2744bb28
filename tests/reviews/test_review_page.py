"""The review page."""

from __future__ import annotations

import re
from html import unescape

import pytest
from pytest_django.asserts import assertInHTML

from atlas.models import Source
from reviews import page_sections, selectors
from reviews.pages import review_page
from tests.reviews import factories as f

pytestmark = pytest.mark.django_db

SOURCE_ID = "MarinSkyRL:example"


def page_text(response) -> str:
    """Visible text with tags removed and whitespace collapsed."""
    html = response.content.decode()
    html = re.sub(r"<(script|template)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def get_page(client, review):
    response = client.get(f"/reviews/{review.id}/")
    assert response.status_code == 200
    return response


FRAGMENT = {"HTTP_X_ATLAS_REGION": "fragment"}


def fragment_urls(html: str) -> list[str]:
    """The sections of a review page whose contents load when opened, in page order."""
    return re.findall(
        r'<details class="[^"]*lazy-section[^"]*" id="[^"]+" data-fragment-url="([^"]+)"', html
    )


def task_fragment_urls(html: str) -> list[str]:
    return [url for url in fragment_urls(html) if "/tasks/" in url]


def get_fragment(client, url: str) -> str:
    response = client.get(url, **FRAGMENT)
    assert response.status_code == 200
    assert response["X-Atlas-Region"] == "fragment"
    return response.content.decode()


def opened_page(client, review) -> str:
    """The page as a reader who opened every task sees it: each task's cards in its line."""
    html = get_page(client, review).content.decode()
    for url in task_fragment_urls(html):
        line = html.index(f'data-fragment-url="{url}"')
        end = html.index("</details>", line)
        html = html[:end] + get_fragment(client, url) + html[end:]
    return html


@pytest.fixture
def source():
    return f.make_source(SOURCE_ID)


@pytest.fixture
def current(source):
    collection, files = f.native_collection()
    return f.publish(collection, files, make_current=True)


@pytest.fixture
def no_difficulty(monkeypatch):
    """The review page without any section contributed by the apps above it."""
    monkeypatch.setattr(page_sections, "_sections", [])


# --- header -----------------------------------------------------------------------------------


def test_header(client, current):
    response = get_page(client, current)
    html = response.content.decode()
    text = page_text(response)
    name = current.source.display_name
    assert f"<title>{name} · Quality and difficulty</title>" in html
    assertInHTML(
        '<p class="home-link"><a href="/">← RL Data Atlas</a> · '
        f'<a href="/sources/{SOURCE_ID}/">Source page</a></p>',
        html,
    )
    assertInHTML(f"<h1>{name}</h1>", html)
    assert f"{SOURCE_ID} · review {current.id[:12]}" in text
    assert "Reviewed Mar 3, 2025 · MarinSkyRL execution commit 0123456789ab" in text
    assert "example-banner" not in html
    assertInHTML(
        f'<a href="https://github.com/marin-community/MarinSkyRL/commit/{f.COMMIT}" '
        f'title="{f.COMMIT}" rel="noopener"><code>0123456789ab</code></a>',
        html,
    )
    assertInHTML(
        f'<a class="button" href="/api/reviews/{current.id}/artifacts/quality-reviews.json" '
        f'download="{current.id}.json">Download review JSON</a>',
        html,
    )
    assert "This is not the source's current review." not in text
    assert "This source is retired" not in text


def test_dirty_checkout_and_harbor_commit_in_the_provenance_line(client, source):
    collection, files = f.native_collection()
    collection["execution_provenance"].update(marinskyrl_dirty=True, harbor_commit=f.HARBOR_COMMIT)
    review = f.publish(collection, files, make_current=True)
    assert (
        "MarinSkyRL execution commit 0123456789ab (dirty checkout) · Harbor fedcba987654"
        in page_text(get_page(client, review))
    )


def test_reused_evidence_shows_the_reference_commit_and_the_inspected_verifier(client, source):
    collection, files = f.native_collection(execution_provenance=None)
    collection["reviews"][-1]["attributes"]["inspected_marinskyrl_commit"] = "1" * 40
    review = f.publish(collection, files, make_current=True)
    attestation, attestation_files = f.supplemental_collection(
        role="verifier_revision_attestation", inspected_commit="2" * 40
    )
    f.publish(attestation, attestation_files)
    text = page_text(get_page(client, review))
    assert (
        "Reviewed Mar 3, 2025 · MarinSkyRL reference commit 111111111111 · Reused evidence and "
        "current inspection · Current verifier inspected at 222222222222"
    ) in text
    assert "execution commit" not in text


def test_imported_review_without_date_or_commit(client, source):
    collection, files = f.imported_collection()
    review = f.publish(collection, files)
    text = page_text(get_page(client, review))
    assert "Review date unknown · MarinSkyRL commit not recorded in imported review" in text
    assert "Imported audit · Source · Conditional" in text
    assert "Severity not recorded" in text
    # Source mappings in the provenance section.
    for value in (
        "upstream/audits",
        SOURCE_ID,
        "confirmed",
        "historical",
        "Same upstream dataset.",
    ):
        assert value in text


def review_header(html: str) -> str:
    start = html.index('<header class="review-header">')
    return html[start : html.index("</header>", start)]


def test_the_header_describes_this_collection_and_never_changes_with_later_ones(client, current):
    before = get_page(client, current).content.decode()
    header = review_header(before)
    assert ">Mar 3, 2025</time>" in header
    badges = re.search(r'<p class="review-badges">.*?</p>', header).group(0)
    assert (
        "3 issues" in badges and "quality-some_issues" in badges
    )  # derived from itself  # the rating this collection derives
    defect, files = f.supplemental_collection(reviewed_at="2025-06-09T01:00:00Z")
    f.publish(defect, files)
    newer, newer_files = f.native_collection(reviewed_at="2025-07-01T00:00:00Z", task_count=1)
    f.set_current(f.publish(newer, newer_files), quality="bad")
    after = get_page(client, current).content.decode()
    header_after = review_header(after)
    assert ">Mar 3, 2025</time>" in header_after and "Jun 9" not in header_after
    badges_after = re.search(r'<p class="review-badges">.*?</p>', header_after).group(0)
    assert re.sub(r' title="[^"]*"', "", badges_after) == re.sub(r' title="[^"]*"', "", badges)
    assert "This is not the source's current review." in header_after


def test_the_header_counts_this_collections_issues_and_names_kinds_without_rating(client, source):
    defect, files = f.supplemental_collection()
    review = f.publish(defect, files)
    html = get_page(client, review).content.decode()
    header = review_header(html)
    issues = sum(
        finding["kind"] == "issue" for item in defect["reviews"] for finding in item["findings"]
    )
    assert issues >= 1
    label = f"{issues} issue" + ("s" if issues > 1 else "")
    assert f'<span class="badge badge-red">{label} in this collection</span>' in header
    assert "Supplemental evidence · no rating" in header


def test_an_example_collection_says_so_at_the_top(client, source):
    collection, files = f.native_collection()
    for item in collection["reviews"]:
        item["summary"] = "Example review — not a real judgment. " + item["summary"]
    review = f.publish(collection, files, make_current=True)
    html = get_page(client, review).content.decode()
    banner = html.index('class="example-banner" role="note"')
    assert banner < html.index("<h1>")
    assert "<strong>Example review — not a real judgment.</strong>" in html
    assert '<span class="chip-mark">Example</span>' in html
    # The catalog marks the chip of a source whose current review is an example.
    assert Source.objects.get(id=SOURCE_ID).display_review_is_example is True


def test_retired_source_and_not_current_review_notices(client, current):
    older, files = f.native_collection(reviewed_at="2024-12-01T00:00:00Z", task_count=1)
    old_review = f.publish(older, files)
    Source.objects.filter(id=SOURCE_ID).update(active=False)
    response = get_page(client, old_review)
    text = page_text(response)
    assert "This source is retired from the catalog; its saved reviews remain available." in text
    assert "This is not the source's current review." in text
    assertInHTML(
        f'<a href="/reviews/{current.id}/">Open the current review</a>', response.content.decode()
    )


def test_unknown_review_is_a_404_page(client):
    response = client.get("/reviews/" + "0" * 64 + "/")
    assert response.status_code == 404
    assert "Review not found" in page_text(response)
    assert client.get("/reviews/not-a-review/").status_code == 404


# --- sections ----------------------------------------------------------------------------------


def test_sections_appear_in_the_specified_order(client, source):
    current_revision = "e" * 40
    Source.objects.filter(id=SOURCE_ID).update(payload={**source.payload})
    collection, files = f.native_collection()
    path, body = f.attestation_file(executed_revision="a" * 40, current_revision=current_revision)
    review = f.publish(collection, {**files, path: body}, make_current=True)
    defect, defect_files = f.supplemental_collection()
    confirming = f.publish(defect, defect_files)
    f.record_issue(source_id=SOURCE_ID, confirming=confirming)
    fix, fix_files = f.native_collection(reviewed_at="2025-05-01T00:00:00Z", task_count=1)
    f.record_issue(
        source_id=SOURCE_ID,
        confirming=confirming,
        issue_url="https://github.com/marin-community/MarinSkyRL/issues/3",
        resolution=f.publish(fix, fix_files),
    )
    html = get_page(client, review).content.decode()
    titles = [
        "Confirmed verifier defects remain unresolved",
        "Resolved verifier defects (1)",
        "Reported technical issues (",
        "Execution provenance &amp; review applicability",
        "Dataset content equivalence",
        "Reviews (",
        "All saved evidence (",
        "Supplemental review collections",
        "Source review pool (",
    ]
    positions = [html.index(f"<summary>{title}") for title in titles]
    assert positions == sorted(positions)
    if 'id="difficulty"' in html:
        assert positions[4] < html.index('id="difficulty"') < positions[5]


def test_open_and_resolved_defect_panels(client, current):
    defect, files = f.supplemental_collection()
    confirming = f.publish(defect, files)
    response = get_page(client, current)
    assert "Confirmed verifier defects remain unresolved" not in page_text(response)
    assert "Resolved verifier defects" not in page_text(response)

    f.record_issue(source_id=SOURCE_ID, confirming=confirming)
    fix, fix_files = f.native_collection(reviewed_at="2025-05-01T00:00:00Z", task_count=1)
    resolution = f.publish(fix, fix_files)
    resolved_url = "https://github.com/marin-community/MarinSkyRL/issues/3"
    f.record_issue(
        source_id=SOURCE_ID, confirming=confirming, issue_url=resolved_url, resolution=resolution
    )
    response = get_page(client, current)
    html = response.content.decode()
    text = page_text(response)
    assert re.search(r'<details class="panel alert" id="open-verifier-defects" open>', html)
    assert (
        "The source is capped at Some issues while these defects remain open. Saved difficulty "
        "reports below are historical measurements and do not establish a current difficulty "
        "estimate."
    ) in text
    open_panel = html[html.index('id="open-verifier-defects"') : html.index('id="resolved-')]
    assert (
        '<a href="https://github.com/marin-community/MarinSkyRL/issues/7" rel="noopener">'
        "Open verifier issue ↗</a>"
    ) in open_panel
    assert f'<a href="/reviews/{confirming.id}/">Defect evidence</a>' in open_panel
    assert resolved_url not in open_panel
    assert '<details class="panel" id="resolved-verifier-defects">' in html
    assert "Resolved verifier defects (1)" in text
    resolved_panel = html[html.index('id="resolved-verifier-defects"') :]
    assert f'<a href="/reviews/{confirming.id}/">Confirmed by</a>' in resolved_panel
    assert f'<a href="/reviews/{resolution.id}/">Resolved by</a>' in resolved_panel
    assert "Resolved May 2, 2025" in page_text(response)


def test_reported_technical_issues(client, current):
    response = get_page(client, current)
    html = response.content.decode()
    text = page_text(response)
    assert '<details class="panel alert" id="technical-issues" open>' in html
    assert "Reported technical issues (3)" in text
    assert (
        "Reports from separate judges can describe the same defect. Open the individual reviews "
        "below for context."
    ) in text
    assert "Combined review · Synthesis model · Low · verifier_correctness" in text
    assert (
        "Independent judge · Judge model B · Medium · verifier_correctness (superseded) "
        "Judge 2 doubts the answer key of task 0."
    ) in text
    assert "Judge 2 doubts the answer key of task 1." in text
    # Supplemental verifier_defect findings join the summary.
    defect, files = f.supplemental_collection()
    f.publish(defect, files)
    text = page_text(get_page(client, current))
    assert "Reported technical issues (4)" in text
    assert "Task attempt & verifier · Defect reviewer · High · verifier_correctness" in text


def test_a_supplemental_review_can_supersede_a_main_review(client, current):
    defect, files = f.supplemental_collection(supersedes="task-0001:judge-2")
    f.publish(defect, files)
    text = page_text(get_page(client, current))
    assert (
        "Independent judge · Judge model B · Medium · verifier_correctness (superseded) "
        "Judge 2 doubts the answer key of task 1."
    ) in text
    # Each task's superseded opinion comes last among its reviews.
    html = get_page(client, current).content.decode()
    urls = task_fragment_urls(html)
    assert len(urls) == 2
    for url in urls:
        titles = card_titles(get_fragment(client, url))
        assert titles[-1] == "Independent judge · Task · Keep · Superseded opinion"
        assert all("Superseded" not in title for title in titles[:-1])


def test_only_web_urls_become_metric_rubric_links(client, source):
    collection, files = f.native_collection(task_count=0)
    scale = {"minimum": 0, "maximum": 1, "higher_means": "better"}
    collection["reviews"][-1]["metrics"] = [
        {"key": "safe", "value": 1, "scale": {**scale, "rubric_url": "https://rubric.example/"}},
        {"key": "unsafe", "value": 0, "scale": {**scale, "rubric_url": "javascript:alert(1)"}},
    ]
    html = get_page(client, f.publish(collection, files, make_current=True)).content.decode()
    assert '<a href="https://rubric.example/" rel="noopener">rubric ↗</a>' in html
    assert "javascript:" not in html


def test_no_reported_issues_is_not_red(client, source):
    collection, files = f.native_collection(task_count=0, source_findings=[])
    collection["reviews"] = [r for r in collection["reviews"] if not r["supersedes_review_id"]]
    review = f.publish(collection, files, make_current=True)
    html = get_page(client, review).content.decode()
    assert '<details class="panel" id="technical-issues" open>' in html
    assert "Reported technical issues (0)" in html


def test_provenance_and_applicability_current(client, current):
    text = page_text(get_page(client, current))
    assert f"MarinSkyRL commit {f.COMMIT}" in text
    assert "Dirty checkout No" in text
    assert "Harbor commit Not recorded" in text
    assert "VerifyIt Not recorded" in text
    assert "Collection created 2025-03-03T12:00:00Z" in text
    assert "Review applicability: Current" in text
    assert f"Reviewed data revision {'a' * 40} Current data revision {'a' * 40}" in text
    assert f"Reviewed verifier revision {'b' * 64} Current verifier revision {'b' * 64}" in text
    assert "Grading tracking legacy Grading revision Not recorded" in text


def test_applicability_unknown_and_stale(client, current):
    Source.objects.filter(id=SOURCE_ID).update(review_applicability="unknown")
    text = page_text(get_page(client, current))
    assert "Review applicability: Unknown — the reviewed data revision was not recorded." in text
    Source.objects.filter(id=SOURCE_ID).update(review_applicability="stale")
    assert "Review applicability: Stale" in page_text(get_page(client, current))


def test_applicability_of_a_review_that_is_not_current(client, current):
    older, files = f.native_collection(
        reviewed_at="2024-12-01T00:00:00Z", task_count=1, dataset_revision="9" * 40
    )
    text = page_text(get_page(client, f.publish(older, files)))
    assert "Review applicability: Not the current review" in text
    assert f"Reviewed data revision {'9' * 40} Current data revision {'a' * 40}" in text


def test_dataset_content_equivalence_section(client, source):
    collection, files = f.native_collection()
    path, body = f.attestation_file(executed_revision="a" * 40, current_revision="e" * 40)
    review = f.publish(collection, {**files, path: body}, make_current=True)
    response = get_page(client, review)
    text = page_text(response)
    assert f"Reviewed at {'a' * 40} · applied to {'e' * 40}" in text
    assert "File path data/train.parquet" in text
    assert "Component selector default/train" in text
    assert "Population 100" in text
    assert f"File SHA-256 {'d' * 64}" in text
    assert (
        "Identical data bytes and component selection at both revisions; the judgment date and "
        "executed revision are preserved."
    ) in text
    html = response.content.decode()
    assert re.search(r'<details class="panel" open>\s*<summary>Dataset content equivalence', html)
    assert f'href="/reviews/{review.id}/artifacts/{path}"' in html


# --- review cards -------------------------------------------------------------------------------


def card_titles(html: str) -> list[str]:
    return re.findall(r'<span class="card-title">([^<]+)</span>', unescape(html))


def test_card_order_titles_and_superseded_opinions(client, current):
    defect, files = f.supplemental_collection()
    f.publish(defect, files)
    html = opened_page(client, current)
    titles = card_titles(html)
    assert len(titles) == 13
    assert titles[0] == "Combined review · Source · Keep"
    assert titles.count("Independent judge · Task · Keep · Superseded opinion") == 1
    assert titles.count("Task attempt & verifier · Source · Reject") == 1
    # Newest first among non-superseded, non-source cards: task 1 (11:00) before task 0 (10:00).
    bundle = selectors.review_bundle(review_id=current.id)
    ids = [card.review["id"] for card in review_page.review_cards(bundle=bundle)]
    assert ids[:3] == ["source:synthesis", "pool:verifier_defect", "task-0000:judge-2-revised"]
    assert ids.index("task-0001:judge-1") < ids.index("task-0000:judge-1")
    assert ids.index("task-0001:judge-1") < ids.index("task-0001:judge-2")
    assert ids[-1] == "task-0000:judge-2"


def test_card_open_state_badges_and_contents(client, current):
    html = get_page(client, current).content.decode()
    cards = re.findall(
        r'<details class="review-card[^"]*" id="[^"]+"( open)?>\s*<summary>(.*?)</summary>', html
    )
    opened = [summary for is_open, summary in cards if is_open]
    assert len(opened) == 1 and "Combined review · Source · Keep" in opened[0]
    superseded = [s for is_open, s in cards if "Superseded opinion" in s]
    assert all("Superseded" not in s for s in opened)
    assert '<span class="badge badge-red">1 issue</span>' in opened[0]
    # The tasks' cards are not on the page until their line opens.
    assert not superseded and "Reviewer: Native task verifier" not in html
    opened_html = opened_page(client, current)
    cards = re.findall(
        r'<details class="review-card[^"]*" id="[^"]+"( open)?>\s*<summary>(.*?)</summary>',
        opened_html,
    )
    assert [s for is_open, s in cards if is_open] == opened
    assert any("Superseded opinion" in s for _, s in cards)
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", opened_html)))
    assert "Reviewer: Native task verifier" in text
    assert "Task task-0 · tasks/0000" in text
    assert "Technical issues (1)" in text and "Observations (1)" in text
    assert "Metrics" in text and "score 1" in text
    assert "Review details & identifiers" in text
    assert "Derived from task-0000:synthesis , task-0001:synthesis" in text
    assert "Supersedes task-0000:judge-2" in text


def test_issue_badge_counts(client, source):
    findings = [f.finding("a", "First."), f.finding("b", "Second.", severity="high")]
    collection, files = f.native_collection(task_count=0, source_findings=findings)
    review = f.publish(collection, files, make_current=True)
    assert (
        '<span class="badge badge-red">2 issues</span>' in get_page(client, review).content.decode()
    )


def test_evidence_links(client, source):
    collection, files = f.native_collection(task_count=1)
    review = f.publish(collection, files, make_current=True, omit=("tasks/0000/attempt.json",))
    html = opened_page(client, review)
    # Published evidence: a lazy viewer with the artifact page link, never the contents.
    path = "tasks/0000/execution-000/solver/turn-000/response.json"
    assert (
        f'data-artifact-url="/api/reviews/{review.id}/artifacts/{path}" data-artifact-path="{path}"'
    ) in html
    assert f'<a href="/reviews/{review.id}/artifacts/{path}">Open artifact page</a>' in html
    assert "Add the two numbers." not in html
    # An http(s) URL without an artifact links out; a file: URL shows "Not published".
    assertInHTML(
        '<a href="https://dashboard.example/run" rel="noopener">'
        "https://dashboard.example/run ↗</a>",
        html,
    )
    assertInHTML(
        '<a href="https://atlas.example/evidence/tasks/0000/attempt.json" rel="noopener">'
        "https://atlas.example/evidence/tasks/0000/attempt.json ↗</a>",
        html,
    )
    assert (
        '<code>notes/offline.txt</code> · <span class="not-published">Not published</span>' in html
    )


def test_supplemental_evidence_links_to_its_own_collection(client, current):
    defect, files = f.supplemental_collection()
    supplemental = f.publish(defect, files)
    html = opened_page(client, current)
    assert f'href="/reviews/{supplemental.id}/artifacts/defect/reproduction.jsonl"' in html
    assert f'href="/reviews/{current.id}/artifacts/defect/reproduction.jsonl"' not in html


# --- tasks: each task's reviews load when its line opens -----------------------------------------


def test_each_task_is_a_line_whose_reviews_load_when_opened(client, current):
    html = get_page(client, current).content.decode()
    bundle = selectors.review_bundle(review_id=current.id)
    groups = review_page.task_groups(bundle=bundle, cards=review_page.review_cards(bundle=bundle))
    assert [group.task_id for group in groups] == ["task-0", "task-1"]  # sample order
    urls = task_fragment_urls(html)
    assert urls == [f"/reviews/{current.id}/tasks/{group.key}/" for group in groups]
    assert "Tasks (2)" in page_text(get_page(client, current))
    line = html[html.index(f'data-fragment-url="{urls[0]}"') :]
    line = line[: line.index("</details>")]
    summary = re.sub(
        r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", line[: line.index("</summary>")]))
    )
    # What a reader needs to pick a task: its id, the native result, the verdicts, the count.
    assert "Task task-0" in summary and "Passed · score 1" in summary
    # The superseded opinion is no current verdict (its revision is).
    assert "Judges: Keep · Keep · Keep · Combined: Keep" in summary
    assert "6 reviews" in summary and "1 issue" in summary
    # Without a script the line opens to a link to the task's page.
    assert f'<a href="{urls[0]}">Open this task\'s attempt, judgments and evidence</a>' in line
    assert "review-card" not in line and "artifact-viewer" not in line
    anchors = re.search(r'data-card-anchors="([^"]+)"', line).group(1).split()
    assert anchors == [card.anchor for card in groups[0].cards]


def test_a_task_answers_as_a_fragment_or_as_a_page(client, current):
    url = task_fragment_urls(get_page(client, current).content.decode())[0]
    fragment_response = client.get(url, **FRAGMENT)
    assert fragment_response["X-Atlas-Region"] == "fragment"
    assert "X-Atlas-Region" in fragment_response["Vary"]
    fragment = fragment_response.content.decode()
    assert "<html" not in fragment and "<header" not in fragment
    titles = card_titles(fragment)
    assert len(titles) == 6 and "Combined review · Task · Keep" in titles
    assert "Reviewer: Native task verifier" in fragment
    assert 'class="artifact-viewer"' in fragment
    page_response = client.get(url)
    assert "X-Atlas-Region" not in page_response
    page = page_response.content.decode()
    assert card_titles(page) == titles
    assertInHTML("<h1>Task <code>task-0</code></h1>", page)
    key = url.rstrip("/").rsplit("/", 1)[-1]
    assertInHTML(f'<a href="/reviews/{current.id}/#task-{key}">← Back to review</a>', page)
    assert "/static/reviews/review.js" in page  # its viewers load when opened there too


def test_an_unknown_task_or_review_is_not_found(client, current):
    missing = client.get(f"/reviews/{current.id}/tasks/{'0' * 16}/")
    assert missing.status_code == 404
    assert "This task is not part of the saved review." in page_text(missing)
    assert client.get(f"/reviews/{'0' * 64}/tasks/{'0' * 16}/", **FRAGMENT).status_code == 404


def test_issue_lines_of_a_task_link_to_its_card_on_the_task_page(client, current):
    html = get_page(client, current).content.decode()
    panel = html[html.index('id="technical-issues"') : html.index('id="provenance"')]
    links = re.findall(r'<p class="issue-meta"><a href="([^"]+)"( data-task="[^"]+")?>', panel)
    bundle = selectors.review_bundle(review_id=current.id)
    cards = review_page.review_cards(bundle=bundle)
    groups = review_page.task_groups(bundle=bundle, cards=cards)
    group_of = {card.anchor: group for group in groups for card in group.cards}
    expected = [
        (
            f"{group_of[card.anchor].url}#{card.anchor}",
            f' data-task="{group_of[card.anchor].anchor}"',
        )
        if card.anchor in group_of
        else (f"#{card.anchor}", "")
        for card in cards
        for _ in card.issues
    ]
    assert links == expected
    assert any(task for _, task in links) and any(not task for _, task in links)
    # The task page holds the card each link names.
    for href, task in links:
        if task:
            url, anchor = href.split("#")
            assert f'id="{anchor}"' in client.get(url).content.decode()


def test_the_page_grows_by_a_line_per_task_not_by_its_evidence(client, source):
    sizes, viewers = {}, set()
    for tasks in (2, 12):
        collection, files = f.native_collection(task_count=tasks)
        review = f.publish(collection, files, make_current=True)
        html = get_page(client, review).content.decode()
        assert len(task_fragment_urls(html)) == tasks
        viewers.add(html.count('class="artifact-viewer"'))  # the source-level cards' only
        sizes[tasks] = len(html.encode())
    assert len(viewers) == 1
    per_task = (sizes[12] - sizes[2]) / 10
    assert per_task < 1500, per_task


def test_a_task_loads_in_a_bounded_number_of_queries(
    client, current, django_assert_max_num_queries
):
    url = task_fragment_urls(get_page(client, current).content.decode())[0]
    for index in range(3):
        defect, files = f.supplemental_collection(
            issue_url=f"https://github.com/o/r/issues/{index}"
        )
        defect["reviews"][0]["summary"] += f" ({index})"
        f.publish(defect, files)
    with django_assert_max_num_queries(5):
        get_fragment(client, url)


# --- evidence index, supplemental collections, pool -----------------------------------------


def test_all_saved_evidence(client, current):
    response = get_page(client, current)
    html = response.content.decode()
    paths = list(current.artifacts.order_by("path").values_list("path", flat=True))
    assert f"All saved evidence ({len(paths)})" in html
    # The index loads when opened; without a script its link opens it as a page.
    url = f"/reviews/{current.id}/evidence/"
    assert f'id="saved-evidence" data-fragment-url="{url}"' in html
    assert f'<a href="{url}">List the {len(paths)} saved evidence files</a>' in html
    assert "Open artifact page" not in html[html.index('id="saved-evidence"') :]
    for index in (get_fragment(client, url), client.get(url).content.decode()):
        for path in paths:
            assert (
                f'<a href="/reviews/{current.id}/artifacts/{path}">Open artifact page</a>' in index
            )
    page = client.get(url).content.decode()
    assert f"<h1>All saved evidence ({len(paths)})</h1>" in page
    assertInHTML(f'<a href="/reviews/{current.id}/">← Back to review</a>', page)
    assert client.get(f"/reviews/{'0' * 64}/evidence/").status_code == 404


def test_supplemental_collections_and_review_pool(client, current):
    old_review, supplemental, imported_review = f.publish_pool()
    response = get_page(client, current)
    html = response.content.decode()
    text = page_text(response)
    assert "Supplemental review collections" in text
    assert f'<a href="/reviews/{supplemental.id}/"><code>{supplemental.id[:12]}</code></a>' in html
    assert "Source review pool (3 other collections)" in text
    pool = html[html.index('id="review-pool"') :]
    order = [pool.index(r.id) for r in (supplemental, old_review, imported_review)]
    assert order == sorted(order)
    pool_text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", pool)))
    assert "1 review · Apr 1, 2025" in pool_text
    assert "7 reviews · Dec 1, 2024" in pool_text
    assert "1 review · Review date unknown" in pool_text


def test_pool_of_a_single_collection(client, current):
    text = page_text(get_page(client, current))
    assert "Source review pool (0 other collections)" in text
    assert "Supplemental review collections" not in text


# --- difficulty sections, scripts, queries ---------------------------------------------------


def test_difficulty_sections_are_optional(client, current, no_difficulty):
    response = get_page(client, current)
    assert 'id="difficulty"' not in response.content.decode()


def test_page_sections_build_from_what_the_page_loaded(
    client, current, monkeypatch, settings, tmp_path
):
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "sections.html").write_text(
        '<p id="probe">{{ section.review }}|{{ section.source }}|{{ section.paths }}|'
        "{{ section.bytes }}</p>"
    )
    settings.TEMPLATES = [
        {**settings.TEMPLATES[0], "DIRS": [tmp_path, *settings.TEMPLATES[0]["DIRS"]]}
    ]
    seen = []

    def build(*, bundle, contents):
        seen.append(sorted(contents))
        return {
            "review": bundle.review.id,
            "source": bundle.source.id,
            "paths": len(bundle.own_artifact_paths),
            "bytes": len(contents["quality-reviews.json"]),
        }

    monkeypatch.setattr(page_sections, "_sections", [])
    page_sections.register_page_section(
        page_sections.PageSection(
            name="probe",
            template="probe/sections.html",
            wanted=lambda paths: ["quality-reviews.json", "not-an-artifact.json"],
            build=build,
        )
    )
    html = get_page(client, current).content.decode()
    count = current.artifacts.count()
    size = len(current.artifacts.get(path="quality-reviews.json").content)
    assert f'<p id="probe">{current.id}|{SOURCE_ID}|{count}|{size}</p>' in html
    assert seen == [["quality-reviews.json"]]


def test_page_uses_only_static_scripts(client, current):
    html = get_page(client, current).content.decode()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
    assert scripts
    assert all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert "/static/reviews/review.js" in html and "/static/reviews/trace_viewers.js" in html


def test_bundle_loads_in_a_bounded_number_of_queries(current, django_assert_num_queries):
    for index in range(3):
        defect, files = f.supplemental_collection(
            issue_url=f"https://github.com/o/r/issues/{index}"
        )
        defect["reviews"][0]["summary"] += f" ({index})"
        f.publish(defect, files)
    with django_assert_num_queries(4):
        bundle = selectors.review_bundle(review_id=current.id)
    assert len(bundle.supplemental) == 3


def test_attestations_add_one_query(source, django_assert_num_queries):
    collection, files = f.native_collection()
    path, body = f.attestation_file(executed_revision="a" * 40, current_revision="e" * 40)
    review = f.publish(collection, {**files, path: body}, make_current=True)
    with django_assert_num_queries(5):
        selectors.review_bundle(review_id=review.id)


def test_page_query_count_does_not_grow_with_the_pool(
    client, current, no_difficulty, django_assert_max_num_queries
):
    for index in range(5):
        older, files = f.native_collection(
            reviewed_at=f"2024-0{index + 1}-01T00:00:00Z", task_count=1
        )
        f.publish(older, files)
    with django_assert_max_num_queries(5):
        get_page(client, current)


@pytest.mark.parametrize(
    ("query", "target"),
    [
        ("?id={id}", "/reviews/{id}/"),
        (
            "?id={id}&artifact=tasks/0001/attempt.json",
            "/reviews/{id}/artifacts/tasks/0001/attempt.json",
        ),
        ("?artifact=run.json&id={id}", "/reviews/{id}/artifacts/run.json"),
    ],
)
def test_old_reference_links_move_permanently(client, current, query, target):
    response = client.get("/review.html" + query.format(id=current.id))
    assert response.status_code == 301
    assert response["Location"] == target.format(id=current.id)


def test_an_old_link_without_an_id_is_not_found(client):
    assert client.get("/review.html").status_code == 404


def test_every_model_judgment_names_its_judge_model(client, source):
    """A reader sees which model judged, at which revision and what served it — a 135M model
    on a one-slot local server reads differently from a hosted one — on the page and in the
    API; a judgment that recorded none says so."""
    collection, files = f.native_collection(task_count=1)
    judge = {"name": "HuggingFaceTB/SmolLM2-135M-Instruct", "revision": "b" * 40,
             "endpoint_kind": "llama.cpp server (answers /props)"}  # fmt: skip
    for item in collection["reviews"]:
        if item["id"] == "task-0000:judge-1":
            item["attributes"] = {**item["attributes"], "judge_model": judge}
    review = f.publish(collection, files, make_current=True)
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", opened_page(client, review))))
    assert (
        "Judge model: HuggingFaceTB/SmolLM2-135M-Instruct · revision " + "b" * 40
        + " · served by llama.cpp server (answers /props)"
    ) in text  # fmt: skip
    assert "Judge model: Not recorded" in text  # the other judgments recorded none
    assert "Reviewer: Native task verifier" in text
    shown = text.count("Judge model: ")
    models = sum(item["reviewer"]["kind"] == "model" for item in collection["reviews"])
    assert shown == models  # beside every model judgment, never beside the native verifier's
    answer = client.get(f"/api/reviews/{review.id}/").json()
    judged = {item["id"]: item for item in answer["collection"]["reviews"]}
    assert judged["task-0000:judge-1"]["attributes"]["judge_model"] == judge
