"""The work queue's commands for an open defect and for imported audits work as printed: with the
source's config written at the path the entry names, running the printed lines in one folder
resolves the defect and brings Good back, or synthesises and publishes the imported audit — the
real gsm8k verifier, the test model server and the Atlas served over HTTP (``--atlas``)."""

from __future__ import annotations

import json
import shlex
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from atlas.models import Source
from reviews.models import VerifierIssue
from reviews.pages.work_queue import work_queue
from tests.conftest import make_row
from tests.curation.conftest import ISSUE_URL, task_folder_of
from tests.curation.test_synthesis import write_imported
from tests.production.conftest import DATASET_REVISION, SOURCE_ID
from tests.reviews import factories as f

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def run_printed(commands: tuple[str, ...]) -> None:
    for line in commands:
        words = shlex.split(line)
        assert words[:2] == ["python", "manage.py"], line
        call_command(*words[2:], stdout=StringIO(), stderr=StringIO())


def entry(need: str):
    return next(e for e in work_queue(needs=[need])[0].entries if e.source_id == SOURCE_ID)


@pytest.fixture
def curation_folder(tmp_path, monkeypatch, live_server, settings):
    settings.ATLAS_PUBLIC_URL = live_server.url
    folder = tmp_path / "curation"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def place_config(config: Path, at: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(config, at)


def test_an_open_defect_is_resolved_by_the_printed_commands(
    curation_folder, buggy_run, defect_checkout, separator_config, tmp_path, repin
):
    f.sync_sources(make_row(SOURCE_ID, dataset_revision=DATASET_REVISION, task_count=2))
    run("publish_review", "--run-dir", str(buggy_run), "--atlas-id", SOURCE_ID)
    reproduction = tmp_path / "reproduction"
    run(
        "reproduce_defect", "--run-dir", str(buggy_run), "--attempt",
        task_folder_of(buggy_run, 2006), "--kind", "verifier", "--issue-url", ISSUE_URL,
        "--expect", "accepted", "--output", str(reproduction),
    )  # fmt: skip
    run("publish_review", "--run-dir", str(reproduction), "--atlas-id", SOURCE_ID)
    run(
        "confirm_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
        "--review-run-dir", str(reproduction),
    )  # fmt: skip
    assert Source.objects.get(id=SOURCE_ID).effective_quality == "some_issues"

    printed = entry("resolve_defect")
    assert [line.split()[2] for line in printed.commands] == [
        "make_review", "validate_fix", "publish_review", "resolve_verifier_issue",
        "publish_review",
    ]  # fmt: skip
    # The curator points the source's config at the repaired checkout.
    defect_checkout.at(defect_checkout.fixed)
    repin(defect_checkout.fixed)
    place_config(separator_config, curation_folder / dict(printed.files)["config"])
    # Up to the resolution: the source then waits under its own need for the publication that
    # restores Good, whose command is the printed one that was left.
    run_printed(printed.commands[:-1])
    assert not work_queue(needs=["resolve_defect"])[0].entries
    waiting = entry("restore_good")
    assert waiting.commands == printed.commands[-1:]
    assert Source.objects.get(id=SOURCE_ID).effective_quality == "some_issues"
    run_printed(waiting.commands)
    assert not work_queue(needs=["restore_good"])[0].entries

    issue = VerifierIssue.objects.get(issue_url=ISSUE_URL)
    fix = curation_folder / dict(printed.files)["output"]
    assert issue.status == "resolved"
    assert (
        issue.resolution_review_id
        == json.loads((fix / "atlas-publication.json").read_text())["review_id"]
    )
    assert Source.objects.get(id=SOURCE_ID).effective_quality == "good"
    assert not work_queue(needs=["resolve_defect"])[0].entries


def test_imported_audits_are_synthesised_by_the_printed_commands(
    curation_folder, write_config, model_server, checkout, tmp_path
):
    f.sync_sources(make_row(SOURCE_ID, dataset_revision=DATASET_REVISION))
    audit = write_imported(tmp_path / "audit")
    assert (
        json.loads(run("publish_review", "--run-dir", str(audit), "--atlas-id", SOURCE_ID))["kind"]
        == "imported"
    )
    printed = entry("synthesise_imported")
    place_config(write_config(), curation_folder / dict(printed.files)["config"])
    run_printed(printed.commands)
    assert not work_queue(needs=["synthesise_imported"])[0].entries
    assert (
        Source.objects.get(id=SOURCE_ID).review_id
        == json.loads(
            (curation_folder / dict(printed.files)["output"] / "atlas-publication.json").read_text()
        )["review_id"]
    )
