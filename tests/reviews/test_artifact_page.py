"""The artifact page."""

from __future__ import annotations

import pytest
from pytest_django.asserts import assertInHTML

from tests.reviews import factories as f

pytestmark = pytest.mark.django_db

RESPONSE = "tasks/0000/execution-000/solver/turn-000/response.json"


@pytest.fixture
def review():
    f.make_source("MarinSkyRL:example")
    collection, files = f.native_collection(task_count=1)
    files["notes with space/big.log"] = "x" * (2 * 1024 * 1024 + 10)
    return f.publish(collection, files, make_current=True)


def test_artifact_page_header_and_contents(client, review):
    artifact = review.artifacts.get(path=RESPONSE)
    response = client.get(f"/reviews/{review.id}/artifacts/{RESPONSE}")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>response.json</title>" in html
    assertInHTML("<h1>response.json</h1>", html)
    assertInHTML(
        f'<p class="review-meta">MarinSkyRL:example · <code>{RESPONSE}</code> · SHA-256 '
        f"<code>{artifact.sha256}</code></p>",
        html,
    )
    assertInHTML(f'<a href="/reviews/{review.id}/">← Back to review</a>', html)
    assertInHTML(
        f'<a class="button" href="/api/reviews/{review.id}/artifacts/{RESPONSE}" '
        'download="response.json">Download original artifact</a>',
        html,
    )
    assert "<h2>Evidence contents</h2>" in html
    # Rendered server-side by the chat-completion viewer.
    assert '<p class="tv-finish tv-alert">Finish reason: length</p>' in html
    assert "<summary>Thinking</summary>" in html
    assert "No final text returned" in html
    assert "<script" not in html


def test_paths_with_spaces_and_large_files(client, review):
    response = client.get(f"/reviews/{review.id}/artifacts/notes%20with%20space/big.log")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>big.log</title>" in html
    assert "Showing the first 2 MiB; download the original artifact for the rest." in html
    assert 'href="/api/reviews/' + review.id + '/artifacts/notes%20with%20space/big.log"' in html


def test_jsonl_and_plain_text_artifacts(client, review):
    html = client.get(
        f"/reviews/{review.id}/artifacts/tasks/0000/execution-000/verifier-trace.jsonl"
    ).content.decode()
    assert "<summary>Event 1 · verifier_start</summary>" in html
    text = client.get(
        f"/reviews/{review.id}/artifacts/tasks/0000/execution-000/verifier.stdout"
    ).content.decode()
    assert '<pre class="tv-text">score=1.0 task=0\n</pre>' in text


def test_missing_artifact_and_unknown_review(client, review):
    response = client.get(f"/reviews/{review.id}/artifacts/tasks/9999/attempt.json")
    assert response.status_code == 404
    assert "This artifact is not part of the saved review." in response.content.decode()
    assertInHTML(f'<a href="/reviews/{review.id}/">← Back to review</a>', response.content.decode())
    unknown = client.get("/reviews/" + "f" * 64 + "/artifacts/run.json")
    assert unknown.status_code == 404
    assert "Review not found" in unknown.content.decode()


def test_artifact_of_another_collection_is_not_part_of_this_review(client, review):
    defect, files = f.supplemental_collection()
    supplemental = f.publish(defect, files)
    assert (
        client.get(f"/reviews/{supplemental.id}/artifacts/defect/reproduction.jsonl").status_code
        == 200
    )
    assert (
        client.get(f"/reviews/{review.id}/artifacts/defect/reproduction.jsonl").status_code == 404
    )


def test_artifact_page_queries(client, review, django_assert_num_queries):
    with django_assert_num_queries(2):
        client.get(f"/reviews/{review.id}/artifacts/run.json")
