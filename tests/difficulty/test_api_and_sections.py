from __future__ import annotations

import datetime as dt
import re

import pytest
from django.template.loader import render_to_string

from atlas.models import Source
from atlas.services.display import display_states, snapshot_of
from difficulty.compact_chart import render_compact_chart
from difficulty.eligibility import OPEN_DEFECT_NOTE, SUPERSEDED_NOTE
from difficulty.publication import publish_difficulty_run
from difficulty.selectors import report_summary
from reviews.models import Review, VerifierIssue
from reviews.pages.review_page import review_page
from tests.difficulty.conftest import ATLAS_ID, add_artifact, make_source
from tests.difficulty.example_reports import (
    HISTORY_EXAMPLE,
    INVALID_EXAMPLE,
    invalid_example_report,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(good_source, run_dir):
    _, review = good_source
    publish_difficulty_run(run_dir=run_dir, atlas_id=ATLAS_ID)
    return Source.objects.get(id=ATLAS_ID), review


def url(review_id: str, path: str | None = None) -> str:
    base = f"/api/reviews/{review_id}/difficulty/"
    return base if path is None else f"{base}?path={path}"


def test_api_returns_the_current_summary(client, published):
    _, review = published
    body = client.get(url(review.id)).json()
    assert body["status"] == "current"
    assert body["protocol"]["id"] == "atlas-difficulty-v2-65k16k"
    assert [m["size"] for m in body["models"]][:3] == ["small", "large", "hosted"]


def test_api_archived_and_invalid_reports(client, published):
    _, review = published
    historical = client.get(url(review.id, HISTORY_EXAMPLE)).json()
    assert historical["status"] == "historical"
    assert historical["models"][0]["model"] == "Qwen/Qwen3.5-9B"
    assert client.get(url(review.id, INVALID_EXAMPLE)).json()["status"] == "historical"


def test_api_applies_the_display_context(client, published):
    source, review = published
    VerifierIssue.objects.create(
        source=source, issue_url="https://github.com/example/issues/2", review=review,
        created_at=dt.datetime(2026, 1, 3, tzinfo=dt.UTC),
        updated_at=dt.datetime(2026, 1, 3, tzinfo=dt.UTC),
    )  # fmt: skip
    body = client.get(url(review.id)).json()
    assert (body["status"], body["status_note"]) == ("historical", OPEN_DEFECT_NOTE)
    assert {m["measurement_status"] for m in body["models"]} == {"historical"}


def test_api_superseded_review_is_historical(client, published):
    _, review = published
    Source.objects.filter(id=ATLAS_ID).update(review_id="f" * 64)
    body = client.get(url(review.id)).json()
    assert (body["status"], body["status_note"]) == ("historical", SUPERSEDED_NOTE)


def test_api_errors(client, published):
    _, review = published
    assert client.get(url("0" * 64)).status_code == 404
    missing = client.get(url(review.id, "difficulty/none.json"))
    assert (missing.status_code, missing.json()) == (404, {"detail": "Difficulty report not found"})
    not_report = client.get(url(review.id, "difficulty/context.json"))
    assert (not_report.status_code, not_report.json()) == (
        400,
        {"detail": "Artifact is not a model comparison report"},
    )


def test_compact_chart_links_to_the_difficulty_section(published):
    source, review = published
    html = render_compact_chart(
        summary=source.difficulty_summary or _summary(review),
        review_id=review.id,
        display_name="example/x",
    )
    assert f'href="/reviews/{review.id}/#difficulty"' in html
    # The accessible name carries the scores: the bars' tooltips are not read by screen readers.
    assert 'aria-label="Difficulty attempts and verifier results for example/x: Qwen 30B ' in html
    assert ">Qwen 122B<" in html and ">67% · 2/3<" in html  # solved/verified beside the bar
    assert "open the review for attempts and verifier results" in html
    assert "bar-large" in html and "width: 66.67%" in html


def _summary(review):
    return report_summary(review_id=review.id)


def render_sections(review: Review, source: Source | None = None) -> str:
    """The difficulty sections as the review page builds them (one load, then no queries)."""
    page = review_page(review_id=review.id)
    built = [section for section in page.sections if section.name == "difficulty"]
    if not built:
        return ""
    return render_to_string(built[0].template, {"section": built[0].context})


FRAGMENT = {"HTTP_X_ATLAS_REGION": "fragment"}


def render_run(client, review: Review, number: int) -> str:
    """What a run of the section loads when it opens (its settings and attempts)."""
    response = client.get(f"/reviews/{review.id}/difficulty/runs/{number}/", **FRAGMENT)
    assert (response.status_code, response["X-Atlas-Region"]) == (200, "fragment")
    return response.content.decode()


def summaries(*sources: Source) -> dict:
    states = display_states(snapshots=[snapshot_of(source) for source in sources])
    return {source_id: state["difficulty_summary"] for source_id, state in states.items()}


def test_review_sections_render_in_order_with_lazy_placeholders(client, published):
    source, review = published
    html = render_sections(review, source)
    baseline = html.index("Reviewer solve baseline &amp; historical evidence")
    section = html.index('id="difficulty"')
    history = html.index("Earlier difficulty reports (1)")
    assert baseline < section < history
    assert re.search(r'<details id="difficulty"[^>]* open>', html)
    assert "Difficulty · model solve rates and saved attempts" in html
    assert "3 shared tasks · seeded random · split train" in html
    assert (
        "Protocol atlas-difficulty-v2-65k16k · 65,536 context / 49,152 input / 16,384 output "
        "tokens (output includes reasoning)"
    ) in html
    assert "Quality-review solver: 2/3 solved · 3 attempted · 0 unverified" in html
    # Each run shows its bar and counts; its settings and attempts load when it opens.
    runs = re.findall(r'<details class="difficulty-run [^"]*lazy-section" id="([^"]+)" '
                      r'data-fragment-url="([^"]+)"><summary>([^<]+)</summary>', html)  # fmt: skip
    assert [(anchor, title.split(" · ")[0]) for anchor, _, title in runs] == [
        ("difficulty-run-1", "Small"),
        ("difficulty-run-2", "Large"),
        ("difficulty-run-3", "Hosted"),
    ]
    assert [url for _, url, _ in runs] == [
        f"/reviews/{review.id}/difficulty/runs/{number}/" for number in (1, 2, 3)
    ]
    assert "3 attempts · 3 usable verifier results" in html
    assert "Loading saved attempts…" not in html and "difficulty/small/run.json" not in html
    small = render_run(client, review, 1)
    assert "Loading recorded run settings…" in small and "Loading saved attempts…" in small
    run_json = f"/reviews/{review.id}/artifacts/difficulty/small/run.json"
    assert f'data-artifact-url="/api{run_json}"' in small
    assert f'href="{run_json}"' in small
    assert "Actual model attempts and verifier outputs (3)" in small
    assert small.index("Task task-2 ·") < small.index("Task task-10 ·")
    assert "Output budget exhausted" in small
    assert "<html" not in small and "Qwen3.5-122B" not in small
    assert "Hosted comparison · Complete" in html
    assert "does not isolate the effect of reasoning effort" in html
    assert "2025-06-01 · atlas-difficulty-qwen35-9b · Historical" in html
    assert "difficulty/difficulty.js" in html and "<script>" not in html


def test_missing_artifacts_are_stated(client, good_source, report):
    _, review = good_source
    add_artifact(review=review, path="difficulty.json", document=report)
    add_artifact(
        review=review,
        path="difficulty/small/attempts/task-1/solver/turn-000/request.json",
        document={},
    )
    add_artifact(
        review=review,
        path="difficulty/small/attempts/task-1/solver/turn-001/request.json",
        document={},
    )
    html = render_run(client, review, 1) + render_run(client, review, 2)
    # Turn folders count from 000; people read the first one as Turn 1.
    assert "<h6>Turn 1</h6>" in html and "<h6>Turn 2</h6>" in html
    assert "<h6>Turn 0</h6>" not in html
    assert "Saved run settings and traces have not been published for this measurement." in html
    assert "The model response trace is not published for this attempt." in html
    assert "The model request is not published for this attempt." in html
    assert (
        "The raw verifier log is not published; the recorded verifier result appears above."
    ) in html
    assert (
        "difficulty/large/attempts/task-1 is referenced by the report but was not published."
    ) in html


def test_open_defect_makes_the_section_historical(published):
    source, review = published
    VerifierIssue.objects.create(
        source=source, issue_url="https://github.com/example/issues/3", review=review,
        created_at=dt.datetime(2026, 1, 3, tzinfo=dt.UTC),
        updated_at=dt.datetime(2026, 1, 3, tzinfo=dt.UTC),
    )  # fmt: skip
    html = render_sections(review, Source.objects.get(id=ATLAS_ID))
    assert "Historical difficulty · model solve rates and saved attempts" in html
    assert OPEN_DEFECT_NOTE in html
    assert "Historical · Small" not in html and "Historical · Qwen3-Coder-30B-A3B-Instruct" in html


def test_review_page_includes_the_difficulty_sections(client, published, django_assert_num_queries):
    _, review = published
    # The whole page, difficulty sections included: the sections read what the page loaded.
    with django_assert_num_queries(5):
        response = client.get(f"/reviews/{review.id}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="difficulty"' in html and "Earlier difficulty reports (1)" in html
    assert "<script>" not in html


def test_difficulty_summaries_apply_the_catalog_gate(published):
    source, _ = published
    other, _ = make_source(source_id="MarinSkyRL:other-example")
    found = summaries(source, other)
    assert found[source.id]["status"] == "current"
    assert found[other.id] is None  # no difficulty.json on its review
    Source.objects.filter(id=ATLAS_ID).update(difficulty="")
    assert summaries(Source.objects.get(id=ATLAS_ID))[ATLAS_ID] is None
    Source.objects.filter(id=ATLAS_ID).update(difficulty="x", quality="bad")
    assert summaries(Source.objects.get(id=ATLAS_ID))[ATLAS_ID] is None
    Source.objects.filter(id=ATLAS_ID).update(quality="good", active=False)
    assert summaries(Source.objects.get(id=ATLAS_ID))[ATLAS_ID] is None


def test_invalid_report_section_title_chip_and_run_prefix(good_source):
    source, review = good_source
    add_artifact(
        review=review,
        path="difficulty.json",
        document=invalid_example_report(atlas_id=ATLAS_ID, source_revision=None),
    )
    html = render_sections(review, Source.objects.get(id=source.id))
    assert "Invalid protocol difficulty · model solve rates and saved attempts" in html
    assert "The recorded context or output limits do not match the current protocol." in html
    assert ">Protocol mismatch<" in html
    assert "Protocol mismatch · Qwen3-Coder-30B-A3B-Instruct · 1/3 solved" in html


def test_bar_tooltip_and_counts_line_print_the_same_interval(good_source, report):
    """0.0125 is 1.25 %: half-up gives 1.3. The tooltip and the counts line once disagreed
    (1.3–50.0 % against 1.2–50.0 %) because each formatted the interval its own way."""
    _, review = good_source
    for model in report["models"]:
        model["wilson_95"] = [0.0125, 0.5]
    add_artifact(review=review, path="difficulty.json", document=report)
    html = render_sections(review)
    tooltips = re.findall(r"95% interval ([0-9.]+–[0-9.]+)%", html)
    assert tooltips and set(tooltips) == {"1.3–50.0"}
    assert "95% interval 1.2" not in html


def test_a_run_loads_in_two_queries_and_is_a_page_without_scripts(
    client, published, django_assert_num_queries
):
    _, review = published
    with django_assert_num_queries(2):  # the report with its source, the artifact paths
        fragment = render_run(client, review, 3)
    assert "<dd><pre>zai-org/GLM-5.3</pre></dd>" in fragment  # the hosted run's settings
    page = client.get(f"/reviews/{review.id}/difficulty/runs/3/")
    html = page.content.decode()
    assert page.status_code == 200 and "X-Atlas-Region" not in page
    assert "<title>Hosted · GLM-5.3 · 3/3 solved · " in html
    assert f'href="/reviews/{review.id}/#difficulty">← Back to review' in html
    assert "Actual model attempts and verifier outputs (3)" in html
    assert "difficulty/difficulty.js" in html and "<script>" not in html


@pytest.mark.parametrize("number", [0, 4])
def test_a_run_the_report_does_not_have_is_not_found(client, published, number):
    _, review = published
    response = client.get(f"/reviews/{review.id}/difficulty/runs/{number}/", **FRAGMENT)
    assert response.status_code == 404 and "X-Atlas-Region" not in response
    assert "Difficulty run not found" in response.content.decode()


def test_a_review_without_a_report_has_no_runs(client, good_source):
    _, review = good_source
    response = client.get(f"/reviews/{review.id}/difficulty/runs/1/")
    assert response.status_code == 404
    assert f'href="/reviews/{review.id}/"' in response.content.decode()
