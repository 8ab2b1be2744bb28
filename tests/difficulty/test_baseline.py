"""The reviewer solve baseline counts solver attempts only: validate_fix's failing inputs and
controls (and reproduce_defect's cases) are replays of saved answers, not attempts to solve."""

from difficulty.baseline import derived_counts, is_solver_attempt


def runtime(review_id: str, *, passed: bool, replay: dict | None = None) -> dict:
    attributes = {"verification": {"status": "verified", "score": float(passed), "passed": passed}}
    if replay is not None:
        attributes["replay"] = replay
    return {"id": review_id, "method": "runtime_execution", "attributes": attributes}


def test_replayed_cases_are_not_solver_attempts():
    control = {"role": "control", "expected": "rejected", "model_called": False}
    failing = {"role": "failing_input", "expected": "accepted", "model_called": False}
    collection = {
        "reviews": [
            runtime("task/0/runtime", passed=True),
            runtime("task/1/runtime", passed=False),
            runtime("task/0/fix-validation/0000", passed=True, replay=failing),
            runtime("task/0/fix-validation/0001", passed=False, replay=control),
            runtime("task/1/fix-validation/0002", passed=False, replay=control),
            {"id": "task/0/judge/1", "method": "model_judgment", "attributes": {}},
        ]
    }
    assert derived_counts(collection=collection) == {
        "solved": 1, "verified": 2, "attempted": 2, "unverified": 0,
    }  # fmt: skip
    assert [is_solver_attempt(r) for r in collection["reviews"]] == [
        True, True, False, False, False, False,
    ]  # fmt: skip
