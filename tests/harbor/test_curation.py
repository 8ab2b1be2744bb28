"""The curators' tools on Harbor attempts, with real trials: a task whose tests are broken at one
commit and fixed at the next. The task's own solution (the oracle agent) is the reference answer:
rejected by the broken tests, reproduce_defect confirms a task/verifier defect; after the fix a
fresh review runs and validate_fix proves it — the reference answer now accepted on the repaired
task, no action (the nop agent) still rejected."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.production.examples.marinskyrl import commit_all, git
from tests.harbor.conftest import SOURCE_ID
from tests.harbor.tasks import task_files, write_task
from tests.production.helpers import load, make_review

pytestmark = [pytest.mark.harbor, pytest.mark.slow]

ISSUE_URL = "https://github.com/open-athena/task-trove/issues/7"
# The task's tests at the broken commit expect the wrong total.
BROKEN_TEST = """#!/bin/bash
if [ "$(cat /app/answer.txt 2>/dev/null)" = "8" ]; then echo 1; else echo 0; fi \\
  > /logs/verifier/reward.txt
"""


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_broken_task_is_reproduced_and_its_fix_validated(tmp_path, machinery, review_config):
    dataset = tmp_path / "harbor-tasks"
    fixed_files = task_files(image=machinery.images["tiny"])
    write_task(dataset / "tasks" / "add", {**fixed_files, "tests/test.sh": BROKEN_TEST})
    git(dataset, "init", "-q", "-b", "main")
    broken = commit_all(dataset, "add task")

    def review_at(commit: str, output):
        source = {"source_id": SOURCE_ID, "repository": "example/harbor-tasks",
                  "revision": commit, "tasks_path": str(dataset / "tasks"),
                  "format": "harbor_directory"}  # fmt: skip
        make_review("--config", str(review_config("oracle", source)), "--n", "1",
                    "--output", str(output))  # fmt: skip
        return output

    first = review_at(broken, tmp_path / "review-broken")
    assert load(first / "tasks/0000/attempt.json")["verification"]["passed"] is False

    # The oracle saved no terminal commands: there is no saved answer to replay.
    with pytest.raises(CommandError, match="saved no terminal commands to replay"):
        run("reproduce_defect", "--run-dir", str(first), "--attempt", "0000",
            "--kind", "verifier", "--issue-url", ISSUE_URL, "--expect", "accepted",
            "--saved-answer", "--output", str(tmp_path / "refused"))  # fmt: skip
    assert not (tmp_path / "refused").exists()

    reproduction = tmp_path / "reproduction"
    printed = run(
        "reproduce_defect", "--run-dir", str(first), "--attempt", "0000", "--kind", "verifier",
        "--issue-url", ISSUE_URL, "--expect", "accepted", "--reference-answer",
        "--answer", "echo 7 > /app/answer.txt",
        "--statement", "The task's tests reject its own solution.", "--output", str(reproduction),
    )  # fmt: skip
    assert printed.startswith("Reproduced 2 of 2 case(s)")
    report = load(reproduction / "reproduction.json")
    assert [c["observed"] for c in report["cases"]] == ["rejected", "rejected"]
    reference, typed = report["cases"]
    assert reference["answer"]["agent"]["name"] == "oracle"
    assert typed["answer"]["agent"] == {
        "name": "command_replay:CommandReplay",
        "kwargs": {"keystrokes": ["echo 7 > /app/answer.txt\n"]},
    }
    execution = reproduction / reference["execution_path"]
    assert (execution / "harbor-result.json").is_file()
    (trial,) = execution.glob("review-*")
    assert (trial / "agent" / "oracle.txt").is_file()  # the task's own solution ran
    assert (
        load(reproduction / "quality-reviews.json")["reviews"][-1]["attributes"]["issue_url"]
        == ISSUE_URL
    )

    # The fix lands at the next commit; a fresh review runs there.
    (dataset / "tasks/add/tests/test.sh").write_text(fixed_files["tests/test.sh"])
    fixed = commit_all(dataset, "fix the expected total")
    second = review_at(fixed, tmp_path / "review-fixed")
    assert load(second / "tasks/0000/attempt.json")["verification"]["passed"] is True
    row = tmp_path / "row.json"
    row.write_text(json.dumps({"id": SOURCE_ID, "dataset_revision": fixed,
                               "verifier_revision": None,
                               "verifier_issues": [{"issue_url": ISSUE_URL}]}))  # fmt: skip
    printed = run("validate_fix", "--confirming", str(reproduction), "--review", str(second),
                  "--atlas-row", str(row), "--output", str(tmp_path / "fix"))  # fmt: skip
    assert printed.startswith("Fix validated on 3 case(s)")
    validation = load(tmp_path / "fix" / "validation" / "validation.json")
    assert validation["fix_validated"] is True
    observed = [(c["role"], c["answer"]["source"], c["observed"]) for c in validation["cases"]]
    assert observed == [
        ("failing_input", "reference", "accepted"),
        ("failing_input", "curator", "accepted"),
        ("control", "control:empty", "rejected"),
    ]
    # The failing inputs ran on the task as the fresh review ran it: the repaired tests.
    case = tmp_path / "fix" / "validation" / validation["cases"][0]["execution_path"]
    assert (case / "task/tests/test.sh").read_text() == fixed_files["tests/test.sh"]
