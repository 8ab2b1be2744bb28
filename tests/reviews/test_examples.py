"""``make demo``'s examples are what the shipped tools make: publish_examples runs
make_review, reproduce_defect, validate_fix and make_difficulty against the product's scripted chat
server and the real skyrl_gym gsm8k verifier of a checkout built from the installed package, walks
the example defect Good → confirmed → resolved → Good, and labels every collection an example."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from atlas.models import Source
from atlas.rules.example_notice import EXAMPLE_NOTICE
from atlas.services.sync import sync_catalog
from difficulty.examples import AUDIT_SOURCE, EXAMPLE_ISSUE, ROWS, WRONG_TOTAL
from reviews.example_label import is_example_collection
from reviews.models import Review, VerifierIssue
from reviews.production.examples.marinskyrl import SOURCE_ID, git
from reviews.services.defects import confirm_verifier_issue
from tests.reviews.builders import (
    FindingSpec,
    build_run,
    cite_reproduction,
    database_state,
    publish,
    review_by_id,
    rewrite_collection,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
RATED = {"MarinSkyRL:math500": "some_issues", "MarinSkyRL:asdiv": "bad"}


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_make_demo_publishes_what_the_tools_make(tmp_path, packaged_catalog, capsys, client):
    # One walk (minutes of native execution) checked three ways.
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    output = tmp_path / "examples"
    call_command("publish_examples", "--output", str(output))
    results = json.loads(capsys.readouterr().out)
    check_the_walk(results)
    check_the_run_directories(output)
    check_what_a_newcomer_sees(client)
    check_the_review_pages_stay_light(client)
    check_publishing_again(output, capsys)


def commits(checkout: Path) -> list[str]:
    """The checkout's commits, oldest first: good, the separator defect, its fix."""
    return git(checkout, "rev-list", "--reverse", "HEAD").split()


def check_the_walk(results: list[dict]) -> None:
    """Every shipped command ran, in a curator's order."""
    steps = [r.get("step") or r.get("kind") or r.get("status") for r in results]
    assert steps == [
        "rating", "reproduce_defect", "supplemental", "open", "validate_fix",
        "rating", "resolved", "rating", "make_difficulty", "current", "rating", "rating",
        "import_audit", "imported", "synthesise_source", "rating",
    ]  # fmt: skip
    qualities = [(r["kind"], r["quality"]) for r in results if r.get("atlas_id") == SOURCE_ID
                 and "quality" in r]  # fmt: skip
    # Good (a failed solver is no defect) → supplemental → capped while open → Good again.
    assert qualities == [
        ("rating", "good"), ("supplemental", "good"), ("rating", "some_issues"),
        ("rating", "good"),
    ]  # fmt: skip
    printed = {r["step"]: r["printed"] for r in results if "step" in r}
    assert printed["reproduce_defect"].startswith(f"Reproduced {ROWS - 1} of {ROWS - 1} case(s)")
    assert printed["validate_fix"].startswith("Fix validated on")
    assert "small 1/3 solved; large 2/3 solved; hosted 3/3 solved" in printed["make_difficulty"]
    # The scripted judges' doubts rate the two aime-route examples Some issues and Bad.
    ratings = {r["atlas_id"]: r["quality"] for r in results if "quality" in r}
    assert ratings == {"MarinSkyRL:gsm8k": "good", **RATED, AUDIT_SOURCE: "some_issues"}
    # The imported audit entered the Task Trove source's pool (it rates nothing); the synthesis
    # of that pool did, without native runs: Some issues, an example too.
    kinds = [r["kind"] for r in results if r.get("atlas_id") == AUDIT_SOURCE and "kind" in r]
    assert kinds == ["imported", "rating"]
    audited = Source.objects.get(id=AUDIT_SOURCE)
    assert (audited.effective_quality, audited.display_review_is_example) == ("some_issues", True)
    for source_id, quality in RATED.items():
        row = Source.objects.get(id=source_id)
        assert (row.effective_quality, row.review_applicability) == (quality, "current")
        assert row.display_review_is_example
    issue = VerifierIssue.objects.get(source_id=SOURCE_ID)
    assert (issue.status, issue.issue_url) == ("resolved", EXAMPLE_ISSUE)
    source = Source.objects.get(id=SOURCE_ID)
    assert (source.effective_quality, source.difficulty_status) == ("good", "current")
    assert source.display_review_is_example and source.large_solve_rate is not None
    # Every published collection is labelled an example, down to what the curators' tools derived.
    reviews = Review.objects.filter(source_id=SOURCE_ID)
    assert reviews.count() == 3
    assert all(is_example_collection(review.collection) for review in reviews)


