"""A task you can look at, in the system Chromium at 1440×900 and 390×844: the
source page shows the sampled tasks of its current review — prompt excerpt, native outcome, the
judges' verdicts — links to each attempt and review, and to the pinned dataset's viewer."""

from __future__ import annotations

import json

import pytest

from tests.browser import catalog_fixtures
from tests.browser.catalog_fixtures import no_blocking_violations
from tests.reviews import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
sized = catalog_fixtures.sized
SOURCE = "MarinSkyRL:example"


@pytest.fixture
def reviewed(live_server):
    f.make_source(SOURCE)
    collection, files = f.native_collection(task_count=2)
    for index in range(2):
        prompt = [
            {"role": "user", "content": f"Task {index}: what is 40 + 2? " + "Show work. " * 50}
        ]
        files[f"tasks/{index:04d}/execution-000/input.json"] = json.dumps(
            {"task": {"id": f"task-{index}", "prompt": prompt}, "model": {}, "config": {}}
        )
    return f.publish(collection, files, make_current=True)


def test_the_source_page_shows_tasks_you_can_open(live_server, sized, reviewed):
    page = sized
    page.goto(f"{live_server.url}/sources/{SOURCE}/")
    section = page.locator("#sampled-tasks")
    tasks = section.locator(".sampled-task")
    assert tasks.count() == 2
    first = tasks.first
    assert first.locator("h3").inner_text() == "Task task-0 · row 0"
    prompt = first.locator(".task-prompt")
    assert prompt.is_visible() and prompt.inner_text().startswith("Task 0: what is 40 + 2?")
    assert prompt.inner_text().endswith("…")
    assert first.locator(".outcome-passed").inner_text() == "Passed · score 1.0"
    assert first.locator(".verdict").all_inner_texts() == ["Keep", "Keep", "Keep"]
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    no_blocking_violations(page)
    viewer = page.get_by_role("link", name="Browse its rows in the dataset viewer ↗")
    assert viewer.get_attribute("href") == "https://huggingface.co/datasets/example/example/viewer"
    # The attempt opens on its artifact page; the review link lands on the task's card.
    first.get_by_role("link", name="Open the attempt").click()
    page.wait_for_url(f"**/reviews/{reviewed.id}/artifacts/tasks/0000/**")
    assert page.locator("h1").inner_text() == "verifier-trace.jsonl"
    page.go_back()
    first.get_by_role("link", name="Read this task's review").click()
    page.wait_for_url(f"**/reviews/{reviewed.id}/#review-*")
    card = page.locator(page.url[page.url.index("#") :])
    # The review page opens the card the link points at.
    page.wait_for_function("id => document.getElementById(id).open", arg=card.get_attribute("id"))
    assert card.locator(":scope > summary").inner_text().startswith("Combined review · Task · Keep")
