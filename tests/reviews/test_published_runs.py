"""confirm_verifier_issue and resolve_verifier_issue take the published run directory instead of
its review id (publish_review wrote it into DIR/atlas-publication.json), so the work queue's
printed commands need no id copied by hand."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.models import VerifierIssue
from tests.reviews.factories import ISSUE_URL, confirming_collection
from tests.reviews.test_defects import SOURCE_ID, source, valid_resolution  # noqa: F401

pytestmark = pytest.mark.django_db


def published(tmp_path, name: str, review_id: str, atlas_id: str = SOURCE_ID):
    run_dir = tmp_path / name
    run_dir.mkdir()
    result = {"atlas_id": atlas_id, "review_id": review_id, "kind": "supplemental"}
    (run_dir / "atlas-publication.json").write_text(json.dumps(result), encoding="utf-8")
    return run_dir


def command(name: str, option: str, value) -> None:
    call_command(name, "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL, option, str(value))


def test_confirm_and_resolve_with_the_run_directories(source, tmp_path, capsys):  # noqa: F811
    confirming = confirming_collection(source)
    command("confirm_verifier_issue", "--review-run-dir", published(tmp_path, "d", confirming.id))
    issue = VerifierIssue.objects.get()
    assert (issue.status, issue.review_id) == ("open", confirming.id)
    fix = valid_resolution(source, issue)
    command("resolve_verifier_issue", "--resolution-run-dir", published(tmp_path, "f", fix.id))
    issue.refresh_from_db()
    assert (issue.status, issue.resolution_review_id) == ("resolved", fix.id)


def test_a_run_directory_that_names_nothing_usable_is_refused(source, tmp_path):  # noqa: F811
    unpublished = tmp_path / "unpublished"
    unpublished.mkdir()
    with pytest.raises(CommandError, match=r"has no atlas-publication\.json: publish it first"):
        command("confirm_verifier_issue", "--review-run-dir", unpublished)
    other = published(tmp_path, "other", "a" * 64, atlas_id="MarinSkyRL:other")
    with pytest.raises(CommandError, match="was published for MarinSkyRL:other, not "):
        command("confirm_verifier_issue", "--review-run-dir", other)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "atlas-publication.json").write_text("{", encoding="utf-8")
    with pytest.raises(CommandError, match="is not a publication result"):
        command("confirm_verifier_issue", "--review-run-dir", broken)
    with pytest.raises(CommandError, match="not allowed with argument"):
        call_command(
            "resolve_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
            "--resolution-review-id", "x", "--resolution-run-dir", str(other),
        )  # fmt: skip
    assert not VerifierIssue.objects.exists()
