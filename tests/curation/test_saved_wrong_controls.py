"""A saved answer the buggy verifier rejected becomes a saved-wrong control of validate_fix, though
it may be correct: another instance of the defect the curator did not name. reproduce_defect says
so when it finishes; validate_fix, when that control is accepted at the fixed commit, refuses with
the way on as commands — reproduce it too, add that reproduction to the open defect, validate
again with every reproduction — and following them as printed resolves the defect and brings Good
back. Naming every rejected attempt up front (``--failed-attempts``) needs none of that."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.management import call_command

from atlas.models import Source
from atlas.services.sync import sync_catalog
from reviews.models import VerifierIssue
from tests.curation.conftest import ISSUE_URL, task_folder_of
from tests.curation.test_refusals import publish, refused, reproduce, run
from tests.model_server import ModelServer
from tests.production.conftest import SOURCE_ID
from tests.production.helpers import load, make_review
from tests.production.review_model import ReviewModel

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    # Both answers correct, both written with a separator: both rejected at the buggy commit.
    with ModelServer(default=ReviewModel(separators=True)) as server:
        yield server


def confirmed_and_fixed(buggy_run, defect_checkout, separator_config, client, tmp_path, *claim):
    """Publish the buggy review, reproduce ``claim``, publish and confirm it; then review again
    at the fixed commit. Returns (reproduction, its printed lines, the row file, the review)."""
    publish(buggy_run)
    reproduction = tmp_path / "reproduction"
    printed = run("reproduce_defect", *reproduce(buggy_run, reproduction, *claim))
    publish(reproduction)
    run("confirm_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
        "--review-run-dir", str(reproduction))  # fmt: skip
    row = tmp_path / "row.json"
    row.write_text(json.dumps(client.get(f"/api/sources/{SOURCE_ID}/").json()), encoding="utf-8")
    defect_checkout.at(defect_checkout.fixed)
    fixed = tmp_path / "review-fixed"
    make_review(
        "--config", str(separator_config), "--n", "2", "--seed", "7", "--output", str(fixed)
    )  # fmt: skip
    return reproduction, printed, row, fixed


def commands_in(hint: str) -> list[list[str]]:
    """The ``python manage.py …`` commands a refusal's advice names, as words."""
    return [
        shlex.split(found) for found in re.findall(r"python manage\.py [^;(]+?(?=;| \(|$)", hint)
    ]


def test_an_accepted_saved_wrong_control_is_added_to_the_defect_as_the_refusal_says(
    buggy_run, defect_checkout, separator_config, packaged_catalog, client, tmp_path, repin
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    suspect = task_folder_of(buggy_run, 2006)
    other = task_folder_of(buggy_run, 2011)
    other_execution = load(buggy_run / other / "attempt.json")["execution_path"]
    reproduction, printed, row, fixed = confirmed_and_fixed(
        buggy_run, defect_checkout, separator_config, client, tmp_path, "--attempt", suspect
    )
    # reproduce_defect named the other rejected attempt and what to do about it.
    assert f"Note: 1 other attempt(s) of the run were rejected too: {other_execution} " in printed
    assert "'#### 2,011'" in printed
    saved = load(reproduction / "reproduction.json")["saved_rejected_answers"]
    assert [entry["answer"]["text"] for entry in saved] == [
        "Adding the numbers gives 2,011.\n#### 2,011"
    ]

    def validate(output, *extra: str) -> list[str]:
        return [
            "--review", str(fixed), "--atlas-row", str(row), "--output", str(output), *extra,
        ]  # fmt: skip

    message = refused("validate_fix", "--confirming", str(reproduction), *validate(tmp_path / "x"))
    assert "(saved-wrong control) was accepted (score 1), not rejected" in message
    assert message.endswith(
        "If it is wrong after all, leave saved answers out (--skip-control saved_wrong)"
    )
    # The advice, as printed: reproduce at the reviewed commit (RUN and NEW filled in), publish,
    # confirm_verifier_issue adds it to the open defect.
    steps = commands_in(message)
    assert [words[2] for words in steps] == [
        "reproduce_defect", "publish_review", "confirm_verifier_issue",
    ]  # fmt: skip
    added = tmp_path / "reproduction-2"
    filled = {"RUN": str(buggy_run), "NEW": str(added)}
    defect_checkout.at(defect_checkout.buggy)
    for words in steps:
        out = StringIO()
        call_command(*[filled.get(word, word) for word in words[2:]], stdout=out, stderr=out)
    issue = VerifierIssue.objects.get(issue_url=ISSUE_URL)
    assert issue.status == "open" and len(issue.reproduction_review_ids()) == 2
    api = client.get(f"/api/verifier-issues/{issue.id}/").json()
    assert api["reproduction_review_ids"] == issue.reproduction_review_ids()
    history = client.get("/api/changes/", {"source": SOURCE_ID}).json()["results"]
    assert history[0]["note"].startswith("Another reproduction added to the open defect")

    # Validated with every reproduction: the other answer is now a failing input, not a control.
    defect_checkout.at(defect_checkout.fixed)
    repin(defect_checkout.fixed)
    resolution = tmp_path / "resolution"
    printed = run(
        "validate_fix", "--confirming", str(reproduction), "--confirming", str(added),
        *validate(resolution),
    )  # fmt: skip
    assert printed.startswith("Fix validated on")
    validation = load(resolution / "validation" / "validation.json")
    roles = {(c["role"], c["answer"]["text"][-10:]) for c in validation["cases"]}
    assert {("failing_input", "#### 2,006"), ("failing_input", "#### 2,011")} <= roles
    assert validation["reproduction_review_ids"] == issue.reproduction_review_ids()
    publish(resolution)
    run("resolve_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
        "--resolution-run-dir", str(resolution))  # fmt: skip
    assert publish(resolution)["quality"] == "good"
    assert Source.objects.get(id=SOURCE_ID).effective_quality == "good"


def test_every_rejected_attempt_claimed_up_front_validates_without_a_skipped_control(
    buggy_run, defect_checkout, separator_config, packaged_catalog, client, tmp_path
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    reproduction, printed, row, fixed = confirmed_and_fixed(
        buggy_run, defect_checkout, separator_config, client, tmp_path, "--failed-attempts"
    )
    assert printed.startswith("Reproduced 2 of 2 case(s)") and "Note:" not in printed
    report = load(reproduction / "reproduction.json")
    assert report["saved_rejected_answers"] == []
    printed = run(
        "validate_fix", "--confirming", str(reproduction), "--review", str(fixed),
        "--atlas-row", str(row), "--output", str(tmp_path / "fix"),
    )  # fmt: skip
    assert printed.startswith("Fix validated on")
    # Leaving every rejected attempt out leaves nothing to reproduce.
    everything = [
        word for folder in ("tasks/0000", "tasks/0001") for word in ("--except-attempt", folder)
    ]
    assert refused(
        "reproduce_defect", *reproduce(buggy_run, tmp_path / "none", "--failed-attempts",
                                       *everything)
    ) == (
        "No attempt is left to reproduce: the run's verifier rejected no finished attempt, or "
        "--except-attempt left out every one"
    )  # fmt: skip
