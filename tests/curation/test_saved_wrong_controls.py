"""A saved answer the buggy verifier rejected becomes a saved-wrong control of validate_fix, though
it may be correct: another instance of the defect the curator did not name. Accepted at the fixed
commit, it refuses the fix with a hint that says so and names both ways on; left out
(``--skip-control saved_wrong``), the fix validates."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from atlas.services.sync import sync_catalog
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


def test_an_accepted_saved_wrong_control_names_the_ways_on(
    buggy_run, defect_checkout, separator_config, packaged_catalog, client, tmp_path
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    publish(buggy_run)
    reproduction = tmp_path / "reproduction"
    run(
        "reproduce_defect",
        *reproduce(buggy_run, reproduction, "--attempt", task_folder_of(buggy_run, 2006)),
    )
    saved = load(reproduction / "reproduction.json")["saved_rejected_answers"]
    assert [entry["answer"]["text"] for entry in saved] == [
        "Adding the numbers gives 2,011.\n#### 2,011"
    ]
    confirming = publish(reproduction)["review_id"]
    run(
        "confirm_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
        "--review-id", confirming,
    )  # fmt: skip
    row = tmp_path / "row.json"
    row.write_text(json.dumps(client.get(f"/api/sources/{SOURCE_ID}/").json()), encoding="utf-8")
    defect_checkout.at(defect_checkout.fixed)
    fixed = tmp_path / "review-fixed"
    make_review(
        "--config", str(separator_config), "--n", "2", "--seed", "7", "--output", str(fixed)
    )  # fmt: skip

    def validate(output, *extra: str) -> list[str]:
        return [
            "--confirming", str(reproduction), "--review", str(fixed), "--atlas-row", str(row),
            "--output", str(output), *extra,
        ]  # fmt: skip

    refusal = tmp_path / "refused"
    message = refused("validate_fix", *validate(refusal))
    assert "(saved-wrong control) was accepted (score 1), not rejected" in message
    assert message.endswith(
        "A saved-wrong control is an answer the reviewed verifier rejected: if it is correct, it "
        "is another instance of the defect — reproduce it too (reproduce_defect --attempt) and "
        "confirm with that collection, or leave saved answers out (--skip-control saved_wrong)"
    )
    assert not refusal.exists()
    printed = run("validate_fix", *validate(tmp_path / "fix", "--skip-control", "saved_wrong"))
    assert printed.startswith("Fix validated on")
