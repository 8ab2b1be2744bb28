"""Every refusal of the curators' tools, each with nothing changed: no row of any table (the hostile
corpus's whole-database fingerprint) and no output folder at all — neither when the request itself
was wrong nor when the cases ran and did not bear the claim out (the refusal says what they
showed), so the corrected retry runs into the same output."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from atlas.services.sync import sync_catalog
from tests.curation.conftest import ISSUE_URL, task_folder_of
from tests.hostile.conftest import fingerprint
from tests.production.conftest import SOURCE_ID, git
from tests.production.helpers import load, make_review

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def refused(command: str, *args: str) -> str:
    with pytest.raises(CommandError) as failure:
        run(command, *args)
    return str(failure.value)


def assert_nothing_left(output: Path) -> None:
    """No output, and no staging folder beside it."""
    assert not output.exists()
    assert not [p.name for p in output.parent.iterdir() if p.name.startswith(f".{output.name}.")]


def publish(run_dir: Path) -> dict:
    return json.loads(run("publish_review", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID))


def reproduce(run_dir: Path, output: Path, *extra: str) -> list[str]:
    return [
        "--run-dir",
        str(run_dir),
        "--kind",
        "verifier",
        "--issue-url",
        ISSUE_URL,
        "--expect",
        "accepted",
        "--output",
        str(output),
        *extra,
    ]


def test_reproduce_defect_refusals_change_nothing(
    buggy_run, defect_checkout, packaged_catalog, tmp_path
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    publish(buggy_run)
    suspect = task_folder_of(buggy_run, 2006)
    before = fingerprint()
    output = tmp_path / "reproduction"

    # The request itself is wrong: refused before any case runs, no folder made.
    message = refused(
        "reproduce_defect",
        *reproduce(buggy_run, output, "--attempt", suspect)[:4],
        "--issue-url",
        "https://example.com/bug/1",
        "--expect",
        "accepted",
        "--attempt",
        suspect,
        "--output",
        str(output),
    )
    assert message == "Verifier issues must link a GitHub issue: https://example.com/bug/1"
    assert refused(
        "reproduce_defect", *reproduce(buggy_run, output, "--attempt", "tasks/0009")
    ) == (f"tasks/0009 has no finished attempt in {buggy_run}")
    assert not output.exists()

    # Not at the recorded verifier revision: another commit, then uncommitted changes.
    defect_checkout.at(defect_checkout.fixed)
    assert refused("reproduce_defect", *reproduce(buggy_run, output, "--attempt", suspect)) == (
        f"Reproduce at the recorded verifier revision: check out MarinSkyRL "
        f"{defect_checkout.buggy} in {defect_checkout.path} (it is at {defect_checkout.fixed})"
    )
    defect_checkout.at(defect_checkout.buggy)
    pyproject = defect_checkout.path / "skyrl-gym" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "# local edit\n", "utf-8")
    assert "has uncommitted changes" in refused(
        "reproduce_defect", *reproduce(buggy_run, output, "--attempt", suspect)
    )
    git(defect_checkout.path, "checkout", "-q", "--", ".")
    assert not output.exists()

    # Observation matches the expectation: the answer without a separator is accepted.
    message = refused(
        "reproduce_defect",
        *reproduce(buggy_run, output, "--attempt", suspect, "--answer", "#### 2006"),
    )
    executed = load(buggy_run / suspect / "attempt.json")["execution_path"]
    assert message == (
        f"Not reproduced: {executed} (curator's answer) was accepted (score 1), as expected; "
        "nothing was kept"
    )
    assert_nothing_left(output)

    # The worker failed: nothing reproduced either.
    broken = tmp_path / "broken-config.json"
    config = load(buggy_run / "run.json")["config"]
    config["runtime"]["gym_python"] = str(tmp_path / "no-such-python")
    broken.write_text(json.dumps(config), encoding="utf-8")
    failed = tmp_path / "reproduction-failed"
    message = refused(
        "reproduce_defect",
        *reproduce(buggy_run, failed, "--attempt", suspect, "--config", str(broken)),
    )
    assert message.startswith("Not reproduced: the native worker failed on ")
    # The reason stands in for the files a refusal no longer keeps.
    assert "Cannot start native worker" in message and "no-such-python" in message
    assert message.endswith("; nothing was kept")
    assert_nothing_left(failed)
    # An interpreter that cannot start the native host: named in the one line.
    failing = tmp_path / "failing-python"
    failing.write_text("#!/bin/sh\necho 'ImportError: skyrl_gym is broken here' >&2\nexit 3\n")
    failing.chmod(0o755)
    config["runtime"]["gym_python"] = str(failing)
    broken.write_text(json.dumps(config), encoding="utf-8")
    message = refused(
        "reproduce_defect",
        *reproduce(buggy_run, failed, "--attempt", suspect, "--config", str(broken)),
    )
    assert f"(Cannot start the native attempt host {failing})" in message
    assert_nothing_left(failed)
    # The corrected retry runs into the same output.
    run("reproduce_defect", *reproduce(buggy_run, failed, "--attempt", suspect))
    assert load(failed / "reproduction.json")["reproduced"] is True

    assert fingerprint() == before


def test_validate_fix_refusals_change_nothing(
    buggy_run, defect_checkout, separator_config, packaged_catalog, client, tmp_path, repin
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    publish(buggy_run)
    suspect = task_folder_of(buggy_run, 2006)
    reproduction = tmp_path / "reproduction"
    run("reproduce_defect", *reproduce(buggy_run, reproduction, "--attempt", suspect))
    run(
        "confirm_verifier_issue",
        "--atlas-id",
        SOURCE_ID,
        "--issue-url",
        ISSUE_URL,
        "--review-id",
        publish(reproduction)["review_id"],
    )
    row = client.get(f"/api/sources/{SOURCE_ID}/").json()
    atlas_row = tmp_path / "row.json"
    atlas_row.write_text(json.dumps(row), encoding="utf-8")
    only = [
        "--skip-control",
        "off_by_one",
        "--skip-control",
        "empty",
        "--skip-control",
        "unformatted",
        "--skip-control",
        "saved_wrong",
    ]

    def validate(review: Path, output: Path, *extra: str) -> list[str]:
        return [
            "--confirming",
            str(reproduction),
            "--review",
            str(review),
            "--atlas-row",
            str(atlas_row),
            "--output",
            str(output),
            *extra,
        ]

    # A fresh review that proves nothing about the fix cannot resolve it (the Atlas's own rule).
    defect_checkout.at(defect_checkout.fixed)
    repin(defect_checkout.fixed)
    fixed_review = tmp_path / "review-fixed"
    make_review(
        "--config", str(separator_config), "--n", "2", "--seed", "7", "--output", str(fixed_review)
    )
    plain = publish(fixed_review)
    before = fingerprint()
    assert refused(
        "resolve_verifier_issue",
        "--atlas-id",
        SOURCE_ID,
        "--issue-url",
        ISSUE_URL,
        "--resolution-review-id",
        plain["review_id"],
    ) == (
        "Resolve verifier defects with a fresh native review and applicable fix evidence: "
        f"no resolved_verifier_issues entry for {ISSUE_URL}"
    )

    # Wrong requests: refused before any case runs, no folder left behind.
    output = tmp_path / "resolution"
    stale = tmp_path / "stale-row.json"
    stale.write_text(json.dumps({**row, "dataset_revision": "b" * 40}), encoding="utf-8")
    assert refused(
        "validate_fix",
        *validate(fixed_review, output)[:4],
        "--atlas-row",
        str(stale),
        "--output",
        str(output),
    ).startswith(
        f"The review covers dataset revision {row['dataset_revision']}; the Atlas source is at "
    )
    closed = tmp_path / "closed-row.json"
    closed.write_text(json.dumps({**row, "verifier_issues": []}), encoding="utf-8")
    assert refused(
        "validate_fix",
        *validate(fixed_review, output)[:4],
        "--atlas-row",
        str(closed),
        "--output",
        str(output),
    ) == (f"The Atlas row lists no open verifier issue {ISSUE_URL}")
    assert refused("validate_fix", *validate(fixed_review, output, *only)) == (
        "No incorrect-answer control applies to these failing inputs; name answers that must "
        "still be rejected with --control-answer"
    )
    defect_checkout.at(defect_checkout.buggy)
    assert refused("validate_fix", *validate(fixed_review, output)) == (
        "Validate the fix at the checkout the review ran: check out MarinSkyRL "
        f"{defect_checkout.fixed} in {defect_checkout.path} (it is at {defect_checkout.buggy})"
    )
    assert not output.exists()

    # The failing input still fails (validated against the buggy review): nothing kept.
    message = refused(
        "validate_fix", *validate(buggy_run, output, *only, "--control-answer", "#### 1")
    )
    assert message.startswith("Fix not validated: failing input ")
    assert "(saved answer) is still rejected (score 0)" in message
    assert message.endswith("; nothing was kept")
    assert_nothing_left(output)

    # A control the repaired verifier accepts: a "wrong" answer that is in fact right.
    defect_checkout.at(defect_checkout.fixed)
    accepted = tmp_path / "resolution-control"
    message = refused(
        "validate_fix",
        *validate(fixed_review, accepted, *only, "--control-answer", "#### 2,006"),
    )
    assert message.startswith("Fix not validated: control ")
    assert "(curator control) was accepted (score 1), not rejected" in message
    assert_nothing_left(accepted)

    assert fingerprint() == before