def check_the_run_directories(output: Path) -> None:
    """Real run directories, real native traces, real provenance."""
    _good, buggy, fixed = commits(output / "MarinSkyRL")
    for name, commit in (("gsm8k-review", buggy), ("gsm8k-fixed", fixed)):
        run = load(output / name / "run.json")
        # make_review's own identity: its implementation digests and the checkout that ran.
        assert run["implementation"] and "make_review.py" in run["implementation"]
        assert (run["marinskyrl"]["commit"], run["marinskyrl"]["dirty"]) == (commit, False)
        assert run["marinskyrl"]["checkout"] == str(output / "MarinSkyRL")
        collection = load(output / name / "quality-reviews.json")
        assert collection["execution_provenance"]["marinskyrl_commit"] == commit
        executions = sorted((output / name).glob("tasks/*/execution-*"))
        assert len(executions) == ROWS
        for execution in executions:
            events = [json.loads(line) for line in (execution / "verifier-trace.jsonl").open()]
            assert [event["event"] for event in events] == ["verify_start", "verify_end"]
            index = load(execution / "native-code-index.json")
            called = {entry["module"] for entry in index if entry["called_in_attempt"]}
            assert "skyrl_gym.envs.gsm8k.utils" in called
    # At the buggy commit the gsm8k verifier rejected every answer written with a separator,
    # the correct ones included; at the fixed commit it accepts all but the wrong one.
    for name, accepted in (("gsm8k-review", set()), ("gsm8k-fixed", {2006, 2016})):
        seen = {}
        for attempt in sorted((output / name).glob("tasks/*/attempt.json")):
            answer = next(attempt.parent.glob("execution-*/solver/turn-*/response.json"))
            text = load(answer)["choices"][0]["message"]["content"]
            total = int(text.rsplit("#### ", 1)[1].replace(",", ""))
            seen[total] = load(attempt)["verification"]["passed"]
        assert {t for t, passed in seen.items() if passed} == accepted
        assert WRONG_TOTAL + 1 in seen
    # The aime route's real verifier graded the two rated examples' answers (all correct).
    for slug in ("math500", "asdiv"):
        for attempt in sorted((output / f"{slug}-review").glob("tasks/*/attempt.json")):
            assert load(attempt)["verification"]["passed"] is True
            index = load(next(attempt.parent.glob("execution-*")) / "native-code-index.json")
            called = {entry["module"] for entry in index if entry["called_in_attempt"]}
            assert "skyrl_gym.envs.aime.utils" in called
    # The opinions came from the scripted chat server, labelled; the native reviews are not.
    collection = load(output / "gsm8k-review" / "quality-reviews.json")
    by_method: dict[str, list[str]] = {}
    for review in collection["reviews"]:
        by_method.setdefault(review["method"], []).append(review["summary"])
    assert all(s.startswith(EXAMPLE_NOTICE) for s in by_method["model_judgment"])
    assert not any(s.startswith(EXAMPLE_NOTICE) for s in by_method["runtime_execution"])
    reproduction = load(output / "gsm8k-defect" / "reproduction.json")
    assert reproduction["reproduced"] is True
    validation = load(output / "gsm8k-resolution" / "validation" / "validation.json")
    assert validation["fix_validated"] is True
    difficulty = load(output / "gsm8k-difficulty" / "difficulty.json")
    for model in difficulty["models"]:
        assert model["serving_configuration"]["engine"].startswith("Example: the bundled")
        for outcome in model["task_outcomes"]:
            execution = output / "gsm8k-difficulty" / outcome["execution_path"]
            assert (execution / "verifier-trace.jsonl").is_file()


