"""make_review --reuse: task reviews that still apply are cited
instead of re-judged; only evidence gaps get fresh attempts and judges, and the run says why."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from atlas.services.sync import sync_catalog
from reviews.models import ReviewArtifact
from reviews.production.make_review.reuse import REVIEW_URL
from tests.production.conftest import SOURCE_ID, commit_all
from tests.production.helpers import load, make_review, review_fails
from tests.production.review_model import request_kind


def kinds(model_server) -> list[str]:
    return sorted(request_kind(request) for request in model_server.chat_requests())


@pytest.fixture
def earlier(tmp_path, write_config, model_server):
    """A finished review of two of the source's three tasks."""
    config = write_config(rows=3)
    output = tmp_path / "earlier"
    make_review("--config", str(config), "--n", "2", "--seed", "7", "--output", str(output))
    model_server.requests.clear()
    return config, output


def tasks_of(run) -> dict[str, str]:
    return {task["task_id"]: task["decision"] for task in load(run / "reuse.json")["tasks"]}


@pytest.mark.slow
@pytest.mark.django_db
def test_reviews_that_still_apply_are_cited_not_rejudged(
    earlier, tmp_path, model_server, packaged_catalog, capsys
):
    config, first = earlier
    output = tmp_path / "later"
    make_review(
        "--config", str(config), "--n", "3", "--output", str(output), "--reuse", str(first)
    )  # fmt: skip
    old = load(first / "quality-reviews.json")
    reused_ids = {s["task_id"] for s in old["subjects"] if s["level"] == "task"}
    decisions = tasks_of(output)
    assert {task for task, decision in decisions.items() if decision == "reused"} == reused_ids
    assert len(decisions) == 3 and list(decisions.values()).count("fresh") == 1
    fresh = load(output / "reuse.json")["tasks"]
    assert [t["reason"] for t in fresh if t["decision"] == "fresh"] == [
        "not reviewed in the reused collections"
    ]
    # Only the gap was attempted and judged: one solver call, three judges, one coalescer.
    assert kinds(model_server) == ["coalescer", "judge", "judge", "judge", "solver"]
    collection = load(output / "quality-reviews.json")
    cited = [r for r in collection["reviews"] if "reused_from" in r["attributes"]]
    assert len(cited) == 2 * 4  # runtime + three judges per reused task
    by_origin = {r["attributes"]["reused_from"]["review_id"]: r for r in cited}
    for original in old["reviews"]:
        if original["method"] in ("runtime_execution", "model_judgment"):
            copy = by_origin[original["id"]]
            # The judgment is the earlier one: same words, same actual judgment time.
            assert (copy["summary"], copy["reviewed_at"]) == (
                original["summary"],
                original["reviewed_at"],
            )
            for item in copy["evidence"]:
                assert item["snapshot_path"].startswith("reused/")
                assert (output / item["snapshot_path"]).is_file()
    source_synthesis = collection["reviews"][-1]
    assert "reuse.json" in [item["snapshot_path"] for item in source_synthesis["evidence"]]
    assert set(source_synthesis["derived_from_review_ids"]) >= {r["id"] for r in cited}
    # The Atlas accepts the run as it is.
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    call_command("publish_review", "--run-dir", str(output), "--atlas-id", SOURCE_ID)
    published = json.loads(capsys.readouterr().out)
    assert published["quality"] == "good"
    # The reused executions are archived whole: their native inputs and solver turns, which
    # reproduce_defect re-runs from a fetched copy of this review.
    archived = set(
        ReviewArtifact.objects.filter(review_id=published["review_id"]).values_list(
            "path", flat=True
        )
    )
    for review in cited:
        execution = review["attributes"].get("execution_path")
        if execution:
            assert {f"{execution}/input.json", f"{execution}/solver/turn-000/response.json"} <= (
                archived
            )
    # A resume decides the same and makes no call.
    model_server.requests.clear()
    make_review(
        "--config", str(config), "--n", "3", "--output", str(output), "--reuse", str(first),
        "--resume",
    )  # fmt: skip
    assert model_server.chat_requests() == []


@pytest.mark.slow
def test_named_disagreements_and_changed_verifiers_are_judged_afresh(
    earlier, tmp_path, model_server, checkout
):
    config, first = earlier
    old = load(first / "quality-reviews.json")
    named = sorted(s["task_id"] for s in old["subjects"] if s["level"] == "task")[0]
    rejudged = tmp_path / "rejudged"
    make_review(
        "--config", str(config), "--n", "2", "--seed", "7", "--output", str(rejudged),
        "--reuse", str(first), "--rejudge", named,
    )  # fmt: skip
    reasons = {t["task_id"]: t["reason"] for t in load(rejudged / "reuse.json")["tasks"]}
    assert reasons[named] == "named by the curator for a fresh judgment"
    assert kinds(model_server).count("solver") == 1
    assert review_fails(
        "--config", str(config), "--n", "2", "--output", str(tmp_path / "x"),
        "--reuse", str(first), "--rejudge", "no-such-task",
    ) == "--rejudge names tasks outside the sample: no-such-task"  # fmt: skip

    # The verifier changed since: nothing applies any more.
    utils = checkout / "skyrl-gym" / "skyrl_gym" / "envs" / "gsm8k" / "utils.py"
    utils.write_text(utils.read_text(encoding="utf-8") + "\n# reviewed again\n", encoding="utf-8")
    commit_all(checkout, "gsm8k: a comment")
    changed = tmp_path / "changed"
    make_review(
        "--config", str(config), "--n", "2", "--seed", "7", "--output", str(changed),
        "--reuse", str(first),
    )  # fmt: skip
    decisions = load(changed / "reuse.json")["tasks"]
    assert {t["decision"] for t in decisions} == {"fresh"}
    assert all(t["reason"].startswith("the verifier changed since") for t in decisions)
    assert review_fails(
        "--config", str(config), "--n", "2", "--output", str(tmp_path / "y"),
        "--reuse", str(tmp_path / "missing"),
    ).startswith("--reuse takes a review run directory or a published review's URL")  # fmt: skip


def test_review_urls_name_an_atlas_and_a_review():
    review_id = "a" * 64
    for url in (
        f"https://atlas.example/reviews/{review_id}/",
        f"https://atlas.example/api/reviews/{review_id}/",
    ):
        match = REVIEW_URL.match(url)
        assert match and (match["atlas"], match["id"]) == ("https://atlas.example", review_id)
    assert REVIEW_URL.match("https://atlas.example/reviews/not-an-id/") is None
