"""The review and artifact pages in the system Chromium."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from reviews import page_sections
from tests.browser import review_fixtures
from tests.browser.review_fixtures import SCREENSHOTS
from tests.waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

review_browser = review_fixtures.review_browser
review_tab = review_fixtures.review_tab
published_review = review_fixtures.published_review

RESPONSE = "tasks/0000/execution-000/solver/turn-000/response.json"


def artifact_requests(page) -> list[str]:
    requests: list[str] = []
    page.on(
        "request",
        lambda request: requests.append(request.url) if "/artifacts/" in request.url else None,
    )
    return requests


def fragment_requests(page) -> list[str]:
    requests: list[str] = []
    page.on(
        "request",
        lambda request: (
            requests.append(request.url)
            if request.headers.get("x-atlas-region") == "fragment"
            else None
        ),
    )
    return requests


def saved_evidence_viewer(page, path: str):
    panel = page.locator("details#saved-evidence")
    if panel.get_attribute("open") is None:
        panel.locator(":scope > summary").click()
    viewer = panel.locator(f'details.artifact-viewer[data-artifact-path="{path}"]')
    viewer.wait_for()  # the index loads when the panel opens
    return viewer


def test_sections_render_and_viewers_load_only_when_opened(
    live_server, review_tab, published_review
):
    page = review_tab
    requests = artifact_requests(page)
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    assert page.title() == "example/example · Quality and difficulty"
    assert page.locator("h1").inner_text() == "example/example"  # the source's name
    assert "MarinSkyRL:example" in page.locator(".review-source-id").inner_text()
    assert page.locator("details#open-verifier-defects").get_attribute("open") is not None
    assert page.locator("details#technical-issues").get_attribute("open") is not None
    assert page.locator("details#provenance").get_attribute("open") is None
    source_card = page.locator("details.review-card").first
    assert source_card.get_attribute("open") is not None
    # Tasks are lines whose reviews are not on the page yet.
    assert page.locator("details.task-group").count() == 2
    assert page.locator("details.review-card.superseded").count() == 0
    assert requests == []

    viewer = saved_evidence_viewer(page, RESPONSE)
    viewer.locator(":scope > summary").click()
    viewer.locator(".trace-viewer").wait_for()
    assert "Finish reason: length" in viewer.inner_text()
    assert len(requests) == 1 and requests[0].endswith(f"/artifacts/{RESPONSE}")
    # Closing and reopening reuses what was loaded.
    viewer.locator(":scope > summary").click()
    viewer.locator(":scope > summary").click()
    assert len(requests) == 1
    assert page.script_errors == []


def test_loading_text_then_failure_message(live_server, review_tab, published_review):
    page = review_tab
    held = []
    page.route("**/api/reviews/**/artifacts/run.json", lambda route: held.append(route))
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    viewer = saved_evidence_viewer(page, "run.json")
    viewer.locator(":scope > summary").click()
    viewer.get_by_text("Loading saved evidence…").wait_for()

    def held_here() -> bool:
        page.wait_for_timeout(20)  # Playwright dispatches the route to this side meanwhile
        return bool(held)

    wait_until(held_here, what="the artifact request held")
    assert len(held) == 1
    held[0].fulfill(status=503, body="")
    viewer.get_by_text("Could not load this artifact (503).").wait_for()
    assert viewer.get_by_text("Loading saved evidence…").count() == 0


def test_missing_artifacts_are_stated(live_server, review_tab, published_review):
    page = review_tab
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    card = page.locator("details.review-card").first
    card.locator("details.findings", has_text="Evidence (3)").locator(":scope > summary").click()
    assert card.get_by_text("Not published").is_visible()
    page.goto(f"{live_server.url}/reviews/{published_review.id}/artifacts/tasks/9999/none.json")
    assert page.get_by_text("This artifact is not part of the saved review.").is_visible()


def test_download_review_json(live_server, review_tab, published_review):
    page = review_tab
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download review JSON").click()
    assert download.value.suggested_filename == f"{published_review.id}.json"
    data = Path(download.value.path()).read_bytes()
    assert hashlib.sha256(data).hexdigest() == published_review.id


def test_artifact_page_download_and_server_rendering(live_server, review_tab, published_review):
    page = review_tab
    page.goto(f"{live_server.url}/reviews/{published_review.id}/artifacts/{RESPONSE}")
    assert page.title() == "response.json"
    assert page.get_by_text("Finish reason: length").is_visible()
    with page.expect_download() as download:
        page.get_by_role("link", name="Download original artifact").click()
    assert download.value.suggested_filename == "response.json"
    stored = published_review.artifacts.get(path=RESPONSE).content
    assert Path(download.value.path()).read_text(encoding="utf-8") == stored
    page.get_by_role("link", name="← Back to review").click()
    page.wait_for_url(re.compile(rf"/reviews/{published_review.id}/$"))


@pytest.mark.parametrize(
    "path",
    [
        RESPONSE,
        "tasks/0000/execution-000/solver/turn-000/request.json",
        "tasks/0000/execution-000/verifier-trace.jsonl",
        "tasks/0000/execution-000/verifier.stdout",
        "quality-reviews.json",
    ],
)
def test_lazy_viewer_matches_the_artifact_page(live_server, review_tab, published_review, path):
    page = review_tab
    page.goto(f"{live_server.url}/reviews/{published_review.id}/artifacts/{path}")
    server = page.locator(".evidence-contents .trace-viewer").evaluate("node => node.outerHTML")
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    viewer = saved_evidence_viewer(page, path)
    viewer.locator(":scope > summary").click()
    lazy = viewer.locator(".trace-viewer")
    lazy.wait_for()
    assert lazy.evaluate("node => node.outerHTML") == server


@pytest.fixture
def closed_difficulty_probe(monkeypatch, settings, tmp_path):
    """A closed section with id "difficulty" standing in for the difficulty work's template, so
    the fragment handling of review.js is tested on its own."""
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "sections.html").write_text(
        '<details class="panel" id="difficulty"><summary>Difficulty probe</summary>'
        "<p>Probe contents</p></details>"
    )
    templates = settings.TEMPLATES[0]
    settings.TEMPLATES = [{**templates, "DIRS": [tmp_path, *templates["DIRS"]]}]
    monkeypatch.setattr(page_sections, "_sections", [])
    page_sections.register_page_section(
        page_sections.PageSection(
            name="probe",
            template="probe/sections.html",
            wanted=lambda paths: [],
            build=lambda *, bundle, contents: {},
        )
    )


def test_difficulty_fragment_opens_and_scrolls(
    live_server, review_tab, published_review, closed_difficulty_probe
):
    page = review_tab
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    section = page.locator("details#difficulty")
    assert section.get_attribute("open") is None
    page.goto("about:blank")  # a fresh load with the fragment, not a same-document jump
    page.goto(f"{live_server.url}/reviews/{published_review.id}/#difficulty")
    page.wait_for_function("document.getElementById('difficulty').open")
    assert page.get_by_text("Probe contents").is_visible()
    top = section.evaluate("node => node.getBoundingClientRect().top")
    assert abs(top) < 100
    # A fragment change on the open page also reveals a review card of a task not loaded yet.
    group = page.locator("details.task-group").nth(1)
    anchor = group.get_attribute("data-card-anchors").split()[-1]
    page.evaluate(f"window.location.hash = '{anchor}'")
    page.wait_for_function("id => document.getElementById(id)?.open === true", arg=anchor)
    assert group.get_attribute("open") is not None
    assert page.script_errors == []


def test_a_task_loads_its_reviews_once_when_opened_by_keyboard(
    live_server, review_tab, published_review
):
    page = review_tab
    fragments = fragment_requests(page)
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    group = page.locator("details.task-group").first
    summary = group.locator(":scope > summary")
    summary.focus()
    page.keyboard.press("Enter")
    group.locator("details.review-card").first.wait_for()
    assert group.get_attribute("aria-busy") is None
    assert len(fragments) == 1 and "/tasks/" in fragments[0]
    cards = group.locator("details.review-card")
    assert cards.count() == 6
    assert group.get_by_text("Reviewer: Native task verifier").count() == 1
    # Its evidence viewers load when opened, like every other.
    viewer = group.locator("details.artifact-viewer").first
    card = viewer.locator("xpath=ancestor::details[contains(@class, 'review-card')][1]")
    card.evaluate("card => { card.open = true; }")
    card.locator("details.findings").evaluate_all("all => all.forEach(d => { d.open = true; })")
    viewer.locator(":scope > summary").click()
    viewer.locator(".trace-viewer, .tv-text").first.wait_for()
    # Closing and opening again reuses what was loaded.
    summary.click()
    summary.click()
    assert len(fragments) == 1
    assert page.script_errors == []


def test_a_task_that_cannot_load_says_so_and_keeps_its_link(
    live_server, review_tab, published_review
):
    page = review_tab
    page.route("**/tasks/**", lambda route: route.fulfill(status=503, body=""))
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    group = page.locator("details.task-group").first
    group.locator(":scope > summary").click()
    group.get_by_text("Could not load this section (503).").wait_for()
    assert (
        group.get_by_role("link", name="Open this task's attempt, judgments and evidence").count()
        == 1
    )
    page.unroute("**/tasks/**")
    group.locator(":scope > summary").click()  # closed
    group.locator(":scope > summary").click()  # a later opening tries again
    group.locator("details.review-card").first.wait_for()


def test_an_issue_of_a_task_opens_its_card_in_place(live_server, review_tab, published_review):
    page = review_tab
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    link = page.locator("#technical-issues a[data-task]").first
    href = link.get_attribute("href")
    anchor = href.split("#", 1)[1]
    link.click()
    page.wait_for_function("id => document.getElementById(id)?.open === true", arg=anchor)
    assert page.url.endswith(f"/reviews/{published_review.id}/#{anchor}")
    assert page.evaluate(
        f"document.activeElement === document.querySelector('#{anchor} > summary')"
    )
    assert page.script_errors == []


def test_without_scripts_a_task_opens_as_its_own_page(
    live_server, review_browser, published_review
):
    context = review_browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/reviews/{published_review.id}/")
        group = page.locator("details.task-group").first
        group.locator(":scope > summary").click()
        group.get_by_role("link", name="Open this task's attempt, judgments and evidence").click()
        page.wait_for_url(re.compile(r"/tasks/[0-9a-f]{16}/$"))
        assert page.locator("h1").inner_text() == "Task task-0"
        assert page.locator("details.review-card").count() == 6
        evidence = page.locator("details#saved-evidence")
        assert evidence.count() == 0
        page.go_back()
        page.locator("details#saved-evidence > summary").click()
        page.get_by_role("link", name=re.compile(r"List the \d+ saved evidence files")).click()
        page.wait_for_url(re.compile(r"/evidence/$"))
        viewer = page.locator("details.artifact-viewer").first
        viewer.locator(":scope > summary").click()
        viewer.get_by_role("link", name="Open artifact page").click()
        page.wait_for_url(re.compile(r"/artifacts/"))
    finally:
        context.close()


def test_screenshots(live_server, review_tab, published_review):
    SCREENSHOTS.mkdir(exist_ok=True)
    page = review_tab
    page.goto(f"{live_server.url}/reviews/{published_review.id}/")
    viewer = saved_evidence_viewer(page, RESPONSE)
    viewer.locator(":scope > summary").click()
    viewer.locator(".trace-viewer").wait_for()
    page.screenshot(path=str(SCREENSHOTS / "review-page.png"), full_page=True)
    page.goto(f"{live_server.url}/reviews/{published_review.id}/artifacts/{RESPONSE}")
    page.screenshot(path=str(SCREENSHOTS / "artifact-page.png"), full_page=True)
    assert page.script_errors == []
