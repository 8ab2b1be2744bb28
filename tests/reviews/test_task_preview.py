"""The source page shows what a task of the source looks like: the sampled tasks of its current
review (prompt excerpt, native outcome, the judges' verdicts, links to the attempt and review),
from published evidence only, in a fixed number of queries."""

from __future__ import annotations

import json

import pytest

from atlas.models import Source
from reviews.pages import task_preview
from reviews.pages.native_outcome import outcome_of
from reviews.pages.review_page import card_anchor
from tests.reviews import factories as f

pytestmark = pytest.mark.django_db
SOURCE = "MarinSkyRL:example"
LONG = "Count the apples. " * 40


def inputs(prompts: dict[int, object]) -> dict[str, str]:
    """The saved ``input.json`` of each listed task, as the launcher writes it."""
    return {
        f"tasks/{index:04d}/execution-000/input.json": json.dumps(
            {"task": {"id": f"task-{index}", "prompt": prompt}, "model": {}, "config": {}}
        )
        for index, prompt in prompts.items()
    }


@pytest.fixture
def reviewed():
    f.make_source(SOURCE)
    collection, files = f.native_collection(task_count=3)
    files.update(
        inputs(
            {
                0: [
                    {"role": "system", "content": "Solve the task."},
                    {"role": "user", "content": "Task 0: what is 40 + 2?"},
                ],
                1: LONG,
            }
        )
    )
    return f.publish(collection, files, make_current=True)


def test_the_source_page_shows_the_sampled_tasks(client, reviewed):
    html = client.get(f"/sources/{SOURCE}/").content.decode()
    section = html[html.index('id="sampled-tasks"') :]
    section = section[: section.index("</section>")]
    assert "What a task looks like · sampled tasks" in section
    assert "3 tasks sampled by the" in section and "(population: 100)" in section
    # The user's words, not the system prompt.
    assert "Task 0: what is 40 + 2?" in section and "Solve the task." not in section
    # A long prompt is an excerpt, cut at a word, and says so.
    assert LONG[:200] in section and LONG.strip() not in section
    assert "Excerpt; the full prompt is in the attempt." in section
    # A task whose input was not published says so instead of guessing.
    assert "The task&#x27;s input was not published with this review." in section  # escaped
    assert section.count("Passed · score 1.0") == 3
    assert section.count('class="verdict"') == 9  # three independent judges per task
    assert "row 0" in section and "row 2" in section
    attempt = f"/reviews/{reviewed.id}/artifacts/tasks/0000/attempt.json"
    assert f'href="{attempt}"' not in section  # attempt.json is not cited by the runtime review
    response = f"/reviews/{reviewed.id}/artifacts/tasks/0000/execution-000/verifier-trace.jsonl"
    assert f'href="{response}">Open the attempt</a>' in section
    synthesis = next(
        item["id"]
        for item in reviewed.collection["reviews"]
        if item["subject_id"] == "subject:task-0000" and item["method"] == "synthesis"
    )
    anchor = card_anchor(collection_id=reviewed.id, review_item_id=synthesis)
    assert f'href="/reviews/{reviewed.id}/#{anchor}">Read this task\'s review</a>' in section


def test_the_section_reads_in_three_queries(reviewed, django_assert_num_queries):
    source = Source.objects.get(id=SOURCE)
    with django_assert_num_queries(3):
        context = task_preview.sampled_tasks(source=source)
    assert [task.task_id for task in context["tasks"]] == ["task-0", "task-1", "task-2"]
    assert [task.combined for task in context["tasks"]] == ["Keep", "Keep", "Keep"]


def test_an_unknown_population_stays_unknown_and_unreviewed_sources_show_nothing(client):
    f.make_source(SOURCE)
    assert "sampled-tasks" not in client.get(f"/sources/{SOURCE}/").content.decode()
    collection, files = f.native_collection(task_count=1)
    for review in collection["reviews"]:
        if review["coverage"]["scope"] == "source_sample":
            review["coverage"]["population_count"] = None
    f.publish(collection, files, make_current=True)
    html = client.get(f"/sources/{SOURCE}/").content.decode()
    assert "(population: Unknown)" in html


def test_large_inputs_are_not_read(reviewed, monkeypatch):
    monkeypatch.setattr(task_preview, "MAX_INPUT_BYTES", 10)
    tasks = task_preview.sampled_tasks(source=Source.objects.get(id=SOURCE))["tasks"]
    assert tasks[0].prompt is None
    assert tasks[0].prompt_note == (
        "The task's saved input is too large to preview; open the attempt."
    )


@pytest.mark.parametrize(
    ("prompt", "text"),
    [
        ("  plain  ", "plain"),
        ([{"role": "user", "content": [{"type": "text", "text": "parts"}]}], "parts"),
        ([{"role": "assistant", "content": "no"}, {"role": "user", "content": "yes"}], "yes"),
        ([{"role": "system", "content": "only a system turn"}], None),
        ({"not": "a prompt"}, None),
    ],
)
def test_prompt_text(prompt, text):
    assert task_preview.prompt_text(prompt) == text


@pytest.mark.parametrize(
    ("verification", "words", "state"),
    [
        ({"status": "verified", "passed": True, "score": 1.0}, "Passed · score 1.0", "passed"),
        ({"status": "verified", "passed": False, "score": 0}, "Failed · score 0", "failed"),
        ({"status": "error", "reason": "timeout"}, "Verifier error · timeout", "unverified"),
        ({"status": "unavailable"}, "Unavailable", "unverified"),
        (None, "Not verified", "unverified"),
    ],
)
def test_native_outcome_in_words(verification, words, state):
    review = {"attributes": {"verification": verification}}
    assert outcome_of(review) == (words, state)
    assert outcome_of(None) == ("No native attempt recorded", "unverified")
