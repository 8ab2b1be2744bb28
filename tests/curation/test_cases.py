"""The pure parts of the curators' tools: generated controls, expectations against observations,
the replay endpoint and the reading of attempt names."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from reviews.production.curation.cases import (
    Case,
    Observation,
    generated_controls,
    off_by_one,
    reference_answer,
    supplied,
    unformatted,
)
from reviews.production.curation.execution import MAX_WORDS, worker_words
from reviews.production.curation.replay import ReplayServer
from reviews.production.curation.saved_runs import SavedAttempt, SavedRun, completion_of
from reviews.production.runtime.errors import CurationRefused, UsageError


@pytest.mark.parametrize(
    ("answer", "bumped", "bare"),
    [
        ("#### 2,006", "#### 2,007", "2,006"),
        ("The sum is 999.\n#### 999", "The sum is 999.\n#### 1000", "999"),
        ("#### 1,999.25", "#### 2,000.25", "1,999.25"),
        ("#### -3.5", "#### -2.5", "-3.5"),
        ("42", "43", None),  # already bare: no format to drop
        ("no number here", None, None),
    ],
)
def test_off_by_one_and_unformatted_keep_the_way_the_number_is_written(answer, bumped, bare):
    assert off_by_one(answer) == bumped
    assert unformatted(answer) == bare


def test_generated_controls_are_the_ones_that_apply():
    kinds = [
        kind for kind, _ in generated_controls(supplied("#### 2,006", source="saved"), origin="x")
    ]
    assert kinds == ["off_by_one", "empty", "unformatted"]
    texts = [a.text for _, a in generated_controls(supplied("17", source="saved"), origin="x")]
    assert texts == ["18", ""]


def attempt(**task) -> SavedAttempt:
    return SavedAttempt(
        run_dir=Path("/nonexistent"),
        task_folder="tasks/0000",
        execution_path="tasks/0000/execution-000",
        task={"id": "7", "route": "skyrl_gym", "task_path": "7", "row_index": 0, **task},
        model={},
        config={},
        attempt={},
        responses=(completion_of({"role": "assistant", "content": "#### 5"}),),
    )


def observed(expectation: str, *, status: str, passed=None, error=None) -> Observation:
    case = Case(
        number=0, attempt=attempt(), answer=supplied("x", source="curator"), expectation=expectation
    )
    verification = {"status": status, "score": 1.0 if passed else 0.0, "passed": passed}
    return Observation(
        case=case,
        execution_path=None if error else "tasks/0000/execution-000",
        attempt=None if error else {"verification": verification, "verifier_executed": True},
        worker_error=error,
    )


@pytest.mark.parametrize(
    ("expectation", "status", "passed", "met", "described"),
    [
        ("accepted", "verified", True, True, "accepted (score 1)"),
        ("accepted", "verified", False, False, "rejected (score 0)"),
        ("rejected", "verified", False, True, "rejected (score 0)"),
        ("rejected", "verified", True, False, "accepted (score 1)"),
        ("graded", "verified", False, True, "rejected (score 0)"),
        ("graded", "error", None, False, "error: None"),
        ("accepted", "unavailable", None, False, "unavailable: None"),
    ],
)
def test_an_expectation_holds_only_for_the_matching_native_outcome(
    expectation, status, passed, met, described
):
    observation = observed(expectation, status=status, passed=passed)
    assert (observation.met, observation.described) == (met, described)


def test_a_worker_that_failed_meets_no_expectation():
    observation = observed("graded", status="error", error="Native worker failed")
    assert observation.outcome == "worker_failed" and not observation.met


def test_reference_answer_reads_the_ground_truth_through_the_template():
    task = attempt(extras={"reward_spec": {"ground_truth": "2006"}})
    assert reference_answer(task, template="#### {reference}").text == "#### 2006"
    with pytest.raises(UsageError, match="must contain"):
        reference_answer(task, template="####")
    with pytest.raises(CurationRefused, match="records no reference answer"):
        reference_answer(attempt(extras={}), template="{reference}")


def post(url: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{url}/chat/completions", data=b"{}", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_replay_serves_each_case_its_answers_in_order_then_410():
    first = completion_of({"role": "assistant", "content": "one"})
    second = completion_of({"role": "assistant", "content": "two"})
    with ReplayServer() as replay:
        url, token = replay.endpoint(answers=[first, second])
        other, _ = replay.endpoint(answers=[])
        assert post(url) == (200, first)
        assert post(other)[0] == 410
        assert post(url) == (200, second)
        status, body = post(url)
        assert status == 410 and "no further answer" in body["error"]["message"]
        record = replay.record_of(token)
    assert (record["answers_served"], record["requests_received"]) == (2, 3)
    assert record["exhausted"] is True and record["model_called"] is False


def test_attempt_names_are_checked(tmp_path):
    (tmp_path / "quality-reviews.json").write_text(json.dumps({"subjects": []}), encoding="utf-8")
    run = SavedRun(tmp_path)
    with pytest.raises(CurationRefused, match="Name an attempt as NNNN"):
        run.attempt("task-zero")
    with pytest.raises(CurationRefused, match="tasks/0003 has no finished attempt"):
        run.attempt("0003")
    with pytest.raises(CurationRefused, match="has no saved native input"):
        run.attempt("tasks/0003/execution-000")
    with pytest.raises(CurationRefused, match="Run directory not found"):
        SavedRun(tmp_path / "missing")


def test_what_derives_from_an_example_is_labelled_one():
    from atlas.rules.example_notice import EXAMPLE_NOTICE
    from reviews.production.curation.records import is_example, labelled

    example = {"reviews": [{"summary": f"{EXAMPLE_NOTICE}. A judge's opinion."}]}
    assert is_example(example) and not is_example({"reviews": [{"summary": "Real."}]})
    reviews = labelled([{"summary": "Fix validated."}], example=True)
    assert reviews[0]["summary"] == f"{EXAMPLE_NOTICE}. Fix validated."
    assert labelled([{"summary": "Real."}], example=False)[0]["summary"] == "Real."


def test_an_execution_copied_in_by_reuse_can_be_named(tmp_path):
    (tmp_path / "quality-reviews.json").write_text(json.dumps({"subjects": []}), encoding="utf-8")
    execution = tmp_path / "reused" / "abcdef012345" / "tasks" / "0001" / "execution-000"
    execution.mkdir(parents=True)
    task = {"id": "7", "route": "skyrl_gym", "task_path": "7", "row_index": 0}
    (execution / "input.json").write_text(
        json.dumps({"task": task, "model": {}, "config": {}}), encoding="utf-8"
    )
    (execution / "attempt.json").write_text(json.dumps({"verification": {}}), encoding="utf-8")
    attempt = SavedRun(tmp_path).attempt("reused/abcdef012345/tasks/0001/execution-000")
    assert attempt.task_folder == "reused/abcdef012345/tasks/0001"
    with pytest.raises(CurationRefused, match="Name an attempt as"):
        SavedRun(tmp_path).attempt("../elsewhere/execution-000")


def test_a_failed_workers_last_words_stand_in_for_its_files(tmp_path):
    """A refused run keeps no files, so the refusal quotes the worker's last stderr line."""
    assert worker_words(tmp_path) is None  # no stderr saved
    (tmp_path / "worker.stderr").write_text("Traceback …\n  File x\nOSError: disk full\n\n")
    assert worker_words(tmp_path) == "worker.stderr: OSError: disk full"
    (tmp_path / "worker.stderr").write_text("x" * (MAX_WORDS + 50))
    assert worker_words(tmp_path) == f"worker.stderr: {'x' * MAX_WORDS}"
