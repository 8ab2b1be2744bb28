"""A verifier-defect walk through the publication and defect services, with the run builders:
Good → difficulty → defect confirmed → fix published (capped) → resolved → Good again."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from difficulty.publication import publish_difficulty_run
from reviews.models import VerifierIssue
from reviews.services.defects import confirm_verifier_issue, resolve_verifier_issue
from tests.conftest import make_row
from tests.difficulty.example_reports import write_example_difficulty
from tests.reviews.builders import (
    DATA_REVISION,
    SOURCE_ID,
    VERIFIER_REVISION,
    build_run,
    cite_fix_validation,
    cite_reproduction,
    publish,
    rewrite_collection,
    sync_rows,
)
from tests.reviews.factories import finding

ISSUE_URL = "https://github.com/marin-community/MarinSkyRL/issues/4242"
DEFECT_FINDING = "Rejects 1,234."


def source_synthesis(collection: dict) -> dict:
    return next(r for r in collection["reviews"] if r["id"] == "source-synthesis")


def defect_run(root: Path) -> Path:
    run_dir = build_run(root, "defect", started_at=timezone.now() - dt.timedelta(hours=3))

    def mark(collection: dict) -> None:
        synthesis = source_synthesis(collection)
        synthesis["attributes"].update(
            {"review_pool_role": "verifier_defect", "issue_url": ISSUE_URL}
        )
        synthesis["findings"] = [finding("defect-1", DEFECT_FINDING, severity="high")]
        cite_reproduction(run_dir, synthesis, issue_url=ISSUE_URL)

    rewrite_collection(run_dir, mark)
    return run_dir


def fix_run(root: Path) -> Path:
    run_dir = build_run(root, "fix", started_at=timezone.now() - dt.timedelta(hours=1))

    def resolve(collection: dict) -> None:
        synthesis = source_synthesis(collection)
        synthesis["attributes"]["resolved_verifier_issues"] = [
            {
                "issue_url": ISSUE_URL,
                "dataset_revision": DATA_REVISION,
                "verifier_revision": VERIFIER_REVISION,
                "fix_validated": True,
            }
        ]
        cite_fix_validation(run_dir, collection, synthesis, issue_url=ISSUE_URL)

    rewrite_collection(run_dir, resolve)
    return run_dir


@pytest.fixture
def walked(write_catalog, tmp_path):
    """Good → difficulty → defect confirmed → fix published (capped) → resolved → Good again."""
    sync_rows(
        write_catalog,
        make_row(SOURCE_ID, dataset_revision=DATA_REVISION, verifier_revision=VERIFIER_REVISION),
    )
    curator = User.objects.create_user("alice", password="history-pass-1", is_staff=True)
    good = build_run(tmp_path, "good", started_at=timezone.now() - dt.timedelta(days=1))
    first = publish(good, user=curator)
    publish(good)  # identical: nothing new happened
    measured = tmp_path / "difficulty"
    measured.mkdir()
    write_example_difficulty(run_dir=measured, atlas_id=SOURCE_ID, source_revision=DATA_REVISION)
    publish_difficulty_run(run_dir=measured, atlas_id=SOURCE_ID, user=curator)
    publish_difficulty_run(run_dir=measured, atlas_id=SOURCE_ID)  # identical again
    defect = publish(defect_run(tmp_path), user=curator)
    issue = confirm_verifier_issue(
        source_id=SOURCE_ID, issue_url=ISSUE_URL, review_id=defect["review_id"], user=curator
    )
    VerifierIssue.objects.filter(pk=issue.pk).update(
        created_at=timezone.now() - dt.timedelta(hours=2)
    )
    fix_dir = fix_run(tmp_path)
    fix = publish(fix_dir, user=curator)
    resolve_verifier_issue(issue_id=issue.pk, resolution_review_id=fix["review_id"], user=curator)
    publish(fix_dir, user=curator)  # uncapped now: Good returns
    return {"good": first["review_id"], "defect": defect["review_id"], "fix": fix["review_id"]}
