"""The example review runs: complete, schema-valid, labelled as examples, and publishable."""

import hashlib
import json

import pytest
from django.core.management import call_command

from atlas.models import Source
from atlas.services.sync import sync_catalog
from reviews.collection_checks import shipped_validator
from reviews.example_defect import DEFECT_EXAMPLE_ISSUE, DEFECT_EXAMPLE_SOURCE
from reviews.examples import EXAMPLE_NOTICE, EXAMPLE_PROFILES, write_examples
from reviews.models import VerifierIssue

EXPECTED = {
    "MarinSkyRL:gsm8k": "good",
    "MarinSkyRL:math500": "some_issues",
    "MarinSkyRL:asdiv": "bad",
}


def test_examples_are_for_real_sources_at_their_current_revisions(tmp_path, packaged_rows):
    by_id = {row["id"]: row for row in packaged_rows}
    written = dict(write_examples(output=tmp_path, rows=packaged_rows))
    assert set(written) == {profile.source_id for profile in EXAMPLE_PROFILES} == set(EXPECTED)
    for source_id, run_dir in written.items():
        collection = json.loads((run_dir / "quality-reviews.json").read_text())
        assert shipped_validator().first_error(collection) is None
        source_subject = next(s for s in collection["subjects"] if s["level"] == "source")
        assert source_subject["source_id"] == source_id
        assert source_subject["dataset_revision"] == by_id[source_id]["dataset_revision"]
        methods = [review["method"] for review in collection["reviews"]]
        assert methods.count("model_judgment") == 3 * methods.count("runtime_execution")
        for review in collection["reviews"]:
            assert "example" in review["reviewer"]["label"].lower()
            assert review["summary"].startswith(EXAMPLE_NOTICE)
            for evidence in review["evidence"]:
                data = (run_dir / evidence["snapshot_path"]).read_bytes()
                assert hashlib.sha256(data).hexdigest() == evidence["sha256"]
        assert (run_dir / "tasks/0000/execution-000/solver/turn-000/request.json").is_file()
        assert (run_dir / "tasks/0000/execution-000/solver/turn-000/response.json").is_file()
        manifest = json.loads((run_dir / "artifact-manifest.json").read_text())
        assert {entry["path"] for entry in manifest["files"]} >= {
            "quality-reviews.json",
            "run.json",
        }


def test_examples_are_reproducible(tmp_path, packaged_rows):
    first = dict(write_examples(output=tmp_path / "a", rows=packaged_rows))
    second = dict(write_examples(output=tmp_path / "b", rows=packaged_rows))
    for source_id, run_dir in first.items():
        assert (run_dir / "quality-reviews.json").read_bytes() == (
            second[source_id] / "quality-reviews.json"
        ).read_bytes()


@pytest.mark.django_db
def test_publish_examples_rates_good_some_issues_and_bad(tmp_path, packaged_catalog, capsys):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    call_command("publish_examples", "--output", str(tmp_path / "examples"))
    results = json.loads(capsys.readouterr().out)
    walk = [r for r in results if r["atlas_id"] == DEFECT_EXAMPLE_SOURCE]
    results = [r for r in results if r["atlas_id"] != DEFECT_EXAMPLE_SOURCE]
    reviews = [r for r in results if "quality" in r]
    assert {r["atlas_id"]: r["quality"] for r in reviews} == EXPECTED
    for source_id, quality in EXPECTED.items():
        row = Source.objects.get(id=source_id)
        assert (row.effective_quality, row.review_applicability) == (quality, "current")
    # Only the Good example gets an (example) difficulty report, which feeds the Large column.
    difficulty = [r for r in results if "quality" not in r]
    good = [source_id for source_id, quality in EXPECTED.items() if quality == "good"]
    assert [(r["atlas_id"], r["status"]) for r in difficulty] == [(good[0], "current")]
    measured = Source.objects.get(id=good[0])
    assert measured.difficulty_status == "current" and measured.large_solve_rate is not None
    # The defect walk: Good, a confirmed defect (capped), resolved by a validated fix, Good again.
    assert [r.get("quality", r.get("status")) for r in walk] == [
        "good", "good", "some_issues", "resolved", "good",
    ]  # fmt: skip
    assert [r.get("kind") for r in walk[:3]] == ["rating", "supplemental", "rating"]
    issue = VerifierIssue.objects.get(source_id=DEFECT_EXAMPLE_SOURCE)
    assert (issue.status, issue.issue_url) == ("resolved", DEFECT_EXAMPLE_ISSUE)
    walked = Source.objects.get(id=DEFECT_EXAMPLE_SOURCE)
    assert walked.effective_quality == "good" and walked.display_review_is_example
    # Publishing again is idempotent.
    call_command("publish_examples", "--output", str(tmp_path / "examples"))
    again = json.loads(capsys.readouterr().out)
    assert [r for r in again if r["atlas_id"] != DEFECT_EXAMPLE_SOURCE] == results
    assert [r for r in again if r["atlas_id"] == DEFECT_EXAMPLE_SOURCE] == [
        {"atlas_id": DEFECT_EXAMPLE_SOURCE, "verifier_issue": DEFECT_EXAMPLE_ISSUE,
         "status": "resolved"}
    ]  # fmt: skip
    assert VerifierIssue.objects.count() == 1


def test_make_example_reviews_command(tmp_path, capsys):
    call_command("make_example_reviews", "--output", str(tmp_path))
    listed = json.loads(capsys.readouterr().out)
    assert {item["atlas_id"] for item in listed} == set(EXPECTED)
