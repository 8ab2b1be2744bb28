"""A verifier defect carried to its end with shipped commands only: make_review at the
buggy commit → reproduce_defect → publish → confirm (Good → Some issues, difficulty withheld) →
validate_fix at the fixed commit → publish → resolve → publish again: Good returns. Every piece of
evidence comes from the real gsm8k environment run by the real worker; no JSON is written by hand.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from atlas.models import Source
from atlas.services.sync import sync_catalog
from reviews.models import Review, VerifierIssue
from reviews.pages.work_queue import need_queryset
from tests.curation.conftest import ISSUE_URL, WRONG_TOTAL, task_folder_of
from tests.production.conftest import SOURCE_ID
from tests.production.helpers import load, make_review

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def publish(run_dir: Path) -> dict:
    return json.loads(run("publish_review", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID))


def row(client) -> dict:
    return client.get(f"/api/sources/{SOURCE_ID}/").json()


def test_defect_reproduced_confirmed_validated_and_resolved(
    buggy_run, defect_checkout, separator_config, packaged_catalog, client, tmp_path, repin
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    # 1. The review at the buggy commit: the solver's answers are correct but written with a
    # thousands separator, so the verifier scores them 0 — a failed solver is no defect: Good.
    first = publish(buggy_run)
    assert first["quality"] == "good"
    suspect = task_folder_of(buggy_run, 2006)
    assert load(buggy_run / suspect / "attempt.json")["verification"]["passed"] is False

    # 2. Reproduce: the saved answer and the curator's own answer, replayed through the worker.
    reproduction = tmp_path / "reproduction"
    printed = run(
        "reproduce_defect", "--run-dir", str(buggy_run), "--attempt", suspect,
        "--kind", "verifier", "--issue-url", ISSUE_URL, "--expect", "accepted",
        "--saved-answer", "--answer", "The total is 2,006.\n#### 2,006",
        "--statement", "gsm8k rejects correct answers written with a thousands separator.",
        "--curator", "alice", "--output", str(reproduction),
    )  # fmt: skip
    assert printed.startswith("Reproduced 2 of 2 case(s)")
    report = load(reproduction / "reproduction.json")
    assert report["reproduced"] is True
    assert [case["observed"] for case in report["cases"]] == ["rejected", "rejected"]
    assert report["cases"][0]["answer"]["text"].endswith("#### 2,006")
    # The solver's wrong answer of the other task is kept as a saved wrong answer (a control).
    assert [entry["answer"]["text"] for entry in report["saved_rejected_answers"]] == [
        f"Adding the numbers gives {WRONG_TOTAL + 1:,}.\n#### {WRONG_TOTAL + 1:,}"
    ]
    for case in report["cases"]:
        execution = reproduction / case["execution_path"]
        replay = load(execution / "replay.json")
        assert replay["model_called"] is False and replay["answers_served"] == 1
        events = [json.loads(line) for line in (execution / "verifier-trace.jsonl").open()]
        assert [event["event"] for event in events] == ["verify_start", "verify_end"]
        index = load(execution / "native-code-index.json")
        called = {entry["module"] for entry in index if entry["called_in_attempt"]}
        assert "skyrl_gym.envs.gsm8k.utils" in called
        # The checkout that ran is the buggy commit the review executed.
        assert load(execution / "input.json")["config"]["marinskyrl_checkout"] == str(
            defect_checkout.path
        )
    collection = load(reproduction / "quality-reviews.json")
    assert collection["execution_provenance"]["marinskyrl_commit"] == defect_checkout.buggy
    # Written beside the output and renamed into it: the evidence URLs name where it ended up.
    urls = [item["url"] for review in collection["reviews"] for item in review["evidence"]]
    assert urls and all(url.startswith(reproduction.as_uri() + "/") for url in urls)

    # 3. Publish the supplemental collection unchanged; the rating does not move.
    supplemental = publish(reproduction)
    assert (supplemental["kind"], supplemental["quality"]) == ("supplemental", "good")
    page = client.get(f"/reviews/{supplemental['review_id']}/").content.decode()
    assert "Human review · alice" in page
    assert "gsm8k rejects correct answers written with a thousands separator." in page

    # 4. Confirm in the admin's "Confirm verifier defect" form (the command is used in
    # test_refusals): Good → Some issues, difficulty withheld.
    curator = User.objects.create_superuser("alice", password="pw-alice-curator-1")
    client.force_login(curator)
    confirmed = client.post(
        "/admin/reviews/verifierissue/add/",
        {
            "source": SOURCE_ID,
            "issue_url": ISSUE_URL,
            "confirming_review": supplemental["review_id"],
        },
    )
    assert confirmed.status_code == 302
    issue = VerifierIssue.objects.get(issue_url=ISSUE_URL)
    assert (issue.status, issue.review_id) == ("open", supplemental["review_id"])
    assert (row(client)["quality"], row(client)["difficulty"]) == ("some_issues", None)
    catalog = client.get("/", {"q": "gsm8k"}).content.decode()
    assert "Withheld · verifier issues" in catalog
    assert need_queryset("resolve_defect").filter(id=SOURCE_ID).exists()

    # 5. The fix lands at the next commit; a fresh review runs there, then validate_fix.
    defect_checkout.at(defect_checkout.fixed)
    repin(defect_checkout.fixed)
    fixed_review = tmp_path / "review-fixed"
    make_review(
        "--config", str(separator_config), "--n", "2", "--seed", "7",
        "--output", str(fixed_review),
    )  # fmt: skip
    atlas_row = tmp_path / "atlas-row.json"
    atlas_row.write_text(json.dumps(row(client)), encoding="utf-8")
    printed = run(
        "validate_fix", "--confirming", str(reproduction), "--review", str(fixed_review),
        "--atlas-row", str(atlas_row), "--curator", "alice", "--output", str(tmp_path / "fix"),
    )  # fmt: skip
    assert printed.startswith("Fix validated on 7 case(s)")
    fix = tmp_path / "fix"
    validation = load(fix / "validation" / "validation.json")
    assert validation["fix_validated"] is True
    roles = [(c["role"], c["answer"]["source"], c["observed"]) for c in validation["cases"]]
    # Each failing input now passes; controls are unique per task and answer.
    assert roles == [
        ("failing_input", "saved", "accepted"),
        ("failing_input", "curator", "accepted"),
        ("control", "control:off_by_one", "rejected"),
        ("control", "control:empty", "rejected"),
        ("control", "control:unformatted", "rejected"),
        ("control", "control:off_by_one", "rejected"),
        ("control", "control:saved_wrong", "rejected"),
    ]
    resolution_collection = load(fix / "quality-reviews.json")
    entries = [
        entry
        for review in resolution_collection["reviews"]
        for entry in review["attributes"].get("resolved_verifier_issues", [])
    ]
    assert entries and entries[0]["fix_validated"] is True
    provenance = resolution_collection["execution_provenance"]
    assert provenance["marinskyrl_commit"] == defect_checkout.fixed

    # 6. Publish (capped while the defect is open), resolve, publish again: Good returns.
    capped = publish(fix)
    assert (capped["quality"], capped["capped_by_verifier_issues"]) == ("some_issues", True)
    # The admin's resolve page offers it as an eligible resolution; the command resolves.
    offered = client.get(f"/admin/reviews/verifierissue/{issue.id}/resolve/").content.decode()
    assert f'value="{capped["review_id"]}"' in offered
    resolved = json.loads(
        run(
            "resolve_verifier_issue",
            "--atlas-id",
            SOURCE_ID,
            "--issue-url",
            ISSUE_URL,
            "--resolution-review-id",
            capped["review_id"],
        )
    )
    assert resolved["status"] == "resolved"
    assert row(client)["quality"] == "some_issues"  # resolution alone never restores Good
    again = publish(fix)
    assert (again["quality"], again["capped_by_verifier_issues"]) == ("good", False)
    source = Source.objects.get(id=SOURCE_ID)
    assert (source.effective_quality, source.review_id) == ("good", capped["review_id"])
    issue_row = VerifierIssue.objects.get(issue_url=ISSUE_URL)
    assert issue_row.resolution_review_id == capped["review_id"]
    assert not need_queryset("resolve_defect").filter(id=SOURCE_ID).exists()
    assert Review.objects.filter(source_id=SOURCE_ID).count() == 3
    # The catalog history shows each curator step.
    history = client.get("/api/changes/", {"source": SOURCE_ID}).json()["results"]
    steps = [entry["kind"] for entry in reversed(history) if entry["kind"] != "added"]
    assert steps[:2] == ["review_published", "review_published"]
    assert steps.index("defect_confirmed") < steps.index("defect_resolved")
    assert steps[-1] == "review_published"