def check_what_a_newcomer_sees(client) -> None:
    """The review page is labelled, shows the resolved defect and counts only solver attempts;
    the history shows each curator step; difficulty says its answers were scripted."""
    source = Source.objects.get(id=SOURCE_ID)
    page = client.get(f"/reviews/{source.review_id}/").content.decode()
    assert EXAMPLE_NOTICE in page and "scripted chat server" in page
    assert "Resolved verifier defects (1)" in page
    # The resolution collection holds validate_fix's replays too; they are no solver attempts.
    assert f"Quality-review solver: 2/{ROWS} solved · {ROWS} attempted · 0 unverified" in page
    history = client.get("/api/changes/", {"source": SOURCE_ID}).json()["results"]
    # The example overlay's pins are catalog changes too: the buggy commit, then the fixed one.
    assert [entry["kind"] for entry in reversed(history)] == [
        "added", "changed", "review_published", "review_published", "defect_confirmed",
        "changed", "review_published", "defect_resolved", "review_published",
        "difficulty_published",
    ]  # fmt: skip
    # Its rating shows because the row (labelled) pins the example checkout the review ran.
    assert "pinned to the demo's example checkout" in source.payload["notes"]
    assert source.payload["grading_scope"]["mode"] == "legacy"
    api = client.get(f"/api/reviews/{source.review_id}/").json()
    assert (api["source"]["review_applicability"], api["identity_differences"]) == ("current", [])
    report = source.difficulty_summary
    assert {m["size"]: m["solved"] for m in report["models"]} == {
        "small": 1, "large": 2, "hosted": 3,
    }  # fmt: skip


def check_the_review_pages_stay_light(client) -> None:
    """Every example's review page opens with what is read first (issue 34: the resolution's page
    was 653 KB): each task's reviews, each difficulty run's settings and attempts and the evidence
    index load when opened, and do load."""
    fragment = {"HTTP_X_ATLAS_REGION": "fragment"}
    measured = Source.objects.get(id=SOURCE_ID).review_id
    for review in Review.objects.all():
        html = client.get(f"/reviews/{review.id}/").content.decode()
        assert len(html.encode()) < 150 * 1024, (review.id, len(html.encode()))
        urls = re.findall(
            r'class="[^"]*lazy-section[^"]*" id="[^"]+" data-fragment-url="([^"]+)"', html
        )
        assert f"/reviews/{review.id}/evidence/" in urls
        runs = [url for url in urls if "/difficulty/runs/" in url]
        assert len(runs) == (3 if review.id == measured else 0), (review.id, runs)
        for url in urls:
            response = client.get(url, **fragment)
            assert response.status_code == 200 and response["X-Atlas-Region"] == "fragment"


def check_publishing_again(output: Path, capsys) -> None:
    """Publishing again runs nothing and writes nothing."""
    before = {path: path.stat().st_mtime_ns for path in output.rglob("*.json")}
    call_command("publish_examples", "--output", str(output))
    assert json.loads(capsys.readouterr().out) == [
        {"atlas_id": SOURCE_ID, "verifier_issue": EXAMPLE_ISSUE, "status": "resolved"}
    ]
    assert {path: path.stat().st_mtime_ns for path in output.rglob("*.json")} == before
    assert Review.objects.filter(source_id=SOURCE_ID).count() == 3


def test_a_walk_that_stopped_midway_is_refused_with_nothing_changed(tmp_path, packaged_catalog):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    row = Source.objects.get(id=SOURCE_ID).payload
    defect = build_run(
        tmp_path,
        "defect",
        source_id=SOURCE_ID,
        dataset_revision=row["dataset_revision"],
        started_at=timezone.now() - dt.timedelta(hours=1),
        source_findings=(FindingSpec("high", "Example finding."),),
        extra_attributes={"review_pool_role": "verifier_defect", "issue_url": EXAMPLE_ISSUE},
    )
    rewrite_collection(
        defect,
        lambda collection: cite_reproduction(
            defect, review_by_id(collection, "source-synthesis"), issue_url=EXAMPLE_ISSUE
        ),
    )
    confirming = publish(defect, SOURCE_ID)["review_id"]
    confirm_verifier_issue(source_id=SOURCE_ID, issue_url=EXAMPLE_ISSUE, review_id=confirming)
    before = database_state()
    with pytest.raises(CommandError, match="stopped before resolving"):
        call_command("publish_examples", "--output", str(tmp_path / "examples"))
    assert database_state() == before
    assert not (tmp_path / "examples").exists()
